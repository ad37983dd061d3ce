// Regression tests of issue 25 (the first hour of a new user): each input used to hang, pass
// silently or be refused wrongly. Run against an older binary with
// TRAINCLOCK_CLI=/path/to/trainclock build/bin/trainclock_cli_tests "[issue25]" to see them fail.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

const std::string kSmall = "--model gpt2 --gpu h100-sxm";

// The CLI under `timeout`: an endless read is a failed test (exit 124), not a hung test suite.
Run bounded(const std::string& args, const std::string& input = "") { return shell("timeout 60 '" + cli_path() + "' " + args, input); }

}  // namespace

TEST_CASE("file reads are capped: a device or huge file is refused naming the file and the limit", "[issue25]") {
    for (const char* args : {"predict --config /dev/zero", "predict --config /dev/urandom", "predict --model /dev/zero --gpu h100-sxm",
                             "calibrate --measurements /dev/zero"}) {
        INFO(args);
        const Run run = bounded(args);
        CHECK(run.exit_code == 2);
        CHECK(has(run.err, "/dev/"));
        CHECK(has(run.err, "16 MiB"));
        CHECK(lines(run.err) == 1);
    }
    // stdin too: 17 MiB of spaces on --config - is refused, not read whole.
    const Run in = bounded("predict --config -", std::string(size_t(17) << 20, ' '));
    CHECK(in.exit_code == 2);
    CHECK(has(in.err, "<stdin>"));
    CHECK(has(in.err, "16 MiB"));
}

TEST_CASE("an error echoes at most about 100 characters of a bad value", "[issue25]") {
    const std::string huge(100000, 'x');
    for (const std::string& args : {"predict --model " + huge + " --gpu h100-sxm", "predict " + kSmall + " --tp " + huge,
                                    "predict " + kSmall + " --precision " + huge, "link decode 'v=1&m=" + huge + "'"}) {
        const Run run = bounded(args);
        INFO(run.err.substr(0, 300));
        CHECK(run.exit_code == 2);
        CHECK(run.err.size() < 400);
        CHECK(has(run.err, std::string(100, 'x') + "..."));
    }
    // A short value is echoed whole.
    const Run short_value = bounded("predict --model nosuchmodel --gpu h100-sxm");
    CHECK(has(short_value.err, "'nosuchmodel'"));
}

TEST_CASE("no silent defaults: an explicit 0 storage bandwidth, repeated flags and a run that never finishes are refused", "[issue25]") {
    check_rejected("predict " + kSmall + " --storage-bw 0", "training.storage_bw_gbps");
    check_rejected("predict --config -", "<stdin>: training.storage_bw_gbps",
                   R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"storage_bw_gbps": 0}})");
    check_rejected("predict " + kSmall + " --tp 1 --tp 1", "--tp");
    check_rejected("predict " + kSmall + " --sp --sp", "--sp");
    check_rejected("predict " + kSmall + " --no-sp --no-sp", "--no-sp");
    check_rejected("search " + kSmall + " --gpus 8 --top 3 --top 5", "--top");
    check_rejected("predict --model llama2-7b --gpu h100-sxm --gpus 8 --tokens 1e11 --failure-rate 1",
                   "training.failure_rate_per_gpu_hour");
    // A rate the run survives still predicts.
    CHECK(trainclock("predict --model llama2-7b --gpu h100-sxm --gpus 8 --tokens 1e11 --failure-rate 0.001").exit_code == 0);
}

TEST_CASE("no silent defaults: Young's optimum, a precision switched for want of bf16 and a sequence past the context are stated",
          "[issue25]") {
    const Run young = trainclock("predict --model llama2-7b --gpu h100-sxm --gpus 8 --tokens 1e11 --checkpoint-interval 0");
    REQUIRE(young.exit_code == 0);
    CHECK(has(young.out, "Young's optimum"));
    // V100 has no bf16: the default precision is fp16-mixed, said in the table's warnings and the JSON's.
    const Run v100 = trainclock("predict --model gpt2 --gpu v100-sxm2-32gb");
    REQUIRE(v100.exit_code == 0);
    CHECK(has(v100.out, "has no bf16 peak"));
    const Run v100_json = trainclock("predict --model gpt2 --gpu v100-sxm2-32gb --json");
    CHECK(has(v100_json.out, "has no bf16 peak"));
    // Given explicitly, it is the user's choice: nothing to state.
    CHECK_FALSE(has(trainclock("predict --model gpt2 --gpu v100-sxm2-32gb --precision fp16-mixed").out, "has no bf16 peak"));
    // gpt2's context is 1024 tokens.
    const Run long_seq = trainclock("predict --model gpt2 --gpu h100-sxm --seq 4096 --json");
    REQUIRE(long_seq.exit_code == 0);
    CHECK(has(long_seq.out, "model.max_seq_len 1024"));
    CHECK_FALSE(has(trainclock("predict --model gpt2 --gpu h100-sxm --seq 1024").out, "max_seq_len"));
}

TEST_CASE("import megatron reads a plain file name and refuses shapes Megatron asserts against", "[issue25]") {
    const std::string args = "--num-layers 2 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 "
                             "--micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16";
    const std::string name = "train_cmd_" + std::to_string(getpid()) + ".txt";
    std::ofstream(std::string(TRAINCLOCK_CLI_WORK_DIR) + "/" + name) << "torchrun pretrain_gpt.py " << args << "\n";
    const Run plain = shell("'" + cli_path() + "' import megatron --gpu h100-sxm " + name, "", TRAINCLOCK_CLI_WORK_DIR);
    std::remove((std::string(TRAINCLOCK_CLI_WORK_DIR) + "/" + name).c_str());
    INFO(plain.err);
    CHECK(plain.exit_code == 0);
    CHECK(has(plain.out, "\"hidden\": 512"));
    // Heads that do not divide the hidden size, and a TP that does not divide the heads.
    const Run heads = trainclock("import megatron --gpu h100-sxm -- " + std::string(args).replace(args.find("heads 8"), 7, "heads 7"));
    CHECK(heads.exit_code == 2);
    CHECK(has(heads.err, "num-attention-heads"));
    const Run tp = trainclock("import megatron --gpu h100-sxm -- " + args + " --tensor-model-parallel-size 3");
    CHECK(tp.exit_code == 2);
    CHECK(has(tp.err, "tensor-model-parallel-size"));
    CHECK(has(tp.err, "does not divide --num-attention-heads 8"));
}

TEST_CASE("link decode opens the page's own A/B links (the pin field)", "[issue25]") {
    const Run a = trainclock("link encode --model gpt2 --gpu h100-sxm --gpus 8 --tp 2");
    const Run b = trainclock("link encode --model gpt2 --gpu a100-sxm4-80gb --gpus 8");
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    const std::string a_fragment = a.out.substr(0, a.out.find('\n')), b_fragment = b.out.substr(0, b.out.find('\n'));
    // The page writes B's fragment + "&pin=" + base64url(A's fragment) (web/panels_compare.cpp); base64url by hand here.
    static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string encoded;
    unsigned buffer = 0;
    int bits = 0;
    for (const unsigned char c : a_fragment) {
        buffer = (buffer << 8) | c;
        bits += 8;
        while (bits >= 6) encoded += kAlphabet[(buffer >> (bits -= 6)) & 63];
    }
    if (bits > 0) encoded += kAlphabet[(buffer << (6 - bits)) & 63];
    const std::string link = "https://example.org/trainclock/#" + b_fragment + "&pin=" + encoded;
    const Run decoded_b = trainclock("link decode '" + link + "'");
    INFO(decoded_b.err);
    REQUIRE(decoded_b.exit_code == 0);
    CHECK(decoded_b.out == trainclock("link decode '" + b_fragment + "'").out);
    CHECK(has(decoded_b.err, "--pinned"));
    const Run decoded_a = trainclock("link decode --pinned '" + link + "'");
    REQUIRE(decoded_a.exit_code == 0);
    CHECK(decoded_a.out == trainclock("link decode '" + a_fragment + "'").out);
    check_rejected("link decode '" + b_fragment + "&pin=%%%'", "pin");
    check_rejected("link decode --pinned '" + b_fragment + "'", "--pinned");
}

TEST_CASE("the predict table says whether the layout fits before any time", "[issue25]") {
    const Run big = trainclock("predict --model llama2-7b --gpu h100-sxm --gpus 8");
    REQUIRE(big.exit_code == 0);
    const size_t verdict = big.out.find("DOES NOT FIT");
    REQUIRE(verdict != std::string::npos);
    CHECK(verdict < big.out.find("step time"));
    const Run small = trainclock("predict " + kSmall);
    REQUIRE(small.exit_code == 0);
    CHECK(small.out.find("GiB per GPU of 80 GiB: fits") < small.out.find("step time"));
}

TEST_CASE("calibrate reads a user's plain array of runs with only config and measured, and names the real file", "[issue25]") {
    // TP 4: at TP 1 the runs do not fit in memory, which calibrate refuses (test_issue25b.cpp).
    const std::string run = R"({"config": {"model": "llama3.1-8b", "gpu": "h100-sxm", "num_gpus": N, "framework": "megatron-core",
        "parallel": {"tp": 4}, "training": {"seq_len": 8192, "global_batch": 128, "micro_batch": 1}}, "measured": {"metric": "iteration_time_s", "value": V}})";
    auto with = [&](const std::string& n, const std::string& v) {
        std::string text = run;
        text.replace(text.find('N'), 1, n);
        text.replace(text.find('V'), 1, v);
        return text;
    };
    const std::string runs = "[" + with("8", "9.0") + ", " + with("16", "4.8") + ", " + with("32", "2.6") + "]";
    const Run fitted = trainclock("calibrate --measurements -", runs);
    INFO(fitted.err);
    CHECK(fitted.exit_code == 0);
    CHECK(has(fitted.out, "3 measured runs"));
    // A bad run is named by the file the user gave and the run's position, not "measurements.json".
    const std::string path = work_path("my-runs.json");
    std::ofstream(path) << "[" + with("8", "9.0").replace(run.find("llama3.1-8b"), 11, "nosuchmodel") + "]";
    const Run bad = trainclock("calibrate --measurements '" + path + "'");
    std::remove(path.c_str());
    CHECK(bad.exit_code == 2);
    CHECK(has(bad.err, "my-runs.json: case 0 (run-1)"));
    CHECK(has(bad.err, "run-1"));
    CHECK_FALSE(has(bad.err, "measurements.json"));
}

TEST_CASE("calibrate refuses contradictory runs: one config measured far apart", "[issue25]") {
    const std::string config = R"({"model": "llama3.1-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
        "training": {"seq_len": 8192, "global_batch": 128, "micro_batch": 1}})";
    const std::string runs = R"([{"config": )" + config + R"(, "measured": {"metric": "iteration_time_s", "value": 1e-4}}, {"config": )" +
                             config + R"(, "measured": {"metric": "iteration_time_s", "value": 1e6}}])";
    const Run run = trainclock("calibrate --measurements -", runs);
    CHECK(run.exit_code == 2);
    CHECK(has(run.err, "contradictory"));
    CHECK(has(run.err, "run-1 and run-2"));
}
