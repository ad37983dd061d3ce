// The execution record: pipeline shape, per-GPU shapes, dtypes per op class, kernel decisions.
#include "model_fixtures.hpp"

#include "trainclock/perf/execution.hpp"

using namespace trainclock;

TEST_CASE("Execution derives M, chunks and per-GPU token counts from the layout", "[execution]") {
    const Config c = fixtures::config(R"("model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1024, "precision": "bf16-mixed",
        "parallel": {"tp": 8, "pp": 8, "cp": 2, "sequence_parallel": true, "schedule": "interleaved", "virtual_stages": 3},
        "training": {"seq_len": 2048, "global_batch": 1536, "micro_batch": 2})");
    const Execution x = make_execution(c);
    // dp = 1024 / (8 * 8 * 2) = 8; M = 1536 / (2 * 8) = 96 (DESIGN.md 2.4).
    CHECK(x.micro_batches == 96);
    CHECK(x.stages == 8);
    CHECK(x.chunks == 3);
    CHECK(x.virtual_stages == 24);
    CHECK_FALSE(x.interleave_fallback);
    // T = b s / cp = 2 * 2048 / 2; with SP T / tp outside the TP regions.
    CHECK(x.tokens == 2048);
    CHECK(x.tokens_sp == 256);
    CHECK(x.heads_local == 96.0 / 8);
    CHECK(x.vocab_local == double(c.model.vocab) / 8);
    // Every layer is in exactly one virtual stage, in order.
    int64_t next = 0;
    for (int64_t j = 0; j < x.virtual_stages; ++j)
        for_each_layer_run(x, j, [&](int64_t first, int64_t count, LayerKind) {
            CHECK(first == next);
            next += count;
        });
    CHECK(next == 96);
}

TEST_CASE("Interleaving falls back to 1F1B when M is not a multiple of PP", "[execution]") {
    Config c = fixtures::config(R"("model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 4, "parallel": {"pp": 4},
        "training": {"seq_len": 2048, "global_batch": 6, "micro_batch": 1})");
    c.parallel.schedule = PipelineSchedule::interleaved;  // validate_config would refuse: test the fallback alone
    c.parallel.virtual_stages = 2;
    const Execution x = make_execution(c);
    CHECK(x.interleave_fallback);
    CHECK(x.shape.schedule == PipelineSchedule::one_f_one_b);
    CHECK(x.chunks == 1);
}

TEST_CASE("Op precision: FP8 attention in bf16, flash only for 16-bit attention and absolute positions", "[execution]") {
    const std::string body =
        R"("model": "gpt3-1.3b", "gpu": "h100-sxm", "num_gpus": 1, "training": {"seq_len": 2048, "global_batch": 8}, "precision": )";
    const Config fp8 = fixtures::config(body + R"("fp8-mixed")");
    const OpPrecision q = op_precision(fp8, fp8.precision);
    CHECK(q.quantized);
    CHECK(q.attention == DType::bf16);
    CHECK(q.w_gemm == 1);
    CHECK(q.flash);
    const Config fp32 = fixtures::config(body + R"("fp32")");
    CHECK_FALSE(op_precision(fp32, fp32.precision).flash);
    Config relative = fixtures::config(body + R"("bf16-mixed")");
    relative.model.relative_position = true;
    CHECK_FALSE(op_precision(relative, relative.precision).flash);
}

TEST_CASE("Precision-blind executions cost the reference dtype but store the config's", "[execution]") {
    Config c = fixtures::config(R"("model": "gpt3-1.3b", "gpu": "v100-sxm2-32gb", "num_gpus": 1, "precision": "fp32",
        "training": {"seq_len": 1024, "global_batch": 8}, "calibration": {"precision_blind": true})");
    const Execution x = make_execution(c);
    CHECK(x.ops.gemm == DType::fp16);  // V100 has no bf16
    CHECK(x.stored.gemm == DType::fp32);
    CHECK(x.precision().name == "precision-blind");
}

TEST_CASE("Layer kinds: slots and runs of an MoE encoder-decoder", "[execution]") {
    // Every combination of the four switches has its own slot below kLayerKindSlots.
    bool seen[kLayerKindSlots] = {};
    for (int bits = 0; bits < 16; ++bits) {
        const LayerKind kind{true, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0};
        const int slot = kind_slot(kind);
        REQUIRE(slot >= 0);
        REQUIRE(slot < kLayerKindSlots);
        CHECK_FALSE(seen[slot]);
        seen[slot] = true;
    }
    CHECK(kind_slot({true, false, false}) == 0);
    CHECK(gated_mlp(Activation::swiglu));
    CHECK_FALSE(gated_mlp(Activation::gelu));
    ModelSpec m;
    m.architecture = Architecture::encoder_decoder;
    m.layers = 6;
    m.decoder_layers = 6;
    m.moe.experts = 8;
    m.moe.dense_layers = 2;
    CHECK(total_layers(m) == 12);
    // Runs break where the dense layers of each stack end and where the decoder starts: 0-1, 2-5, 6-7, 8-11.
    CHECK(layer_kind_run_end(m, 0, 12) == 2);
    CHECK(layer_kind_run_end(m, 2, 12) == 6);
    CHECK(layer_kind_run_end(m, 6, 12) == 8);
    CHECK(layer_kind_run_end(m, 8, 12) == 12);
    CHECK(kind_slot(layer_kind_at(m, 7)) == kind_slot({true, true, false}));
    CHECK(kind_slot(layer_kind_at(m, 9)) == kind_slot({true, true, true}));
}
