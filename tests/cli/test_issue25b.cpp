// Regression tests of issue 25 items 4, 6 (CLI side), 9 and 13 (CLI side): the calibration in use
// named in every output with its scope, calibrate's refusals, memory headroom, fit and framework in
// the first lines, and one cost format. Run against an older binary with
// TRAINCLOCK_CLI=/path/to/trainclock build/bin/trainclock_cli_tests "[issue25b]" to see them fail.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

// A user's run of Llama 3.1 8B on H100 (fits in memory at TP 4): only config and measured.
std::string user_run(int gpus, int batch, double seconds, const std::string& seq = "8192", const std::string& extra = "") {
    return R"({"config": {"model": "llama3.1-8b", "gpu": "h100-sxm", "num_gpus": )" + std::to_string(gpus) +
           R"(, "framework": "megatron-core", "precision": "bf16-mixed", "parallel": {"tp": 4)" + extra + R"(}, "training": {"seq_len": )" +
           seq + R"(, "global_batch": )" + std::to_string(batch) +
           R"(, "micro_batch": 1}}, "measured": {"metric": "iteration_time_s", "value": )" + std::to_string(seconds) + "}}";
}

// The first `n` lines of a text.
std::string head(const std::string& text, int n) {
    size_t at = 0;
    for (int i = 0; i < n && at != std::string::npos; ++i) at = text.find('\n', at + 1);
    return text.substr(0, at);
}

// A calibration written by `calibrate` from runs that differ in GPU count and sequence length.
std::string write_calibration() {
    const std::string runs = "[" + user_run(8, 128, 6.5) + ", " + user_run(16, 128, 3.4) + ", " + user_run(8, 128, 2.9, "4096") + ", " +
                             user_run(32, 128, 1.9) + "]";
    const std::string path = work_path("cal.json");
    const Run run = trainclock("calibrate --measurements - --out '" + path + "'", runs);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return path;
}

}  // namespace

TEST_CASE("the calibration in use is named with its scope in predict's table and JSON, and null when none", "[issue25b]") {
    const std::string base = "predict --model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4 --seq 8192 --framework megatron-core";
    const Run shipped = trainclock(base);
    REQUIRE(shipped.exit_code == 0);
    CHECK(has(head(shipped.out, 4), "calibration: none"));
    const Run shipped_json = trainclock(base + " --json");
    CHECK(has(shipped_json.out, "\"calibration\": null"));

    const std::string cal = write_calibration();
    const Run inside = trainclock(base + " --calibration '" + cal + "'");
    REQUIRE(inside.exit_code == 0);
    INFO(inside.out);
    CHECK(has(head(inside.out, 4),
              "calibration: " + cal + ", fitted on 4 runs (gpu h100-sxm, framework megatron-core, precision bf16-mixed)"));
    CHECK_FALSE(has(inside.out, "outside it"));
    const Run inside_json = trainclock(base + " --calibration '" + cal + "' --json");
    CHECK(has(inside_json.out, "\"name\": \"" + cal + "\""));
    CHECK(has(inside_json.out, "\"fitted_on\": {"));
    CHECK(has(inside_json.out, "\"outside_scope\": []"));

    // A bf16-only fit applied to fp8: stated as partial, in the warnings and the JSON.
    const Run fp8 = trainclock(base + " --precision fp8-mixed --calibration '" + cal + "'");
    REQUIRE(fp8.exit_code == 0);
    CHECK(has(fp8.out, "fitted on precision bf16-mixed only: fp8-mixed is calibrated in part"));
    CHECK(has(head(fp8.out, 4), "OUTSIDE its scope"));
    // Another framework and another GPU: each warned about.
    const Run none =
        trainclock("predict --model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4 --seq 8192 --framework none --calibration '" + cal + "'");
    CHECK(has(none.out, "framework none is outside it"));
    const Run a100 = trainclock(
        "predict --model llama3.1-8b --gpu a100-sxm4-80gb --gpus 8 --tp 4 --framework megatron-core --calibration '" + cal + "'");
    CHECK(has(a100.out, "gpu a100-sxm4-80gb is outside it"));
    CHECK(has(a100.out, "nothing of it applies"));
    // A calibration written by hand states no scope: said so.
    const Run by_hand = trainclock(base + " --calibration '{\"memory_efficiency\": 0.7}'");
    CHECK(has(by_hand.out, "states no scope"));
    std::remove(cal.c_str());
}

TEST_CASE("search, compare and plan name the framework in their first line and the calibration next", "[issue25b]") {
    const std::string cal = write_calibration();
    const Run search =
        trainclock("search --model llama3.1-8b --gpu h100-sxm --gpus 8 --framework megatron-core --top 2 --calibration '" + cal + "'");
    REQUIRE(search.exit_code == 0);
    CHECK(has(head(search.out, 1), "framework megatron-core"));
    CHECK(has(head(search.out, 2), "calibration: " + cal));
    const Run search_json = trainclock("search --model llama3.1-8b --gpu h100-sxm --gpus 8 --top 2 --json --calibration '" + cal + "'");
    CHECK(has(search_json.out, "\"calibration\":{\"name\":\"" + cal + "\""));
    const Run compare = trainclock("compare --model llama3.1-8b --gpu h100-sxm --gpus 8 --calibration '" + cal + "'");
    REQUIRE(compare.exit_code == 0);
    CHECK(has(head(compare.out, 1), "framework megatron-core"));  // the default framework, named
    CHECK(has(head(compare.out, 2), "calibration: " + cal));
    const Run plan = trainclock("plan --model llama3.1-8b --tokens 1e10 --gpu h100-sxm --max-gpus 8 --framework torchtitan");
    REQUIRE(plan.exit_code == 0);
    CHECK(has(head(plan.out, 1), "framework torchtitan"));
    CHECK(has(head(plan.out, 2), "calibration: none"));
    std::remove(cal.c_str());
}

TEST_CASE("calibrate fits only the factors the runs identify and says which it could not", "[issue25b]") {
    // Runs that differ only in the batch move GEMM, attention and memory-bound time in proportion.
    const std::string runs = "[" + user_run(8, 64, 3.3) + ", " + user_run(8, 128, 6.5) + ", " + user_run(8, 256, 12.9) + "]";
    const Run run = trainclock("calibrate --measurements - --json", runs);
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "attention_efficiency: not identified by these runs"));
    CHECK(has(run.out, "\"fitted_on\""));
    // Exactly one of GEMM, attention and memory efficiency is fitted, not three.
    const std::regex fitted(R"re("name": "(gemm_efficiency\.bf16|attention_efficiency|memory_efficiency)",\s*"fitted": true)re");
    const auto begin = std::sregex_iterator(run.out.begin(), run.out.end(), fitted);
    CHECK(std::distance(begin, std::sregex_iterator()) == 1);
}

TEST_CASE("calibrate refuses a run the tool says does not fit in memory, naming it", "[issue25b]") {
    // Tensor parallelism 1 at sequence 8192: about 185 GiB per GPU of 80.
    const std::string oom = R"({"config": {"model": "llama3.1-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
        "training": {"seq_len": 8192, "global_batch": 128, "micro_batch": 1}}, "measured": {"metric": "iteration_time_s", "value": 9.0}})";
    const Run run = trainclock("calibrate --measurements -", "[" + user_run(16, 128, 3.4) + ", " + oom + "]");
    CHECK(run.exit_code == 2);
    CHECK(has(run.err, "run-2 does not fit in memory"));
    CHECK(lines(run.err) == 1);
}

TEST_CASE("memory headroom (--memory-headroom): a layout fits only with that much left free, and search ranks only those", "[issue25b]") {
    const std::string base = "predict --model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4 --seq 8192";  // about 55 GiB of 80
    const Run plain = trainclock(base + " --json");
    REQUIRE(plain.exit_code == 0);
    const double need = json_number(plain.out, "per_gpu_gib");
    REQUIRE(need < 75);
    const Run tight = trainclock(base + " --memory-headroom " + std::to_string(int(80 - need) + 1));
    REQUIRE(tight.exit_code == 0);
    CHECK(has(head(tight.out, 1), "DOES NOT FIT"));
    CHECK(has(head(tight.out, 2), "GiB headroom: DOES NOT FIT"));
    const Run percent = trainclock(base + " --memory-headroom 10% --json");
    CHECK(json_number(percent.out, "headroom_gib") == Approx(8.0));
    CHECK(has(percent.out, "\"memory_headroom_pct\": 10"));
    // The config key, as a file gives it.
    const Run key = trainclock("predict --config -", R"({"model": "llama3.1-8b", "gpu": "h100-sxm", "num_gpus": 8,
        "parallel": {"tp": 4}, "training": {"seq_len": 8192, "memory_headroom_gib": 79}})");
    CHECK(has(head(key.out, 1), "DOES NOT FIT"));
    check_rejected(base + " --memory-headroom 10% --memory-headroom-gib 4", "--memory-headroom");
    check_rejected(base + " --memory-headroom-pct 100", "training.memory_headroom_pct");

    // search: the fastest layouts use nearly all the memory; with 20 GiB asked free, none above 60 GiB.
    const std::string search = "search --model llama3.1-8b --gpu h100-sxm --gpus 8 --seq 4096 --precision bf16-mixed --top 5 --json";
    const std::regex memory(R"re("memory_per_gpu_gib":([0-9.e+-]+))re");
    const Run greedy = trainclock(search);
    REQUIRE(greedy.exit_code == 0);
    std::smatch first;
    REQUIRE(std::regex_search(greedy.out, first, memory));
    CHECK(std::stod(first[1]) > 60.0);
    const Run roomy = trainclock(search + " --memory-headroom 20");
    REQUIRE(roomy.exit_code == 0);
    CHECK(has(roomy.out, "\"memory_headroom_gib\":20"));
    int hits = 0;
    for (auto it = std::sregex_iterator(roomy.out.begin(), roomy.out.end(), memory); it != std::sregex_iterator(); ++it, ++hits)
        CHECK(std::stod((*it)[1]) <= 60.0);
    CHECK(hits == 5);
}

TEST_CASE("search, predict, compare and plan print costs in one format, and compare shows the run with --tokens", "[issue25b]") {
    const Run search = trainclock("search --model llama3.1-70b --gpu h100-sxm --gpus 64 --seq 4096 --gbs 512 --tokens 1e12 --top 3");
    REQUIRE(search.exit_code == 0);
    CHECK_FALSE(std::regex_search(search.out, std::regex(R"(\$[0-9]{4,})")));  // not "$54571879"
    CHECK(std::regex_search(search.out, std::regex(R"(\$[0-9.]+ [kMB] )")));
    const Run compare = trainclock("compare --model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4 --tokens 1e11");
    REQUIRE(compare.exit_code == 0);
    const std::string header = compare.out.substr(compare.out.find("precision  "), 200);
    CHECK(has(header, "total"));
    CHECK(has(header, "cost"));
    CHECK(std::regex_search(compare.out, std::regex(R"(bf16-mixed .* days +\$[0-9.]+ k )")));
    const Run without = trainclock("compare --model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4");
    CHECK_FALSE(has(without.out.substr(without.out.find("precision  "), 200), "total"));
}
