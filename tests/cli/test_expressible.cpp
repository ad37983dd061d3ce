// Issue 10's "done when" runs, each predicted from the CLI, checked against the closed forms and
// published figures they have (test_cli.cpp has the 405B layouts, the NVL72 trays and LoRA).
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, ',')) fields.push_back(field);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    return fields;
}

}  // namespace

TEST_CASE("DeepSeek-V3 in fp8-mixed on 2048 H800, the V3 report's layout: predicts, fits, 685 B parameters") {
    // DeepSeek-V3 technical report (arXiv 2412.19437) sec. 3.1-3.3 and 4.2: 2048 H800, PP 16, EP 64,
    // ZeRO-1 data parallelism, no TP, FP8 mixed precision, sequence 4096, batch 15360, 14.8 T tokens.
    // 61 layers on 16 stages: first 3, last 2, 4 on each of the 14 others. Full recompute: the 1F1B
    // schedule modelled here (not DualPipe) holds 16 micro-batches on the first stage. Framework none:
    // DeepSeek's own stack dispatches tokens all-to-all (sec. 3.2.2), not Megatron-Core's default allgather.
    const Run run =
        trainclock("predict --model deepseek-v3 --gpu h800-sxm --gpus 2048 --precision fp8-mixed --framework none --pp 16 --ep 64 --zero 1 "
                   "--seq 4096 --gbs 15360 --tokens 14.8e12 --first-stage-layers 3 --last-stage-layers 2 --recompute full --json");
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "\"fits\": true"));
    CHECK(has(run.out, "\"first_stage_layers\": 3"));
    CHECK(json_number(run.out, "params_total") == Approx(685e9).epsilon(0.01));  // 671 B + 14 B MTP (the V3 README)
    // A sanity figure, not a target: the report's table 1 gives 2.788 M H800 GPU-hours for the whole
    // run (2.664 M pre-training, 119 K context extension, 5 K post-training).
    const double gpu_hours = json_number(run.out, "gpu_hours");
    WARN("deepseek-v3 fp8-mixed on 2048 h800: " << gpu_hours / 1e6 << " M GPU-hours predicted, 2.788 M published (ratio "
                                                << gpu_hours / 2.788e6 << ")");
    CHECK(gpu_hours > 2.788e6 / 3);
    CHECK(gpu_hours < 2.788e6 * 3);
}

TEST_CASE("a 16K-GPU run has interruptions: goodput below 1, interruptions = rate x GPUs x wall hours") {
    const Run run =
        trainclock("predict --model llama3.1-405b --gpu h100-sxm --gpus 16384 --tp 8 --pp 16 --sp --zero 1 --seq 8192 --gbs 2048 "
                   "--recompute full --tokens 15.6e12 --first-stage-layers 7 --last-stage-layers 7 --json");
    REQUIRE(run.exit_code == 0);
    const double interruptions = json_number(run.out, "expected_interruptions");
    const double goodput = json_number(run.out, "goodput");
    const double wall_s = json_number(run.out, "total_time_s");
    const double ideal_s = json_number(run.out, "ideal_time_s");
    const double rate = json_number(run.out, "failure_rate_per_gpu_hour");
    CHECK(interruptions > 0);
    CHECK(goodput < 1);
    CHECK(goodput > 0.5);
    CHECK(interruptions == Approx(rate * 16384 * wall_s / 3600).epsilon(1e-6));  // failures arrive over the wall time
    CHECK(goodput == Approx(ideal_s / wall_s).epsilon(1e-6));
    // Llama 3 paper (arXiv 2407.21783) sec. 3.3.4: 419 unexpected interruptions in 54 days on 16,384 GPUs.
    CHECK(rate * 16384 * 54 * 24 == Approx(419).epsilon(0.01));
    const Run ideal =
        trainclock("predict --model llama3.1-405b --gpu h100-sxm --gpus 16384 --tp 8 --pp 16 --sp --zero 1 --seq 8192 "
                   "--gbs 2048 --recompute full --tokens 15.6e12 --first-stage-layers 7 --last-stage-layers 7 --ideal --json");
    REQUIRE(ideal.exit_code == 0);
    CHECK(json_number(ideal.out, "total_time_s") == Approx(ideal_s).epsilon(1e-9));
    CHECK(json_number(ideal.out, "expected_interruptions") == 0);
}

TEST_CASE("search shows the uneven splits it enumerates: CSV columns, a first/last table column") {
    // DeepSeek-V2-Lite: 27 layers divide into no pipeline of 4 stages (pinned: PP 1 is fastest), so
    // search offers Megatron's splits: first/last stage layers, or the embedding and loss as layers.
    const std::string lite =
        "search --model deepseek-v2-lite --gpu h100-sxm --gpus 64 --pp 4 --precision bf16-mixed --seq 4096 --gbs 256 --top 40 --threads 1";
    const Run csv = trainclock(lite + " --csv");
    REQUIRE(csv.exit_code == 0);
    std::stringstream lines(csv.out);
    std::string line;
    REQUIRE(std::getline(lines, line));
    const std::vector<std::string> header = split_csv(line);
    const auto column = [&](const std::string& name) {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return i;
        FAIL("no CSV column " << name);
        return size_t(0);
    };
    const size_t pp = column("pp"), v = column("virtual_stages"), first = column("first_stage_layers"), last = column("last_stage_layers");
    const size_t embedding = column("embedding_in_stage_split"), loss = column("loss_in_stage_split");
    int uneven = 0;
    while (std::getline(lines, line)) {
        INFO(line);
        const std::vector<std::string> row = split_csv(line);
        REQUIRE(row.size() == header.size());
        const int64_t stages = std::stoll(row[pp]) * std::stoll(row[v]);
        const int64_t f = std::stoll(row[first]), l = std::stoll(row[last]);
        const int64_t e = row[embedding] == "true", s = row[loss] == "true";
        if (stages == 1 || 27 % stages == 0) {
            CHECK(f + l + e + s == 0);  // even: no split
            continue;
        }
        ++uneven;
        // Megatron-Core's get_transformer_layer_offset: the embedding and the loss take a layer's
        // place, or the first/last stages hold the given layers and the others share the rest evenly.
        if (f + l == 0)
            CHECK((27 + e + s) % stages == 0);
        else if (std::stoll(row[v]) == 1)
            CHECK((27 - f - l) % (stages - (f > 0) - (l > 0)) == 0);
    }
    CHECK(uneven > 0);
    const Run table = trainclock(lite);
    REQUIRE(table.exit_code == 0);
    CHECK(has(table.out, "first/last"));
    // Llama 3 8B: 32 layers divide evenly into 4 stages (and the virtual stages found), so no split column.
    const Run even = trainclock(
        "search --model llama3-8b --gpu h100-sxm --gpus 64 --pp 4 --precision bf16-mixed --seq 4096 --gbs 256 --top 10 --threads 1");
    REQUIRE(even.exit_code == 0);
    CHECK_FALSE(has(even.out, "first/last"));
}
