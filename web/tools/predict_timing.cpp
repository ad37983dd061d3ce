// trainclock-predict-timing: native counterpart of the in-page timing of tests/browser/measure.mjs.
// Reads a config JSON on stdin, calls the same facade the page calls (api.hpp predict_json) in a
// loop, prints {"calls": N, "mean_us": ...}. Usage: trainclock-predict-timing [calls] < config.json
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "trainclock/api/api.hpp"

int main(int argc, char** argv) {
    const long calls = argc > 1 ? std::max(1L, std::atol(argv[1])) : 1000;
    const std::string config((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    size_t sink = trainclock::predict_json(config).size();  // warm-up
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) sink += trainclock::predict_json(config).size();
    const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
    std::printf("{\"calls\": %ld, \"mean_us\": %.3f, \"bytes\": %zu}\n", calls, elapsed.count() / double(calls), sink);
    return 0;
}
