// The plan's cost against one search (issue 24 item 3): a full plan over every priced GPU preset
// (llama3-70b, 15e12 tokens, 90 days) and one search of one GPU type and count (llama3-70b on 1024
// H100 SXM, the default pretraining precisions, top 10), both single-threaded in this process;
// prints both times and the ratio (target: plan within 5x of the search).
//   build/bin/bench_plan [--quick]    (--quick: the plan over h100-sxm and a100-sxm4-80gb only)
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <string>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/search/plan.hpp"
#include "trainclock/search/search.hpp"

namespace {

using namespace trainclock;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    Result<Config> base = parse_config(R"({"schema":"trainclock/config/v1","model":"llama3-70b","gpu":"h100-sxm","num_gpus":1024,
                                           "training":{"tokens":15e12}})");
    if (!base) {
        std::fprintf(stderr, "bench_plan: %s\n", base.error().to_string().c_str());
        return 1;
    }
    SearchOptions search_options;
    search_options.precisions = pretraining_precisions_for_gpu(base.value().gpu);
    // CPU time of this (single-threaded) process: steadier than wall time on a shared machine.
    std::clock_t cpu = std::clock();
    auto start = std::chrono::steady_clock::now();
    Result<SearchReport> one = search(base.value(), search_options);
    const double search_s = seconds_since(start);
    const double search_cpu_s = double(std::clock() - cpu) / CLOCKS_PER_SEC;
    if (!one) return 1;

    PlanOptions plan_options;
    plan_options.tokens = 15e12;
    plan_options.deadline_days = 90;
    if (quick) plan_options.gpus = {gpu_preset("h100-sxm").value(), gpu_preset("a100-sxm4-80gb").value()};
    cpu = std::clock();
    start = std::chrono::steady_clock::now();
    Result<PlanReport> planned = plan(base.value(), plan_options);
    const double plan_s = seconds_since(start);
    const double plan_cpu_s = double(std::clock() - cpu) / CLOCKS_PER_SEC;
    if (!planned) {
        std::fprintf(stderr, "bench_plan: %s\n", planned.error().to_string().c_str());
        return 1;
    }
    const PlanReport& r = planned.value();
    std::printf("search llama3-70b on 1024 x h100-sxm (%zu precisions): %.3f s, %lld predicted\n", search_options.precisions.size(),
                search_s, static_cast<long long>(one.value().stats.predicted));
    std::printf(
        "plan llama3-70b 15e12 tokens 90 days over %zu GPU types: %.3f s; %lld candidates, %lld searched, %lld predicted, %zu options\n",
        r.gpus.size(), plan_s, static_cast<long long>(r.candidates), static_cast<long long>(r.searched),
        static_cast<long long>(r.layouts_predicted), r.options.size());
    std::printf("plan / search = %.1fx wall, %.1fx CPU (%.3f s / %.3f s) (target 5x)\n", plan_s / search_s, plan_cpu_s / search_cpu_s,
                plan_cpu_s, search_cpu_s);
    return 0;
}
