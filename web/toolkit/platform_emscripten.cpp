// trainclock GUI platform seam, browser: WebGL2 on the page's #canvas, the Emscripten main loop,
// the URL fragment as the app state, the page's #banner for messages (site/index.html).
#include <SDL.h>
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cstdlib>
#include <string>

#include "platform.hpp"

// EM_JS bodies are JavaScript, stringified token by token: "() => x" must stay as written
// (clang-format's C++ spacing, "() = > x", is a JavaScript syntax error).
// clang-format off
// [SECTION] Page glue (EM_JS: JavaScript functions with C signatures) ------------------------------

// A link opened while the page runs (address bar edit, back/forward) is queued for the next frame.
// The event's newURL, not location.hash: a frame drawn before the event fires republishes the
// shown state with replaceState, which would otherwise lose the link.
EM_JS(void, js_watch_hash, (), {
    window.addEventListener('hashchange', (event) => {
        Module.trainclockNavigated = new URL(event.newURL).hash.replace(/^#/, "");
    });
});

// Text pasted on the page or a file dropped on it is queued for the app, which types it into the
// active text field or imports it (panels_import.cpp). SDL's key handler cancels every key it
// reads, Ctrl/Cmd+V included, which would stop the browser's paste: that key press skips SDL.
// Dragging over the page must be accepted for a drop to arrive.
EM_JS(void, js_watch_import, (), {
    const queue = (text) => { if (text) Module.trainclockImported = text; };
    window.addEventListener('keydown', (event) => {
        if ((event.ctrlKey || event.metaKey) && !event.altKey && (event.key === 'v' || event.key === 'V'))
            event.stopImmediatePropagation();
    }, true);
    document.addEventListener('paste', (event) => {
        const text = event.clipboardData && event.clipboardData.getData('text/plain');
        if (text) {
            event.preventDefault();
            queue(text);
        }
    });
    document.addEventListener('dragover', (event) => event.preventDefault());
    document.addEventListener('drop', (event) => {
        event.preventDefault();
        const files = event.dataTransfer && event.dataTransfer.files;
        if (files && files.length > 0) files[0].text().then(queue);
        else if (event.dataTransfer) queue(event.dataTransfer.getData('text/plain'));
    });
});

// Dear ImGui's GL backend reads the scissor box and blend state back every frame to restore them;
// Chromium answers those getParameter calls from the GPU process, so each one waits for that
// process to finish the frames before (a software rasterizer on a loaded machine: up to 27 ms in
// one frame, tests/browser/measure.mjs). This context's setters record the state (write-through),
// its getParameter answers from the record; every other name still asks the GPU process.
EM_JS(void, js_record_gl_state, (), {
    const gl = GLctx;
    const get = gl.getParameter.bind(gl), record = {};
    for (const name of [gl.SCISSOR_BOX, gl.BLEND_SRC_RGB, gl.BLEND_DST_RGB, gl.BLEND_SRC_ALPHA, gl.BLEND_DST_ALPHA,
                        gl.BLEND_EQUATION_RGB, gl.BLEND_EQUATION_ALPHA])
        record[name] = get(name);
    gl.getParameter = (name) => (name === gl.SCISSOR_BOX ? Int32Array.from(record[name])
                                 : name in record ? record[name] : get(name));
    const setter = (method, store) => {
        const call = gl[method].bind(gl);
        gl[method] = (...args) => { store(...args); return call(...args); };
    };
    setter('scissor', (x, y, w, h) => { record[gl.SCISSOR_BOX] = [x, y, w, h]; });
    setter('blendFunc', (s, d) => { record[gl.BLEND_SRC_RGB] = record[gl.BLEND_SRC_ALPHA] = s; record[gl.BLEND_DST_RGB] = record[gl.BLEND_DST_ALPHA] = d; });
    setter('blendFuncSeparate', (sr, dr, sa, da) => {
        record[gl.BLEND_SRC_RGB] = sr; record[gl.BLEND_DST_RGB] = dr; record[gl.BLEND_SRC_ALPHA] = sa; record[gl.BLEND_DST_ALPHA] = da;
    });
    setter('blendEquation', (m) => { record[gl.BLEND_EQUATION_RGB] = record[gl.BLEND_EQUATION_ALPHA] = m; });
    setter('blendEquationSeparate', (rgb, alpha) => { record[gl.BLEND_EQUATION_RGB] = rgb; record[gl.BLEND_EQUATION_ALPHA] = alpha; });
});

// Takes what a listener above queued (which 0: a navigated fragment, 1: an imported text); 0 = none.
EM_JS(char*, js_take_queued, (int which), {
    const name = which == 0 ? 'trainclockNavigated' : 'trainclockImported';
    if (Module[name] === undefined) return 0;
    const value = Module[name];
    Module[name] = undefined;
    if (which == 0) Module.trainclockLinkTaken = true;
    const size = lengthBytesUTF8(value) + 1;
    const text = _malloc(size);
    stringToUTF8(value, text, size);
    return text;
});

EM_JS(char*, js_page_string, (int which), {
    const value = which == 0 ? location.hash.replace(/^#/, "") : location.origin + location.pathname + '#';
    const size = lengthBytesUTF8(value) + 1;
    const text = _malloc(size);
    stringToUTF8(value, text, size);
    return text;
});

// The address bar follows the shown state when that state changed or a link was just read (an
// invalid one is replaced by the state kept), not otherwise: a fragment set on the page whose
// hashchange event has not fired yet stays for the event (replaceState also costs 1-20 ms in
// headless chromium on a loaded machine). result_utf8 0: the result is the one published before.
// A link the app refused (js_keep_address) stays in the address bar: the user's link is not lost.
EM_JS(void, js_publish, (const char* fragment_utf8, const char* result_utf8, const char* controls_utf8), {
    const fragment = UTF8ToString(fragment_utf8);
    const changed = (fragment !== Module.trainclockPublished || Module.trainclockLinkTaken) && !Module.trainclockKeepAddress;
    Module.trainclockKeepAddress = false;
    if (changed && location.hash.replace(/^#/, "") !== fragment)
        history.replaceState(null, "", location.pathname + location.search + '#' + fragment);
    Module.trainclockPublished = fragment;
    Module.trainclockLinkTaken = false;
    window.trainclockView = {
        fragment: fragment,
        result: result_utf8 ? JSON.parse(UTF8ToString(result_utf8)) : window.trainclockView.result,
        controls: JSON.parse(UTF8ToString(controls_utf8)),
    };
});

EM_JS(void, js_keep_address, (), { Module.trainclockKeepAddress = true; });

EM_JS(void, js_publish_data, (const char* name_utf8, const char* json_utf8), {
    window.trainclockData = window.trainclockData || {};
    window.trainclockData[UTF8ToString(name_utf8)] = JSON.parse(UTF8ToString(json_utf8));
});

// A Blob behind a temporary <a download> link: the browser's own download, no server round trip.
EM_JS(void, js_download, (const char* name_utf8, const char* mime_utf8, const char* text_utf8), {
    const blob = new Blob([UTF8ToString(text_utf8)], { type: UTF8ToString(mime_utf8) });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = UTF8ToString(name_utf8);
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
});

// Frames drawn so far and the time of the first one, for scripts (tests/browser: waits counted in frames).
EM_JS(void, js_frame_done, (), {
    if (window.trainclockFirstFrameMs === undefined) window.trainclockFirstFrameMs = performance.now();
    window.trainclockFrames = (window.trainclockFrames || 0) + 1;
});

EM_JS(void, js_banner, (const char* message_utf8), {
    const banner = document.getElementById('banner');
    if (!banner) return;
    banner.textContent = UTF8ToString(message_utf8);
    banner.hidden = banner.textContent.length == 0;
});

EM_JS(void, js_copy, (const char* text_utf8), {
    const text = UTF8ToString(text_utf8);
    if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
});
// clang-format on

namespace trainclock::gui::platform {
namespace {

SDL_Window* g_window = nullptr;
std::function<bool()> g_frame;

std::string take_js_string(char* text) {
    std::string value = text ? text : "";
    std::free(text);
    return value;
}

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
    fit_canvas();
    g_frame();
    js_frame_done();
}

}  // namespace

GlProfile gl_profile() { return {3, 0, SDL_GL_CONTEXT_PROFILE_ES, "#version 300 es"}; }

void attach_window(SDL_Window* window) {
    g_window = window;
    js_record_gl_state();
    js_watch_hash();
    js_watch_import();
}

void run_main_loop(const std::function<bool()>& frame) {
    g_frame = frame;
    emscripten_set_main_loop(loop_iteration, 0, /*simulate_infinite_loop=*/1);
}

void idle() {}

std::string initial_fragment(int, char**) { return take_js_string(js_page_string(0)); }

std::string link_base() { return take_js_string(js_page_string(1)); }

std::string take_navigated_fragment() { return take_js_string(js_take_queued(0)); }

std::string take_imported_text() { return take_js_string(js_take_queued(1)); }

void publish_state(const std::string& fragment, const std::string& result_json, const std::string& controls_json) {
    static std::string published_result;  // ~50 kB: parsed again only when it changed
    const bool same = !published_result.empty() && result_json == published_result;
    if (!same) published_result = result_json;
    js_publish(fragment.c_str(), same ? nullptr : result_json.c_str(), controls_json.c_str());
}

void publish_data(const std::string& name, const std::string& json) { js_publish_data(name.c_str(), json.c_str()); }

void keep_address() { js_keep_address(); }

std::string save_file(const std::string& name, const std::string& mime, const std::string& text) {
    js_download(name.c_str(), mime.c_str(), text.c_str());
    return "Downloaded " + name;
}

void show_banner(const std::string& message) { js_banner(message.c_str()); }

void copy_to_clipboard(const std::string& text) { js_copy(text.c_str()); }

}  // namespace trainclock::gui::platform
