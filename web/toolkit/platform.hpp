// trainclock GUI: the one platform seam between the ImGui app and where it runs.
// web/toolkit/platform_sdl_desktop.cpp (native window) and web/toolkit/platform_emscripten.cpp (browser page)
// implement it; web/CMakeLists.txt picks one with if(EMSCRIPTEN). Nothing else in web/ knows
// which platform it is on.
#pragma once

#include <functional>
#include <string>

struct SDL_Window;

namespace trainclock::gui::platform {

// OpenGL flavour of the window: desktop GL 3.0 core or WebGL2 (GLES 3.0).
struct GlProfile {
    int major = 3;
    int minor = 0;
    int profile_mask = 0;        // SDL_GL_CONTEXT_PROFILE_* value
    const char* glsl = nullptr;  // GLSL version line for the ImGui OpenGL3 backend
};
GlProfile gl_profile();

// Called once the window exists (the page sizes the canvas to its element).
void attach_window(SDL_Window* window);

// Runs `frame` until it returns false (desktop) or forever (browser main loop).
void run_main_loop(const std::function<bool()>& frame);

// A frame drew nothing new: the desktop waits for input (at most a frame's time, so the app's sliced
// work goes on); the browser's loop is paced by the page's animation frames already.
void idle();

// Link handling: the fragment (without '#') the app opens with, the base the "Copy link" button
// prefixes, and the fragment of a link the user navigated to since the last call ("" = none).
std::string initial_fragment(int argc, char** argv);
std::string link_base();
std::string take_navigated_fragment();

// Text the user pasted or dropped on the page since the last call ("" = none): typed into the text
// field being edited, else a config to import.
std::string take_imported_text();

// Publishes the current state: the URL fragment (browser address bar) and the last result JSON
// plus the screen rectangles of the controls (page scripts and tests read them).
void publish_state(const std::string& fragment, const std::string& result_json, const std::string& controls_json);

// Publishes named data for page scripts and tests (window.trainclockData[name] = the parsed JSON):
// the points the plots draw, the pinned A/B state.
void publish_data(const std::string& name, const std::string& json);

// Hands `text` to the user as a file named `name`: a download (browser) or a file in the working
// folder (desktop). Returns a short note on where it went.
std::string save_file(const std::string& name, const std::string& mime, const std::string& text);

// Message shown outside the canvas too ("" hides it): a corrupt link, an invalid combination.
void show_banner(const std::string& message);

// The link just opened was refused: the next publish_state leaves the address bar as the user
// wrote it (the state kept is shown, the user's link is not replaced).
void keep_address();

void copy_to_clipboard(const std::string& text);

}  // namespace trainclock::gui::platform
