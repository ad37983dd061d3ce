// trainclock GUI: app state, recomputation on change, links and the frame layout.
//
// Index
// [SECTION] Catalogue and default state
// [SECTION] Links (the URL fragment format is the core's: link.hpp)
// [SECTION] Recomputation and publication
// [SECTION] Frame layout
#include "app.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "imgui_internal.h"  // ClearActiveID: no public call drops the active field
#include "toolkit/platform.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

// [SECTION] Catalogue and default state ----------------------------------------------------------

namespace {

// One choice per preset of a kind: its id and the spec's text shown beside it ("" if it fails to load).
template <class Spec>
void add_choices(std::vector<Choice>& out, PresetKind kind, Result<Spec> (*lookup)(std::string_view), std::string Spec::*text) {
    for (const auto& name : preset_names(kind)) {
        const auto spec = lookup(name);
        out.push_back({name, spec ? spec.value().*text : ""});
    }
}

}  // namespace

Catalogue Catalogue::load() {
    Catalogue c;
    add_choices(c.models, PresetKind::model, model_preset, &ModelSpec::display_name);
    add_choices(c.gpus, PresetKind::gpu, gpu_preset, &GpuSpec::display_name);
    add_choices(c.nodes, PresetKind::node, node_preset, &NodeSpec::display_name);
    add_choices(c.precisions, PresetKind::precision, precision_preset, &PrecisionSpec::description);
    c.frameworks.push_back({std::string(kNoFramework), "no stack's defaults: Megatron-LM 2020-23's (megatron-lm's)"});
    add_choices(c.frameworks, PresetKind::framework, framework_preset, &FrameworkSpec::display_name);
    return c;
}

namespace {

// The state a fresh page opens with: the README's example run (Llama 3 70B on 1024 H100s).
constexpr const char* kDefaultConfig = R"({"schema": "trainclock/config/v1",
  "model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 1024, "precision": "bf16-mixed",
  "parallel": {"tp": 8, "pp": 4, "dp": 0, "sequence_parallel": true, "zero": 1},
  "training": {"seq_len": 8192, "global_batch": 1024, "micro_batch": 1, "recompute": "selective",
               "flash_attention": true, "tokens": 15e12}})";

// [SECTION] Links --------------------------------------------------------------------------------

// A link restores a validated config, whose data-parallel size is a number. A link that did not
// name one (the link key of parallel.dp is absent) meant "derive it", so the control says "auto".
Result<Config> config_of(const std::string& fragment) {
    auto config = decode_config_link(fragment);
    if (!config) return config;
    std::string dp_key;
    for (const ConfigField& field : config_fields())
        if (field.path == "parallel.dp") dp_key = std::string(field.link_key) + "=";
    const bool named = !dp_key.empty() && ("&" + fragment).find("&" + dp_key) != std::string::npos;
    if (!named) config.value().parallel.dp = 0;
    return config;
}

// A word for a POSIX shell: as is when plainly safe, else single-quoted.
std::string shell_word(const std::string& text) {
    if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+~") == std::string::npos)
        return text;
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Text inside a JSON string: quotes and backslashes escaped (a command holds no control characters).
std::string json_escaped(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

App::App(const std::string& initial_fragment) : catalogue_(Catalogue::load()) {
    auto fallback = parse_config(kDefaultConfig);
    if (fallback) edit_ = fallback.value();
    auto node = node_preset(edit_.gpu.default_node);  // named, so links carry its id, not its data
    if (node) edit_.node = node.value();
    recompute_if_changed();
    if (!initial_fragment.empty()) open_link(initial_fragment);
    result_json();
    publish();
}

void App::open_link(const std::string& link) {
    // "&pin=" carries the pinned A/B state (panels_compare.cpp), "&plan=" the plan panel's inputs
    // before it (panels_plan.cpp); the rest is the core's fragment. A link refused stays in the
    // address bar (platform::keep_address): the user's link is not replaced by the state kept.
    const size_t pin_at = link.find("&pin=");
    const std::string head = link.substr(0, pin_at);
    const size_t plan_at = head.find("&plan=");
    const std::string fragment = head.substr(0, plan_at);
    auto config = config_of(fragment);
    if (!config) {
        link_error_ = "This link cannot be opened (" + config.error().to_string() + "); showing the last valid state.";
        platform::keep_address();
        return;
    }
    auto valid = validate_config(config.value());
    if (!valid) {
        link_error_ = "This link holds an invalid combination (" + valid.error().to_string() + "); showing the last valid state.";
        platform::keep_address();
        return;
    }
    if (plan_at != std::string::npos && !open_plan(head.substr(plan_at + 6))) {
        link_error_ = "This link's plan part cannot be opened (plan: expected DAYS,BUDGET_USD,MAX_GPUS); showing the last valid state.";
        platform::keep_address();
        return;
    }
    if (plan_at == std::string::npos) plan_.open = false;
    edit_ = config.value();
    // A field still being typed into would write its text over the opened state when it loses focus.
    if (ImGui::GetCurrentContext()) ImGui::ClearActiveID();
    recompute_if_changed();
    if (pin_at == std::string::npos)
        pinned_.reset();
    else
        open_pinned(link.substr(pin_at + 5));
}

std::string App::cli_command() const {
    // Links and flags carry the same fields with the same value text (link.hpp), custom specs
    // included ('~' + base64url JSON), so the command is the link's pairs spelled as flags.
    std::string command = "trainclock predict";
    size_t start = 0;
    while (start < fragment_.size()) {
        size_t end = fragment_.find('&', start);
        if (end == std::string::npos) end = fragment_.size();
        const std::string pair = fragment_.substr(start, end - start);
        start = end + 1;
        const size_t equals = pair.find('=');
        if (equals == std::string::npos) continue;
        const ConfigField* field = find_field_by_link_key(pair.substr(0, equals));
        if (!field || field->flag.empty()) continue;
        command += " " + std::string(field->flag) + " " + shell_word(pair.substr(equals + 1));
    }
    return command;
}

// [SECTION] Recomputation and publication --------------------------------------------------------

void App::recompute_if_changed() {
    std::string json = config_to_json(edit_);
    if (json == edit_json_) return;
    edit_json_ = std::move(json);
    link_error_.clear();  // a link or import that failed is reported until the state changes
    import_error_.clear();
    auto valid = validate_config(edit_);
    if (!valid) {
        error_ = valid.error();
        return;
    }
    error_.reset();
    fragment_ = encode_config_link(edit_);  // parallel.dp 0 ("auto") stays out of the link
    valid_ = valid.value();
    PredictOptions options;
    options.timeline = true;
    result_ = predict(valid_, options);
    result_json_stale_ = true;  // written at the start of the next frame: this one has predicted already

    comparison_ = plan_precision_comparison(edit_);  // predicted a few rows per frame (step_comparison)
    comparison_rows_ = 0;
    comparison_finished_ = false;
}

const std::string& App::result_json() {
    if (result_json_stale_) result_json_ = prediction_to_json(result_, &valid_);
    result_json_stale_ = false;
    return result_json_;
}

bool App::frame_has_time() const {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - frame_start_).count();
    return elapsed < kFrameComputeBudgetS;
}

void App::publish() {
    // Formatted again only when a rectangle moved (~100 controls, 4 numbers each, every frame).
    const auto same = [](const auto& a, const auto& b) {
        return a.first == b.first && a.second.x == b.second.x && a.second.y == b.second.y && a.second.z == b.second.z &&
               a.second.w == b.second.w;
    };
    if (controls_.size() != published_controls_.size() ||
        !std::equal(controls_.begin(), controls_.end(), published_controls_.begin(), same)) {
        published_controls_ = controls_;
        controls_json_ = "{";
        for (const auto& [key, r] : controls_) {
            char rect[160];
            std::snprintf(rect, sizeof rect, "%s\"%s\": [%.1f, %.1f, %.1f, %.1f]", controls_json_.size() > 1 ? ", " : "", key.c_str(), r.x,
                          r.y, r.z, r.w);
            controls_json_ += rect;
        }
        controls_json_ += "}";
    }
    const std::string& controls = controls_json_;
    const std::string link = link_fragment();
    if (result_json_stale_) return;  // the state and its result JSON go out together, next frame
    const std::string state = link + '\n' + result_json_ + '\n' + controls;
    if (state == published_) return;
    published_ = state;
    platform::publish_state(link, result_json_.empty() ? "null" : result_json_, controls);
}

// [SECTION] Frame layout -------------------------------------------------------------------------

void App::annotate(const std::string& key) {
    const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
    controls_[key] = ImVec4(min.x, min.y, max.x, max.y);
    if (ImGui::IsItemActive()) active_key_ = key;
    if (!error_) return;
    const std::string& at = error_->key;
    if (at == key || (at.size() > key.size() && at.compare(0, key.size(), key) == 0 && at[key.size()] == '.'))
        widgets::error_text(error_->message);
}

void App::frame() {
    frame_start_ = std::chrono::steady_clock::now();
    result_json();  // of a state the previous frame changed to
    active_key_.clear();
    const std::string navigated = platform::take_navigated_fragment();
    if (!navigated.empty()) open_link(navigated);
    // Pasted into a text field being edited: typed there; anywhere else (or dropped): imported.
    const std::string dropped = platform::take_imported_text();
    if (!dropped.empty() && ImGui::GetIO().WantTextInput)
        ImGui::GetIO().AddInputCharactersUTF8(dropped.c_str());
    else if (!dropped.empty())
        import_text(dropped);

    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    ImGui::Begin("trainclock", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    draw_header();

    // Responsive: inputs beside results on a wide window, one scrolling column on a narrow one.
    const float width = ImGui::GetContentRegionAvail().x;
    if (width >= 900.0f) {
        const float inputs_w = std::clamp(width * 0.38f, 380.0f, 540.0f);
        ImGui::BeginChild("inputs", ImVec2(inputs_w, 0), true);
        draw_inputs();
        ImGui::EndChild();
        annotate("column.inputs");  // its controls stay put while the results column is computed (tests)
        recompute_if_changed();     // same frame: the results below see the moved control
        ImGui::SameLine();
        ImGui::BeginChild("results", ImVec2(0, 0), true);
        draw_results();
        ImGui::EndChild();
    } else {
        ImGui::BeginChild("all", ImVec2(0, 0), false);
        draw_inputs();
        recompute_if_changed();
        ImGui::Separator();
        draw_results();
        ImGui::EndChild();
    }
    ImGui::End();

    const std::string banner = !link_error_.empty()     ? link_error_
                               : !import_error_.empty() ? import_error_
                               : error_ ? "Invalid combination: " + error_->to_string() + " (results show the last valid state)"
                                        : "";
    static std::string shown;
    if (banner != shown) {
        shown = banner;
        platform::show_banner(banner);
    }
    // The control being edited (a field typed into), for tests that drive the keyboard; the command
    // "Copy CLI command" copies.
    publish_data("focus", "{\"active\": \"" + active_key_ + "\"}");
    // The axes of the plots and the messages drawn this frame (tests: tick labels, scales, colours).
    if (!plots_json_.empty()) publish_data("plots", "{" + plots_json_ + "}");
    plots_json_.clear();
    publish_data("messages", widgets::take_messages());
    publish_data("combos", widgets::take_combos());
    publish_data("sliders", widgets::take_sliders());
    publish_data("cli", "{\"command\": \"" + json_escaped(cli_command()) + "\"}");
    publish();
}

void App::draw_header() {
    const bool wide = ImGui::GetContentRegionAvail().x >= 900.0f;
    ImGui::TextUnformatted("trainclock");
    if (wide) {
        ImGui::SameLine();
        ImGui::TextDisabled("how long, and how much, a training run takes, by precision");
    }
    ImGui::SameLine();
    const float buttons_w = 260.0f;
    ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - buttons_w));
    if (ImGui::Button("Copy link")) {
        platform::copy_to_clipboard(platform::link_base() + link_fragment());
        notice_ = "Link copied";
        notice_until_s_ = ImGui::GetTime() + 2.0;
    }
    annotate("copy_link");
    ImGui::SameLine();
    if (ImGui::Button("Copy CLI command")) {
        platform::copy_to_clipboard(cli_command());
        notice_ = "CLI command copied";
        notice_until_s_ = ImGui::GetTime() + 2.0;
    }
    annotate("copy_cli");
    // The headline numbers stay in view whatever the layout (a narrow window scrolls the panels).
    const MemoryBreakdown& m = result_.memory;
    ImGui::Text("step %s | run %s | %s | MFU %.1f %% (dense BF16 peak) | %s / %s per GPU",
                widgets::duration(result_.iteration_time_s).c_str(), widgets::duration(result_.total_time_s).c_str(),
                widgets::money(result_.cost_usd).c_str(), 100.0 * result_.mfu, widgets::gib(m.per_gpu_gib).c_str(),
                widgets::gib(m.capacity_gib).c_str());
    if (!m.fits) {
        ImGui::SameLine();
        widgets::error_text("does not fit");
    }
    if (error_) {
        ImGui::SameLine();
        widgets::error_text("(last valid state)");
    }
    if (!link_error_.empty()) widgets::error_text(link_error_);
    if (ImGui::GetTime() < notice_until_s_) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", notice_.c_str());
    }
}

}  // namespace trainclock::gui
