// Tests for trainclock/config.hpp: config/v1 parsing, every validation rule of DESIGN.md 2 (each
// bad-input class of issue 2 is rejected with its key named) and the canonical JSON round trip.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/config.hpp"

using namespace trainclock;

namespace {

// A valid base: Llama 3 70B on 1024 H100 (tp 8, pp 4, dp derived = 32).
// The members `base` (key, JSON value) minus the keys `extra` (", \"pp\": 2") sets, then extra:
// an override replaces the base's key (a key may appear once per object).
std::string members(const std::vector<std::pair<std::string, std::string>>& base, const std::string& extra) {
    std::string out;
    for (const auto& [key, value] : base) {
        if (extra.find("\"" + key + "\":") == std::string::npos) out += (out.empty() ? "\"" : ", \"") + key + "\": " + value;
    }
    return out.empty() && extra.rfind(", ", 0) == 0 ? extra.substr(2) : out + extra;
}

std::string config_with(const std::string& extra_parallel = "", const std::string& extra_top = "", const std::string& extra_training = "") {
    return "{" +
           members({{"schema", "\"trainclock/config/v1\""}, {"model", "\"llama3-70b\""}, {"gpu", "\"h100-sxm\""}, {"num_gpus", "1024"}},
                   extra_top) +
           ", \"parallel\": {" + members({{"tp", "8"}, {"pp", "4"}}, extra_parallel) + "}, \"training\": {" +
           members({{"seq_len", "8192"}, {"global_batch", "1024"}, {"micro_batch", "1"}}, extra_training) + "}}";
}

// The error of loading `json`; fails the test when it loads.
Error load_error(const std::string& json) {
    const auto result = load_config(json);
    INFO(json);
    REQUIRE_FALSE(result.ok());
    return result.error();
}

}  // namespace

TEST_CASE("a config with presets by name loads and derives dp, node and precision") {
    const auto result = load_config(config_with());
    REQUIRE(result.ok());
    const Config& c = result.value();
    CHECK(c.model.name == "llama3-70b");
    CHECK(c.model.layers == 80);
    CHECK(c.gpu.name == "h100-sxm");
    CHECK(c.node.name == c.gpu.default_node);  // default node from the GPU preset
    CHECK(c.precision.name == "bf16-mixed");   // default precision
    CHECK(c.parallel.dp == 1024 / (8 * 4));    // tp*pp*cp*dp == num_gpus
    CHECK(c.training.seq_len == 8192);
}

TEST_CASE("num_gpus is derived from the layout when absent") {
    const auto result = load_config(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb", "parallel": {"tp": 2, "dp": 4}})");
    REQUIRE(result.ok());
    CHECK(result.value().num_gpus == 8);
    const auto single = load_config(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb"})");
    REQUIRE(single.ok());
    CHECK(single.value().num_gpus == 1);
    CHECK(single.value().parallel.dp == 1);
}

TEST_CASE("the default precision is one the GPU runs") {
    const auto v100 = load_config(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb"})");
    REQUIRE(v100.ok());
    CHECK(v100.value().precision.name == "fp16-mixed");  // V100 has no bf16
}

TEST_CASE("inline objects: from scratch, or a preset base with overrides") {
    const auto custom = load_config(R"({"model": {"architecture": "decoder", "layers": 4, "hidden": 256, "heads": 4,
        "ffn_hidden": 1024, "vocab": 1000, "activation": "gelu", "norm": "layernorm"}, "gpu": "h100-sxm"})");
    REQUIRE(custom.ok());
    CHECK(custom.value().model.name == "custom");
    CHECK(custom.value().model.kv_heads == 4);  // defaults to heads (MHA)

    const auto based = load_config(R"({"model": {"preset": "llama3-8b", "layers": 16}, "gpu": "h100-sxm"})");
    REQUIRE(based.ok());
    CHECK(based.value().model.layers == 16);
    CHECK(based.value().model.hidden == model_preset("llama3-8b").value().hidden);
    CHECK(based.value().model.name == "custom");

    const auto unchanged = load_config(R"({"model": {"preset": "llama3-8b"}, "gpu": {"preset": "h100-sxm", "name": "my-h100"}})");
    REQUIRE(unchanged.ok());
    CHECK(unchanged.value().model.name == "llama3-8b");
    CHECK(unchanged.value().gpu.name == "my-h100");

    const auto precision = load_config(R"({"model": "gpt2", "gpu": "h100-sxm",
        "precision": {"preset": "bf16-mixed", "grad_reduce": "bf16"}})");
    REQUIRE(precision.ok());
    CHECK(precision.value().precision.grad_reduce == DType::bf16);
    CHECK(precision.value().precision.gemm == DType::bf16);
}

TEST_CASE("unknown keys are errors naming the key, with a did-you-mean") {
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "nmu_gpus": 8})").key == "nmu_gpus");
    const Error nested = load_error(config_with(R"(, "tpp": 2)"));
    CHECK(nested.key == "parallel.tpp");
    CHECK_THAT(nested.message, Catch::Contains("unknown key"));
    CHECK_THAT(nested.message, Catch::Contains("did you mean tp"));
    CHECK(load_error(R"({"model": {"preset": "gpt2", "layer": 3}, "gpu": "h100-sxm"})").key == "model.layer");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "calibration": {"gemm_efficiency": {"fp64": 0.5}}})").key ==
          "calibration.gemm_efficiency.fp64");
}

TEST_CASE("missing keys are errors naming the key") {
    CHECK(load_error(R"({"gpu": "h100-sxm"})").key == "model");
    CHECK(load_error(R"({"model": "gpt2"})").key == "gpu");
    const Error inline_missing = load_error(R"({"model": {"architecture": "decoder", "layers": 4}, "gpu": "h100-sxm"})");
    CHECK(inline_missing.key.rfind("model.", 0) == 0);
    CHECK_THAT(inline_missing.message, Catch::Contains("missing"));
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "precision": {"gemm": "bf16"}})").key.rfind("precision.", 0) == 0);
}

TEST_CASE("wrong types are errors naming the key and the type") {
    const Error tp = load_error(config_with(R"(, "sequence_parallel": "yes")"));
    CHECK(tp.key == "parallel.sequence_parallel");
    CHECK_THAT(tp.message, Catch::Contains("expected true or false, got a string"));
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": "8"})").key == "num_gpus");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 2.5})").key == "num_gpus");
    CHECK(load_error(R"({"model": 7, "gpu": "h100-sxm"})").key == "model");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "parallel": [1, 2]})").key == "parallel");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"recompute": "some"}})").key == "training.recompute");
    CHECK(load_error(R"([1, 2, 3])").message.find("expected a JSON object") != std::string::npos);
    // Integral doubles are accepted where an integer is expected.
    CHECK(load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8.0})").ok());
}

TEST_CASE("malformed, truncated and empty JSON give a clear error") {
    CHECK_THAT(load_error("").message, Catch::Contains("empty input"));
    CHECK_THAT(load_error("  \n ").message, Catch::Contains("empty input"));
    CHECK_THAT(load_error(R"({"model": "gpt2", "gpu": )").message, Catch::Contains("malformed JSON"));
    CHECK_THAT(load_error(R"({"model": "gpt2" "gpu": "h100-sxm"})").message, Catch::Contains("malformed JSON"));
    CHECK_THAT(load_error(R"({"model": "gpt2)").message, Catch::Contains("malformed JSON"));
    // A repeated key is an error (issue 12: the last value won silently).
    const auto repeated = load_config(R"({"model": "gpt2", "model": "gpt2-xl", "gpu": "h100-sxm"})");
    REQUIRE_FALSE(repeated.ok());
    CHECK(repeated.error().key == "model");
}

TEST_CASE("schema and unknown presets") {
    const Error schema = load_error(R"({"schema": "trainclock/config/v2", "model": "gpt2", "gpu": "h100-sxm"})");
    CHECK(schema.key == "schema");
    const Error gpu = load_error(R"({"model": "gpt2", "gpu": "h100"})");
    CHECK(gpu.key == "gpu");
    CHECK_THAT(gpu.message, Catch::Contains("did you mean"));
    CHECK(load_error(R"({"model": {"preset": "gtp2"}, "gpu": "h100-sxm"})").key == "model.preset");
}

TEST_CASE("values out of range name the key") {
    CHECK(load_error(config_with(R"(, "zero": 4)")).key == "parallel.zero");
    CHECK(load_error(config_with(R"(, "cp": 0)")).key == "parallel.cp");
    CHECK(load_error(config_with("", "", R"(, "seq_len": 0)")).key == "training.seq_len");
    CHECK(load_error(config_with("", "", R"(, "micro_batch": -1)")).key == "training.micro_batch");
    CHECK(load_error(config_with("", "", R"(, "tokens": -5)")).key == "training.tokens");
    CHECK(load_error(config_with("", "", R"(, "price_per_gpu_hour": -1)")).key == "training.price_per_gpu_hour");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 2000000000})").key == "num_gpus");
    CHECK(load_error(R"({"model": {"preset": "gpt2", "layers": 0}, "gpu": "h100-sxm"})").key == "model.layers");
    CHECK(load_error(R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "memory_gib": -80}})").key == "gpu.memory_gib");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "calibration": {"memory_efficiency": 1.5}})").key ==
          "calibration.memory_efficiency");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"optimizer": "adamm"}})").key == "training.optimizer");
}

TEST_CASE("a GPU's peaks and measured fractions are physical: no infinite step, no efficiency above 1") {
    // A denormal peak made every bf16 GEMM take forever: iteration_time_s was inf (JSON null), MFU 0.
    CHECK(load_error(R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "peak_tflops": {"bf16": 1e-320}}})").key == "gpu.peak_tflops.bf16");
    CHECK(load_config(R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "peak_tflops": {"fp8": 0}}})").ok());
    CHECK(load_error(R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "measured":
        {"gemm_efficiency": {"bf16": 5}, "memory_efficiency": 0.9, "source": "x"}}})")
              .key == "gpu.measured.gemm_efficiency.bf16");
    CHECK(load_error(R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "measured":
        {"gemm_efficiency": {"bf16": 0.8}, "memory_efficiency": -1, "source": "x"}}})")
              .key == "gpu.measured.memory_efficiency");
    // A clock above the boost clock is not a sustained clock.
    CHECK(load_error(R"({"model": "gpt2", "gpu": {"preset": "b200", "measured": {"sustained_clock_ratio": 1.2, "source": "x"}}})").key ==
          "gpu.measured.sustained_clock_ratio");
}

TEST_CASE("a node's per-group bandwidths have the bounds of intra_bw_gbps") {
    // 0 and -1 were taken silently, 1e-320 gave an infinite step time (JSON null).
    for (const char* bw : {"0", "-1", "1e-320", "1e308"}) {
        INFO(bw);
        CHECK(load_error(std::string(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "node": {"preset": "dgx-1-v100",
            "intra_group_bw_gbps": {"2": )") +
                         bw + "}}}")
                  .key == "node.intra_group_bw_gbps.2");
    }
    CHECK(load_config(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "node": {"preset": "dgx-1-v100", "intra_group_bw_gbps": {"2": 30}}})")
              .ok());
}

TEST_CASE("a node's per-group bandwidths are keyed by group sizes 2 to 1024, read in ascending size") {
    const auto config = load_config(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "node": {"preset": "dgx-1-v100",
        "intra_group_bw_gbps": {"8": 30, "1024": 40, "2": 10, "4": 20}}})");
    REQUIRE(config.ok());
    const std::vector<std::pair<int64_t, double>> ascending = {{2, 10}, {4, 20}, {8, 30}, {1024, 40}};
    CHECK(config.value().node.intra_group_bw_gbps == ascending);
    // Not a group size (1, 1025, a leading zero, a sign, a word): an unknown key naming it.
    for (const char* key : {"1", "1025", "02", "+4", "4.0", "two"}) {
        INFO(key);
        const Error error = load_error(std::string(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "node": {"preset": "dgx-1-v100",
            "intra_group_bw_gbps": {"2": 10, ")") +
                                       key + R"(": 30}}})");
        CHECK(error.key == std::string("node.intra_group_bw_gbps.") + key);
        CHECK(error.message.rfind("unknown key", 0) == 0);
    }
    // The unknown key wins over a bad value of a known one, as in any other object.
    CHECK(load_error(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "node": {"preset": "dgx-1-v100",
        "intra_group_bw_gbps": {"2": "fast", "3x": 30}}})")
              .key == "node.intra_group_bw_gbps.3x");
}

TEST_CASE("a node's network is one of NCCL's transports, InfiniBand unless stated") {
    const auto plain = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "node": "dgx-h100"})");
    REQUIRE(plain.ok());
    CHECK(plain.value().node.network == NetworkKind::infiniband);
    const auto efa = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "node": {"preset": "dgx-h100", "network": "efa-sendrecv"}})");
    REQUIRE(efa.ok());
    CHECK(efa.value().node.network == NetworkKind::efa_sendrecv);
    const Error error = load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "node": {"preset": "dgx-h100", "network": "ethernet"}})");
    CHECK(error.key == "node.network");
}

TEST_CASE("tensor parallelism must split heads, KV heads and MLP columns") {
    // llama3-70b: 64 heads, 8 KV heads. tp 3 splits neither.
    const Error heads = load_error(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 3, "parallel": {"tp": 3}})");
    CHECK(heads.key == "parallel.tp");
    CHECK(heads.message == "3 does not divide model.heads = 64");
    // tp 16 > 8 KV heads: Megatron replicates each KV head on 2 ranks (tp % kv_heads == 0): allowed.
    CHECK(load_config(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 16, "parallel": {"tp": 16}})").ok());
    // 32 heads, 8 KV heads, tp 32: 32 % 8 == 0 (replication by 4): allowed; tp 64 exceeds heads.
    CHECK(load_error(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 64, "parallel": {"tp": 64}})").key == "parallel.tp");
    // KV heads 12 with tp 8: 12 % 8 != 0 and 8 % 12 != 0.
    const Error kv = load_error(R"({"model": {"preset": "llama3-8b", "heads": 48, "kv_heads": 12, "hidden": 4608},
        "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 8}})");
    CHECK(kv.key == "parallel.tp");
    CHECK_THAT(kv.message, Catch::Contains("kv_heads = 12"));
    CHECK(load_error(R"({"model": {"preset": "llama3-8b", "kv_heads": 5}, "gpu": "h100-sxm"})").key == "model.kv_heads");
}

TEST_CASE("the parallel layout must multiply to num_gpus") {
    const Error product = load_error(config_with(R"(, "dp": 16)"));
    CHECK(product.key == "num_gpus");
    CHECK_THAT(product.message, Catch::Contains("8*4*1*16 = 512"));
    const Error indivisible = load_error(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 1000, "parallel": {"tp": 8, "pp": 4}})");
    CHECK(indivisible.key == "num_gpus");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 12})").key == "num_gpus");  // 12 % 8 GPUs per node
    CHECK(load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 4})").ok());               // a partial node is fine
}

TEST_CASE("NVL72 jobs are allocated in 4-GPU compute trays, not whole 72-GPU racks") {
    for (const int gpus : {4, 64, 128, 256, 512}) {
        INFO(gpus);
        CHECK(load_config(R"({"model": "llama3-70b", "gpu": "gb200", "parallel": {"tp": 4}, "num_gpus": )" + std::to_string(gpus) + "}")
                  .ok());
        CHECK(load_config(R"({"model": "llama3-70b", "gpu": "gb300", "parallel": {"tp": 4}, "num_gpus": )" + std::to_string(gpus) + "}")
                  .ok());
    }
    const Error partial = load_error(R"({"model": "llama3-70b", "gpu": "gb200", "num_gpus": 130})");
    CHECK(partial.key == "num_gpus");
    CHECK(partial.message.find("gpus_per_host") != std::string::npos);
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "node": {"preset": "dgx-h100", "gpus_per_host": 3}})").key ==
          "node.gpus_per_host");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "node": {"preset": "dgx-h100", "gpus_per_host": 16}})").key ==
          "node.gpus_per_host");
}

TEST_CASE("pipeline rules: stages, virtual stages and schedules") {
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 16, "parallel": {"pp": 16}})").key == "parallel.pp");
    CHECK(load_error(config_with(R"(, "virtual_stages": 2)")).key == "parallel.virtual_stages");  // needs interleaved
    CHECK(load_config(config_with(R"(, "virtual_stages": 2, "schedule": "interleaved")")).ok());  // 80 % (4*2) == 0
    CHECK(load_error(config_with(R"(, "virtual_stages": 3, "schedule": "interleaved")")).key == "parallel.virtual_stages");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "parallel": {"schedule": "interleaved"}})").key == "parallel.schedule");
    // Interleaved needs micro-batches % pp == 0: 1024 / (1 * 32) = 32 is fine, 1032 / 32 is not integral.
    const Error micro =
        load_error(config_with(R"(, "virtual_stages": 2, "schedule": "interleaved")", "", R"(, "global_batch": 96, "micro_batch": 1)"));
    CHECK(micro.key == "training.global_batch");
}

TEST_CASE("uneven pipeline stages: the four split keys parse, validate, round-trip and name themselves in errors") {
    const std::string model = R"({"model": "llama3.1-405b", "gpu": "h100-sxm", "num_gpus": 1024, "parallel": {"tp": 8, "pp": 16)";
    const std::string training = R"(}, "training": {"seq_len": 8192, "global_batch": 512}})";
    const auto split = load_config(model + R"(, "first_stage_layers": 7, "last_stage_layers": 7)" + training);
    REQUIRE(split.ok());
    CHECK(split.value().parallel.stage_split.first_stage_layers == 7);
    const auto again = load_config(config_to_json(split.value()));
    REQUIRE(again.ok());
    CHECK(again.value().parallel.stage_split == split.value().parallel.stage_split);
    const auto accounted = load_config(model + R"(, "embedding_in_stage_split": true, "loss_in_stage_split": true)" + training);
    REQUIRE(accounted.ok());
    CHECK(config_to_json(accounted.value()).find("\"loss_in_stage_split\": true") != std::string::npos);
    // Unset keys are not written: configs without a split keep their canonical text.
    CHECK(config_to_json(load_config(config_with()).value()).find("stage_layers") == std::string::npos);
    CHECK(load_error(model + R"(, "first_stage_layers": 6, "last_stage_layers": 7)" + training).key == "parallel.first_stage_layers");
    CHECK(load_error(model + R"(, "first_stage_layers": -1)" + training).key == "parallel.first_stage_layers");
    CHECK(load_error(model + R"(, "loss_in_stage_split": 1)" + training).key == "parallel.loss_in_stage_split");  // a boolean
    // PP 8 x VP 8 of 126 layers: rejected without keys (the message names them), accepted with both.
    const std::string vp = R"(, "pp": 8, "virtual_stages": 8, "schedule": "interleaved")";
    const std::string base = R"({"model": "llama3.1-405b", "gpu": "h100-sxm", "num_gpus": 1024, "parallel": {"tp": 8)";
    const Error no_keys = load_error(base + vp + training);
    CHECK(no_keys.key == "parallel.virtual_stages");
    CHECK(no_keys.message.find("parallel.embedding_in_stage_split") != std::string::npos);
    CHECK(load_config(base + vp + R"(, "embedding_in_stage_split": true, "loss_in_stage_split": true)" + training).ok());
}

TEST_CASE("the pipeline simulation is bounded: micro-batches x chunks <= 2^18") {
    // gpt2 on 8 GPUs, pp 8, dp 1: 2^15 micro-batches x 8 stages = 2^18 slots is the most allowed.
    CHECK(load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"pp": 8},
                          "training": {"global_batch": 32768}})")
              .ok());
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"pp": 8},
                         "training": {"global_batch": 32770}})")
              .key == "training.global_batch");
}

TEST_CASE("batch rules: micro_batch * dp divides global_batch") {
    const Error batch = load_error(config_with("", "", R"(, "micro_batch": 3)"));
    CHECK(batch.key == "training.global_batch");
    CHECK_THAT(batch.message, Catch::Contains("micro_batch*dp = 3*32 = 96"));
}

TEST_CASE("sequence rules: context and sequence parallelism") {
    CHECK(load_error(config_with(R"(, "cp": 2)", R"(, "num_gpus": 2048)", R"(, "seq_len": 8190)")).key == "training.seq_len");
    CHECK(load_config(config_with(R"(, "cp": 2)", R"(, "num_gpus": 2048)")).ok());
    CHECK(load_error(config_with(R"(, "sequence_parallel": true)", "", R"(, "seq_len": 8188)")).key == "training.seq_len");
}

TEST_CASE("expert parallelism needs a MoE model and divides experts and dp") {
    CHECK(load_error(config_with(R"(, "ep": 2)")).key == "parallel.ep");  // dense model
    CHECK(load_config(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 64, "parallel": {"tp": 2, "ep": 8}})").ok());
    CHECK(load_error(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 48, "parallel": {"tp": 2, "ep": 3}})").key ==
          "parallel.ep");  // 8 experts % 3
    CHECK(load_error(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 2, "ep": 8}})").key ==
          "parallel.ep");  // dp 4 % 8
}

TEST_CASE("MoE parallel folding: expert_tp x ep divides tp x cp x dp (Megatron-Core)") {
    // TP 2 x DP 4 = 8 ranks: EP 8 fits with expert TP 1 (2*4 / (1*8) = 1 expert-DP rank), not with 2.
    const char* folded = R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 2, "ep": 8, "expert_tp": 1}})";
    const Result<Config> ok = load_config(folded);
    REQUIRE(ok.ok());
    CHECK(ok.value().parallel.expert_weight_replicas() == 1);
    CHECK(ok.value().parallel.ep_folded());
    const Error wide =
        load_error(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 2, "ep": 8, "expert_tp": 2}})");
    CHECK(wide.key == "parallel.ep");
    CHECK_THAT(wide.message, Catch::Contains("does not divide tp x cp x dp = 2 x 1 x 4"));
    // EP over CP x DP with expert TP = TP: 2 x 4 ranks hold EP 8 although dp 4 alone does not.
    CHECK(load_config(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"cp": 2, "ep": 8},
                          "training": {"seq_len": 4096}})")
              .ok());
    CHECK(load_error(config_with(R"(, "expert_tp": 1)")).key == "parallel.expert_tp");  // dense model
    CHECK(load_error(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"expert_tp": -1}})").key ==
          "parallel.expert_tp");
    // Expert TP splits the expert width: 14336 % 3 != 0 (TP 1 so the attention split is not at fault).
    const Error width = load_error(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 3, "parallel": {"expert_tp": 3}})");
    CHECK(width.key == "parallel.expert_tp");
}

TEST_CASE("precisions the GPU cannot run are rejected") {
    const Error fp8 = load_error(R"({"model": "llama3-70b", "gpu": "a100-sxm4-80gb", "precision": "fp8-mixed"})");
    CHECK(fp8.key == "precision");
    CHECK(fp8.message == "gpu a100-sxm4-80gb has no fp8 tensor cores (precision fp8-mixed needs fp8)");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "v100-sxm2-32gb", "precision": "bf16-mixed"})").key == "precision");
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "precision": "nvfp4-mixed"})").key == "precision");
    CHECK(load_config(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 8},
                          "precision": "fp8-mixed"})")
              .ok());
    CHECK(load_error(R"({"model": "gpt2", "gpu": "h100-sxm", "precision": {"preset": "bf16-mixed", "grads": "tf32"}})").key ==
          "precision.grads");
}

TEST_CASE("the attention kernel: flash2 under framework none, flash3 only on GPUs with Hopper-class tensor cores") {
    const auto h100 = load_config(R"({"model": "llama3-8b", "gpu": "h100-sxm", "training": {"attention_kernel": "flash3"}})");
    REQUIRE(h100.ok());
    CHECK(h100.value().training.attention_kernel == AttentionKernel::flash3);
    CHECK(config_to_json(h100.value()).find("\"attention_kernel\": \"flash3\"") != std::string::npos);
    const auto plain = load_config(R"({"model": "llama3-8b", "gpu": "h100-sxm", "framework": "none"})");
    REQUIRE(plain.ok());
    CHECK(plain.value().training.attention_kernel == AttentionKernel::flash2);
    // The default framework (megatron-core) picks the Hopper-native kernel on an H100.
    const auto framework_default = load_config(R"({"model": "llama3-8b", "gpu": "h100-sxm"})");
    REQUIRE(framework_default.ok());
    CHECK(framework_default.value().training.attention_kernel == AttentionKernel::flash3);
    const Error a100 = load_error(R"({"model": "llama3-8b", "gpu": "a100-sxm4-80gb", "training": {"attention_kernel": "flash3"}})");
    CHECK(a100.key == "training.attention_kernel");
    CHECK_THAT(a100.message, Catch::Contains("a100-sxm4-80gb"));
    CHECK(load_error(R"({"model": "llama3-8b", "gpu": "mi300x", "training": {"attention_kernel": "flash3"}})").key ==
          "training.attention_kernel");
    CHECK(load_error(R"({"model": "llama3-8b", "gpu": "h100-sxm", "training": {"attention_kernel": "fa3"}})").key ==
          "training.attention_kernel");
}

TEST_CASE("config_to_json round-trips every model preset") {
    for (const auto& name : preset_names(PresetKind::model)) {
        INFO(name);
        const std::string json =
            R"({"model": ")" + name + R"(", "gpu": "h100-sxm", "training": {"tokens": 1e9, "price_per_gpu_hour": 2.25}})";
        const auto first = load_config(json);
        REQUIRE(first.ok());
        const std::string canonical = config_to_json(first.value());
        const auto second = load_config(canonical);
        REQUIRE(second.ok());
        CHECK(config_to_json(second.value()) == canonical);
        CHECK(canonical.find("\"model\": \"" + name + "\"") != std::string::npos);  // unchanged preset -> by name
    }
}

TEST_CASE("config_to_json writes changed presets inline and keeps every field") {
    const auto config = load_config(R"({"model": {"preset": "mixtral-8x7b", "layers": 8}, "gpu": {"preset": "h100-sxm", "memory_gib": 94},
        "node": {"preset": "dgx-h100", "inter_bw_gbps": 25}, "precision": {"preset": "bf16-mixed", "grad_reduce": "bf16"},
        "num_gpus": 16, "parallel": {"tp": 2, "ep": 2, "zero": 1, "sequence_parallel": true},
        "training": {"recompute": "full", "flash_attention": false},
        "calibration": {"precision_blind": true, "gemm_efficiency": {"bf16": 0.7}, "kernel_launch_s": 4e-5}})");
    REQUIRE(config.ok());
    const std::string canonical = config_to_json(config.value());
    const auto again = load_config(canonical);
    REQUIRE(again.ok());
    const Config& c = again.value();
    CHECK(config_to_json(c) == canonical);
    CHECK(c.model.layers == 8);
    CHECK(c.model.moe.experts == 8);
    CHECK(c.gpu.memory_gib == 94);
    CHECK(c.node.inter_bw_gbps == 25);
    CHECK(c.precision.grad_reduce == DType::bf16);
    CHECK(c.parallel.zero == 1);
    CHECK(c.training.recompute == Recompute::full);
    CHECK(c.calibration.precision_blind);
    REQUIRE(c.calibration.gemm_efficiency[static_cast<int>(DType::bf16)].has_value());
    CHECK(*c.calibration.gemm_efficiency[static_cast<int>(DType::bf16)] == 0.7);
    REQUIRE(c.calibration.kernel_launch_s.has_value());
    CHECK(*c.calibration.kernel_launch_s == 4e-5);
}

TEST_CASE("calibration sections per GPU preset round-trip and are checked like the shared keys") {
    const auto config = load_config(R"({"model": "llama3-8b", "gpu": "h100-sxm", "calibration": {"memory_efficiency": 0.6,
        "gpus": {"h100-sxm": {"gemm_efficiency": {"fp8": 0.5}}, "a100-sxm4-80gb": {"kernel_launch_s": 2e-6}}}})");
    REQUIRE(config.ok());
    const auto& per_gpu = config.value().calibration.per_gpu;
    REQUIRE(per_gpu.size() == 2);
    CHECK(per_gpu[0].first == "h100-sxm");
    CHECK(*per_gpu[0].second.gemm_efficiency[int(DType::fp8)] == 0.5);
    const std::string canonical = config_to_json(config.value());
    const auto again = load_config(canonical);
    REQUIRE(again.ok());
    CHECK(config_to_json(again.value()) == canonical);
    const Error typo = load_error(R"({"model": "llama3-8b", "gpu": "h100-sxm", "calibration": {"gpus": {"h100-sxn": {}}}})");
    CHECK(typo.key == "calibration.gpus.h100-sxn");
    CHECK_THAT(typo.message, Catch::Contains("did you mean h100-sxm"));
    CHECK(load_error(R"({"model": "llama3-8b", "gpu": "h100-sxm", "calibration": {"gpus": {"h100-sxm": {"memory_efficiency": 0}}}})").key ==
          "calibration.gpus.h100-sxm.memory_efficiency");
}

TEST_CASE("parse_config does not apply cross-field rules, validate_config does") {
    const auto parsed = parse_config(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 3, "parallel": {"tp": 3}})");
    REQUIRE(parsed.ok());
    CHECK(parsed.value().parallel.dp == 0);  // still to derive
    CHECK_FALSE(validate_config(parsed.value()).ok());
}

TEST_CASE("a key repeated in one object is an error naming it, at every level (issue 12)") {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"model": "llama3-8b", "model": "gpt2", "gpu": "h100-sxm"})", "model"},
        {R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"seq_len": 1024, "seq_len": 2048}})", "training.seq_len"},
        {R"({"model": {"preset": "gpt2", "moe": {"experts": 8, "experts": 4}}, "gpu": "h100-sxm"})", "model.moe.experts"},
        {R"({"model": "gpt2", "gpu": {"preset": "h100-sxm", "measured": {"memory_efficiency": 0.8, "memory_efficiency": 0.9}}})",
         "gpu.measured.memory_efficiency"},
        {R"({"model": "gpt2", "gpu": "h100-sxm", "node": {"preset": "dgx-h100", "gpus_per_node": 8, "gpus_per_node": 4}})",
         "node.gpus_per_node"},
        {R"({"model": "gpt2", "gpu": "h100-sxm", "precision": {"preset": "fp16-mixed", "loss_scaling": "none", "loss_scaling": "dynamic"}})",
         "precision.loss_scaling"},
        {R"({"model": "gpt2", "gpu": "h100-sxm", "calibration": {"gemm_efficiency": {"bf16": 0.7, "bf16": 0.8}}})",
         "calibration.gemm_efficiency.bf16"},
    };
    for (const auto& [json, key] : cases) {
        INFO(json);
        const auto parsed = parse_config(json);
        REQUIRE_FALSE(parsed.ok());
        CHECK(parsed.error().key == key);
        CHECK(parsed.error().message.rfind("duplicate key", 0) == 0);
    }
    // The same key in two different objects is no duplicate.
    CHECK(parse_config(R"({"model": {"preset": "gpt2", "name": "x"}, "gpu": {"preset": "h100-sxm", "name": "x"}})").ok());
}

TEST_CASE("a UTF-8 byte order mark is skipped, a number JSON cannot hold is named as such (issue 12)") {
    const auto with_bom = parse_config("\xEF\xBB\xBF"
                                       R"({"model": "gpt2", "gpu": "h100-sxm"})");
    REQUIRE(with_bom.ok());
    CHECK(with_bom.value().model.name == "gpt2");
    CHECK(parse_config("\xEF\xBB\xBF").error().message.rfind("empty input", 0) == 0);
    const auto big = parse_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 99999999999999999999})");
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().message.find("out of range") != std::string::npos);
    const auto zero = parse_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 0})");
    REQUIRE_FALSE(zero.ok());
    CHECK(zero.error().key == "num_gpus");
}

TEST_CASE("model features (MLA, local attention, MoE every/capacity/imbalance, MTP): round trip and errors naming keys") {
    const auto config = load_config(R"({"model": {"preset": "deepseek-v2-lite", "mtp_layers": 2,
        "moe": {"every": 2, "capacity_factor": 1.25, "imbalance": 1.5}, "mla": {"q_lora_rank": 768},
        "local_attention": {"kind": "chunked", "window": 2048, "full_every": 3}}, "gpu": "h100-sxm"})");
    REQUIRE(config.ok());
    const std::string canonical = config_to_json(config.value());
    const auto again = load_config(canonical);
    REQUIRE(again.ok());
    const ModelSpec& m = again.value().model;
    CHECK(config_to_json(again.value()) == canonical);
    CHECK(m.mtp_layers == 2);
    CHECK(m.moe.every == 2);
    CHECK(m.moe.capacity_factor == 1.25);
    CHECK(m.moe.imbalance == 1.5);
    CHECK(m.mla.q_lora_rank == 768);
    CHECK(m.mla.kv_lora_rank == 512);  // kept from the preset
    CHECK(m.local_attention.kind == LocalAttentionKind::chunked);
    CHECK(m.local_attention.window == 2048);
    CHECK(m.local_attention.full_every == 3);

    auto key_of = [](const std::string& model) { return load_error(R"({"model": )" + model + R"(, "gpu": "h100-sxm"})").key; };
    CHECK(key_of(R"({"preset": "llama3-8b", "mla": {"q_lora_rank": 8}})") == "model.mla.kv_lora_rank");
    CHECK(
        key_of(
            R"({"preset": "llama3-8b", "mla": {"kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}})") ==
        "model.kv_heads");  // GQA with MLA
    CHECK(key_of(R"({"preset": "deepseek-v3", "mla": {"v_head_dim": 0}})") == "model.mla.v_head_dim");
    CHECK(key_of(R"({"preset": "mistral-7b", "local_attention": {"window": 0}})") == "model.local_attention.window");
    CHECK(key_of(R"({"preset": "mistral-7b", "local_attention": {"kind": "none"}})") == "model.local_attention.kind");
    CHECK(key_of(R"({"preset": "mistral-7b", "local_attention": {"kind": "banded"}})") == "model.local_attention.kind");
    CHECK(key_of(R"({"preset": "t5-base", "local_attention": {"kind": "sliding", "window": 64}})") == "model.local_attention");
    CHECK(key_of(R"({"preset": "mixtral-8x7b", "moe": {"every": 2}})") == "model.ffn_hidden");  // dense layers need a width
    CHECK(key_of(R"({"preset": "mixtral-8x7b", "moe": {"imbalance": 0.5}})") == "model.moe.imbalance");
    CHECK(key_of(R"({"preset": "mixtral-8x7b", "moe": {"imbalance": 5}})") == "model.moe.imbalance");  // > experts / top_k
    CHECK(key_of(R"({"preset": "mixtral-8x7b", "moe": {"capacity_factor": -1}})") == "model.moe.capacity_factor");
    CHECK(key_of(R"({"preset": "llama3-8b", "moe": {"imbalance": 1.2}})") == "model.moe.experts");
    CHECK(key_of(R"({"preset": "llama3-8b", "mtp_layers": -1})") == "model.mtp_layers");
    CHECK(key_of(R"({"preset": "llama3-8b", "mla": {"kv_lora_rank": 512}})") == "model.mla.qk_nope_head_dim");  // required with it
}

TEST_CASE("training.finetune and offload: round trip and errors naming keys") {
    const auto config = load_config(R"({"model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 1,
        "training": {"optimizer": "adamw8bit", "finetune": {"method": "qlora", "lora_rank": 64, "lora_targets": "attention", "frozen_layers": 2},
                     "offload_optimizer": true}})");
    REQUIRE(config.ok());
    const std::string canonical = config_to_json(config.value());
    const auto again = load_config(canonical);
    REQUIRE(again.ok());
    CHECK(config_to_json(again.value()) == canonical);
    const TrainingSpec& t = again.value().training;
    CHECK(t.finetune.method == FinetuneMethod::qlora);
    CHECK(t.finetune.lora_rank == 64);
    CHECK(t.finetune.lora_targets == LoraTargets::attention);
    CHECK(t.finetune.frozen_layers == 2);
    CHECK(t.offload_optimizer);
    CHECK(t.optimizer == Optimizer::adamw8bit);
    // Pre-training configs keep their canonical form (no finetune object).
    CHECK(config_to_json(load_config(R"({"model": "gpt2", "gpu": "h100-sxm"})").value()).find("finetune") == std::string::npos);

    auto key_of = [](const std::string& training) {
        return load_error(R"({"model": "llama3.1-8b", "gpu": "a100-sxm4-40gb", "num_gpus": 2, "training": )" + training + "}").key;
    };
    CHECK(key_of(R"({"finetune": {"method": "lora"}})") == "training.finetune.lora_rank");
    CHECK(key_of(R"({"finetune": {"method": "full", "lora_rank": 8}})") == "training.finetune.lora_rank");
    CHECK(key_of(R"({"finetune": {"method": "lora", "lora_rank": 8, "frozen_layers": 32}})") == "training.finetune.frozen_layers");
    CHECK(key_of(R"({"finetune": {"frozen_layers": 33}})") == "training.finetune.frozen_layers");
    CHECK(key_of(R"({"finetune": {"method": "dora"}})") == "training.finetune.method");
    CHECK(key_of(R"({"finetune": {"method": "lora", "lora_rank": 8, "lora_targets": "mlp"}})") == "training.finetune.lora_targets");
    CHECK(key_of(R"({"finetune": {"rank": 8}})") == "training.finetune.rank");
    CHECK(key_of(R"({"offload_params": true})") == "training.offload_params");  // dp 2 without zero 3
    CHECK(key_of(R"({"optimizer": "adam8bit"})") == "training.optimizer");
}
