// trainclock: the capacity planner (issue 24). Given a model, a token count and a deadline or a
// budget: for every priced GPU preset (or those given), every GPU count its node shape allows up to
// max_gpus (powers of two within a node, then whole nodes times powers of two) and every precision
// of the default set, the best layout (search.hpp, top 1 by step time: at a fixed count and precision
// the fastest layout is also the cheapest) and its whole run: days with goodput, GPU-hours, cost,
// energy. The answer: the Pareto front of days vs cost, the fastest option within the budget, the
// cheapest within the deadline, and why the other candidates were dropped.
//
// Bounds decide most candidates without a search:
//   - a compute-only lower bound of the step, model FLOPs / (count x peak of the precision's GEMM
//     dtype) (MFU <= 1), gives a lower bound of the run's days and cost (whole_run and
//     phases::run_cost_usd, the functions predict() prices with): a candidate whose bound misses the
//     deadline, exceeds the budget, or is dominated (slower and costlier) by an option already found
//     is dropped unsearched;
//   - candidates are visited by ascending cost bound, and each search gets the step time beyond which
//     its layouts would be dominated or miss the deadline or budget (SearchOptions::max_step_s): its
//     lower bounds then prune almost every layout.
// Dropped candidates can never be on the front nor be one of the two picks, so both are exact
// (tests/core/search/test_plan.cpp checks them against every candidate searched in full).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/search/search.hpp"

namespace trainclock {

struct PlanOptions {
    double tokens = 0;          // training tokens (> 0)
    double deadline_days = 0;   // 0 = none
    double budget_usd = 0;      // 0 = none
    std::vector<GpuSpec> gpus;  // empty = every GPU preset with a price
    int64_t max_gpus = 16384;
    std::vector<PrecisionSpec> precisions;               // empty = per GPU, the pretraining set (search.hpp)
    bool all_precisions = false;                         // every precision the GPU runs (precisions empty)
    std::vector<std::pair<std::string, double>> prices;  // GPU preset id -> USD per GPU-hour ("" = every GPU)
    int64_t top = 20;                                    // options listed: the whole front, then the cheapest others up to top
    bool exhaustive = false;                             // tests: search every candidate in full (no bounds)
    bool fixed_batch = false;                            // the base's global batch at every count (else plan_global_batch)
};

// The global batch of a candidate of `num_gpus` GPUs (unless PlanOptions::fixed_batch): the base's
// global batch doubled until a step holds at least kPlanTokensPerGpu tokens per GPU, never beyond
// kPlanMaxStepTokens tokens per step (and never below the base's). A fixed batch starves large counts
// of micro-batches (llama3-70b at 512 x 8192 tokens ran at 5 % MFU on 16K GPUs). Published practice:
// Llama 3 405B trained on 16,384 H100 with 16M tokens per step (1,024 per GPU) and on 8,192 with 16M
// (Llama Team 2024, arXiv 2407.21783, Table 4), after growing its batch from 4M to 16M tokens as
// training went on (sec. 3.4.1); 16M is its largest step.
inline constexpr double kPlanTokensPerGpu = 1024;       // Llama 3 405B on 16,384 GPUs (Table 4)
inline constexpr double kPlanMaxStepTokens = 16777216;  // 2048 x 8192 tokens: its largest step (Table 4)
int64_t plan_global_batch(const Config& base, int64_t num_gpus);
std::string plan_batch_rule(const Config& base, const PlanOptions& options);  // the rule in words (the output states it)

// Why a candidate (GPU, count, precision) has no option.
enum class PlanDrop : int {
    deadline,   // its run cannot meet the deadline (the compute-only bound, or the best layout's run)
    budget,     // its run cannot fit the budget
    dominated,  // an option is at least as fast and as cheap (by the bound, or no layout beats it)
    no_layout,  // no layout fits in memory or passes the rules at that count
};
inline constexpr int kPlanDropCount = 4;
const char* plan_drop_name(PlanDrop drop);  // JSON key
const char* plan_drop_text(PlanDrop drop);  // for the table

struct PlanOption {
    std::string gpu;
    int64_t num_gpus = 0;
    std::string precision;
    Config config;  // the full config of the best layout (predict(config) gives these figures)
    Prediction prediction;
    double days = 0, cost_usd = 0, gpu_hours = 0, energy_kwh = 0;
    bool pareto = false;
};

struct PlanReport {
    std::vector<PlanOption> options;                                        // by days, then cost
    std::optional<size_t> fastest_within_budget, cheapest_within_deadline;  // indices into options
    std::array<int64_t, kPlanDropCount> dropped{};
    int64_t candidates = 0, searched = 0, listed_out = 0;  // listed_out: options past `top` not listed
    int64_t layouts_predicted = 0;                         // full predictions over every search
    std::vector<std::string> gpus;                         // GPU presets planned over
    std::vector<std::string> unpriced;                     // GPU presets left out: no price
    std::string explanation;                               // non-empty when no option is left: why
    double wall_s = -1;                                    // set by the caller
};

// `base`: model, training (seq_len, global_batch), framework, calibration; its gpu, node, num_gpus,
// precision and layout are replaced per candidate. Fails on bad options (tokens <= 0, an unknown or
// unpriced GPU with no price given, max_gpus < 1).
Result<PlanReport> plan(const Config& base, const PlanOptions& options);

// plan() in slices, for a caller that must return between them (the page computes it a frame at a
// time): start() checks the options and lists the candidates, step(n) does n units of work (a
// candidate's bounds, a step of its search's pilot, or a cell of its search), finish() gives the
// report once done(). plan() is start, step until done, finish: any slicing gives the same report.
struct PlanRunData;
class PlanRun {
public:
    static Result<PlanRun> start(const Config& base, const PlanOptions& options);
    PlanRun(PlanRun&&) noexcept;
    PlanRun& operator=(PlanRun&&) noexcept;
    ~PlanRun();

    bool done() const;
    void step(int64_t units);
    int64_t candidates() const;  // in all
    int64_t decided() const;     // candidates decided so far (kept, dropped or searched)
    PlanReport finish();         // once done(); the run is spent

private:
    PlanRun();
    std::unique_ptr<PlanRunData> data_;
};

// {"schema": "trainclock/plan/v1", "model", "tokens", "deadline_days", "budget_usd", "max_gpus",
//  "batch_rule": "...", "gpus": [...], "unpriced": [...], "options": [{"gpu", "num_gpus", "precision",
//  "global_batch", "days", "cost_usd", "gpu_hours", "energy_kwh", "pareto", "layout": {...}, "config": {config/v1}}],
//  "fastest_within_budget": i | null, "cheapest_within_deadline": i | null,
//  "dropped": {reason: n}, "stats": {candidates, searched, layouts_predicted[, wall_s]}, "explanation": null | "..."}
std::string plan_report_to_json(const Config& base, const PlanOptions& options, const PlanReport& report);

}  // namespace trainclock
