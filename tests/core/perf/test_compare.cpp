// Tests for trainclock/compare.hpp: one config across every precision its GPU runs.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/perf/compare.hpp"

using namespace trainclock;

namespace {
const PrecisionRow* find_row(const PrecisionComparison& comparison, const std::string& name) {
    for (const auto& row : comparison.rows) {
        if (row.config.precision.name == name) return &row;
    }
    return nullptr;
}
}  // namespace

TEST_CASE("on A100, gpt3-1.3b: all precisions but FP8/FP4, FP32 several times slower than bf16-mixed") {
    const auto config = load_config(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8})");
    REQUIRE(config.ok());
    const PrecisionComparison comparison = compare_precisions(config.value());
    CHECK(comparison.baseline == "fp32");
    for (const char* name : {"fp8-mixed", "mxfp8-mixed", "nvfp4-mixed"}) {
        CHECK(std::find(comparison.unsupported.begin(), comparison.unsupported.end(), name) != comparison.unsupported.end());
    }
    const PrecisionRow* fp32 = find_row(comparison, "fp32");
    const PrecisionRow* tf32 = find_row(comparison, "tf32");
    const PrecisionRow* bf16 = find_row(comparison, "bf16-mixed");
    REQUIRE(fp32);
    REQUIRE(tf32);
    REQUIRE(bf16);
    CHECK(comparison.rows.front().config.precision.name == "fp32");  // display order starts at fp32
    CHECK(fp32->speedup == 1.0);
    CHECK(bf16->speedup == Approx(fp32->prediction.iteration_time_s / bf16->prediction.iteration_time_s));
    CHECK(bf16->speedup > 3.0);                                                        // FP32 CUDA cores vs BF16 tensor cores
    CHECK(tf32->prediction.iteration_time_s < fp32->prediction.iteration_time_s);      // TF32 tensor cores beat FP32
    CHECK(bf16->prediction.memory.per_gpu_gib < fp32->prediction.memory.per_gpu_gib);  // half activations
}

TEST_CASE("on H100 the FP8 row exists and rule violations show as row errors") {
    const auto config = load_config(R"({"model": {"preset": "gpt2", "hidden": 776, "heads": 8, "kv_heads": 8}, "gpu": "h100-sxm"})");
    REQUIRE(config.ok());
    const PrecisionComparison comparison = compare_precisions(config.value());
    const PrecisionRow* fp8 = find_row(comparison, "fp8-mixed");
    REQUIRE(fp8);
    REQUIRE(fp8->error.has_value());  // 776 is not a multiple of 16
    CHECK(fp8->error->key == "model.hidden");
    CHECK(fp8->speedup == 0);
    const PrecisionRow* bf16 = find_row(comparison, "bf16-mixed");
    REQUIRE(bf16);
    CHECK_FALSE(bf16->error.has_value());
}

TEST_CASE("compare_precisions row by row (plan, predict each row, finish) is compare_precisions") {
    const auto config = load_config(R"({"model": "gpt3-1.3b", "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(config.ok());
    const PrecisionComparison whole = compare_precisions(config.value());
    PrecisionComparison stepped = plan_precision_comparison(config.value());
    CHECK(stepped.unsupported == whole.unsupported);
    REQUIRE(stepped.rows.size() == whole.rows.size());
    for (const PrecisionRow& row : stepped.rows) CHECK(row.prediction.iteration_time_s == 0);  // planned, not predicted
    for (PrecisionRow& row : stepped.rows) predict_precision_row(row);
    finish_precision_comparison(stepped);
    CHECK(stepped.baseline == whole.baseline);
    for (size_t i = 0; i < whole.rows.size(); ++i) {
        INFO(whole.rows[i].config.precision.name);
        CHECK(stepped.rows[i].error.has_value() == whole.rows[i].error.has_value());
        CHECK(stepped.rows[i].prediction.iteration_time_s == whole.rows[i].prediction.iteration_time_s);
        CHECK(stepped.rows[i].speedup == whole.rows[i].speedup);
    }
}
