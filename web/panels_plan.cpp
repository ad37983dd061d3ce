// trainclock GUI: the capacity planner (issue 24): which GPUs, how many, how long and at what cost for
// the model and training tokens of the current state, within a deadline and a budget. The core's
// PlanRun (search/plan.hpp) is stepped within a time budget per frame, as the layout search is; the
// panel shows its Pareto plot of run time vs cost (one mark per GPU type) and its options, and a
// click applies an option's config. Its inputs travel in the link ("&plan=DAYS,BUDGET_USD,MAX_GPUS").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "plot.hpp"
#include "toolkit/widgets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/spellings.hpp"

namespace trainclock::gui {

namespace {

constexpr double kPlanFrameBudgetS = 0.008;  // plan time per frame (as the layout search's 10 ms): the page stays responsive

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string format_days(double days) {
    char text[32];
    std::snprintf(text, sizeof text, days >= 100 ? "%.0f days" : days >= 10 ? "%.1f days" : "%.2f days", days);
    return text;
}
std::string format_money(double usd) { return widgets::money(usd); }

// "TP4 PP2 CP1 DP64 EP1 SP ZeRO-1 mbs1 recompute selective" (display only).
std::string describe_parallel(const Config& c) {
    const ParallelSpec& p = c.parallel;
    char text[160];
    std::snprintf(text, sizeof text, "TP%lld PP%lld CP%lld DP%lld EP%lld%s ZeRO-%d v%lld mbs%lld recompute %s", static_cast<long long>(p.tp),
                  static_cast<long long>(p.pp), static_cast<long long>(p.cp), static_cast<long long>(p.dp), static_cast<long long>(p.ep),
                  p.sequence_parallel ? " SP" : "", int(p.zero), static_cast<long long>(p.virtual_stages),
                  static_cast<long long>(c.training.micro_batch), std::string(enum_name(c.training.recompute)).c_str());
    return text;
}

// One mark per GPU type: its colour (Tableau 10) and, past ten types, a second shape.
void draw_mark(ImDrawList* draw, ImVec2 at, int gpu, float size, bool filled) {
    const ImU32 color = widgets::palette(gpu);
    if ((gpu / 10) % 2 == 0) {
        if (filled)
            draw->AddCircleFilled(at, size, color);
        else
            draw->AddCircle(at, size, color, 0, 1.5f);
        return;
    }
    const ImVec2 a(at.x - size, at.y - size), b(at.x + size, at.y + size);
    if (filled)
        draw->AddRectFilled(a, b, color);
    else
        draw->AddRect(a, b, color, 0, 0, 1.5f);
}

}  // namespace

std::string App::plan_link() const {
    if (!plan_.open) return "";
    return "&plan=" + number(plan_.days) + "," + number(plan_.budget_usd) + "," + std::to_string(plan_.max_gpus);
}

bool App::open_plan(const std::string& text) {
    double values[3];
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
        const size_t end = i < 2 ? text.find(',', start) : text.size();
        if (end == std::string::npos || end == start) return false;
        const std::string item = text.substr(start, end - start);
        char* stop = nullptr;
        values[i] = std::strtod(item.c_str(), &stop);
        if (*stop != '\0' || !std::isfinite(values[i]) || values[i] < 0) return false;
        start = end + 1;
    }
    if (values[2] != std::floor(values[2]) || values[2] < 1 || values[2] > double(int64_t(1) << 20)) return false;
    plan_.days = values[0];
    plan_.budget_usd = values[1];
    plan_.max_gpus = int64_t(values[2]);
    plan_.open = true;
    plan_.start_pending = true;
    return true;
}

void App::start_plan() {
    plan_.run.reset();
    plan_.report.reset();
    plan_.report_json.clear();
    plan_.error.clear();
    plan_.wall_s = 0;
    // As `trainclock plan --config` and plan_json (api.cpp) read a config: the draft's model,
    // training and framework; a price it names is every GPU's price.
    Config base = edit_;
    PlanOptions o;
    o.tokens = base.training.tokens;
    o.deadline_days = plan_.days;
    o.budget_usd = plan_.budget_usd;
    o.max_gpus = plan_.max_gpus;
    if (base.training.price_per_gpu_hour_usd >= 0) {
        o.prices.insert(o.prices.begin(), {"", base.training.price_per_gpu_hour_usd});
        base.training.price_per_gpu_hour_usd = -1;
    }
    Result<PlanRun> run = PlanRun::start(base, o);
    if (!run) {
        plan_.error = run.error().to_string();
        return;
    }
    plan_.run = std::make_unique<PlanRun>(std::move(run).value());
    plan_.base = base;
    plan_.options = o;
    plan_.base_json = edit_json_;
}

void App::step_plan() {
    if (!plan_.run) return;
    const auto start = std::chrono::steady_clock::now();
    while (!plan_.run->done() && seconds_since(start) < kPlanFrameBudgetS) plan_.run->step(4);
    plan_.wall_s += seconds_since(start);
    if (!plan_.run->done()) return;
    PlanReport report = plan_.run->finish();
    plan_.run.reset();
    report.wall_s = plan_.wall_s;
    plan_.report_json = plan_report_to_json(plan_.base, plan_.options, report);
    plan_.report = std::move(report);
    // What the panel shows, with the config it planned from (tests run `trainclock plan --config` on it).
    publish_data("plan", "{\"link\": \"" + plan_link() + "\", \"config\": " + config_to_json(plan_.base) + ", \"report\": " +
                             plan_.report_json + "}");
}

void App::draw_plan() {
    ImGui::SetNextItemOpen(plan_.open);
    const bool open = ImGui::CollapsingHeader("Plan: which GPUs, how many, how long and at what cost");
    annotate("plan");
    if (open != plan_.open) {
        plan_.open = open;
        if (open && !plan_.run && !plan_.report) plan_.start_pending = true;  // first opened: plan the defaults
    }
    if (!open) return;
    if (plan_.start_pending && !error_) {
        plan_.start_pending = false;
        start_plan();
    }
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("For this model, sequence length, global batch and framework: every priced GPU type, GPU count and "
                        "precision, each with its best layout; the Pareto front of run time vs cost. Click an option to apply it.");
    ImGui::PopTextWrapPos();
    const float field_w = std::min(150.0f, ImGui::GetContentRegionAvail().x * 0.4f);
    ImGui::SetNextItemWidth(field_w);
    const double min_tokens = 0, max_tokens = 1e15;
    ImGui::SliderScalar("training tokens##plan", ImGuiDataType_Double, &edit_.training.tokens, &min_tokens, &max_tokens, "%.3g",
                        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    annotate("plan.tokens");
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputDouble("deadline (days, 0 = none)", &plan_.days, 0.0, 0.0, "%.4g");
    annotate("plan.days");
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputDouble("budget (USD, 0 = none)", &plan_.budget_usd, 0.0, 0.0, "%.4g");
    annotate("plan.budget");
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputScalar("max GPUs", ImGuiDataType_S64, &plan_.max_gpus, nullptr, nullptr, "%lld");
    annotate("plan.max_gpus");
    plan_.days = std::max(0.0, plan_.days);
    plan_.budget_usd = std::max(0.0, plan_.budget_usd);
    plan_.max_gpus = std::clamp<int64_t>(plan_.max_gpus, 1, int64_t(1) << 20);
    if (plan_.run) {
        if (ImGui::Button("Stop##plan")) plan_.run.reset();
    } else if (ImGui::Button("Plan")) {
        start_plan();
    }
    annotate("plan.start");
    if (!plan_.error.empty()) widgets::error_text(plan_.error);
    if (plan_.run) {
        step_plan();
        if (plan_.run) {
            char progress[96];
            std::snprintf(progress, sizeof progress, "%lld / %lld candidates, %s", static_cast<long long>(plan_.run->decided()),
                          static_cast<long long>(plan_.run->candidates()), widgets::duration(plan_.wall_s).c_str());
            ImGui::ProgressBar(float(plan_.run->decided()) / float(std::max<int64_t>(plan_.run->candidates(), 1)), ImVec2(-1.0f, 0.0f),
                               progress);
            return;
        }
    }
    if (!plan_.report) return;
    const PlanReport& r = *plan_.report;
    if (plan_.base_json != edit_json_) ImGui::TextDisabled("(for an earlier state of the controls)");
    ImGui::Text("%lld candidates, %lld searched in %s", static_cast<long long>(r.candidates), static_cast<long long>(r.searched),
                widgets::duration(plan_.wall_s).c_str());
    if (ImGui::IsItemHovered()) {
        std::string reasons;
        for (int d = 0; d < kPlanDropCount; ++d)
            if (r.dropped[size_t(d)] > 0) reasons += std::to_string(r.dropped[size_t(d)]) + " " + plan_drop_text(PlanDrop(d)) + "\n";
        if (!r.unpriced.empty()) reasons += std::to_string(r.unpriced.size()) + " GPU types left out: no price";
        ImGui::SetTooltip("%s", reasons.c_str());
    }
    if (!r.explanation.empty()) widgets::error_text(r.explanation);
    if (r.options.empty()) return;
    draw_plan_plot();
    if (ImGui::BeginTable("plan_options", 7, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 22.0f);
        ImGui::TableSetupColumn("GPU");
        ImGui::TableSetupColumn("GPUs", ImGuiTableColumnFlags_WidthFixed, 44.0f);
        ImGui::TableSetupColumn("precision");
        ImGui::TableSetupColumn("days", ImGuiTableColumnFlags_WidthFixed, 60.0f);
        ImGui::TableSetupColumn("cost", ImGuiTableColumnFlags_WidthFixed, 64.0f);
        ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 110.0f);
        ImGui::TableHeadersRow();
        for (size_t i = 0; i < r.options.size(); ++i) {
            const PlanOption& f = r.options[i];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(int(i));
            char rank[8];
            std::snprintf(rank, sizeof rank, "%zu", i + 1);
            if (ImGui::Selectable(rank, false, ImGuiSelectableFlags_SpanAllColumns)) edit_ = f.config;
            controls_["plan.option." + std::to_string(i)] = widgets::item_rect();
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click to apply: %s", describe_parallel(f.config).c_str());
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(f.gpu.c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(f.num_gpus));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(f.precision.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_days(f.days).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(widgets::money(f.cost_usd).c_str());
            ImGui::TableNextColumn();
            std::string tags = f.pareto ? "front" : "";
            if (r.fastest_within_budget && *r.fastest_within_budget == i) tags += tags.empty() ? "fastest" : ", fastest";
            if (r.cheapest_within_deadline && *r.cheapest_within_deadline == i) tags += tags.empty() ? "cheapest" : ", cheapest";
            ImGui::TextDisabled("%s", tags.c_str());
        }
        ImGui::EndTable();
    }
}

void App::draw_plan_plot() {
    const PlanReport& r = *plan_.report;
    double d0 = 1e300, d1 = 0, c0 = 1e300, c1 = 0;
    for (const PlanOption& f : r.options) {
        d0 = std::min(d0, f.days);
        d1 = std::max(d1, f.days);
        c0 = std::min(c0, f.cost_usd);
        c1 = std::max(c1, f.cost_usd);
    }
    // Log scales when the options span more than a decade (GPU counts double: days and cost spread).
    const bool log_d = d1 > 10 * d0, log_c = c1 > 10 * c0;
    const Axis x{log_d ? d0 / 1.2 : std::max(0.0, d0 - (d1 - d0) * 0.08 - d1 * 0.02), log_d ? d1 * 1.2 : d1 + (d1 - d0) * 0.08 + d1 * 0.02,
                 log_d, format_days, "run time (wall, with goodput)"};
    const Axis y{log_c ? c0 / 1.2 : std::max(0.0, c0 - (c1 - c0) * 0.08 - c1 * 0.02), log_c ? c1 * 1.2 : c1 + (c1 - c0) * 0.08 + c1 * 0.02,
                 log_c, format_money, "cost (USD)"};
    Frame f = plot_frame("plan_plot", "cost (USD) vs run time", ImGui::GetContentRegionAvail().x, 230.0f, x, y, "plan.plot", plots_json_);
    annotate("plan.plot");
    const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    auto gpu_index = [&r](const std::string& gpu) {
        return int(std::find(r.gpus.begin(), r.gpus.end(), gpu) - r.gpus.begin());
    };
    // The front as a line in time order (options are by days), then every option as its GPU's mark:
    // filled on the front, hollow off it.
    ImVec2 previous;
    bool have_previous = false;
    for (const PlanOption& o : r.options) {
        if (!o.pareto) continue;
        const ImVec2 p(f.sx(o.days), f.sy(o.cost_usd));
        if (have_previous) draw->AddLine(previous, p, ImGui::GetColorU32(ImGuiCol_TextDisabled), 1.5f);
        previous = p;
        have_previous = true;
    }
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    float best_d = 64.0f;
    const PlanOption* near = nullptr;
    for (const PlanOption& o : r.options) {
        const ImVec2 p(f.sx(o.days), f.sy(o.cost_usd));
        draw_mark(draw, p, gpu_index(o.gpu), o.pareto ? 5.0f : 4.0f, o.pareto);
        if (config_to_json(o.config) == config_to_json(valid_)) draw->AddCircle(p, 8.0f, IM_COL32(0, 0, 0, 255), 0, 2.0f);
        const float dx = p.x - mouse.x, dy = p.y - mouse.y;
        if (hovered && dx * dx + dy * dy < best_d) {
            best_d = dx * dx + dy * dy;
            near = &o;
        }
    }
    if (near) {
        ImGui::SetTooltip("%s x %lld, %s\n%s, %s\n%s\nclick to apply", near->gpu.c_str(), static_cast<long long>(near->num_gpus),
                          near->precision.c_str(), format_days(near->days).c_str(), widgets::money(near->cost_usd).c_str(),
                          describe_parallel(near->config).c_str());
        if (clicked) edit_ = near->config;
    }
    // Legend: the GPU types that have an option.
    bool first = true;
    for (size_t g = 0; g < r.gpus.size(); ++g) {
        if (std::none_of(r.options.begin(), r.options.end(), [&](const PlanOption& o) { return o.gpu == r.gpus[g]; })) continue;
        const float line = ImGui::GetTextLineHeight();
        if (!first && ImGui::GetItemRectMax().x + 110.0f < ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x) ImGui::SameLine();
        first = false;
        const ImVec2 q = ImGui::GetCursorScreenPos();
        draw_mark(draw, ImVec2(q.x + line / 2, q.y + line / 2), int(g), 4.0f, true);
        ImGui::Dummy(ImVec2(line, line));
        ImGui::SameLine(0, 2.0f);
        ImGui::TextUnformatted(r.gpus[g].c_str());
    }
    widgets::note("filled: on the Pareto front (no option is both faster and cheaper); hollow: listed, not on the front; ringed: "
                  "the current configuration");
}

}  // namespace trainclock::gui
