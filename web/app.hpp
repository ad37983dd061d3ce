// trainclock GUI: the calculator app (state, recomputation, links) shared by the desktop window
// and the browser page. Panels live in panels_inputs.cpp, panels_results.cpp and panels_search.cpp;
// drawing helpers in toolkit/widgets.hpp; the platform seam in toolkit/platform.hpp.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imgui.h"
#include "toolkit/widgets.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/perf/compare.hpp"
#include "trainclock/search/plan.hpp"
#include "trainclock/search/scaling.hpp"
#include "trainclock/search/search.hpp"

namespace trainclock::gui {

// Time a frame may spend predicting (the state's own prediction, then precision rows and scaling
// points one at a time): with the drawing, a frame stays under 16 ms (make web-report measures it:
// at 2 ms the longest frame holds 4-6 ms of CPU time on a shared 2-core machine; ~0.1 ms per prediction).
inline constexpr double kFrameComputeBudgetS = 0.002;

// What the page's MFU is (Prediction::mfu, prediction.hpp: model FLOP/s over the dense 16-bit peak).
inline constexpr const char* kMfuBasis = "MFU (model FLOP/s / dense BF16 peak)";

// The embedded preset names, read once.
struct Catalogue {
    std::vector<Choice> models, gpus, nodes, precisions, frameworks;  // frameworks: "none" first
    static Catalogue load();
};

// A layout search run a slice per frame (panels_search.cpp).
struct SearchRun {
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<SearchState> state;  // points into *space
    int64_t next_cell = 0;               // cells [0, next_cell) are done
    bool running = false;
    double wall_s = 0;      // time spent searching, summed over frames
    std::string base_json;  // the controls' state it was started from
    std::string error;      // the search could not start
    SearchReport report;    // when every cell is done
};

// The scaling plots' sweep, computed a prediction at a time within the frame budget (panels_plots.cpp).
struct ScalingRun {
    std::string for_json;  // the controls' state it is for ("" = none yet)
    ScalingSweep sweep;
    std::string points_json;  // the published points of counts [0, json_counts), written as they finish
    size_t json_counts = 0;
    bool published = false;  // every count computed and its points published
    int metric = 0;          // which plot the narrow layout shows
};

// The capacity planner (panels_plan.cpp): its inputs (with training.tokens; in the link as
// "&plan=DAYS,BUDGET,MAX_GPUS" while the panel is open), the core's PlanRun stepped within a time
// budget per frame, and its report.
struct PlanPanel {
    double days = 90, budget_usd = 0;  // 0 = none
    int64_t max_gpus = 16384;
    bool open = false;           // the panel is open: the link carries its inputs
    bool start_pending = false;  // a link opened it: plan once the state is valid
    std::unique_ptr<PlanRun> run;
    Config base;  // the draft planned from (model, training, framework)
    PlanOptions options;
    std::string base_json;  // the controls' state it was started from
    std::optional<PlanReport> report;
    std::string report_json;  // trainclock/plan/v1
    std::string error;        // the plan could not start
    double wall_s = 0;
};

// Earlier searches of the same run (model, GPU, training) at other GPU counts, for the time/cost
// plot: the GPU count is the knob that trades time against cost (panels_plots.cpp).
struct SearchPoint {
    Config config;       // the layout's full config
    std::string layout;  // describe_layout
    Prediction prediction;
};

// A pinned configuration ("A") shown beside the current one ("B") (panels_compare.cpp).
struct Pinned {
    Config config;
    std::string fragment;  // its link fragment
    Prediction result;
};

// What a pasted or dropped text is (panels_import.cpp).
enum class ImportKind { none, hf_config, config, deepspeed, calibration, torchtitan, megatron };
ImportKind import_kind(const std::string& text);
const char* import_kind_name(ImportKind kind);

class App {
public:
    explicit App(const std::string& initial_fragment);  // "" = the default config
    void frame();                                       // draw one frame (recomputes on change)
    void import_text(const std::string& text);          // a pasted/dropped config; errors go to the banner

private:
    // [SECTION] state and links (app.cpp)
    void open_link(const std::string& link);  // restore a state, or keep ours and say why
    void recompute_if_changed();
    void publish();
    std::string cli_command() const;
    const std::string& result_json();  // of result_, written when first asked for after a change

    // [SECTION] panels (panels_inputs.cpp, panels_results.cpp)
    void draw_header();
    void draw_inputs();
    void draw_import();
    void draw_model_inputs();
    void draw_system_inputs();
    void draw_stack_inputs();
    void draw_parallel_inputs();
    void draw_training_inputs();
    void draw_finetune_inputs();
    void draw_run_inputs();
    void draw_precision_inputs();
    void draw_results();
    void draw_summary();
    void draw_interval();
    void draw_memory();
    void draw_breakdown();
    void draw_comparison();
    void step_comparison();
    bool frame_has_time() const;  // this frame has spent less than kFrameComputeBudgetS
    void draw_timeline();
    void draw_search();
    void start_search();
    void step_search();

    // [SECTION] plots, A/B, export (panels_plots.cpp, panels_compare.cpp)
    void draw_scaling();
    void step_scaling();
    void draw_search_plot();
    void note_search_points();
    void draw_plan();  // panels_plan.cpp
    void start_plan();
    void step_plan();
    void draw_plan_plot();
    std::string plan_link() const;            // "&plan=..." while the panel is open, else ""
    bool open_plan(const std::string& text);  // the "plan" part of a link
    void draw_ab();
    void pin_current();
    void draw_export();
    std::string link_fragment() const;                             // fragment_ plus the pinned state, if any
    bool open_pinned(const std::string& encoded);                  // the "pin" part of a link
    void publish_data(const char* name, const std::string& json);  // once per change

    // Input helpers (panels_inputs.cpp): a combo over the core's enum names, a number with a default.
    template <class E>
    bool enum_combo(const char* label, E& value, std::string_view names_path, std::string_view key = "");
    bool optional_number(const char* label, double& value, double unset, double shown, const std::string& key, const char* format = "%.4g");
    // A knob the framework sets unless the config names it: shows the value in effect, and an edit names it.
    template <class E>
    void framework_knob_combo(const char* label, E& value, E in_effect, bool& named, const char* key);
    void framework_knob_checkbox(const char* label, bool& value, bool in_effect, bool& named, const char* key);

    // Records the last item's rectangle under a config key and, when the current validation
    // error names that key (or a key below it), prints the error right under the control.
    void annotate(const std::string& key);

    Catalogue catalogue_;
    Config edit_;                     // what the controls show; parallel.dp == 0 means "derive"
    std::string edit_json_;           // config_to_json(edit_) at the last recomputation
    std::optional<Error> error_;      // validation error of edit_, if any
    Config valid_;                    // last config that validated (what the results show)
    Prediction result_;               // prediction of valid_ (with the pipeline timeline)
    std::string result_json_;         // prediction_to_json(result_), unless result_json_stale_
    bool result_json_stale_ = false;  // result_ changed: result_json() writes it
    PrecisionComparison comparison_;  // valid state in every precision; rows [0, comparison_rows_) predicted
    size_t comparison_rows_ = 0;
    bool comparison_finished_ = false;  // baseline and speed-ups set
    std::chrono::steady_clock::time_point frame_start_;
    std::string fragment_;    // link fragment of the last valid state
    std::string link_error_;  // a link that could not be opened, shown until the next change
    std::string notice_;      // short-lived feedback ("Link copied")
    double notice_until_s_ = 0;
    std::map<std::string, ImVec4> controls_;            // key -> (x0, y0, x1, y1) on screen
    std::string active_key_;                            // the control active this frame ("" = none)
    std::map<std::string, ImVec4> published_controls_;  // controls_ when controls_json_ was written
    std::string controls_json_ = "{}";                  // {"key": [x0, y0, x1, y1], ...}
    std::string published_;                             // what publish() sent last
    SearchRun search_;
    bool search_all_precisions_ = true;
    bool search_by_cost_ = false;
    ScalingRun scaling_;
    std::string search_points_for_;  // the run the points below belong to
    std::vector<SearchPoint> search_points_;
    std::vector<size_t> search_front_;  // indices into search_points_: the Pareto front
    bool search_points_noted_ = false;  // the current search report is in search_points_
    std::optional<Pinned> pinned_;
    ImportKind import_kind_ = ImportKind::none;  // of the last import
    std::string import_error_;                   // the last import failed (banner), until the next change
    std::vector<std::string> import_warnings_;   // the importer's notes on the last import
    char import_buffer_[16384] = "";
    std::map<std::string, std::string> published_data_;
    PlanPanel plan_;
    std::string plots_json_;      // the axes of the plots drawn this frame (plot.hpp), published as "plots"
    std::string messages_json_;   // the notes and errors shown this frame with their colours, published as "messages"
    bool link_rejected_ = false;  // the last link opened was refused: the address bar keeps it
};

}  // namespace trainclock::gui
