// trainclock GUI platform seam, browser: WebGL2 on the page's #canvas, the Emscripten main loop,
// the URL fragment as the app state, the page's #banner for messages (site/index.html).
#include <SDL.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <string>

#include "platform.hpp"

namespace trainclock::gui::platform {
namespace {

SDL_Window* g_window = nullptr;
std::function<bool()> g_frame;
std::string g_navigated;        // fragment of a link opened while the page runs (hashchange)
std::string g_published;        // last fragment written to the address bar

// Keeps the window the size of the page's #app box, so the app follows the browser window
// (responsive); SDL scales the canvas backing store by the device pixel ratio (ALLOW_HIGHDPI).
void fit_canvas() {
    double css_w = 0, css_h = 0;
    emscripten_get_element_css_size("#app", &css_w, &css_h);
    int w = 0, h = 0;
    SDL_GetWindowSize(g_window, &w, &h);
    if (int(css_w) != w || int(css_h) != h) SDL_SetWindowSize(g_window, int(css_w), int(css_h));
}

void loop_iteration() {
    static bool first = true;
    fit_canvas();
    g_frame();
    if (first) {  // time of the first rendered frame, for scripts (tests/browser/measure.mjs)
        first = false;
        EM_ASM({ window.trainclockFirstFrameMs = performance.now(); });
    }
}

EM_BOOL on_hash_change(int, const EmscriptenHashChangeEvent* event, void*) {
    std::string url = event->newURL;
    const auto hash = url.find('#');
    const std::string fragment = hash == std::string::npos ? "" : url.substr(hash + 1);
    if (fragment != g_published) g_navigated = fragment.empty() ? "#" : fragment;
    return EM_TRUE;
}

std::string js_string(const char* script) {
    char* text = emscripten_run_script_string(script);
    return text ? text : "";
}

} // namespace

GlProfile gl_profile() { return {3, 0, SDL_GL_CONTEXT_PROFILE_ES, "#version 300 es"}; }

void attach_window(SDL_Window* window) {
    g_window = window;
    emscripten_set_hashchange_callback(EMSCRIPTEN_EVENT_TARGET_WINDOW, nullptr, EM_FALSE, on_hash_change);
}

void run_main_loop(const std::function<bool()>& frame) {
    g_frame = frame;
    emscripten_set_main_loop(loop_iteration, 0, /*simulate_infinite_loop=*/1);
}

std::string initial_fragment(int, char**) { return js_string("location.hash.replace(/^#/, '')"); }

std::string link_base() { return js_string("location.origin + location.pathname + '#'"); }

std::string take_navigated_fragment() {
    std::string fragment;
    fragment.swap(g_navigated);
    return fragment;
}

void publish_state(const std::string& fragment, const std::string& result_json, const std::string& controls_json) {
    g_published = fragment;
    EM_ASM(
        {
            const fragment = UTF8ToString($0);
            if (location.hash.replace(/^#/, '') !== fragment)
                history.replaceState(null, '', location.pathname + location.search + '#' + fragment);
            window.trainclockView = {
                fragment : fragment,
                result : JSON.parse(UTF8ToString($1)),
                controls : JSON.parse(UTF8ToString($2))
            };
        },
        fragment.c_str(), result_json.c_str(), controls_json.c_str());
}

void show_banner(const std::string& message) {
    EM_ASM(
        {
            const banner = document.getElementById('banner');
            if (!banner) return;
            banner.textContent = UTF8ToString($0);
            banner.hidden = banner.textContent.length == 0;
        },
        message.c_str());
}

void copy_to_clipboard(const std::string& text) {
    EM_ASM(
        {
            const text = UTF8ToString($0);
            if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
        },
        text.c_str());
}

} // namespace trainclock::gui::platform
