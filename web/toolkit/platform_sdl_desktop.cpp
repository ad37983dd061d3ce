// trainclock GUI platform seam, desktop: an SDL2 window with desktop OpenGL 3.
// A link (or only its fragment) given as the first argument opens that state; links are copied
// as bare fragments ("#v=1&..."), which the site and `trainclock link` both accept.
#include <SDL.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "platform.hpp"

namespace trainclock::gui::platform {

GlProfile gl_profile() { return {3, 0, SDL_GL_CONTEXT_PROFILE_CORE, "#version 130"}; }

void attach_window(SDL_Window*) {}

void run_main_loop(const std::function<bool()>& frame) {
    while (frame()) {}
}

void idle() { SDL_WaitEventTimeout(nullptr, 16); }

std::string initial_fragment(int argc, char** argv) {
    if (argc < 2) return "";
    const std::string link = argv[1];
    const auto hash = link.find('#');
    return hash == std::string::npos ? link : link.substr(hash + 1);
}

std::string link_base() { return "#"; }

std::string take_navigated_fragment() { return ""; }

std::string take_imported_text() { return ""; }  // the desktop app imports through its text box

void publish_state(const std::string&, const std::string&, const std::string&) {}

void publish_data(const std::string&, const std::string&) {}

void keep_address() {}

std::string save_file(const std::string& name, const std::string&, const std::string& text) {
    std::ofstream out(name, std::ios::binary);
    out << text;
    return out ? "Saved " + name + " in the working folder" : "Could not write " + name;
}

void show_banner(const std::string& message) {
    if (!message.empty()) std::fprintf(stderr, "trainclock-gui: %s\n", message.c_str());
}

void copy_to_clipboard(const std::string& text) { SDL_SetClipboardText(text.c_str()); }

}  // namespace trainclock::gui::platform
