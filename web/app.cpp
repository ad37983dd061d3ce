// trainclock GUI: app state, recomputation on change, links and the frame layout.
//
// Index
// [SECTION] Catalogue and default state
// [SECTION] Links (the URL fragment format is the core's: api.hpp encode_link / decode_link)
// [SECTION] Recomputation and publication
// [SECTION] Frame layout
#include "app.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>

#include "platform.hpp"
#include "trainclock/api.hpp"
#include "widgets.hpp"

namespace trainclock::gui {

// [SECTION] Catalogue and default state ----------------------------------------------------------

Catalogue Catalogue::load() {
    Catalogue c;
    for (const auto& name : preset_names(PresetKind::model)) {
        auto spec = model_preset(name);
        c.models.push_back({name, spec ? spec.value().display_name : ""});
    }
    for (const auto& name : preset_names(PresetKind::gpu)) {
        auto spec = gpu_preset(name);
        c.gpus.push_back({name, spec ? spec.value().display_name : ""});
    }
    for (const auto& name : preset_names(PresetKind::node)) {
        auto spec = node_preset(name);
        c.nodes.push_back({name, spec ? spec.value().display_name : ""});
    }
    for (const auto& name : preset_names(PresetKind::precision)) {
        auto spec = precision_preset(name);
        c.precisions.push_back({name, spec ? spec.value().description : ""});
    }
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

// Reads {"error": {"key", "message"}} from a facade reply; nullopt when the reply has none.
std::optional<Error> facade_error(simdjson::dom::element reply) {
    simdjson::dom::element error;
    if (reply["error"].get(error)) return std::nullopt;
    std::string_view key, message;
    if (error["key"].get_string().get(key)) key = "";
    if (error["message"].get_string().get(message)) message = "unreadable error";
    return Error{std::string(key), std::string(message)};
}

Result<std::string> fragment_of(const Config& config) {
    const std::string reply = encode_link(config_to_json(config));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(reply).get(doc)) return Error{"", "link encoder returned invalid JSON"};
    if (auto error = facade_error(doc)) return *error;
    std::string_view fragment;
    if (doc["fragment"].get_string().get(fragment)) return Error{"", "link encoder returned no fragment"};
    return std::string(fragment);
}

Result<Config> config_of(const std::string& fragment) {
    const std::string reply = decode_link(fragment);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(reply).get(doc)) return Error{"", "link decoder returned invalid JSON"};
    if (auto error = facade_error(doc)) return *error;
    simdjson::dom::element config;
    if (doc["config"].get(config)) return Error{"", "link decoder returned no config"};
    return parse_config(simdjson::minify(config));
}

// Single-quotes a string for a POSIX shell.
std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

} // namespace

App::App(const std::string& initial_fragment) : catalogue_(Catalogue::load()) {
    auto fallback = parse_config(kDefaultConfig);
    if (fallback) edit_ = fallback.value();
    recompute_if_changed();
    if (!initial_fragment.empty()) open_link(initial_fragment);
    publish();
}

void App::open_link(const std::string& fragment) {
    auto config = config_of(fragment);
    if (!config) {
        link_error_ = "This link cannot be opened (" + config.error().to_string() + "); showing the last valid state.";
        return;
    }
    auto valid = validate_config(config.value());
    if (!valid) {
        link_error_ = "This link holds an invalid combination (" + valid.error().to_string() +
                      "); showing the last valid state.";
        return;
    }
    edit_ = config.value();
    recompute_if_changed();
}

std::string App::cli_command() const {
    // The whole config travels as JSON on stdin, so custom models, GPUs and precisions round-trip.
    return "echo " + shell_quote(config_to_json(edit_)) + " | trainclock predict --config -";
}

// [SECTION] Recomputation and publication --------------------------------------------------------

void App::recompute_if_changed() {
    std::string json = config_to_json(edit_);
    if (json == edit_json_) return;
    edit_json_ = std::move(json);
    link_error_.clear();  // a link that failed to open is reported until the state changes
    auto valid = validate_config(edit_);
    if (!valid) {
        error_ = valid.error();
        return;
    }
    error_.reset();
    auto fragment = fragment_of(edit_);
    if (!fragment) {
        error_ = fragment.error();
        return;
    }
    fragment_ = fragment.value();
    valid_ = valid.value();
    PredictOptions options;
    options.timeline = true;
    result_ = predict(valid_, options);
    result_json_ = prediction_to_json(result_, &valid_);

    comparison_.clear();
    for (const auto& choice : catalogue_.precisions) {
        CompareRow row;
        row.precision = choice.id;
        Config variant = edit_;
        auto precision = precision_preset(choice.id);
        if (precision) {
            variant.precision = precision.value();
            auto checked = validate_config(variant);
            row.ok = checked.ok();
            if (row.ok) row.prediction = predict(checked.value());
            else row.reason = checked.error().to_string();
        } else {
            row.reason = precision.error().to_string();
        }
        comparison_.push_back(std::move(row));
    }
}

void App::publish() {
    std::string controls = "{";
    for (const auto& [key, r] : controls_) {
        char rect[160];
        std::snprintf(rect, sizeof rect, "%s\"%s\": [%.1f, %.1f, %.1f, %.1f]", controls.size() > 1 ? ", " : "",
                      key.c_str(), r.x, r.y, r.z, r.w);
        controls += rect;
    }
    controls += "}";
    const std::string state = fragment_ + '\n' + result_json_ + '\n' + controls;
    if (state == published_) return;
    published_ = state;
    platform::publish_state(fragment_, result_json_.empty() ? "null" : result_json_, controls);
}

// [SECTION] Frame layout -------------------------------------------------------------------------

void App::annotate(const std::string& key) {
    const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
    controls_[key] = ImVec4(min.x, min.y, max.x, max.y);
    if (!error_) return;
    const std::string& at = error_->key;
    if (at == key || (at.size() > key.size() && at.compare(0, key.size(), key) == 0 && at[key.size()] == '.'))
        widgets::error_text(error_->message);
}

void App::frame() {
    const std::string navigated = platform::take_navigated_fragment();
    if (!navigated.empty()) open_link(navigated == "#" ? "" : navigated);

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
        recompute_if_changed();  // same frame: the results below see the moved control
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

    const std::string banner = !link_error_.empty() ? link_error_
                               : error_             ? "Invalid combination: " + error_->to_string() +
                                                          " (results show the last valid state)"
                                                    : "";
    static std::string shown;
    if (banner != shown) {
        shown = banner;
        platform::show_banner(banner);
    }
    publish();
}

void App::draw_header() {
    ImGui::TextUnformatted("trainclock");
    ImGui::SameLine();
    ImGui::TextDisabled("how long, and how much, a training run takes, by precision");
    ImGui::SameLine();
    const float buttons_w = 260.0f;
    ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - buttons_w));
    if (ImGui::Button("Copy link")) {
        platform::copy_to_clipboard(platform::link_base() + fragment_);
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
    if (!link_error_.empty()) widgets::error_text(link_error_);
    if (ImGui::GetTime() < notice_until_s_) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", notice_.c_str());
    }
}

} // namespace trainclock::gui
