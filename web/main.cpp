// trainclock GUI entry point: SDL2 window + OpenGL context + Dear ImGui, then the app's frame loop.
// The same file runs natively (desktop GL 3) and in the browser (WebGL2); web/toolkit/platform.hpp holds
// every difference.
#include <SDL.h>
#include <SDL_opengl.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "imgui_impl_opengl3.h"
#include "imgui_impl_sdl.h"
#include "toolkit/platform.hpp"

namespace {

// A hash of everything ImGui asks the GPU to draw (vertices, indices, commands, display size): equal
// signatures, equal pictures.
uint64_t draw_data_signature(const ImDrawData& data) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    auto mix = [&h](const void* bytes, size_t size) {  // FNV-1a over 8-byte words, then the tail
        const unsigned char* p = static_cast<const unsigned char*>(bytes);
        size_t i = 0;
        for (; i + 8 <= size; i += 8) {
            uint64_t word;
            std::memcpy(&word, p + i, 8);
            h = (h ^ word) * 0x100000001B3ull;
        }
        for (; i < size; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
    };
    mix(&data.DisplaySize, sizeof data.DisplaySize);
    mix(&data.FramebufferScale, sizeof data.FramebufferScale);
    for (int n = 0; n < data.CmdListsCount; ++n) {
        const ImDrawList& list = *data.CmdLists[n];
        mix(list.VtxBuffer.Data, size_t(list.VtxBuffer.Size) * sizeof(ImDrawVert));
        mix(list.IdxBuffer.Data, size_t(list.IdxBuffer.Size) * sizeof(ImDrawIdx));
        for (const ImDrawCmd& cmd : list.CmdBuffer) {
            mix(&cmd.ClipRect, sizeof cmd.ClipRect);
            mix(&cmd.TextureId, sizeof cmd.TextureId);
            mix(&cmd.ElemCount, sizeof cmd.ElemCount);
            mix(&cmd.IdxOffset, sizeof cmd.IdxOffset);
            mix(&cmd.VtxOffset, sizeof cmd.VtxOffset);
        }
    }
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace trainclock::gui;
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) {
        std::fprintf(stderr, "trainclock-gui: SDL_Init failed: %s\n", SDL_GetError());
        return 1;
    }
    const platform::GlProfile gl = platform::gl_profile();
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, gl.profile_mask);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, gl.major);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, gl.minor);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
    SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 8);

    SDL_Window* window = SDL_CreateWindow("trainclock", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, 1280, 800,
                                          SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    SDL_GLContext context = window ? SDL_GL_CreateContext(window) : nullptr;
    if (!context) {
        std::fprintf(stderr, "trainclock-gui: no OpenGL context: %s\n", SDL_GetError());
        return 1;
    }
    SDL_GL_MakeCurrent(window, context);
    SDL_GL_SetSwapInterval(1);  // vsync
    platform::attach_window(window);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;                              // the state lives in links, not in imgui.ini
    ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;  // arrows + space reach every control
    ImGui_ImplSDL2_InitForOpenGL(window, context);
    ImGui_ImplOpenGL3_Init(gl.glsl);

    App app(platform::initial_fragment(argc, argv));
    uint64_t last_picture = 0;
    platform::run_main_loop([&]() {
        SDL_Event event;
        while (SDL_PollEvent(&event)) {
            ImGui_ImplSDL2_ProcessEvent(&event);
            if (event.type == SDL_QUIT) return false;
            if (event.type == SDL_DROPFILE) {  // a config file dropped on the window: import it
                std::ifstream in(event.drop.file, std::ios::binary);
                app.import_text(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
                SDL_free(event.drop.file);
            }
            if (event.type == SDL_WINDOWEVENT && event.window.event == SDL_WINDOWEVENT_CLOSE &&
                event.window.windowID == SDL_GetWindowID(window))
                return false;
        }
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplSDL2_NewFrame();
        ImGui::NewFrame();
        app.frame();
        ImGui::Render();
        // An unchanged picture is not drawn again: a browser rasterising WebGL in software spent 1.5
        // cores redrawing an idle page (the app itself, its sliced computations included, still runs).
        const uint64_t picture = draw_data_signature(*ImGui::GetDrawData());
        if (picture == last_picture) {
            platform::idle();
            return true;
        }
        last_picture = picture;
        const ImGuiIO& io = ImGui::GetIO();
        glViewport(0, 0, int(io.DisplaySize.x * io.DisplayFramebufferScale.x), int(io.DisplaySize.y * io.DisplayFramebufferScale.y));
        glClearColor(0.95f, 0.95f, 0.96f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        SDL_GL_SwapWindow(window);
        return true;
    });

    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplSDL2_Shutdown();
    ImGui::DestroyContext();
    SDL_GL_DeleteContext(context);
    SDL_DestroyWindow(window);
    SDL_Quit();
    return 0;
}
