// Google Benchmark: `trainclock calibrate` on 100 measured runs (issue 11: well under a second),
// including its leave-one-out refits; and one cross-source fold's fit over the validation set.
#include <benchmark/benchmark.h>

#include "trainclock/validation/fit.hpp"

namespace {

// 100 llm-foundry runs (presets/validation/mosaic-llm-foundry.json: A100 and H100, BF16 and FP8).
trainclock::ValidationSuite hundred_runs() {
    trainclock::ValidationSuite all = trainclock::load_validation_suite(), out;
    for (auto& c : all.cases)
        if (c.file == "mosaic-llm-foundry" && out.cases.size() < 100) out.cases.push_back(std::move(c));
    return out;
}

void BM_calibrate_100_runs(benchmark::State& state) {
    static const trainclock::ValidationSuite runs = hundred_runs();
    for (auto _ : state) {
        auto report = trainclock::calibrate(runs);
        benchmark::DoNotOptimize(report.ok());
    }
}

void BM_cross_source_all_folds(benchmark::State& state) {
    static const trainclock::ValidationSuite suite = trainclock::load_validation_suite();
    for (auto _ : state) {
        auto report = trainclock::run_cross_source(suite);
        benchmark::DoNotOptimize(report.families.size());
    }
}

}  // namespace

BENCHMARK(BM_calibrate_100_runs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_cross_source_all_folds)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
