// Tests of the capacity planner (plan.hpp, issue 24): the Pareto front, the fastest option within the
// budget and the cheapest within the deadline against a brute force that searches every candidate
// in full; every option's config reproduces its figures through the config JSON; the compute-only
// bound never exceeds a prediction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "search/search_internal.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/search/plan.hpp"
#include "trainclock/search/scaling.hpp"

namespace {

using namespace trainclock;

Config plan_base(const std::string& model, int64_t seq, int64_t gbs) {
    const std::string json = "{\"schema\":\"trainclock/config/v1\",\"model\":\"" + model +
                             "\",\"training\":{\"seq_len\":" + std::to_string(seq) + ",\"global_batch\":" + std::to_string(gbs) + "}}";
    Result<Config> config = parse_config(json);
    REQUIRE(config.ok());
    return config.value();
}

struct Point {
    std::string gpu;
    int64_t n;
    std::string precision;
    double wall_s, cost;
};

// Every candidate searched in full (search(), top 1, no plan code), within the deadline and budget.
std::vector<Point> brute_force(const Config& base, const PlanOptions& o) {
    std::vector<Point> out;
    for (const GpuSpec& gpu : o.gpus) {
        Config c = base;
        c.gpu = gpu;
        c.node = NodeSpec{};
        c.training.tokens = o.tokens;
        fill_node_default(c);
        for (const PrecisionSpec& p : o.precisions) {
            if (precision_support_error(p, gpu)) continue;
            for (int64_t n = 1; n <= o.max_gpus; n *= 2) {
                if (n > c.node.host_gpus() && n % c.node.host_gpus() != 0) continue;
                c.num_gpus = n;
                c.training.global_batch = o.fixed_batch ? base.training.global_batch : plan_global_batch(base, n);
                SearchOptions so;
                so.precisions = {p};
                so.top_k = 1;
                Result<SearchReport> r = search(c, so);
                if (!r || r.value().top.empty()) continue;
                const Prediction& pr = r.value().top[0].prediction;
                if (o.deadline_days > 0 && pr.total_time_s > o.deadline_days * 86400) continue;
                if (o.budget_usd > 0 && pr.cost_usd > o.budget_usd) continue;
                out.push_back({gpu.name, n, p.name, pr.total_time_s, pr.cost_usd});
            }
        }
    }
    return out;
}

}  // namespace

TEST_CASE("plan: the Pareto front and both picks equal a brute force over every candidate", "[plan]") {
    const Config base = plan_base("llama3.2-1b", 2048, 64);
    PlanOptions o;
    o.tokens = 2e10;
    o.gpus = {gpu_preset("h100-sxm").value(), gpu_preset("a100-sxm4-80gb").value(), gpu_preset("l40s").value()};
    o.precisions = {precision_preset("bf16-mixed").value(), precision_preset("fp8-mixed").value()};
    o.max_gpus = 16;
    o.top = 1000;
    const std::vector<Point> all = brute_force(base, o);
    REQUIRE(all.size() > 10);
    std::vector<double> days;
    for (const Point& p : all) days.push_back(p.wall_s / 86400);
    std::sort(days.begin(), days.end());

    for (int constraint = 0; constraint < 3; ++constraint) {
        PlanOptions oc = o;
        if (constraint == 1) oc.deadline_days = days[days.size() / 2];  // half the candidates miss it
        if (constraint == 2) {
            std::vector<double> costs;
            for (const Point& p : all) costs.push_back(p.cost);
            std::sort(costs.begin(), costs.end());
            oc.budget_usd = costs[costs.size() / 3];
        }
        INFO("constraint " << constraint);
        std::vector<Point> kept;
        for (const Point& p : all)
            if ((oc.deadline_days <= 0 || p.wall_s <= oc.deadline_days * 86400) && (oc.budget_usd <= 0 || p.cost <= oc.budget_usd))
                kept.push_back(p);
        REQUIRE_FALSE(kept.empty());
        std::vector<std::pair<double, double>> points;
        for (const Point& p : kept) points.emplace_back(p.wall_s, p.cost);
        std::vector<std::tuple<std::string, int64_t, std::string, double, double>> front;
        for (size_t i : pareto_front(points)) front.emplace_back(kept[i].gpu, kept[i].n, kept[i].precision, kept[i].wall_s, kept[i].cost);
        std::sort(front.begin(), front.end());

        Result<PlanReport> report = plan(base, oc);
        REQUIRE(report.ok());
        const PlanReport& r = report.value();
        std::vector<std::tuple<std::string, int64_t, std::string, double, double>> got;
        for (const PlanOption& f : r.options)
            if (f.pareto) got.emplace_back(f.gpu, f.num_gpus, f.precision, f.prediction.total_time_s, f.cost_usd);
        std::sort(got.begin(), got.end());
        CHECK(got == front);
        // The bounds decided candidates without a search.
        CHECK(r.searched < int64_t(all.size()));
        CHECK(r.candidates == int64_t(o.gpus.size()) * 5 * 2 - 5);  // 1..16 GPUs; the L40S and A100 run no fp8 (A100), ...

        const auto fastest = std::min_element(kept.begin(), kept.end(), [](const Point& a, const Point& b) {
            return std::tie(a.wall_s, a.cost) < std::tie(b.wall_s, b.cost);
        });
        const auto cheapest = std::min_element(kept.begin(), kept.end(), [](const Point& a, const Point& b) {
            return std::tie(a.cost, a.wall_s) < std::tie(b.cost, b.wall_s);
        });
        REQUIRE(r.fastest_within_budget.has_value());
        REQUIRE(r.cheapest_within_deadline.has_value());
        CHECK(r.options[*r.fastest_within_budget].prediction.total_time_s == fastest->wall_s);
        CHECK(r.options[*r.cheapest_within_deadline].cost_usd == cheapest->cost);
        CHECK(r.options[*r.fastest_within_budget].pareto);
        CHECK(r.options[*r.cheapest_within_deadline].pareto);
    }
}

TEST_CASE("plan: each option's config reproduces its figures through the config JSON, above the compute-only bound", "[plan]") {
    Config base = plan_base("gpt2-xl", 1024, 32);
    base.framework = framework_preset("megatron-core").value();
    PlanOptions o;
    o.tokens = 1e10;
    o.gpus = {gpu_preset("h100-sxm").value(), gpu_preset("a100-sxm4-80gb").value()};
    o.prices = {{"a100-sxm4-80gb", 1.23}};
    o.max_gpus = 8;
    Result<PlanReport> report = plan(base, o);
    REQUIRE(report.ok());
    REQUIRE(report.value().options.size() >= 2);
    for (const PlanOption& f : report.value().options) {
        INFO(f.gpu << " x " << f.num_gpus << " " << f.precision);
        Result<Config> again = load_config(config_to_json(f.config));
        REQUIRE(again.ok());
        const Prediction p = predict(again.value());
        CHECK(p.total_time_s / 86400 == f.days);
        CHECK(p.cost_usd == f.cost_usd);
        CHECK(p.energy_kwh == f.energy_kwh);
        CHECK(p.gpu_hours == f.gpu_hours);
        if (f.gpu == "a100-sxm4-80gb") CHECK(p.cost_usd == Approx(p.gpu_hours * 1.23));
        const double peak = f.config.gpu.peak_flops(compute_dtype(f.config.gpu, f.config.precision.gemm));
        const double flops = model_flops_per_token(f.config) * double(f.config.training.global_batch) * double(f.config.training.seq_len);
        CHECK(p.iteration_time_s >= flops / (double(f.num_gpus) * peak));
    }
}

// The plan's searches take the step time beyond which a layout is of no interest (max_step_s) and skip
// whole cells by their bounds (run_cell: the average stage, then every stage walked). At the best
// layout's own step time the skips must keep it; just below it nothing is left.
TEST_CASE("plan: a search bounded at the best step time keeps the best layout, and finds none below it", "[plan][exhaustive]") {
    struct Case {
        const char* model;
        const char* gpu;
        int64_t gpus, gbs;
    };
    for (const Case& k : {Case{"llama3-8b", "h100-sxm", 64, 512}, Case{"mixtral-8x7b", "h100-sxm", 64, 256},
                          Case{"gpt3-13b", "a100-sxm4-80gb", 128, 512}, Case{"llama3-70b", "gb200", 288, 1152}}) {
        INFO(k.model << " on " << k.gpus << " x " << k.gpu);
        Config c = plan_base(k.model, 4096, k.gbs);
        c.gpu = gpu_preset(k.gpu).value();
        c.node = NodeSpec{};
        fill_node_default(c);
        c.num_gpus = k.gpus;
        c.training.tokens = 1e11;
        for (int pipelined = 0; pipelined < 2; ++pipelined) {
            INFO((pipelined ? "PP 2, 4 or 8" : "any PP"));
            SearchOptions so;
            so.precisions = pretraining_precisions_for_gpu(c.gpu);
            so.top_k = 1;
            if (pipelined) so.pp = {2, 4, 8};  // the exact walk's skip only applies with a pipeline
            Result<SearchReport> full = search(c, so);
            REQUIRE(full.ok());
            REQUIRE(full.value().top.size() == 1);
            const SearchHit& best = full.value().top[0];
            for (int below = 0; below < 2; ++below) {
                so.max_step_s = below ? std::nextafter(best.prediction.iteration_time_s, 0.0) : best.prediction.iteration_time_s;
                Result<SearchSpace> space = SearchSpace::create(c, so);
                REQUIRE(space.ok());
                // Some group's least bound exceeds the bound: the exact walk skips cells too.
                CHECK(space.value().data().max_group_bound_s_ > so.max_step_s);
                SearchState state(space.value());
                state.run(0, space.value().cells());
                const SearchReport bounded = finish(space.value(), state);
                if (below) {
                    CHECK(bounded.top.empty());
                    continue;
                }
                REQUIRE(bounded.top.size() == 1);
                CHECK(describe_layout(space.value(), bounded.top[0].layout) == describe_layout(space.value(), best.layout));
                CHECK(bounded.top[0].prediction.iteration_time_s == best.prediction.iteration_time_s);
                CHECK(bounded.stats.predicted <= full.value().stats.predicted);
            }
        }
    }
}

TEST_CASE("plan: bad options are errors naming the key", "[plan]") {
    const Config base = plan_base("gpt2", 1024, 32);
    PlanOptions o;
    CHECK(plan(base, o).error().key == "tokens");
    o.tokens = 1e9;
    o.max_gpus = 0;
    CHECK(plan(base, o).error().key == "max_gpus");
    o.max_gpus = 8;
    o.gpus = {gpu_preset("rtx-4090").value()};  // no price
    CHECK(plan(base, o).error().key == "gpu");
    o.prices = {{"rtx-4090", -1}};
    CHECK(plan(base, o).error().key == "price");
}

TEST_CASE("plan: PlanRun in slices of 1 and 7 units gives plan()'s report (the page computes it a frame at a time)", "[plan]") {
    Config base = plan_base("llama3.1-8b", 4096, 512);
    PlanOptions o;
    o.tokens = 1e12;
    o.deadline_days = 30;
    o.budget_usd = 2e5;
    o.max_gpus = 64;
    o.gpus = {gpu_preset("h100-sxm").value(), gpu_preset("mi300x").value()};
    Result<PlanReport> whole = plan(base, o);
    REQUIRE(whole.ok());
    REQUIRE(whole.value().searched >= 2);
    const std::string expected = plan_report_to_json(base, o, whole.value());
    for (const int64_t units : {int64_t(1), int64_t(7)}) {
        INFO("units " << units);
        Result<PlanRun> run = PlanRun::start(base, o);
        REQUIRE(run.ok());
        int64_t slices = 0;
        while (!run.value().done()) {
            const int64_t before = run.value().decided();
            run.value().step(units);
            CHECK(run.value().decided() >= before);
            ++slices;
        }
        CHECK(run.value().decided() == run.value().candidates());
        CHECK(slices > run.value().candidates());  // searches span several slices
        CHECK(plan_report_to_json(base, o, run.value().finish()) == expected);
    }
    o.tokens = 0;
    CHECK(PlanRun::start(base, o).error().key == "tokens");
}

TEST_CASE("plan: the global batch doubles with the count up to the tokens-per-GPU floor and the step cap", "[plan]") {
    for (int64_t seq : {int64_t(1024), int64_t(2048), int64_t(8192)}) {
        for (int64_t gbs : {int64_t(1), int64_t(48), int64_t(512), int64_t(4096)}) {
            const Config base = plan_base("gpt2", seq, gbs);
            for (int64_t n = 1; n <= (int64_t(1) << 20); n *= 2) {
                INFO("seq " << seq << " gbs " << gbs << " n " << n);
                const int64_t b = plan_global_batch(base, n);
                REQUIRE(b >= gbs);
                CHECK(b % gbs == 0);
                CHECK(((b / gbs) & (b / gbs - 1)) == 0);  // the base times a power of two
                const double tokens = double(b) * double(seq);
                if (b > gbs) {
                    CHECK(tokens <= kPlanMaxStepTokens);
                    CHECK(tokens / 2 < kPlanTokensPerGpu * double(n));  // the least doubling that reaches the floor
                }
                if (double(gbs) * double(seq) * 2 <= kPlanMaxStepTokens && kPlanTokensPerGpu * double(n) <= kPlanMaxStepTokens / 2)
                    CHECK(tokens >= kPlanTokensPerGpu * double(n));
            }
        }
    }
    // The plan's options carry it; fixed_batch keeps the base's.
    const Config base = plan_base("gpt2", 1024, 8);
    PlanOptions o;
    o.tokens = 1e9;
    o.gpus = {gpu_preset("h100-sxm").value()};
    o.precisions = {precision_preset("bf16-mixed").value()};
    o.max_gpus = 64;
    o.top = 100;
    for (bool fixed : {false, true}) {
        o.fixed_batch = fixed;
        Result<PlanReport> report = plan(base, o);
        REQUIRE(report.ok());
        REQUIRE_FALSE(report.value().options.empty());
        for (const PlanOption& f : report.value().options)
            CHECK(f.config.training.global_batch == (fixed ? 8 : plan_global_batch(base, f.num_gpus)));
        CHECK(std::any_of(report.value().options.begin(), report.value().options.end(),
                          [&](const PlanOption& f) { return f.config.training.global_batch != 8; }) == !fixed);
    }
}

// The bounds, the floors shared across counts (keyed on whether each group stays in one node: NVL72's
// 72-GPU domain makes that depend on the count) and the batch per count leave the answer as the
// exhaustive plan's (every candidate searched in full, each space with its own floors).
TEST_CASE("plan: the bounded plan equals the exhaustive plan on a small grid", "[plan][exhaustive]") {
    const Config base = plan_base("llama3.2-1b", 2048, 64);
    PlanOptions o;
    o.tokens = 2e10;
    o.gpus = {gpu_preset("h100-sxm").value(), gpu_preset("gb200").value(), gpu_preset("mi300x").value()};
    o.precisions = {precision_preset("bf16-mixed").value(), precision_preset("fp8-mixed").value()};
    o.max_gpus = 256;
    o.top = 1000;
    PlanOptions all = o;
    all.exhaustive = true;
    Result<PlanReport> full = plan(base, all);
    REQUIRE(full.ok());
    REQUIRE(full.value().options.size() > 10);
    std::vector<double> days;
    for (const PlanOption& f : full.value().options) days.push_back(f.days);
    std::sort(days.begin(), days.end());
    auto front = [](const PlanReport& r) {
        std::vector<std::tuple<std::string, int64_t, std::string, double, double, int64_t, int64_t, int64_t, int64_t, int64_t>> out;
        for (const PlanOption& f : r.options)
            if (f.pareto)
                out.emplace_back(f.gpu, f.num_gpus, f.precision, f.prediction.total_time_s, f.cost_usd, f.config.parallel.tp,
                                 f.config.parallel.pp, f.config.parallel.cp, f.config.training.micro_batch, f.config.training.global_batch);
        std::sort(out.begin(), out.end());
        return out;
    };
    for (int constraint = 0; constraint < 2; ++constraint) {
        INFO("constraint " << constraint);
        PlanOptions oc = o, ac = all;
        if (constraint == 1) oc.deadline_days = ac.deadline_days = days[days.size() / 2];
        Result<PlanReport> bounded = plan(base, oc);
        Result<PlanReport> exhaustive = constraint == 0 ? full : plan(base, ac);
        REQUIRE(bounded.ok());
        REQUIRE(exhaustive.ok());
        CHECK(front(bounded.value()) == front(exhaustive.value()));
        CHECK(bounded.value().searched < exhaustive.value().searched);
        const PlanReport& b = bounded.value();
        const PlanReport& e = exhaustive.value();
        REQUIRE(b.cheapest_within_deadline.has_value());
        REQUIRE(e.cheapest_within_deadline.has_value());
        CHECK(b.options[*b.cheapest_within_deadline].cost_usd == e.options[*e.cheapest_within_deadline].cost_usd);
        CHECK(b.options[*b.fastest_within_budget].prediction.total_time_s == e.options[*e.fastest_within_budget].prediction.total_time_s);
    }
}
