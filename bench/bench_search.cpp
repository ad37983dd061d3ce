// Google Benchmark: full layout searches (issue 5). Each iteration is one whole search (enumerate,
// rules, predict, rank); counters give layouts of the space and predict() calls per second of
// wall time. Single-threaded runs measure the core (what the browser build runs per frame slice);
// the threaded runs use the CLI's run_search_threads (host/search_threads.hpp) (all hardware threads).
//   build/bin/bench_search            (or `make bench`)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "search_threads.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/search/search.hpp"

namespace {

using namespace trainclock;

struct Problem {
    const char* model;
    const char* gpu;
    int64_t gpus;
    int64_t seq_len;
    int64_t global_batch;  // sequences
    bool all_precisions;   // else the GPU's default (bf16-mixed)
};

// GPT-3 175B: seq 2048, 1536 sequences (~3.1M tokens; Brown et al. 2020, Table 2.1 / Narayanan et al. 2021).
constexpr Problem kGpt3 = {"gpt3-175b", "a100-sxm4-80gb", 1024, 2048, 1536, true};
// Llama 3.1 405B: seq 8192, 16M tokens = 2048 sequences (Llama 3 paper, arXiv 2407.21783, Table 4).
constexpr Problem kLlama405 = {"llama3.1-405b", "h100-sxm", 16384, 8192, 2048, false};

Result<SearchSpace> make_space(const Problem& p) {
    const std::string json = std::string("{\"schema\":\"trainclock/config/v1\",\"model\":\"") + p.model + "\",\"gpu\":\"" + p.gpu +
                             "\",\"num_gpus\":" + std::to_string(p.gpus) + ",\"training\":{\"seq_len\":" + std::to_string(p.seq_len) +
                             ",\"global_batch\":" + std::to_string(p.global_batch) + "}}";
    Result<Config> base = parse_config(json);
    if (!base.ok()) return base.error();
    SearchOptions options;
    if (p.all_precisions) options.precisions = precisions_for_gpu(base.value().gpu);
    return SearchSpace::create(base.value(), options);
}

void report(benchmark::State& state, const SearchReport& r) {
    state.counters["layouts"] = double(r.stats.layouts);
    state.counters["predicted"] = double(r.stats.predicted);
    state.counters["feasible"] = double(r.stats.feasible);
    state.counters["pruned"] = double(r.stats.pruned);  // decided without a full prediction (search.cpp [SECTION] Pruning)
    state.counters["cannot_beat_top_k"] = double(r.stats.cannot_beat_top_k);  // of those, the ones that fit
    state.counters["layouts_per_s"] = benchmark::Counter(double(r.stats.layouts), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["predicts_per_s"] = benchmark::Counter(double(r.stats.predicted), benchmark::Counter::kIsIterationInvariantRate);
}

void search_bench(benchmark::State& state, const Problem& problem, int threads) {
    SearchReport last;
    for (auto _ : state) {
        Result<SearchSpace> space = make_space(problem);
        if (!space.ok()) {
            state.SkipWithError(space.error().to_string().c_str());
            return;
        }
        if (threads == 1) {
            SearchState s(space.value());
            s.run(0, space.value().cells());
            last = finish(space.value(), s);
        } else {
            last = run_search_threads(space.value(), threads);
        }
        benchmark::DoNotOptimize(last.top.data());
    }
    report(state, last);
}

void BM_search_gpt3_175b_a100_all_precisions(benchmark::State& state) { search_bench(state, kGpt3, 1); }
void BM_search_gpt3_175b_a100_all_precisions_threads(benchmark::State& state) { search_bench(state, kGpt3, 0); }
void BM_search_llama31_405b_h100_16384(benchmark::State& state) { search_bench(state, kLlama405, 1); }
void BM_search_llama31_405b_h100_16384_threads(benchmark::State& state) { search_bench(state, kLlama405, 0); }

BENCHMARK(BM_search_gpt3_175b_a100_all_precisions)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_search_gpt3_175b_a100_all_precisions_threads)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_search_llama31_405b_h100_16384)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_search_llama31_405b_h100_16384_threads)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
