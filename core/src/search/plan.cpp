// trainclock: the capacity planner (plan.hpp, issue 24).
#include "trainclock/search/plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "base/json_writer.hpp"
#include "formats/config_json.hpp"
#include "perf/phases.hpp"
#include "search/search_internal.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/run.hpp"
#include "trainclock/search/scaling.hpp"

namespace trainclock {

const char* plan_drop_name(PlanDrop drop) {
    switch (drop) {
    case PlanDrop::deadline: return "deadline";
    case PlanDrop::budget: return "budget";
    case PlanDrop::dominated: return "dominated";
    case PlanDrop::no_layout: return "no_layout";
    }
    return "unknown";
}

const char* plan_drop_text(PlanDrop drop) {
    switch (drop) {
    case PlanDrop::deadline: return "cannot meet the deadline";
    case PlanDrop::budget: return "cannot fit the budget";
    case PlanDrop::dominated: return "another option is as fast and as cheap";
    case PlanDrop::no_layout: return "no layout fits or passes the rules";
    }
    return "unknown";
}

int64_t plan_global_batch(const Config& base, int64_t num_gpus) {
    const int64_t gbs = std::max<int64_t>(base.training.global_batch, 1);
    const double seq = double(std::max<int64_t>(base.training.seq_len, 1));
    const double target = std::min(kPlanTokensPerGpu * double(num_gpus), kPlanMaxStepTokens);
    int64_t out = gbs;
    while (double(out) * seq < target && double(out * 2) * seq <= kPlanMaxStepTokens && out <= (int64_t(1) << 25)) out *= 2;
    return out;
}

std::string plan_batch_rule(const Config& base, const PlanOptions& o) {
    const std::string gbs = std::to_string(base.training.global_batch);
    if (o.fixed_batch) return "global batch " + gbs + " x " + std::to_string(base.training.seq_len) + " tokens at every count (fixed)";
    return "global batch " + gbs +
           " doubled until a step holds 1024 tokens per GPU, at most 16M tokens (Llama 3 405B's steps on 8K-16K GPUs, "
           "arXiv 2407.21783 Table 4)";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerDay = 86400.0;

// One (GPU, count, precision) with its config (no layout yet) and the bounds of its run.
struct Candidate {
    Config config;
    double step_lb_s = 0;  // compute-only: model FLOPs / (count x peak)
    double wall_lb_s = 0;  // the run's wall time at that step (a lower bound)
    double cost_lb_usd = 0;
    double checkpoint_bytes = 0;  // checkpoint_bytes(config): whole_run's costliest part, found once
};

double run_steps(const Config& c) { return std::ceil(c.training.tokens / (double(c.training.global_batch) * double(c.training.seq_len))); }

// A lower bound of the run's wall time when a step takes at least step_s: whole_run (as predict()),
// less one checkpoint write (its count is a floor of a ratio of the step time that may drop by one as
// the step grows, search.cpp cost_lower_bound_usd) and 1e-9 relative.
double wall_lower_bound_s(const Config& c, double checkpoint_bytes, double step_s) {
    const WholeRun run = whole_run(c, step_s, run_steps(c), checkpoint_bytes);
    double wall_s = run.ideal_time_s / run.goodput;
    const double useful_s = run.ideal_time_s + run.checkpoints * run.checkpoint_write_s;
    if (!run.ideal && useful_s > 0) wall_s -= wall_s * run.checkpoint_write_s / useful_s;
    return wall_s * (1.0 - 1e-9);
}

// The step time beyond which the bound f(step) exceeds `limit` (f non-decreasing): every step above
// the result has f > limit. Infinity when none does.
template <class F>
double step_beyond_s(F f, double limit, double start_s) {
    double lo = 0, hi = std::max(start_s, 1e-9);
    for (int i = 0; i < 200 && !(f(hi) > limit); ++i) hi *= 2;
    if (!(f(hi) > limit)) return kInf;
    for (int i = 0; i < 64 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = lo + (hi - lo) / 2;
        (f(mid) > limit ? hi : lo) = mid;
    }
    return hi;
}

// GPU counts of a node shape up to max_gpus: powers of two within one host, then whole hosts times
// powers of two (node_fill_rule: beyond one host, whole hosts).
std::vector<int64_t> plan_counts(const NodeSpec& node, int64_t max_gpus) {
    const int64_t host = std::max<int64_t>(node.host_gpus(), 1);
    std::vector<int64_t> counts;
    for (int64_t n = 1; n < host && n <= max_gpus; n *= 2) counts.push_back(n);
    for (int64_t n = host; n <= max_gpus; n *= 2) counts.push_back(n);
    return counts;
}

std::optional<double> price_for(const PlanOptions& o, const std::string& gpu) {
    std::optional<double> price;
    for (const auto& [id, usd] : o.prices)
        if (id == gpu || id.empty()) price = usd;  // the last one given wins, as repeated flags do
    return price;
}

}  // namespace

// The state of a plan between slices (PlanRun): the candidates by ascending cost bound, the next one
// to decide, the options found, and the search of the candidate in progress.
struct PlanRunData {
    PlanOptions o;
    PlanReport report;
    std::vector<Candidate> candidates;
    size_t next = 0;  // candidates [0, next) are decided
    std::vector<PlanOption> found;
    double fastest_bound_s = kInf;  // for the explanation
    double deadline_s = kInf, budget = kInf;
    std::map<std::pair<std::string, std::string>, std::shared_ptr<FloorCache>> shared_floors;  // by (GPU, precision)

    // The search of candidates[next], once its bounds left it in play.
    enum class Phase { bounds, estimates, pilot, cells } phase = Phase::bounds;
    std::unique_ptr<SearchSpace> space;
    double max_step_s = kInf;
    PlanDrop binding = PlanDrop::dominated;
    size_t estimates_left = 0;              // group estimates of the pilot still to run
    std::unique_ptr<SearchState> state;     // the space had no pilot state: every cell
    std::unique_ptr<SearchStateData> main;  // else the cells the pilot did not search, merged with its state
    size_t pilot_index = 0;                 // the next of the space's pilot_cells_ to skip
    int64_t cell = 0;                       // the next cell to run

    void decide(PlanDrop drop) {
        ++report.dropped[size_t(drop)];
        end_candidate();
    }
    void end_candidate() {
        state.reset();
        main.reset();
        space.reset();
        phase = Phase::bounds;
        ++next;
    }
    void bounds();    // Phase::bounds: drop the candidate by its bounds, or start its search
    void searched();  // its search is done: record the option, or drop it
    void step(int64_t& units);
    PlanReport finish();
};

void PlanRunData::bounds() {
    const Candidate& k = candidates[next];
    fastest_bound_s = std::min(fastest_bound_s, k.wall_lb_s);
    const Config& c = k.config;
    max_step_s = kInf;
    binding = PlanDrop::dominated;
    if (!o.exhaustive) {
        if (k.wall_lb_s > deadline_s) return decide(PlanDrop::deadline);
        if (k.cost_lb_usd > budget) return decide(PlanDrop::budget);
        auto wall = [&c, &k](double step_s) { return wall_lower_bound_s(c, k.checkpoint_bytes, step_s); };
        auto cost = [&c, &k](double step_s) { return phases::run_cost_usd(c, wall_lower_bound_s(c, k.checkpoint_bytes, step_s)); };
        for (const PlanOption& f : found) {
            const double f_wall_s = f.prediction.total_time_s;
            if (f_wall_s <= k.wall_lb_s && f.cost_usd <= k.cost_lb_usd && (f_wall_s < k.wall_lb_s || f.cost_usd < k.cost_lb_usd))
                return decide(PlanDrop::dominated);
        }
        // Beyond max_step_s a layout misses the deadline or the budget, or is slower and costlier
        // than an option found: of no interest (the search prunes it by its lower bounds).
        if (deadline_s < kInf) max_step_s = step_beyond_s(wall, deadline_s, k.step_lb_s), binding = PlanDrop::deadline;
        if (budget < kInf) {
            const double t = step_beyond_s(cost, budget, k.step_lb_s);
            if (t < max_step_s) max_step_s = t, binding = PlanDrop::budget;
        }
        for (const PlanOption& f : found) {
            // Both bounds below are at least the step where the wall bound passes f's time: when it
            // has not passed it at max_step_s yet, neither is below max_step_s (no bisection needed).
            if (max_step_s < kInf && !(wall(max_step_s) > f.prediction.total_time_s)) continue;
            if (f.cost_usd < k.cost_lb_usd) {  // the cost bound alone: beyond its wall, worse on both
                const double t = step_beyond_s(wall, f.prediction.total_time_s, k.step_lb_s);
                if (t < max_step_s) max_step_s = t, binding = PlanDrop::dominated;
                continue;
            }
            const double t =
                std::max(step_beyond_s(wall, f.prediction.total_time_s, k.step_lb_s), step_beyond_s(cost, f.cost_usd, k.step_lb_s));
            if (t < max_step_s) max_step_s = t, binding = PlanDrop::dominated;
        }
        if (max_step_s < k.step_lb_s) return decide(binding);
    }
    SearchOptions so;
    so.precisions = {c.precision};
    so.top_k = 1;
    so.max_step_s = max_step_s;
    so.deferred_pilot = true;
    Result<SearchSpace> created = SearchSpace::create(c, so);
    if (!created) return decide(PlanDrop::no_layout);
    space = std::make_unique<SearchSpace>(std::move(created).value());
    if (space->data().groups().empty()) return decide(PlanDrop::no_layout);
    // Floors shared across the counts of one GPU and precision (not in the exhaustive plan, which
    // the tests compare with).
    if (!o.exhaustive) {
        std::shared_ptr<FloorCache>& floors = shared_floors[{c.gpu.name, c.precision.name}];
        if (!floors) floors = std::make_shared<FloorCache>();
        space->data().shared_floors_ = floors;
    }
    // The search's own bound over every layout (rule 5's floors, the pilot's estimates): tighter
    // than the compute-only one; the candidate is dropped when it already exceeds max_step_s.
    estimates_left = space->data().groups().size();
    phase = Phase::estimates;
}

void PlanRunData::searched() {
    SearchReport r;
    if (state) {
        r = trainclock::finish(*space, *state);
    } else {
        main->merge(*space->data().pilot_state_);
        r.top = main->top_;
        r.stats = main->stats_;
    }
    ++report.searched;
    report.layouts_predicted += r.stats.predicted;
    if (r.top.empty()) return decide(r.stats.feasible == 0 ? PlanDrop::no_layout : binding);
    const Config& c = candidates[next].config;
    PlanOption option;
    option.config = space->config_for(r.top[0].layout);
    option.prediction = r.top[0].prediction;
    const Prediction& p = option.prediction;
    if (p.total_time_s > deadline_s) return decide(PlanDrop::deadline);
    if (p.cost_usd > budget) return decide(PlanDrop::budget);
    option.gpu = c.gpu.name;
    option.num_gpus = c.num_gpus;
    option.precision = c.precision.name;
    option.days = p.total_time_s / kSecondsPerDay;
    option.cost_usd = p.cost_usd;
    option.gpu_hours = p.gpu_hours;
    option.energy_kwh = p.energy_kwh;
    found.push_back(std::move(option));
    end_candidate();
}

void PlanRunData::step(int64_t& units) {
    switch (phase) {
    case Phase::bounds: bounds(); break;
    case Phase::estimates: {
        const int64_t n = std::min<int64_t>(units + 1, int64_t(estimates_left));  // this unit and the caller's others
        space->run_pilot(n);
        estimates_left -= size_t(n);
        units -= n - 1;
        if (estimates_left > 0) break;
        if (!o.exhaustive && space->data().min_bound_s_ > max_step_s) return decide(binding);
        phase = Phase::pilot;
        break;
    }
    case Phase::pilot:
        if (!space->pilot_done()) {
            space->run_pilot(1);
            break;
        }
        if (space->data().pilot_state_)
            main = std::make_unique<SearchStateData>(space->data());
        else
            state = std::make_unique<SearchState>(*space);
        pilot_index = 0;
        cell = 0;
        phase = Phase::cells;
        break;
    case Phase::cells: {
        const int64_t cells = space->cells();
        if (cell >= cells) return searched();
        if (state) {
            state->run(cell, cell + 1);
            ++cell;
            break;
        }
        // The cells the pilot did not search: [cell, the next pilot cell), then past it.
        const std::vector<int64_t>& skip = space->data().pilot_cells_;
        const int64_t end = pilot_index < skip.size() ? skip[pilot_index] : cells;
        if (cell < end) {
            main->run(cell, cell + 1);
            ++cell;
        } else {
            ++pilot_index;
            cell = end + 1;
        }
        break;
    }
    }
}

Result<PlanRun> PlanRun::start(const Config& base_config, const PlanOptions& o) {
    if (!(o.tokens > 0) || !std::isfinite(o.tokens)) return Error{"tokens", "must be a positive number of training tokens"};
    if (o.deadline_days < 0 || !std::isfinite(o.deadline_days)) return Error{"days", "must be a positive number of days"};
    if (o.budget_usd < 0 || !std::isfinite(o.budget_usd)) return Error{"budget", "must be a positive number of US dollars"};
    if (o.max_gpus < 1 || o.max_gpus > (int64_t(1) << 20)) return Error{"max_gpus", "must be between 1 and 1048576"};
    if (o.top < 1) return Error{"top", "must be at least 1"};
    for (const auto& [id, usd] : o.prices) {
        if (!(usd > 0) || usd > 1e6) return Error{"price", "must be between 0 and 1000000 USD per GPU-hour, got " + json_number(usd)};
        if (!id.empty() && !gpu_preset(id)) return Error{"price", gpu_preset(id).error().message};
    }

    PlanRun run;
    PlanRunData& d = *run.data_;
    d.o = o;
    PlanReport& report = d.report;
    std::vector<GpuSpec> gpus = o.gpus;
    if (gpus.empty()) {
        for (const std::string& name : preset_names(PresetKind::gpu)) {
            const GpuSpec g = gpu_preset(name).value();
            if (g.price_per_gpu_hour_usd > 0 || price_for(o, name))
                gpus.push_back(g);
            else
                report.unpriced.push_back(name);
        }
    }
    d.deadline_s = o.deadline_days > 0 ? o.deadline_days * kSecondsPerDay : kInf;
    d.budget = o.budget_usd > 0 ? o.budget_usd : kInf;

    // Every candidate with its compute-only bounds.
    std::vector<Candidate>& candidates = d.candidates;
    for (const GpuSpec& gpu : gpus) {
        const std::optional<double> price = price_for(o, gpu.name);
        if (!price && !(gpu.price_per_gpu_hour_usd > 0))
            return Error{"gpu", gpu.name + " has no price (0 = unknown): give --price " + gpu.name + "=USD per GPU-hour"};
        Config c = base_config;
        c.gpu = gpu;
        c.node = NodeSpec{};
        c.num_gpus = 1;
        c.parallel = ParallelSpec{};
        c.training.tokens = o.tokens;
        if (price) c.training.price_per_gpu_hour_usd = *price;
        if (gpu.default_node.empty() || !node_preset(gpu.default_node))
            return Error{"gpu", gpu.name + " names no default node preset to plan GPU counts with"};
        fill_node_default(c);
        report.gpus.push_back(gpu.name);
        std::vector<PrecisionSpec> precisions;
        if (!o.precisions.empty()) {
            for (const PrecisionSpec& p : o.precisions)
                if (!precision_support_error(p, gpu)) precisions.push_back(p);
        } else {
            precisions = o.all_precisions ? precisions_for_gpu(gpu) : pretraining_precisions_for_gpu(gpu);
        }
        for (const PrecisionSpec& p : precisions) {
            c.precision = p;
            const double peak = gpu.peak_flops(compute_dtype(gpu, p.gemm));
            if (!(peak > 0)) continue;
            for (int64_t n : plan_counts(c.node, o.max_gpus)) {
                Candidate k;
                k.config = c;
                k.config.num_gpus = n;
                if (!o.fixed_batch) k.config.training.global_batch = plan_global_batch(c, n);
                const double step_flops =
                    model_flops_per_token(k.config) * double(k.config.training.global_batch) * double(k.config.training.seq_len);
                // MFU <= 1 against the peak of the dtype the GEMMs run in (tests/core/search/test_plan.cpp).
                k.step_lb_s = step_flops / (double(n) * peak);
                k.checkpoint_bytes = checkpoint_bytes(k.config);
                k.wall_lb_s = wall_lower_bound_s(k.config, k.checkpoint_bytes, k.step_lb_s);
                k.cost_lb_usd = phases::run_cost_usd(k.config, k.wall_lb_s);
                candidates.push_back(std::move(k));
            }
        }
    }
    report.candidates = int64_t(candidates.size());
    // Cheapest bound first: the cheap options found first leave a costlier candidate only the step
    // times at which it is faster than all of them.
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.cost_lb_usd != b.cost_lb_usd) return a.cost_lb_usd < b.cost_lb_usd;
        return a.wall_lb_s < b.wall_lb_s;
    });
    return run;
}

PlanRun::PlanRun() : data_(std::make_unique<PlanRunData>()) {}
PlanRun::PlanRun(PlanRun&&) noexcept = default;
PlanRun& PlanRun::operator=(PlanRun&&) noexcept = default;
PlanRun::~PlanRun() = default;

bool PlanRun::done() const { return data_->next >= data_->candidates.size(); }
int64_t PlanRun::candidates() const { return int64_t(data_->candidates.size()); }
int64_t PlanRun::decided() const { return int64_t(data_->next); }

void PlanRun::step(int64_t units) {
    while (units > 0 && !done()) {
        --units;
        data_->step(units);  // may take more of the units (the pilot's estimates)
    }
}

PlanReport PlanRun::finish() { return data_->finish(); }

PlanReport PlanRunData::finish() {
    // The front of (wall time, cost); the whole front is listed, then the cheapest others up to `top`.
    std::vector<std::pair<double, double>> points;
    for (const PlanOption& f : found) points.emplace_back(f.prediction.total_time_s, f.cost_usd);
    for (size_t i : pareto_front(points)) found[i].pareto = true;
    std::stable_sort(found.begin(), found.end(), [](const PlanOption& a, const PlanOption& b) {
        if (a.pareto != b.pareto) return a.pareto;
        return a.cost_usd < b.cost_usd;
    });
    size_t keep = 0;
    while (keep < found.size() && (found[keep].pareto || keep < size_t(o.top))) ++keep;
    report.listed_out = int64_t(found.size() - keep);
    found.resize(keep);
    std::stable_sort(found.begin(), found.end(), [](const PlanOption& a, const PlanOption& b) {
        if (a.prediction.total_time_s != b.prediction.total_time_s) return a.prediction.total_time_s < b.prediction.total_time_s;
        return a.cost_usd < b.cost_usd;
    });
    report.options = std::move(found);
    // Every listed option meets the deadline and the budget: the fastest is the first, the cheapest
    // the one of least cost (the faster of equal costs).
    if (!report.options.empty()) {
        report.fastest_within_budget = 0;
        size_t cheapest = 0;
        for (size_t i = 1; i < report.options.size(); ++i)
            if (report.options[i].cost_usd < report.options[cheapest].cost_usd) cheapest = i;
        report.cheapest_within_deadline = cheapest;
    } else if (candidates.empty()) {
        report.explanation = "no candidate: no GPU given runs a precision of the set";
    } else if (report.dropped[size_t(PlanDrop::deadline)] == report.candidates) {
        report.explanation = "no GPU and count up to " + std::to_string(o.max_gpus) + " meets " + json_number(o.deadline_days) +
                             " days: even at the peak of every GPU (MFU 100 %) the fastest run takes " +
                             json_number(std::round(fastest_bound_s / kSecondsPerDay * 10) / 10) +
                             " days; raise --max-gpus or the deadline";
    } else {
        std::string reasons;
        for (int d = 0; d < kPlanDropCount; ++d)
            if (report.dropped[size_t(d)] > 0)
                reasons += (reasons.empty() ? "" : ", ") + std::to_string(report.dropped[size_t(d)]) + " " + plan_drop_text(PlanDrop(d));
        report.explanation = "no option: of " + std::to_string(report.candidates) + " candidates, " + reasons;
    }
    return std::move(report);
}

Result<PlanReport> plan(const Config& base_config, const PlanOptions& o) {
    Result<PlanRun> run = PlanRun::start(base_config, o);
    if (!run) return run.error();
    while (!run.value().done()) run.value().step(int64_t(1) << 40);
    return run.value().finish();
}

std::string plan_report_to_json(const Config& base, const PlanOptions& o, const PlanReport& report) {
    JsonWriter out;
    out.begin_object();
    out.field("schema", "trainclock/plan/v1");
    out.field("model", base.model.name);
    out.field("framework", framework_id(base.framework));  // every option runs it (issue 25 item 9)
    out.field("tokens", o.tokens);
    out.key("deadline_days");
    if (o.deadline_days > 0)
        out.value(o.deadline_days);
    else
        out.null();
    out.key("budget_usd");
    if (o.budget_usd > 0)
        out.value(o.budget_usd);
    else
        out.null();
    out.field("max_gpus", o.max_gpus);
    out.field("batch_rule", plan_batch_rule(base, o));
    out.key("gpus").begin_array();
    for (const std::string& g : report.gpus) out.value(g);
    out.end_array();
    out.key("unpriced").begin_array();
    for (const std::string& g : report.unpriced) out.value(g);
    out.end_array();
    out.key("options").begin_array();
    for (const PlanOption& f : report.options) {
        const ParallelSpec& p = f.config.parallel;
        out.begin_object();
        out.field("gpu", f.gpu).field("num_gpus", f.num_gpus).field("precision", f.precision);
        out.field("global_batch", f.config.training.global_batch);
        out.field("days", f.days).field("cost_usd", f.cost_usd).field("gpu_hours", f.gpu_hours);
        out.key("energy_kwh");
        if (f.prediction.energy_known)
            out.value(f.energy_kwh);
        else
            out.null();
        out.field("pareto", f.pareto);
        out.field("iteration_time_s", f.prediction.iteration_time_s).field("mfu", f.prediction.mfu);
        out.field("goodput", f.prediction.run.goodput);
        out.key("layout").begin_object();
        out.field("tp", p.tp).field("pp", p.pp).field("dp", p.dp).field("cp", p.cp).field("ep", p.ep);
        out.field("sequence_parallel", p.sequence_parallel).field("zero", p.zero);
        out.field("virtual_stages", p.virtual_stages).field("schedule", enum_name(p.schedule));
        out.field("micro_batch", f.config.training.micro_batch).field("recompute", enum_name(f.config.training.recompute));
        out.end_object();
        out.key("config");
        write_config(out, f.config);
        out.end_object();
    }
    out.end_array();
    auto index = [&out](const char* key, const std::optional<size_t>& i) {
        out.key(key);
        if (i)
            out.value(int64_t(*i));
        else
            out.null();
    };
    index("fastest_within_budget", report.fastest_within_budget);
    index("cheapest_within_deadline", report.cheapest_within_deadline);
    out.key("dropped").begin_object();
    for (int d = 0; d < kPlanDropCount; ++d) out.field(plan_drop_name(PlanDrop(d)), report.dropped[size_t(d)]);
    out.end_object();
    out.key("stats").begin_object();
    out.field("candidates", report.candidates).field("searched", report.searched).field("listed_out", report.listed_out);
    out.field("layouts_predicted", report.layouts_predicted);
    if (report.wall_s >= 0) out.field("wall_s", report.wall_s);
    out.end_object();
    out.text_or_null("explanation", report.explanation);
    out.end_object();
    return out.take();
}

}  // namespace trainclock
