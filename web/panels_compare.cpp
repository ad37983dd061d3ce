// trainclock GUI: A/B comparison (pin the current configuration as A, change things, see A and B
// side by side with the differences highlighted; both travel in the link as "...&pin=<A>") and
// the export buttons (result JSON, scaling CSV, search CSV).
//
// Index
// [SECTION] Pinned state in the link
// [SECTION] A/B panel
// [SECTION] Export
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app.hpp"
#include "imgui.h"
#include "toolkit/platform.hpp"
#include "trainclock/formats/link.hpp"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

namespace {

// The "key=value" pairs of a link fragment, in order.
std::vector<std::pair<std::string, std::string>> link_pairs(const std::string& fragment) {
    std::vector<std::pair<std::string, std::string>> pairs;
    size_t start = 0;
    while (start < fragment.size()) {
        size_t end = fragment.find('&', start);
        if (end == std::string::npos) end = fragment.size();
        const std::string pair = fragment.substr(start, end - start);
        const size_t equals = pair.find('=');
        if (equals != std::string::npos) pairs.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
        start = end + 1;
    }
    return pairs;
}

const std::string* value_of(const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& key) {
    for (const auto& [k, v] : pairs)
        if (k == key) return &v;
    return nullptr;
}

}  // namespace

// [SECTION] Pinned state in the link -------------------------------------------------------------

std::string App::link_fragment() const {
    return fragment_ + plan_link() + (pinned_ ? "&pin=" + base64url_encode(pinned_->fragment) : std::string());
}

bool App::open_pinned(const std::string& encoded) {
    auto fragment = base64url_decode(encoded);
    auto config = fragment ? decode_config_link(fragment.value()) : Result<Config>(Error{"pin", "not base64url"});
    if (!config) {
        link_error_ = "The pinned state (A) of this link cannot be opened (" + config.error().to_string() + "); unpinned.";
        pinned_.reset();
        return false;
    }
    pinned_ = Pinned{config.value(), fragment.value(), predict(config.value())};
    return true;
}

void App::pin_current() {
    pinned_ = Pinned{valid_, fragment_, result_};
    pinned_->result.timeline.clear();
}

// [SECTION] A/B panel ----------------------------------------------------------------------------

void App::draw_ab() {
    widgets::heading("A/B: pin a configuration, change things, compare");
    if (!pinned_) {
        if (ImGui::Button("Pin this configuration as A")) pin_current();
        annotate("ab.pin");
        widgets::note("Then change the controls: the current state is B, shown beside A.");
        publish_data("pinned", "null");
        return;
    }
    if (ImGui::Button("Unpin A")) {
        pinned_.reset();
        publish_data("pinned", "null");
        return;
    }
    annotate("ab.unpin");
    ImGui::SameLine();
    if (ImGui::Button("Pin B as A")) pin_current();
    annotate("ab.repin");
    ImGui::SameLine();
    if (ImGui::Button("Go back to A")) edit_ = pinned_->config;
    annotate("ab.restore");
    publish_data("pinned", "{\"fragment\": \"" + pinned_->fragment + "\"}");

    // Settings that differ, by link key (the flag name is what a user knows from the CLI).
    const auto a_pairs = link_pairs(pinned_->fragment), b_pairs = link_pairs(fragment_);
    std::string changed;
    for (const ConfigField& field : config_fields()) {
        const std::string key(field.link_key);
        if (key.empty()) continue;
        const std::string* a = value_of(a_pairs, key);
        const std::string* b = value_of(b_pairs, key);
        if ((a == nullptr) == (b == nullptr) && (!a || *a == *b)) continue;
        const auto show = [](const std::string* v) {
            if (!v) return std::string("default");
            return v->size() > 24 ? v->substr(0, 21) + "..." : *v;
        };
        changed += (changed.empty() ? "" : ", ") + std::string(field.flag.empty() ? field.path : field.flag.substr(2)) + " " + show(a) +
                   " -> " + show(b);
    }
    if (changed.empty())
        widgets::note("B is the same configuration as A.");
    else
        ImGui::TextWrapped("Changed from A: %s", changed.c_str());

    const Prediction& a = pinned_->result;
    const Prediction& b = result_;
    struct Row {
        const char* label;
        double a, b;
        std::string (*format)(double);
        bool lower_is_better;
    };
    const auto percent = [](double v) {
        char text[16];
        std::snprintf(text, sizeof text, "%.1f %%", 100.0 * v);
        return std::string(text);
    };
    const auto tokens = [](double v) { return widgets::si(v, "tok/s"); };
    const Row rows[] = {
        {"step time", a.iteration_time_s, b.iteration_time_s, widgets::duration, true},
        {"total time", a.total_time_s, b.total_time_s, widgets::duration, true},
        {"cost", a.cost_usd, b.cost_usd, widgets::money, true},
        {"MFU", a.mfu, b.mfu, +percent, false},
        {"throughput", a.tokens_per_s, b.tokens_per_s, +tokens, false},
        {"memory per GPU", a.memory.per_gpu_gib, b.memory.per_gpu_gib, widgets::gib, true},
    };
    if (ImGui::BeginTable("ab", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame)) {
        ImGui::TableSetupColumn("");
        ImGui::TableSetupColumn("A (pinned)");
        ImGui::TableSetupColumn("B (current)");
        ImGui::TableSetupColumn("B vs A");
        ImGui::TableHeadersRow();
        for (const Row& row : rows) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.label);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.format(row.a).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.format(row.b).c_str());
            ImGui::TableNextColumn();
            if (row.a == row.b || !(row.a != 0)) {
                ImGui::TextDisabled(row.a == row.b ? "same" : "-");
                continue;
            }
            const double change = row.b / row.a - 1.0;
            const bool better = row.lower_is_better ? change < 0 : change > 0;
            ImGui::TextColored(better ? ImVec4(0.0f, 0.55f, 0.25f, 1.0f) : ImVec4(0.8f, 0.1f, 0.1f, 1.0f), "%+.1f %%", 100.0 * change);
        }
        ImGui::EndTable();
    }
    if (a.memory.fits != b.memory.fits) widgets::error_text(b.memory.fits ? "A does not fit in memory" : "B does not fit in memory");
}

// [SECTION] Export -------------------------------------------------------------------------------

void App::draw_export() {
    widgets::heading("Export");
    const auto save = [&](const std::string& name, const char* mime, const std::string& text) {
        notice_ = platform::save_file(name, mime, text);
        notice_until_s_ = ImGui::GetTime() + 3.0;
    };
    if (ImGui::Button("result JSON")) save("trainclock-result.json", "application/json", result_json() + "\n");
    annotate("export.result");
    ImGui::SameLine();
    const bool scaling_ready = scaling_.sweep.done() && scaling_.for_json == fragment_;
    ImGui::BeginDisabled(!scaling_ready);
    if (ImGui::Button("scaling CSV")) save("trainclock-scaling.csv", "text/csv", scaling_to_csv(scaling_.sweep));
    ImGui::EndDisabled();
    annotate("export.scaling");
    ImGui::SameLine();
    const bool search_ready = search_.space && !search_.running && search_.next_cell >= search_.space->cells();
    ImGui::BeginDisabled(!search_ready);
    if (ImGui::Button("search CSV"))
        save("trainclock-search.csv", "text/csv", search_csv_header() + "\n" + search_to_csv_rows(*search_.space, search_.report));
    ImGui::EndDisabled();
    annotate("export.search");
    if (!search_ready) widgets::note("(search CSV: run a search first)");
}

}  // namespace trainclock::gui
