// trainclock (native hosts: the CLI, the benchmarks): run a layout search on several threads. The core has no threads
// (search.hpp); here each thread owns a SearchState and takes chunks of cells from a shared
// counter, then the states are merged. The result does not depend on the thread count or on
// which thread ran which chunk: the ranking is a strict total order, the counts are sums, and
// every state prunes against the cutoff SearchSpace::create fixed (its pilot), so even the work
// counts (predicted, pruned) are the same on 1 or N threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "trainclock/search/search.hpp"

namespace trainclock {

// threads <= 0: one per hardware thread.
inline SearchReport run_search_threads(const SearchSpace& space, int threads) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    const int64_t cells = space.cells();
    // Small chunks balance the load (cells differ in cost); 8 chunks per thread at least.
    const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(64, cells / (int64_t(threads) * 8)));
    std::atomic<int64_t> next{0};
    std::vector<SearchState> states(size_t(threads), SearchState{space});
    auto work = [&](SearchState& state) {
        for (int64_t begin = next.fetch_add(chunk); begin < cells; begin = next.fetch_add(chunk))
            state.run(begin, std::min(cells, begin + chunk));
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(states[size_t(t)]));
    work(states[0]);
    for (std::thread& thread : pool) thread.join();
    for (int t = 1; t < threads; ++t) states[0].merge(states[size_t(t)]);
    SearchReport report = finish(space, states[0]);
    report.threads = threads;
    return report;
}

}  // namespace trainclock
