// trainclock-search-timing: wall time of one full layout search, run the way the web page runs it
// (web/panels_search.cpp: SearchSpace::create with a deferred pilot, run_pilot in 4-step slices,
// SearchState::run over 4-cell slices on one thread, finish), without the frame loop. Built natively and, under Emscripten, as a node program
// (build-web/tools/search_timing.js: "wasm under node", V8 as in Chromium) for `make web-report`.
// Usage: trainclock-search-timing '<config/v1 JSON: model, gpu, num_gpus, precision, training>' [all]
// ("all": every precision the GPU runs, as the page's "all precisions" box and bench/bench_search.cpp)
// Prints {"cells", "layouts", "predicted", "feasible", "wall_s", "best"}; exit 1 on a bad config.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/search/search.hpp"

int main(int argc, char** argv) {
    using namespace trainclock;
    if (argc < 2) {
        std::fprintf(stderr, "usage: trainclock-search-timing '<config JSON>' [all]\n");
        return 1;
    }
    Result<Config> base = parse_config(argv[1]);
    if (!base) {
        std::fprintf(stderr, "%s\n", base.error().to_string().c_str());
        return 1;
    }
    SearchOptions options;
    if (argc > 2 && std::string(argv[2]) == "all") options.precisions = precisions_for_gpu(base.value().gpu);
    options.deferred_pilot = true;
    const auto start = std::chrono::steady_clock::now();
    Result<SearchSpace> space = SearchSpace::create(base.value(), options);
    if (!space) {
        std::fprintf(stderr, "%s\n", space.error().to_string().c_str());
        return 1;
    }
    while (!space.value().pilot_done()) space.value().run_pilot(4);  // the page's slices
    SearchState state(space.value());
    const int64_t cells = space.value().cells();
    for (int64_t next = 0; next < cells; next += 4) state.run(next, std::min(cells, next + 4));  // the page's slice
    const SearchReport report = finish(space.value(), state);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string best = report.top.empty() ? "" : describe_layout(space.value(), report.top.front().layout);
    std::printf("{\"cells\": %lld, \"layouts\": %lld, \"predicted\": %lld, \"feasible\": %lld, \"wall_s\": %.4f, "
                "\"best\": \"%s\"}\n",
                (long long)cells, (long long)report.stats.layouts, (long long)report.stats.predicted, (long long)report.stats.feasible,
                wall_s, best.c_str());
    return 0;
}
