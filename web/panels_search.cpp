// trainclock GUI: "Find the best layout" (issue 5). The core's search is split into cells; the app
// runs a slice of cells per frame within a time budget, so the UI never freezes (the browser has
// one thread), and shows progress, the ranking, the rejection counts, and applies a layout on click.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

namespace {

constexpr double kFrameBudgetS = 0.010;  // search time per frame: keeps 60 fps with room to draw

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void App::start_search() {
    SearchOptions options;
    options.objective = search_by_cost_ ? SearchObjective::cost : SearchObjective::time;
    options.top_k = 10;
    if (search_all_precisions_) options.precisions = precisions_for_gpu(valid_.gpu);
    options.deferred_pilot = true;  // the pilot runs in step_search's slices too
    auto space = SearchSpace::create(valid_, options);
    search_ = {};
    if (!space) {
        search_.error = space.error().to_string();
        return;
    }
    search_.space = std::make_unique<SearchSpace>(std::move(space).value());
    search_.base_json = edit_json_;
    search_.running = true;
}

void App::step_search() {
    if (!search_.running) return;
    const auto start = std::chrono::steady_clock::now();
    SearchSpace& space = *search_.space;
    while (!space.pilot_done() && seconds_since(start) < kFrameBudgetS) space.run_pilot(4);
    if (!space.pilot_done()) {
        search_.wall_s += seconds_since(start);
        return;
    }
    if (!search_.state) search_.state = std::make_unique<SearchState>(space);
    const int64_t cells = space.cells();
    while (search_.next_cell < cells && seconds_since(start) < kFrameBudgetS) {
        const int64_t end = std::min(cells, search_.next_cell + 4);
        search_.state->run(search_.next_cell, end);
        search_.next_cell = end;
    }
    search_.wall_s += seconds_since(start);
    if (search_.next_cell >= cells) {
        search_.running = false;
        search_.report = finish(*search_.space, *search_.state);
        search_.report.wall_s = search_.wall_s;
    }
}

void App::draw_search() {
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.0f, 0.35f, 0.6f, 1.0f), "Find the best layout for this model, GPU and GPU count");
    ImGui::Separator();
    ImGui::Checkbox("all precisions the GPU runs", &search_all_precisions_);
    annotate("search.all_precisions");                                 // (tests/browser/measure.mjs sets it)
    const bool one_line = ImGui::GetContentRegionAvail().x >= 420.0f;  // else one per line (390 px pages)
    if (one_line) ImGui::SameLine();
    ImGui::Checkbox("rank by cost", &search_by_cost_);
    if (one_line) ImGui::SameLine();
    if (search_.running) {
        if (ImGui::Button("Stop")) search_.running = false;
    } else if (ImGui::Button("Search")) {
        start_search();
    }
    annotate("search");
    if (!search_.error.empty()) widgets::error_text(search_.error);
    if (!search_.space) return;

    const int64_t cells = search_.space->cells();
    char progress[96];
    std::snprintf(progress, sizeof progress, "%lld / %lld cells, %s", static_cast<long long>(search_.next_cell),
                  static_cast<long long>(cells), widgets::duration(search_.wall_s).c_str());
    ImGui::ProgressBar(cells > 0 ? float(search_.next_cell) / float(cells) : 1.0f, ImVec2(-1.0f, 0.0f), progress);
    if (search_.running) {
        step_search();
        return;
    }
    if (search_.next_cell < cells) {
        ImGui::TextDisabled("Stopped.");
        return;
    }
    const SearchReport& report = search_.report;
    if (search_.base_json != edit_json_) ImGui::TextDisabled("(for an earlier state of the controls)");
    ImGui::Text("%lld layouts: %lld feasible, %lld rejected, %lld predicted", static_cast<long long>(report.stats.layouts),
                static_cast<long long>(report.stats.feasible), static_cast<long long>(report.stats.rejected_total()),
                static_cast<long long>(report.stats.predicted));
    if (ImGui::IsItemHovered()) {
        std::string reasons;
        for (int r = 0; r < kRejectReasonCount; ++r)
            if (report.stats.rejected[size_t(r)] > 0)
                reasons +=
                    std::string(reject_reason_text(RejectReason(r))) + ": " + std::to_string(report.stats.rejected[size_t(r)]) + "\n";
        ImGui::SetTooltip("%s", reasons.c_str());
    }
    if (!report.explanation.empty()) widgets::error_text(report.explanation);
    for (const std::string& note : report.notes) widgets::note(note.c_str());
    if (report.top.empty()) return;
    if (ImGui::BeginTable("ranking", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 24.0f);
        ImGui::TableSetupColumn("layout");
        ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthFixed, 70.0f);
        ImGui::TableSetupColumn("cost", ImGuiTableColumnFlags_WidthFixed, 70.0f);
        ImGui::TableSetupColumn("memory", ImGuiTableColumnFlags_WidthFixed, 70.0f);
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < report.top.size(); ++i) {
            const SearchHit& hit = report.top[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%zu", i + 1);
            ImGui::TableNextColumn();
            const std::string layout = describe_layout(*search_.space, hit.layout);
            ImGui::PushID(int(i));
            if (ImGui::Selectable(layout.c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
                edit_ = search_.space->config_for(hit.layout);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click to apply this layout");
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(widgets::duration(hit.prediction.iteration_time_s).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(widgets::money(hit.prediction.cost_usd).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(widgets::gib(hit.prediction.memory.per_gpu_gib).c_str());
        }
        ImGui::EndTable();
    }
}

}  // namespace trainclock::gui
