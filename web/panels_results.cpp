// trainclock GUI: the result panels, all drawn from App::result_ / App::comparison_ (the last
// valid state).
//
// Index
// [SECTION] Results layout and summary
// [SECTION] Memory per GPU
// [SECTION] Step breakdown
// [SECTION] Precision comparison
// [SECTION] Pipeline timeline
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "trainclock/catalogue/intervals.hpp"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

namespace {

void heading(const char* title) {
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.0f, 0.35f, 0.6f, 1.0f), "%s", title);
    ImGui::Separator();
}

std::string format_seconds(double s) { return widgets::duration(s); }
std::string format_gib(double g) { return widgets::gib(g); }

}  // namespace

// [SECTION] Results layout and summary -----------------------------------------------------------

void App::draw_results() {
    if (error_) {
        widgets::error_text("Invalid combination: " + error_->to_string());
        ImGui::TextDisabled("The results below are those of the last valid state.");
    }
    draw_summary();
    // The panels' rectangles are published too (tests and web-report screenshots).
    const auto panel = [this](const char* key, void (App::*draw)()) {
        ImGui::BeginGroup();
        (this->*draw)();
        ImGui::EndGroup();
        annotate(key);
    };
    panel("panel.plan", &App::draw_plan);
    panel("panel.ab", &App::draw_ab);
    draw_memory();
    draw_breakdown();
    draw_comparison();
    panel("panel.scaling", &App::draw_scaling);
    draw_timeline();
    panel("panel.search", &App::draw_search);
    panel("panel.search_plot", &App::draw_search_plot);
    draw_export();
    if (!result_.warnings.empty()) {
        heading("Notes");  // the defaults and assumptions the prediction used: stated, not errors
        for (const std::string& warning : result_.warnings) widgets::info_text(warning);
    }
}

void App::draw_summary() {
    heading("Prediction");
    const Prediction& r = result_;
    ImGui::Text("%s on %lld x %s, %s", valid_.model.display_name.empty() ? valid_.model.name.c_str() : valid_.model.display_name.c_str(),
                static_cast<long long>(valid_.num_gpus), valid_.gpu.name.c_str(), valid_.precision.name.c_str());
    const struct {
        const char* label;
        std::string value;
    } cells[] = {
        {"step time", widgets::duration(r.iteration_time_s)},
        {"total time", r.total_time_s > 0 ? widgets::duration(r.total_time_s) : "-"},
        {"GPU-hours", widgets::si(r.gpu_hours, "GPU-h")},
        {"cost", r.cost_known ? widgets::money(r.cost_usd) : "unknown"},
        {"energy", r.energy_known ? widgets::si(r.energy_kwh * 1e3, "Wh") : "unknown"},
        {"goodput",
         [&] {
             char text[32];
             std::snprintf(text, sizeof text, "%.1f %%", 100.0 * r.run.goodput);
             return std::string(text);
         }()},
        {"interruptions",
         [&] {
             char text[32];
             std::snprintf(text, sizeof text, "%.1f", r.run.expected_interruptions);
             return std::string(text);
         }()},
        {"throughput", widgets::si(r.tokens_per_s, "tok/s")},
        {"per GPU", widgets::si(r.tokens_per_s_per_gpu, "tok/s")},
        {kMfuBasis,
         [&] {
             char text[32];
             std::snprintf(text, sizeof text, "%.1f %%", 100.0 * r.mfu);
             return std::string(text);
         }()},
        {"model TFLOP/s/GPU",
         [&] {
             char text[32];
             std::snprintf(text, sizeof text, "%.1f", r.model_tflops_per_gpu);
             return std::string(text);
         }()},
        {"optimizer steps", widgets::si(r.steps, "")},
    };
    const int columns = std::max(1, std::min(5, int(ImGui::GetContentRegionAvail().x / 150.0f)));
    if (ImGui::BeginTable("summary", columns, ImGuiTableFlags_SizingStretchSame)) {
        std::string json;
        for (const auto& cell : cells) {
            ImGui::TableNextColumn();
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("%s", cell.label);  // wrapped: a label with its basis is wider than a column
            ImGui::PopStyleColor();
            ImGui::Text("%s", cell.value.c_str());
            json += std::string(json.empty() ? "" : ", ") + "\"" + cell.label + "\": \"" + cell.value + "\"";
        }
        ImGui::EndTable();
        publish_data("summary", "{" + json + "}");  // the cells as shown (labels with units and basis)
    }
    draw_interval();
}

// The likely range of the step and total time: 80 % of measured / predicted over the cross-source
// validation cases of the config's group, each source family one witness, widened by the distance
// to the validated cases (intervals.hpp), as whiskers, with its reason beside it.
void App::draw_interval() {
    const std::optional<LikelyInterval> interval = likely_interval(valid_);
    if (!interval) return;
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("likely range: %s", interval->reason.c_str());
    ImGui::PopTextWrapPos();
    annotate("interval.reason");
    const Prediction& r = result_;
    const float width = ImGui::GetContentRegionAvail().x, line = ImGui::GetTextLineHeight();
    const auto whisker = [&](const char* key, const char* label, double value) {
        if (!(value > 0)) return;
        const LikelyRange range = likely_range(*interval, value);
        const double low = range.low, high = range.high;
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        const float label_w = 90.0f, text_w = 260.0f, bar_w = std::max(width - label_w - text_w, 60.0f);
        ImGui::InvisibleButton(key, ImVec2(width, line + 4.0f));
        annotate(key);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s %s, likely %s to %s", label, widgets::duration(value).c_str(), widgets::duration(low).c_str(),
                              widgets::duration(high).c_str());
        ImDrawList* draw = ImGui::GetWindowDrawList();
        draw->AddText(origin, ImGui::GetColorU32(ImGuiCol_TextDisabled), label);
        // Scale: the interval with a margin, so the whisker and the point stay inside the bar.
        const double lo = std::min(low, value) * 0.9, hi = std::max(high, value) * 1.1;
        const auto x = [&](double v) { return origin.x + label_w + float((v - lo) / (hi - lo)) * bar_w; };
        const float y = origin.y + line * 0.5f + 2.0f;
        const ImU32 band = widgets::palette(0), point = widgets::palette(5);
        draw->AddRectFilled(ImVec2(x(low), y - 3.0f), ImVec2(x(high), y + 3.0f), (band & 0x00FFFFFF) | 0x60000000);
        draw->AddLine(ImVec2(x(low), y - 6.0f), ImVec2(x(low), y + 6.0f), band, 2.0f);
        draw->AddLine(ImVec2(x(high), y - 6.0f), ImVec2(x(high), y + 6.0f), band, 2.0f);
        draw->AddCircleFilled(ImVec2(x(value), y), 4.0f, point);
        const std::string text = widgets::duration(low) + " .. " + widgets::duration(value) + " .. " + widgets::duration(high);
        draw->AddText(ImVec2(origin.x + label_w + bar_w + 10.0f, origin.y), ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
    };
    whisker("interval.step", "step time", r.iteration_time_s);
    whisker("interval.total", "total time", r.total_time_s);
}

// [SECTION] Memory per GPU -----------------------------------------------------------------------

void App::draw_memory() {
    heading("Memory per GPU");
    const MemoryBreakdown& m = result_.memory;
    const std::vector<widgets::Segment> parts = {
        {"weights", m[MemoryPart::weights], widgets::palette(0)},         {"gradients", m[MemoryPart::grads], widgets::palette(1)},
        {"master weights", m[MemoryPart::master], widgets::palette(2)},   {"optimizer", m[MemoryPart::optimizer], widgets::palette(3)},
        {"activations", m[MemoryPart::activations], widgets::palette(4)}, {"other", m[MemoryPart::other], widgets::palette(7)},
    };
    if (m.fits) {
        ImGui::Text("%s of %s (%.0f %%)", widgets::gib(m.per_gpu_gib).c_str(), widgets::gib(m.capacity_gib).c_str(),
                    m.capacity_gib > 0 ? 100.0 * m.per_gpu_gib / m.capacity_gib : 0.0);
    } else {
        widgets::error_text("DOES NOT FIT: " + widgets::gib(m.per_gpu_gib) + " needed > " + widgets::gib(m.capacity_gib) +
                            " per GPU. Raise TP/PP, ZeRO or recompute, or lower the micro-batch.");
    }
    widgets::stacked_bar("memory", parts, std::max(m.capacity_gib, m.per_gpu_gib) * 1.02, m.capacity_gib, format_gib);
    widgets::legend(parts, m.per_gpu_gib, format_gib);
}

// [SECTION] Step breakdown -----------------------------------------------------------------------

void App::draw_breakdown() {
    heading("Step time breakdown (critical path)");
    const StepBreakdown& b = result_.breakdown_s;
    // Label and palette colour of each StepPart, in its order.
    static constexpr const char* kLabels[] = {"GEMM",      "attention", "elementwise",     "precision overhead",
                                              "optimizer", "TP comm",   "PP comm",         "DP comm",
                                              "CP comm",   "EP comm",   "pipeline bubble", "overhead"};
    static constexpr int kColours[] = {0, 4, 2, 5, 3, 1, 9, 8, 10, 11, 7, 6};
    static_assert(std::size(kLabels) == kStepPartCount && std::size(kColours) == kStepPartCount, "one label and colour per part");
    std::vector<widgets::Segment> parts;
    for (size_t part = 0; part < kStepPartCount; ++part)
        parts.push_back({kLabels[part], b.seconds[part], widgets::palette(kColours[part])});
    double total = 0;
    for (const auto& part : parts) total += part.value;
    widgets::stacked_bar("breakdown", parts, total, 0, format_seconds);
    widgets::legend(parts, total, format_seconds);
}

// [SECTION] Precision comparison -----------------------------------------------------------------

void App::step_comparison() {
    PrecisionComparison& c = comparison_;
    if (comparison_rows_ >= c.rows.size() && comparison_finished_) return;
    while (comparison_rows_ < c.rows.size() && frame_has_time()) predict_precision_row(c.rows[comparison_rows_++]);
    if (comparison_rows_ >= c.rows.size()) {
        finish_precision_comparison(c);
        comparison_finished_ = true;
    }
}

void App::draw_comparison() {
    heading("The same run in every precision (step time; click a bar to switch)");
    step_comparison();
    double slowest = 0;
    for (size_t i = 0; i < comparison_rows_; ++i)
        if (!comparison_.rows[i].error) slowest = std::max(slowest, comparison_.rows[i].prediction.iteration_time_s);
    const float label_w = 110.0f, value_w = 230.0f;
    const float bar_w = std::max(ImGui::GetContentRegionAvail().x - label_w - value_w, 40.0f);
    const float height = ImGui::GetTextLineHeight();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (size_t i = 0; i < comparison_.rows.size(); ++i) {
        const PrecisionRow& row = comparison_.rows[i];
        const std::string& name = row.config.precision.name;
        const bool current = name == valid_.precision.name;
        ImGui::PushID(name.c_str());
        ImGui::TextUnformatted(name.c_str());
        ImGui::SameLine(label_w);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        if (ImGui::InvisibleButton("bar", ImVec2(bar_w, height)) && i < comparison_rows_ && !row.error) {
            auto preset = precision_preset(name);
            if (preset) edit_.precision = preset.value();
        }
        if (i >= comparison_rows_) {
            ImGui::SameLine();
            ImGui::TextDisabled("...");
        } else if (!row.error && slowest > 0) {
            const float w = float(row.prediction.iteration_time_s / slowest) * bar_w;
            const ImU32 color = !row.prediction.memory.fits ? IM_COL32(200, 30, 30, 200)
                                : current                   ? widgets::palette(5)
                                                            : widgets::palette(0);
            draw->AddRectFilled(p, ImVec2(p.x + std::max(w, 1.0f), p.y + height), color);
            ImGui::SameLine();
            char speedup[32] = "";
            if (comparison_finished_ && row.speedup > 0) std::snprintf(speedup, sizeof speedup, "  x%.2f", row.speedup);
            ImGui::Text("%s  %s%s%s", widgets::duration(row.prediction.iteration_time_s).c_str(),
                        widgets::money(row.prediction.cost_usd).c_str(), speedup, row.prediction.memory.fits ? "" : "  no fit");
        } else {
            ImGui::SameLine();
            ImGui::TextDisabled("n/a");
            if (ImGui::IsItemHovered() && row.error) ImGui::SetTooltip("%s", row.error->to_string().c_str());
        }
        ImGui::PopID();
    }
    if (comparison_finished_ && !comparison_.baseline.empty()) ImGui::TextDisabled("speed-up against %s", comparison_.baseline.c_str());
    if (!comparison_.unsupported.empty()) {
        std::string names;
        for (const std::string& name : comparison_.unsupported) names += (names.empty() ? "" : ", ") + name;
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("%s does not run: %s", valid_.gpu.name.c_str(), names.c_str());
        ImGui::PopTextWrapPos();
    }
}

// [SECTION] Pipeline timeline --------------------------------------------------------------------

void App::draw_timeline() {
    heading("Pipeline timeline of one iteration (per stage)");
    const std::vector<TimelineSpan>& spans = result_.timeline;
    if (spans.empty()) {
        ImGui::TextDisabled("No timeline for this configuration.");
        return;
    }
    int stages = 0;
    double end_s = 0;
    for (const TimelineSpan& span : spans) {
        stages = std::max(stages, span.stage + 1);
        end_s = std::max(end_s, span.end_s);
    }
    const float label_w = 70.0f;
    const float row_h = std::clamp(240.0f / float(stages), 6.0f, 22.0f);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = std::max(ImGui::GetContentRegionAvail().x - label_w, 50.0f);
    ImGui::InvisibleButton("timeline", ImVec2(label_w + width, row_h * float(stages) + 4.0f));
    const bool hovered = ImGui::IsItemHovered();
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (int s = 0; s < stages; ++s) {
        if (row_h >= ImGui::GetTextLineHeight()) {
            char label[24];
            std::snprintf(label, sizeof label, "stage %d", s);
            draw->AddText(ImVec2(origin.x, origin.y + float(s) * row_h), ImGui::GetColorU32(ImGuiCol_Text), label);
        }
        draw->AddRectFilled(ImVec2(origin.x + label_w, origin.y + float(s) * row_h),
                            ImVec2(origin.x + label_w + width, origin.y + float(s + 1) * row_h - 1.0f),
                            ImGui::GetColorU32(ImGuiCol_FrameBg));
    }
    for (const TimelineSpan& span : spans) {
        const float x0 = origin.x + label_w + float(span.start_s / end_s) * width;
        const float x1 = origin.x + label_w + float(span.end_s / end_s) * width;
        const float y0 = origin.y + float(span.stage) * row_h;
        const ImVec2 a(x0, y0), b(std::max(x1, x0 + 1.0f), y0 + row_h - 1.0f);
        const ImU32 color = widgets::palette(span.forward ? (span.chunk % 2 ? 4 : 0) : (span.chunk % 2 ? 6 : 1));
        draw->AddRectFilled(a, b, color);
        draw->AddRect(a, b, IM_COL32(255, 255, 255, 160));
        if (x1 - x0 > 14.0f && row_h >= ImGui::GetTextLineHeight()) {
            char text[12];
            std::snprintf(text, sizeof text, "%d", span.micro_batch);
            draw->AddText(ImVec2(x0 + 2.0f, y0), IM_COL32(255, 255, 255, 255), text);
        }
        if (hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y)
            ImGui::SetTooltip("stage %d, micro-batch %d, chunk %d, %s\n%s .. %s", span.stage, span.micro_batch, span.chunk,
                              span.forward ? "forward" : "backward", widgets::duration(span.start_s).c_str(),
                              widgets::duration(span.end_s).c_str());
    }
    ImGui::TextDisabled("forward: blue, backward: orange (lighter: odd virtual chunk); %s per iteration", widgets::duration(end_s).c_str());
}

}  // namespace trainclock::gui
