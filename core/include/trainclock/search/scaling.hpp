// trainclock: how one config scales with the GPU count (the web app's scaling plots, api
// scaling_json) and the time/cost Pareto front of a set of predictions (the search plot).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainclock/model/config.hpp"
#include "trainclock/perf/compare.hpp"

namespace trainclock {

// Powers of two around `current` (2^k for k from log2(current) - below to + above, at least 1),
// plus `current` itself when it is not a power of two; ascending.
std::vector<int64_t> scaling_gpu_counts(int64_t current, int below = 5, int above = 6);

// The config at each GPU count, every precision its GPU runs (compare_precisions at each count);
// the layout keeps TP, PP, CP, EP and derives DP (parallel.dp = 0), so a count that the layout
// does not divide, or whose DP does not divide the batch, is a row error at that count.
struct ScalingSweep {
    Config base;                          // the input config (num_gpus, dp replaced per count)
    std::vector<int64_t> gpu_counts;      // ascending
    std::vector<PrecisionComparison> at;  // at[i]: the counts [0, at.size()) computed so far
    PrecisionComparison next;             // run_scaling_rows: the count at.size() in progress
    size_t next_rows = 0;                 // rows of `next` predicted (next.rows empty: not planned yet)
    bool done() const { return at.size() >= gpu_counts.size(); }
};

ScalingSweep plan_scaling(const Config& config, std::vector<int64_t> gpu_counts);
void run_scaling(ScalingSweep& sweep, size_t counts);     // computes the next `counts` GPU counts
void run_scaling_rows(ScalingSweep& sweep, size_t rows);  // the next `rows` predictions (finer slices than whole counts)
ScalingSweep scaling_sweep(const Config& config, std::vector<int64_t> gpu_counts);  // plan + run all

// CSV of the computed points that validate (prediction_csv_header columns, one row per point,
// counts ascending, precisions in compare order); a count/precision that breaks a rule has no row.
std::string scaling_to_csv(const ScalingSweep& sweep);

// Indices of the points no other point beats on both coordinates (minimising both: time, cost),
// ordered by the first coordinate; equal points are all kept.
std::vector<size_t> pareto_front(const std::vector<std::pair<double, double>>& points);

}  // namespace trainclock
