// trainclock GUI: plots drawn with ImGui draw lists: how step time, total time, cost and MFU move
// with the GPU count (one line per precision, core scaling.hpp), and the time/cost points of the
// layout searches with their Pareto front (hover for the layout, click to apply). Step and total
// time carry the likely range of each point (intervals.hpp) as a band around the current precision.
//
// Index
// [SECTION] Scaling plots
// [SECTION] Search time/cost plot
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "plot.hpp"
#include "toolkit/platform.hpp"
#include "trainclock/catalogue/intervals.hpp"
#include "toolkit/widgets.hpp"
#include "trainclock/formats/config_json.hpp"

namespace trainclock::gui {

namespace {

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string format_duration(double s) { return widgets::duration(s); }
std::string format_money(double usd) { return widgets::money(usd); }
std::string format_percent(double v) {
    char text[16];
    std::snprintf(text, sizeof text, "%.0f %%", 100.0 * v);
    return text;
}
std::string format_count(double n) {
    char text[24];
    std::snprintf(text, sizeof text, "%.0f", n);
    return text;
}

// One scaling metric: its title, the value of a prediction, the axis kind and format, and whether
// it is a time with a likely range (the result's *_low/*_high, prediction_json.cpp).
struct Metric {
    const char* title;       // also the key of the published points and the export's column
    const char* axis_title;  // the y axis: the quantity with its basis
    double (*value)(const Prediction&);
    bool log;
    std::string (*format)(double);
    bool ranged;
};
const Metric kMetrics[] = {
    {"step time", "step time", [](const Prediction& p) { return p.iteration_time_s; }, true, format_duration, true},
    {"total time", "total time (wall, with goodput)", [](const Prediction& p) { return p.total_time_s; }, true, format_duration, true},
    {"cost", "cost (USD)", [](const Prediction& p) { return p.cost_usd; }, true, format_money, false},
    {"MFU", kMfuBasis, [](const Prediction& p) { return p.mfu; }, false, format_percent, false},
};

// The likely range of a point's metric; nullopt when the metric has none or no interval row applies.
std::optional<LikelyRange> range_of(const Metric& metric, const PrecisionRow& row) {
    if (!metric.ranged || row.error) return std::nullopt;
    const std::optional<LikelyInterval> interval = likely_interval(row.config);  // widened by the distance to the evidence
    if (!interval) return std::nullopt;
    return likely_range(*interval, metric.value(row.prediction));
}

}  // namespace

// [SECTION] Scaling plots ------------------------------------------------------------------------

void App::step_scaling() {
    if (scaling_.for_json != fragment_) {
        scaling_.sweep = plan_scaling(valid_, scaling_gpu_counts(valid_.num_gpus));
        scaling_.for_json = fragment_;
        scaling_.points_json.clear();
        scaling_.json_counts = 0;
        scaling_.published = false;
        return;  // this frame already recomputed the state's own prediction and precision chart
    }
    if (scaling_.published) return;
    // A prediction, or the points of a finished count (what the plots draw, for page scripts and
    // tests: tests/browser/features.test.mjs), at a time within the frame budget.
    ScalingSweep& sweep = scaling_.sweep;
    while (frame_has_time()) {
        if (scaling_.json_counts < sweep.at.size()) {
            const size_t i = scaling_.json_counts++;
            for (const PrecisionRow& row : sweep.at[i].rows) {
                std::string& json = scaling_.points_json;
                json += std::string(json.empty() ? "" : ", ") + "{\"num_gpus\": " + std::to_string(sweep.gpu_counts[i]) +
                        ", \"precision\": \"" + row.config.precision.name + "\"";
                if (row.error) {
                    json += ", \"error\": true}";
                    continue;
                }
                for (const Metric& metric : kMetrics) {
                    json += std::string(", \"") + metric.title + "\": " + number(metric.value(row.prediction));
                    if (const auto range = range_of(metric, row))
                        json += std::string(", \"") + metric.title + " low\": " + number(range->low) + ", \"" + metric.title +
                                " high\": " + number(range->high);
                }
                json += "}";
            }
        } else if (!sweep.done()) {
            run_scaling_rows(sweep, 1);  // after the precision chart's rows
        } else {
            // The colour each precision's line is drawn in (the legend's), for tests of the palette.
            std::string colors;
            for (size_t r = 0; sweep.at.size() > 0 && r < sweep.at.front().rows.size(); ++r) {
                const ImU32 c = widgets::palette(int(r));
                char hex[16];
                std::snprintf(hex, sizeof hex, "#%02x%02x%02x", unsigned(c & 0xFF), unsigned((c >> 8) & 0xFF), unsigned((c >> 16) & 0xFF));
                colors +=
                    std::string(colors.empty() ? "" : ", ") + "\"" + sweep.at.front().rows[r].config.precision.name + "\": \"" + hex + "\"";
            }
            publish_data("scaling",
                         "{\"fragment\": \"" + fragment_ + "\", \"points\": [" + scaling_.points_json + "], \"colors\": {" + colors + "}}");
            scaling_.published = true;
            return;
        }
    }
}

void App::draw_scaling() {
    widgets::heading("Scaling with the GPU count (same layout, DP derived; click a point to apply)");
    step_scaling();
    const ScalingSweep& sweep = scaling_.sweep;
    if (!scaling_.published) {
        ImGui::ProgressBar(float(sweep.at.size()) / float(std::max<size_t>(sweep.gpu_counts.size(), 1)), ImVec2(-1.0f, 0.0f), "computing");
        return;
    }
    const std::vector<int64_t>& counts = sweep.gpu_counts;
    const size_t precisions = sweep.at.empty() ? 0 : sweep.at.front().rows.size();
    const float avail = ImGui::GetContentRegionAvail().x;
    const bool grid = avail >= 620.0f;
    if (!grid) {
        const char* names[] = {kMetrics[0].title, kMetrics[1].title, kMetrics[2].title, kMetrics[3].title};
        ImGui::SetNextItemWidth(160.0f);
        ImGui::Combo("plot", &scaling_.metric, names, 4);
        annotate("scaling.metric");
    }
    const float width = grid ? (avail - ImGui::GetStyle().ItemSpacing.x) / 2.0f : avail;
    const float height = 204.0f;
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    for (int m = 0; m < 4; ++m) {
        if (!grid && m != scaling_.metric) continue;
        const Metric& metric = kMetrics[m];
        double lo = 1e300, hi = metric.log ? 0 : 0;
        for (const PrecisionComparison& at : sweep.at)
            for (const PrecisionRow& row : at.rows) {
                if (row.error) continue;
                const double v = metric.value(row.prediction);
                if (metric.log && !(v > 0)) continue;
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        if (!(hi > 0)) hi = 1;
        if (lo > hi) lo = hi / 10;
        if (!metric.log) lo = 0;
        if (grid && m % 2 == 1) ImGui::SameLine();
        ImGui::PushID(m);
        const Axis x{double(counts.front()), double(counts.back()), true, format_count, "GPUs"};
        const Axis y{lo, hi * (metric.log ? 1.0 : 1.05), metric.log, metric.format, metric.axis_title};
        std::vector<double> ticks;
        for (int64_t n : counts) ticks.push_back(double(n));
        Frame f = plot_frame("plot", std::string(metric.axis_title) + " vs GPUs", width, height, x, y,
                             std::string("scaling.") + metric.title, plots_json_, &ticks);
        const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
        annotate(std::string("scaling.") + metric.title);
        // Lines, the current precision's last (over the others, which often coincide with it) with its
        // likely range under it as a band with edges (clipped to the plot: the scale is the points');
        // then the hovered point (nearest within 8 px) and the current configuration.
        std::vector<size_t> order;  // row indices, the current precision's last
        size_t current = precisions;
        for (size_t r = 0; r < precisions; ++r) {
            if (sweep.at.front().rows[r].config.precision.name == valid_.precision.name)
                current = r;
            else
                order.push_back(r);
        }
        if (current < precisions) order.push_back(current);
        float best_d = 64.0f;
        const PrecisionRow* near = nullptr;
        int64_t near_count = 0;
        for (const size_t r : order) {
            const ImU32 color = widgets::palette(int(r));
            const bool current_precision = r == current;
            if (current_precision && metric.ranged) {
                draw->PushClipRect(f.min, f.max, true);
                const ImU32 fill = (color & 0x00FFFFFF) | 0x70000000, edge = (color & 0x00FFFFFF) | 0xE0000000;
                std::optional<LikelyRange> previous;
                for (size_t i = 0; i < sweep.at.size(); ++i) {
                    std::optional<LikelyRange> range = range_of(metric, sweep.at[i].rows[r]);
                    if (range && !(range->low > 0)) range.reset();  // a log scale has no place for it: a gap
                    if (range && previous) {
                        const float xa = f.sx(double(counts[i - 1])), xb = f.sx(double(counts[i]));
                        const ImVec2 low_a(xa, f.sy(previous->low)), low_b(xb, f.sy(range->low));
                        const ImVec2 high_a(xa, f.sy(previous->high)), high_b(xb, f.sy(range->high));
                        draw->AddQuadFilled(low_a, low_b, high_b, high_a, fill);
                        draw->AddLine(low_a, low_b, edge, 1.0f);
                        draw->AddLine(high_a, high_b, edge, 1.0f);
                    }
                    previous = range;
                }
                draw->PopClipRect();
            }
            ImVec2 previous;
            bool have_previous = false;
            for (size_t i = 0; i < sweep.at.size(); ++i) {
                const PrecisionRow& row = sweep.at[i].rows[r];
                const double v = row.error ? 0 : metric.value(row.prediction);
                if (row.error || (metric.log && !(v > 0))) {
                    have_previous = false;
                    continue;
                }
                const ImVec2 p(f.sx(double(counts[i])), f.sy(v));
                if (have_previous) draw->AddLine(previous, p, color, current_precision ? 2.5f : 1.2f);
                if (!row.prediction.memory.fits)
                    draw->AddCircle(p, 3.0f, color);
                else
                    draw->AddCircleFilled(p, 2.5f, color);
                previous = p;
                have_previous = true;
                const float dx = p.x - mouse.x, dy = p.y - mouse.y;
                if (hovered && dx * dx + dy * dy < best_d) {
                    best_d = dx * dx + dy * dy;
                    near = &row;
                    near_count = counts[i];
                }
                if (current_precision && counts[i] == valid_.num_gpus) { draw->AddCircle(p, 6.0f, IM_COL32(0, 0, 0, 255), 0, 2.0f); }
            }
        }
        if (near) {
            draw->AddCircle(ImVec2(f.sx(double(near_count)), f.sy(metric.value(near->prediction))), 5.0f, IM_COL32(0, 0, 0, 160));
            const std::optional<LikelyRange> range = range_of(metric, *near);
            const std::string likely = range ? ", likely " + metric.format(range->low) + " to " + metric.format(range->high) : "";
            ImGui::SetTooltip("%lld GPUs, %s\n%s %s%s%s", static_cast<long long>(near_count), near->config.precision.name.c_str(),
                              metric.title, metric.format(metric.value(near->prediction)).c_str(), likely.c_str(),
                              near->prediction.memory.fits ? "" : "\ndoes not fit in memory (hollow point)");
            if (clicked) {
                edit_.num_gpus = near_count;
                edit_.parallel.dp = 0;
                edit_.precision = near->config.precision;
            }
        }
        ImGui::PopID();
    }
    // Legend: one colour per precision; the ringed point is the current configuration.
    for (size_t r = 0; r < precisions; ++r) {
        const std::string& name = sweep.at.front().rows[r].config.precision.name;
        const float line = ImGui::GetTextLineHeight();
        if (r > 0 && ImGui::GetItemRectMax().x + 110.0f < ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
        const ImVec2 q = ImGui::GetCursorScreenPos();
        draw->AddRectFilled(ImVec2(q.x, q.y + 3.0f), ImVec2(q.x + line - 6.0f, q.y + line - 3.0f), widgets::palette(int(r)));
        ImGui::Dummy(ImVec2(line - 4.0f, line));
        ImGui::SameLine(0, 2.0f);
        ImGui::TextUnformatted(name.c_str());
    }
    widgets::note("ringed: the current configuration; band: its likely range (10th-90th percentile of measured/predicted over the "
                  "validation cases); hollow: does not fit in memory; gaps: the layout does not divide that many GPUs or the batch");
}

// [SECTION] Search time/cost plot ----------------------------------------------------------------

void App::note_search_points() {
    if (search_.running || !search_.space || search_.next_cell < search_.space->cells()) {
        search_points_noted_ = false;
        return;
    }
    if (search_points_noted_) return;
    search_points_noted_ = true;
    // One run: model, GPU, node and training kept; the GPU count, layout and precision vary.
    Config run = search_.space->base();
    run.num_gpus = 1;
    run.parallel = ParallelSpec{};
    run.precision = PrecisionSpec{};
    run.training.micro_batch = 1;
    run.training.recompute = Recompute::none;
    const std::string key = config_to_json(run);
    if (key != search_points_for_) {
        search_points_for_ = key;
        search_points_.clear();
    }
    for (const SearchHit& hit : search_.report.top) {
        SearchPoint point{search_.space->config_for(hit.layout), describe_layout(*search_.space, hit.layout), hit.prediction};
        const bool known = std::any_of(search_points_.begin(), search_points_.end(), [&](const SearchPoint& p) {
            return p.config.num_gpus == point.config.num_gpus && p.layout == point.layout;
        });
        if (!known) search_points_.push_back(std::move(point));
    }
    std::vector<std::pair<double, double>> xy;
    for (const SearchPoint& p : search_points_) xy.emplace_back(p.prediction.iteration_time_s, p.prediction.cost_usd);
    search_front_ = pareto_front(xy);
    std::string json = "{\"points\": [";
    for (size_t i = 0; i < search_points_.size(); ++i) {
        const SearchPoint& p = search_points_[i];
        const bool front = std::find(search_front_.begin(), search_front_.end(), i) != search_front_.end();
        json += std::string(i ? ", " : "") + "{\"num_gpus\": " + std::to_string(p.config.num_gpus) + ", \"precision\": \"" +
                p.config.precision.name + "\", \"iteration_time_s\": " + number(p.prediction.iteration_time_s) +
                ", \"cost_usd\": " + number(p.prediction.cost_usd) + ", \"pareto\": " + (front ? "true" : "false") + "}";
    }
    publish_data("search", json + "]}");
}

void App::draw_search_plot() {
    note_search_points();
    if (search_points_.empty()) return;
    ImGui::Spacing();
    widgets::note("Step time vs cost of the layouts found (searches at other GPU counts of this run add points; the GPU count "
                  "trades time for cost). Highlighted: the Pareto front.");
    double t0 = 1e300, t1 = 0, c0 = 1e300, c1 = 0;
    for (const SearchPoint& p : search_points_) {
        t0 = std::min(t0, p.prediction.iteration_time_s);
        t1 = std::max(t1, p.prediction.iteration_time_s);
        c0 = std::min(c0, p.prediction.cost_usd);
        c1 = std::max(c1, p.prediction.cost_usd);
    }
    const bool costed = c1 > 0;
    if (!costed) {
        widgets::note("(no run length set: cost is 0; set training tokens to compare cost)");
        c0 = 0;
        c1 = 1;
    }
    const double pad_c = (c1 - c0) * 0.08 + c1 * 0.01, pad_t = (t1 - t0) * 0.08 + t1 * 0.01;
    const Axis x{std::max(0.0, t0 - pad_t), t1 + pad_t, false, format_duration, "step time"};
    const Axis y{std::max(0.0, c0 - pad_c), c1 + pad_c, false, format_money, "cost (USD)"};
    Frame f =
        plot_frame("search_plot", "cost (USD) vs step time", ImGui::GetContentRegionAvail().x, 220.0f, x, y, "search.plot", plots_json_);
    annotate("search.plot");
    const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    // The front as a line in time order, then every point (front ones larger, in the accent colour).
    for (size_t k = 1; k < search_front_.size(); ++k) {
        const Prediction& a = search_points_[search_front_[k - 1]].prediction;
        const Prediction& b = search_points_[search_front_[k]].prediction;
        draw->AddLine(ImVec2(f.sx(a.iteration_time_s), f.sy(a.cost_usd)), ImVec2(f.sx(b.iteration_time_s), f.sy(b.cost_usd)),
                      widgets::palette(5), 2.0f);
    }
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    float best_d = 64.0f;
    const SearchPoint* near = nullptr;
    for (size_t i = 0; i < search_points_.size(); ++i) {
        const SearchPoint& p = search_points_[i];
        const bool front = std::find(search_front_.begin(), search_front_.end(), i) != search_front_.end();
        const ImVec2 s(f.sx(p.prediction.iteration_time_s), f.sy(p.prediction.cost_usd));
        if (front)
            draw->AddCircleFilled(s, 5.0f, widgets::palette(5));
        else
            draw->AddCircleFilled(s, 3.0f, widgets::palette(0));
        if (p.config.num_gpus == valid_.num_gpus && config_to_json(p.config) == config_to_json(valid_))
            draw->AddCircle(s, 7.0f, IM_COL32(0, 0, 0, 255), 0, 2.0f);
        const float dx = s.x - mouse.x, dy = s.y - mouse.y;
        if (hovered && dx * dx + dy * dy < best_d) {
            best_d = dx * dx + dy * dy;
            near = &p;
        }
    }
    if (near) {
        ImGui::SetTooltip("%lld GPUs: %s\nstep %s, cost %s, %s per GPU\nclick to apply", static_cast<long long>(near->config.num_gpus),
                          near->layout.c_str(), widgets::duration(near->prediction.iteration_time_s).c_str(),
                          widgets::money(near->prediction.cost_usd).c_str(), widgets::gib(near->prediction.memory.per_gpu_gib).c_str());
        if (clicked) edit_ = near->config;
    }
    if (ImGui::SmallButton("clear points")) {
        search_points_.clear();
        search_front_.clear();
        publish_data("search", "{\"points\": []}");
    }
}

void App::publish_data(const char* name, const std::string& json) {
    std::string& last = published_data_[name];
    if (last == json) return;
    last = json;
    platform::publish_data(name, json);
}

}  // namespace trainclock::gui
