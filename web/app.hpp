// trainclock GUI: the calculator app (state, recomputation, links) shared by the desktop window
// and the browser page. Panels live in panels_inputs.cpp and panels_results.cpp; drawing helpers
// in widgets.hpp; the platform seam in platform.hpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "imgui.h"
#include "trainclock/config.hpp"
#include "trainclock/prediction.hpp"
#include "trainclock/presets.hpp"

namespace trainclock::gui {

// One selectable preset: its id and its human name.
struct Choice {
    std::string id;            // "h100-sxm"
    std::string display_name;  // "NVIDIA H100 SXM5 80GB"
};

// The embedded preset names, read once.
struct Catalogue {
    std::vector<Choice> models, gpus, nodes, precisions;
    static Catalogue load();
};

// One precision of the comparison chart (the current config in every precision preset).
struct CompareRow {
    std::string precision;
    bool ok = false;           // validates (e.g. fp8 needs a GPU with an fp8 peak)
    std::string reason;        // why not, when !ok
    Prediction prediction;     // when ok
};

class App {
public:
    explicit App(const std::string& initial_fragment);  // "" = the default config
    void frame();                                        // draw one frame (recomputes on change)

private:
    // [SECTION] state and links (app.cpp)
    void open_link(const std::string& fragment);        // restore a state, or keep ours and say why
    void recompute_if_changed();
    void publish();
    std::string cli_command() const;

    // [SECTION] panels (panels_inputs.cpp, panels_results.cpp)
    void draw_header();
    void draw_inputs();
    void draw_model_inputs();
    void draw_system_inputs();
    void draw_parallel_inputs();
    void draw_training_inputs();
    void draw_precision_inputs();
    void draw_results();
    void draw_summary();
    void draw_memory();
    void draw_breakdown();
    void draw_comparison();
    void draw_timeline();

    // Records the last item's rectangle under a config key and, when the current validation
    // error names that key (or a key below it), prints the error right under the control.
    void annotate(const std::string& key);

    Catalogue catalogue_;
    Config edit_;                        // what the controls show; parallel.dp == 0 means "derive"
    std::string edit_json_;              // config_to_json(edit_) at the last recomputation
    std::optional<Error> error_;         // validation error of edit_, if any
    Config valid_;                       // last config that validated (what the results show)
    Prediction result_;                  // prediction of valid_ (with the pipeline timeline)
    std::string result_json_;
    std::vector<CompareRow> comparison_;
    std::string fragment_;               // link fragment of the last valid state
    std::string link_error_;             // a link that could not be opened, shown until the next change
    std::string notice_;                 // short-lived feedback ("Link copied")
    double notice_until_s_ = 0;
    std::map<std::string, ImVec4> controls_;  // key -> (x0, y0, x1, y1) on screen
    std::string published_;              // what publish() sent last
};

} // namespace trainclock::gui
