// Google Benchmark: one predict() for a small, a 32-layer dense, a large pipelined and an MoE model.
// Issue 5 targets: >= 200,000 predictions/s on one core for a 32-layer dense model; a 96-layer
// PP=8 model with 1536 micro-batches in < 1 ms (issue 2).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

namespace {

trainclock::Config load(const std::string& body) {
    auto c = trainclock::load_config(R"({"schema": "trainclock/config/v1", )" + body + "}");
    if (!c.ok()) {
        std::fprintf(stderr, "bench_predict: %s\n", c.error().to_string().c_str());
        std::exit(2);
    }
    return c.value();
}

void run(benchmark::State& state, const trainclock::Config& config) {
    for (auto _ : state) {
        trainclock::Prediction p = trainclock::predict(config);
        benchmark::DoNotOptimize(p.iteration_time_s);
    }
    state.counters["predictions/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

// gpt3-1.3b on 8 A100: 24 layers, pure DP.
void BM_predict_small_gpt3_1_3b(benchmark::State& state) {
    static const auto c = load(R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16-mixed",
        "parallel": {"dp": 8}, "training": {"seq_len": 2048, "global_batch": 512, "micro_batch": 4})");
    run(state, c);
}

// llama3-8b (32 layers) on 64 H100: TP 2, PP 2, DP 16.
void BM_predict_dense32_llama3_8b(benchmark::State& state) {
    static const auto c = load(R"("model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 64, "precision": "bf16-mixed",
        "parallel": {"tp": 2, "pp": 2, "dp": 16, "sequence_parallel": true}, "training": {"seq_len": 8192, "global_batch": 512, "micro_batch": 1, "recompute": "selective"})");
    run(state, c);
}

// gpt3-175b (96 layers) on 1024 A100: TP 8, PP 8, DP 16, 1536 micro-batches of 1.
void BM_predict_large_gpt3_175b_pp8_m1536(benchmark::State& state) {
    static const auto c = load(R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1024, "precision": "bf16-mixed",
        "parallel": {"tp": 8, "pp": 8, "dp": 16, "sequence_parallel": true}, "training": {"seq_len": 2048, "global_batch": 24576, "micro_batch": 1, "recompute": "selective"})");
    run(state, c);
}

// The same with the interleaved schedule (3 virtual stages per GPU).
void BM_predict_large_gpt3_175b_interleaved(benchmark::State& state) {
    static const auto c = load(R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1024, "precision": "bf16-mixed",
        "parallel": {"tp": 8, "pp": 8, "dp": 16, "sequence_parallel": true, "schedule": "interleaved", "virtual_stages": 3}, "training": {"seq_len": 2048, "global_batch": 24576, "micro_batch": 1, "recompute": "selective"})");
    run(state, c);
}

// The two large cases with a different sequence length each call (4096 of them, 4x the pipeline
// memo of pipeline.cpp): every call walks its pipeline, as a search's distinct layouts do.
void run_uncached(benchmark::State& state, const std::string& parallel) {
    static std::vector<trainclock::Config> configs;
    configs.clear();
    for (int i = 0; i < 4096; ++i)  // M = 1536 micro-batches of 2048 + 8 i tokens (SP: a multiple of TP)
        configs.push_back(load(R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1024, "precision": "bf16-mixed",
            "parallel": )" + parallel +
                               R"(, "training": {"seq_len": )" + std::to_string(2048 + 8 * i) +
                               R"(, "global_batch": 24576, "micro_batch": 1, "recompute": "selective"})"));
    size_t i = 0;
    for (auto _ : state) {
        trainclock::Prediction p = trainclock::predict(configs[i]);
        benchmark::DoNotOptimize(p.iteration_time_s);
        i = (i + 1) % configs.size();
    }
    state.counters["predictions/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
void BM_predict_large_gpt3_175b_pp8_m1536_uncached(benchmark::State& state) {
    run_uncached(state, R"({"tp": 8, "pp": 8, "dp": 16, "sequence_parallel": true})");
}
void BM_predict_large_gpt3_175b_interleaved_uncached(benchmark::State& state) {
    run_uncached(state, R"({"tp": 8, "pp": 8, "dp": 16, "sequence_parallel": true, "schedule": "interleaved", "virtual_stages": 3})");
}

// mixtral-8x7b on 64 H100 in FP8: TP 2, PP 4, EP 8.
void BM_predict_moe_mixtral_8x7b(benchmark::State& state) {
    static const auto c = load(R"("model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 64, "precision": "fp8-mixed",
        "parallel": {"tp": 2, "pp": 4, "dp": 8, "ep": 8, "sequence_parallel": true}, "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 1})");
    run(state, c);
}

}  // namespace

BENCHMARK(BM_predict_small_gpt3_1_3b);
BENCHMARK(BM_predict_dense32_llama3_8b);
BENCHMARK(BM_predict_large_gpt3_175b_pp8_m1536)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_predict_large_gpt3_175b_interleaved)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_predict_large_gpt3_175b_pp8_m1536_uncached)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_predict_large_gpt3_175b_interleaved_uncached)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_predict_moe_mixtral_8x7b);
BENCHMARK_MAIN();
