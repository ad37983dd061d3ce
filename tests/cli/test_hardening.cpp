// Regression tests of the defects a newcomer's trial found (issue 12): each input used to give a
// silently wrong answer or a misleading error. Run against an older binary with
// TRAINCLOCK_CLI=/path/to/trainclock build/bin/trainclock_cli_tests "[issue12]" to see them fail.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

const std::string kSmall = "--model gpt2 --gpu h100-sxm";

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::istringstream in(text);
    for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
    return parts;
}

// The cell of `column` in the first data row of a CSV text (no quoted commas before it).
std::string csv_cell(const std::string& csv, const std::string& column) {
    const std::vector<std::string> rows = split(csv, '\n');
    if (rows.size() < 2) return "<no row>";
    const std::vector<std::string> header = split(rows[0], ','), cells = split(rows[1], ',');
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
        if (header[i] == column) return cells[i];
    }
    return "<no column " + column + ">";
}

}  // namespace

TEST_CASE("gpus 0 is an error, not 1 GPU", "[issue12]") {
    check_rejected("predict " + kSmall + " --gpus 0", "num_gpus");
    check_rejected("predict --config -", "<stdin>: num_gpus", R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 0})");
    check_rejected("link decode 'v=1&m=gpt2&g=h100-sxm&N=0'", "num_gpus");
}

TEST_CASE("flag numbers are decimal: --gpus 0x10 is an error, not 16", "[issue12]") {
    check_rejected("predict " + kSmall + " --gpus 0x10", "--gpus");
    for (const char* bad : {"inf", "nan", "' 8'", "+8", "1e", "010", "8,"})
        check_rejected("predict " + kSmall + " --gpus " + bad, "--gpus");
    check_rejected("predict " + kSmall + " --gpus 8.5", "num_gpus");  // readable, but not an integer: the config key's rule
    check_rejected("link decode 'v=1&m=gpt2&g=h100-sxm&N=0x10'", "N");
    // What stays accepted: plain integers, and integral values in exponent form as JSON writes them.
    const Run exponent = trainclock("predict " + kSmall + " --gpus 8 --gbs 1e3 --json");
    REQUIRE(exponent.exit_code == 0);
    CHECK(has(exponent.out, "\"global_batch\": 1000"));
}

TEST_CASE("a too-large flag number is out of range, not malformed JSON", "[issue12]") {
    const Run run = trainclock("predict " + kSmall + " --gpus 99999999999999999999");
    CHECK(run.exit_code == 2);
    CHECK(run.err == "trainclock: error: --gpus: '99999999999999999999' is out of range\n");
    check_rejected("predict " + kSmall + " --tokens 1e400", "--tokens");
    // In a JSON file the number is the file's problem: named as such, not as unbalanced braces.
    const Run file = trainclock("predict --config -", R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 99999999999999999999})");
    CHECK(file.exit_code == 2);
    CHECK(has(file.err, "out of range"));
}

TEST_CASE("duplicate JSON keys are errors naming the key, at every object level", "[issue12]") {
    check_rejected("predict --config -", "<stdin>: model", R"({"model": "llama3-8b", "model": "gpt2", "gpu": "h100-sxm"})");
    check_rejected("predict --config -", "<stdin>: parallel.tp", R"({"model": "gpt2", "gpu": "h100-sxm", "parallel": {"tp": 1, "tp": 2}})");
    check_rejected("predict --config -", "<stdin>: model.layers",
                   R"({"model": {"preset": "gpt2", "layers": 2, "layers": 4}, "gpu": "h100-sxm"})");
    check_rejected("predict --config -", "<stdin>: gpu.peak_tflops.bf16",
                   R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "peak_tflops": {"bf16": 900, "bf16": 1000}}})");
    check_rejected("predict --config -", "<stdin>: precision.gemm",
                   R"({"model": "gpt2", "gpu": "h100-sxm", "precision": {"preset": "bf16-mixed", "gemm": "bf16", "gemm": "fp16"}})");
    check_rejected(
        "predict --config -", "<stdin>: calibration.gpus.h100-sxm.kernel_launch_s",
        R"({"model": "gpt2", "gpu": "h100-sxm", "calibration": {"gpus": {"h100-sxm": {"kernel_launch_s": 1e-6, "kernel_launch_s": 2e-6}}}})");
    check_rejected("predict " + kSmall + " --calibration '{\"memory_efficiency\": 0.5, \"memory_efficiency\": 0.6}'", "--calibration");
    check_rejected("validate --calibration '{\"memory_efficiency\": 0.5, \"memory_efficiency\": 0.6}'",
                   "--calibration: calibration.memory_efficiency");
    const Run run = trainclock("predict --config -", R"({"model": "llama3-8b", "model": "gpt2", "gpu": "h100-sxm"})");
    CHECK(has(run.err, "duplicate key"));
}

TEST_CASE("a UTF-8 byte order mark before a config is skipped", "[issue12]") {
    const std::string config = R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8})";
    const Run plain = trainclock("predict --json --config -", config);
    const Run bom = trainclock("predict --json --config -", "\xEF\xBB\xBF" + config);
    REQUIRE(plain.exit_code == 0);
    CHECK(bom.exit_code == 0);
    CHECK(bom.err.empty());
    CHECK(bom.out == plain.out);
}

TEST_CASE("search --config pins the file's parallel and recompute keys, --widen searches them", "[issue12]") {
    const std::string config = R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 64, "parallel": {"tp": 4, "pp": 2},
        "training": {"seq_len": 4096, "global_batch": 512, "recompute": "selective"}})";
    std::ofstream(work_path("search.json")) << config;
    const std::string file = work_path("search.json");
    const Run pinned = trainclock("search --csv --top 5 --threads 1 --config '" + file + "'");
    REQUIRE(pinned.exit_code == 0);
    const std::vector<std::string> rows = split(pinned.out, '\n');
    REQUIRE(rows.size() == 6);
    for (size_t i = 1; i < rows.size(); ++i) {
        const std::vector<std::string> cells = split(rows[i], ',');
        INFO(rows[i]);
        CHECK(cells[2] == "4");           // tp
        CHECK(cells[3] == "2");           // pp
        CHECK(cells[12] == "selective");  // recompute
    }
    CHECK(has(pinned.err, "pinned by " + file + ": tp 4, pp 2, recompute selective"));
    // The text output says so before the table; --help explains it.
    const Run text = trainclock("search --top 1 --threads 1 --config '" + file + "'");
    // (after the first lines, which name the stack and the calibration: issue 25)
    CHECK(text.out.find("\npinned by " + file + ": tp 4, pp 2, recompute selective") < text.out.find("#  precision"));
    CHECK(has(trainclock("search --help").out, "--widen"));
    // Widened, pp is searched again (and the best layout of 8B on 64 GPUs has no pipeline).
    const Run widened = trainclock("search --csv --top 1 --threads 1 --widen pp --config '" + file + "'");
    REQUIRE(widened.exit_code == 0);
    CHECK(csv_cell(widened.out, "tp") == "4");
    CHECK(csv_cell(widened.out, "pp") != "2");
    CHECK(has(widened.err, "pinned by " + file + ": tp 4, recompute selective"));
    // A flag still wins over the file; widening what a flag pins is a contradiction.
    const Run flag = trainclock("search --csv --top 1 --threads 1 --tp 2 --config '" + file + "'");
    CHECK(csv_cell(flag.out, "tp") == "2");
    check_rejected("search --tp 2 --widen tp --config '" + file + "'", "--widen");
    check_rejected("search --widen tpp --config '" + file + "'", "--widen");
    std::remove(file.c_str());
}

TEST_CASE("predict --timeline without --json is an error, not ignored", "[issue12]") {
    check_rejected("predict " + kSmall + " --timeline", "--timeline");
    const Run json = trainclock("predict " + kSmall + " --timeline --json");
    REQUIRE(json.exit_code == 0);
    CHECK(has(json.out, "\"timeline\": ["));
}

TEST_CASE("compare --csv prints one row per precision with predict's columns", "[issue12]") {
    const Run run = trainclock("compare --model gpt3-1.3b --gpu a100-sxm4-80gb --gpus 8 --csv");
    REQUIRE(run.exit_code == 0);
    const std::vector<std::string> rows = split(run.out, '\n');
    const Run predict = trainclock("predict --model gpt3-1.3b --gpu a100-sxm4-80gb --gpus 8 --csv");
    CHECK(rows[0] == "speedup," + split(predict.out, '\n')[0]);
    CHECK(rows.size() == 9);  // header + the 8 precisions the A100 runs: fp32, tf32, {fp16,bf16}-{amp,mixed}, fp16, bf16
    CHECK(rows[1].rfind("1,gpt3-1.3b,a100-sxm4-80gb,", 0) == 0);  // fp32 is the baseline
    CHECK(has(rows[1], ",fp32,"));
    check_rejected("compare --model gpt2 --gpu h100-sxm --json --csv", "--csv");
}

TEST_CASE("CSV booleans are true/false in predict, compare and search alike", "[issue12]") {
    const Run predict = trainclock("predict " + kSmall + " --gpus 8 --tp 2 --sp --csv");
    CHECK(csv_cell(predict.out, "sequence_parallel") == "true");
    const Run search = trainclock("search " + kSmall + " --gpus 8 --tp 2 --sp --top 1 --threads 1 --csv");
    REQUIRE(search.exit_code == 0);
    CHECK(csv_cell(search.out, "sequence_parallel") == "true");
    const Run off = trainclock("search " + kSmall + " --gpus 8 --no-sp --top 1 --threads 1 --csv");
    CHECK(csv_cell(off.out, "sequence_parallel") == "false");
}

TEST_CASE("steps are whole optimizer steps, rounded up and stated", "[issue12]") {
    // gpt2, 512 x 2048 = 1,048,576 tokens per step: 1e9 tokens are 953.67 steps -> 954.
    const Run run = trainclock("predict " + kSmall + " --gpus 8 --tokens 1e9 --json");
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "\"steps\": 954,"));
    CHECK(has(run.out, "rounded up to 954 whole steps"));
    const Run exact = trainclock("predict " + kSmall + " --gpus 8 --tokens 1048576000 --json");
    CHECK(has(exact.out, "\"steps\": 1000,"));
    CHECK_FALSE(has(exact.out, "rounded up"));
}

TEST_CASE("a missing GPU price gives no cost (n/a, null, a warning), not $0.00", "[issue12]") {
    const std::string args = "predict --model gpt2 --gpu rtx-4090 --gpus 4 --tokens 1e9";  // a consumer card: price 0 = unknown
    const Run text = trainclock(args);
    REQUIRE(text.exit_code == 0);
    CHECK_FALSE(has(text.out, "$0.00"));
    CHECK(has(text.out, "n/a (no price for rtx-4090"));
    const Run json = trainclock(args + " --json");
    CHECK(has(json.out, "\"cost_usd\": null,"));
    CHECK(has(json.out, "cost unknown: gpu rtx-4090 has no price"));
    const Run priced = trainclock(args + " --price 2 --json");
    CHECK_FALSE(has(priced.out, "\"cost_usd\": null"));
    const Run search = trainclock("search --model gpt2 --gpu rtx-4090 --gpus 4 --top 1 --threads 1");
    CHECK(has(search.out, "n/a"));
    CHECK_FALSE(has(search.out, "$0.00"));
    check_rejected("search --model gpt2 --gpu rtx-4090 --gpus 4 --objective cost", "--objective");
}

TEST_CASE("validate reports bias as predicted too fast / too slow, whatever the metric", "[issue12]") {
    // llm-foundry publishes throughput: a case whose throughput is predicted too high is too fast.
    const Run json = trainclock("validate --json --source mosaic");
    REQUIRE(json.exit_code == 0);
    size_t checked = 0;
    for (size_t at = json.out.find("\"metric\": \"tokens_per_s"); at != std::string::npos;
         at = json.out.find("\"metric\": \"tokens_per_s", at + 1)) {
        const size_t error_at = json.out.find("\"error\": ", at), time_at = json.out.find("\"time_error\": ", at);
        REQUIRE(time_at != std::string::npos);
        const double error = std::atof(json.out.c_str() + error_at + 9), time_error = std::atof(json.out.c_str() + time_at + 14);
        CHECK(time_error == -error);
        ++checked;
    }
    CHECK(checked > 0);
    const Run text = trainclock("validate --source mosaic --worst 3");
    CHECK(has(text.out, "bias (time)"));
    CHECK((has(text.out, "% fast") || has(text.out, "% slow")));
}

TEST_CASE("the README's config example runs", "[issue12]") {
    // Was `training.price_per_gpu_hour_usd: unknown key` (the name is price_per_gpu_hour, DESIGN.md 3);
    // test_docs.cpp runs every example of README.md and docs/ since.
    const Run run = trainclock("predict --config -", R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"price_per_gpu_hour": 2.5}})");
    CHECK(run.exit_code == 0);
}

TEST_CASE("an error echoing a line break or raw bytes stays one line", "[issue12]") {
    // Found by tests/fuzz: fuzz_calibration (a key with \n) and fuzz_link (control bytes in a value).
    check_rejected("predict --model gpt2 --gpu h100-sxm --calibration '{\"memory_effi\\ncy\": 0.5}'", "calibration.memory_effi\\ncy");
    check_rejected("link decode 'v=1&m=gpt2%01%0A%C8&g=h100-sxm'", "m");
}

TEST_CASE("import torchtitan: an integer past 2^53 is out of range, not undefined behaviour (fuzz_import_torchtitan)", "[issue12]") {
    // The TOML number was cast to int64 unchecked: UBSan's "outside the range of representable values".
    const std::string path = work_path("huge-degree.toml");
    std::ofstream(path) << "[parallelism]\ntensor_parallel_degree = 666666666666666666666666666666666666666666666666666661\n";
    const Run run = trainclock("import torchtitan '" + path + "' --model llama3-8b --gpu a100-sxm4-80gb --gpus 64");
    CHECK(run.exit_code == 2);
    CHECK(has(run.err, "line 2: "));  // past 64 bits: a TOML error (toml++) on its line
    CHECK(has(run.err, "not representable in 64 bits"));
    // Within 64 bits but past 2^53 (2^54 here): the importer's range check.
    std::ofstream(path) << "[parallelism]\ntensor_parallel_degree = 18014398509481984\n";
    const Run wide = trainclock("import torchtitan '" + path + "' --model llama3-8b --gpu a100-sxm4-80gb --gpus 64");
    CHECK(wide.exit_code == 2);
    CHECK(has(wide.err, "parallelism.tensor_parallel_degree: integer out of range"));
    std::remove(path.c_str());
}
