// The calibration record: preset measurements > vendor defaults, user overrides on top.
#include "model_fixtures.hpp"

#include <algorithm>
#include <string>

#include "perf/constants.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/validation/validation.hpp"

using namespace trainclock;

TEST_CASE("Published GEMM fractions of the GPU preset are used", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    const Calibration c = resolve_calibration(h100, {});
    CHECK(c.gemm_efficiency[int(DType::bf16)] == Approx(h100.measured_gemm_efficiency[int(DType::bf16)]));
    CHECK(c.gemm_efficiency[int(DType::fp8)] == Approx(h100.measured_gemm_efficiency[int(DType::fp8)]));
    CHECK(c.gemm_efficiency[int(DType::fp8)] < c.gemm_efficiency[int(DType::bf16)]);
}

TEST_CASE("Without a measurement every dtype gets a documented physical default", "[calibration]") {
    GpuSpec bare = fixtures::gpu("a100-sxm4-80gb");
    bare.measured_gemm_efficiency = {};
    bare.measured_memory_efficiency = 0;
    const Calibration c = resolve_calibration(bare, {});
    for (int d = 0; d < kDTypeCount; ++d) {
        CHECK(c.gemm_efficiency[size_t(d)] > 0.3);
        CHECK(c.gemm_efficiency[size_t(d)] <= 1.0);
    }
    CHECK(c.memory_efficiency > 0.5);
    CHECK(c.intra_node_efficiency == Approx(0.8));  // NCCL busbw ~80 % of line rate (hardware.md 4)
    CHECK(c.kernel_launch_s > 0);
    CHECK(c.host_op_s > 0);
    bare.vendor = "AMD";  // MI300X MAMF 51 %: lower vendor default than NVIDIA's
    CHECK(resolve_calibration(bare, {}).gemm_efficiency[int(DType::bf16)] < c.gemm_efficiency[int(DType::bf16)]);
}

TEST_CASE("CalibrationSpec overrides win", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    CalibrationSpec o;
    o.gemm_efficiency[int(DType::bf16)] = 0.5;
    o.memory_efficiency = 0.6;
    o.kernel_launch_s = 1e-6;
    o.step_overhead_s = 0.25;
    o.intra_node_efficiency = 0.7;
    o.precision_blind = true;
    const Calibration c = resolve_calibration(h100, o);
    CHECK(c.gemm_efficiency[int(DType::bf16)] == 0.5);
    CHECK(c.memory_efficiency == 0.6);
    CHECK(c.kernel_launch_s == 1e-6);
    CHECK(c.step_overhead_s == 0.25);
    CHECK(c.intra_node_efficiency == 0.7);
    CHECK(c.precision_blind);
}

TEST_CASE("Hopper-native attention kernels (flash3) reach a higher fraction of peak than flash2-era ones", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    const Calibration flash2 = resolve_calibration(h100, {}), flash3 = resolve_calibration(h100, {}, AttentionKernel::flash3);
    CHECK(flash3.attention_efficiency == Approx(0.53 * flash3.gemm_sustained));  // FA3 paper, fwd + 2.5x bwd
    CHECK(flash3.attention_efficiency > 2 * flash2.attention_efficiency);
    CHECK(flash3.gemm_efficiency == flash2.gemm_efficiency);  // only attention changes
    CalibrationSpec o;
    o.attention_efficiency = 0.3;  // the user's figure wins over either kernel's default
    CHECK(resolve_calibration(h100, o, AttentionKernel::flash3).attention_efficiency == 0.3);
}

TEST_CASE("FA2-class attention follows the vector peak where the tensor peak outgrew Hopper's balance", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm"), b200 = fixtures::gpu("b200"), l40s = fixtures::gpu("l40s");
    const double h100_fraction =
        resolve_calibration(h100, {}).attention_efficiency / resolve_calibration(h100, {}).gemm_efficiency[int(DType::bf16)];
    CHECK(h100_fraction == Approx(0.25));  // the fitted Hopper fraction, unscaled (the reference balance is H100's)
    // B200: fp32 75 / bf16 2250 against H100's 67 / 989.5 -> x 0.4923 of the tensor-relative fraction,
    // i.e. the FA2 rate per vector FLOP of H100 (75 / 67 = 1.12x H100's attention rate at equal MAMF).
    const Calibration b = resolve_calibration(b200, {});
    CHECK(b.attention_efficiency == Approx(0.25 * b.gemm_efficiency[int(DType::bf16)] * (75.0 / 2250.0) / (67.0 / 989.5)));
    CHECK(b.attention_efficiency * b200.peak_flops(DType::bf16) / b.gemm_efficiency[int(DType::bf16)] ==
          Approx(0.25 * 989.5e12 * 75.0 / 67.0));
    // L40S's vector units are ample (91.6 / 362 TFLOP/s): no cap. Cuts only the FA2 reading: flash3 is untouched.
    CHECK(resolve_calibration(l40s, {}).attention_efficiency ==
          Approx(0.25 * resolve_calibration(l40s, {}).gemm_efficiency[int(DType::bf16)]));
    CHECK(resolve_calibration(b200, {}, AttentionKernel::flash3).attention_efficiency == Approx(0.53 * b.gemm_sustained));
}

TEST_CASE("A calibration's section for a GPU preset applies to that GPU only, over the shared keys", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm"), a100 = fixtures::gpu("a100-sxm4-80gb");
    CalibrationSpec o;
    o.memory_efficiency = 0.6;  // every GPU
    CalibrationOverrides h100_only;
    h100_only.memory_efficiency = 0.7;  // wins over the shared key on H100
    h100_only.gemm_efficiency[int(DType::fp8)] = 0.5;
    o.per_gpu.emplace_back("h100-sxm", h100_only);
    const Calibration h = resolve_calibration(h100, o), a = resolve_calibration(a100, o);
    CHECK(h.memory_efficiency == 0.7);
    CHECK(h.gemm_efficiency[int(DType::fp8)] == 0.5);
    CHECK(a.memory_efficiency == 0.6);
    CHECK(a.gemm_efficiency == resolve_calibration(a100, {}).gemm_efficiency);
}

TEST_CASE("The precision-blind reference dtype is a 16-bit tensor-core type the GPU has", "[calibration]") {
    CHECK(reference_dtype(fixtures::gpu("v100-sxm2-32gb")) == DType::fp16);
    CHECK(reference_dtype(fixtures::gpu("a100-sxm4-80gb")) == DType::bf16);
}

// Every scalar of the record is overridable (DESIGN.md 2.2): each key of calibration_scalars set to
// a value inside its range comes out of resolve_calibration unchanged, and nothing else moves.
TEST_CASE("Every scalar of the calibration record is overridable, gemm_sustained, host_op_s and comm_sms included", "[calibration]") {
    const GpuSpec h100 = fixtures::gpu("h100-sxm");
    const Calibration defaults = resolve_calibration(h100, {});
    int keys = 0;
    bool sustained = false, host = false, comm = false;
    for (size_t i = 0; i < calibration_scalars(defaults).size(); ++i) {
        CalibrationSpec o;
        const auto scalar = calibration_scalars(o)[i];
        const double value = scalar.low + 0.37 * (std::min(scalar.high, 1.0) - scalar.low);  // inside every range
        *scalar.value = value;
        INFO(scalar.key);
        const Calibration c = resolve_calibration(h100, o);
        for (size_t j = 0; j < calibration_scalars(c).size(); ++j)
            CHECK(*calibration_scalars(c)[j].value == (j == i ? value : *calibration_scalars(defaults)[j].value));
        CHECK(c.gemm_efficiency == defaults.gemm_efficiency);
        sustained = sustained || scalar.key == "gemm_sustained";
        host = host || scalar.key == "host_op_s";
        comm = comm || scalar.key == "comm_sms";
        ++keys;
    }
    CHECK(keys == 10);
    CHECK(sustained);
    CHECK(host);
    CHECK(comm);
    // The list covers every scalar of the record (nothing added to CalibrationScalars without a key).
    CHECK(sizeof(CalibrationScalars<double>) == size_t(keys) * sizeof(double));
}

// The newly overridable keys read from a calibration JSON, checked against their ranges, and change
// the step time in the direction their physics says.
TEST_CASE("gemm_sustained and comm_sms read from a calibration JSON and act on the prediction", "[calibration]") {
    Result<CalibrationSpec> spec = parse_calibration_json(R"({"gemm_sustained": 0.7, "gpus": {"h100-sxm": {"comm_sms": 32}}})");
    REQUIRE(spec.ok());
    REQUIRE(spec.value().gemm_sustained.has_value());
    CHECK(*spec.value().gemm_sustained == 0.7);
    REQUIRE(spec.value().per_gpu.size() == 1);
    CHECK(*spec.value().per_gpu[0].second.comm_sms == 32);
    const Calibration c = resolve_calibration(fixtures::gpu("h100-sxm"), spec.value());
    CHECK(c.gemm_sustained == 0.7);
    CHECK(c.comm_sms == 32);
    CHECK(parse_calibration_json(R"({"gemm_sustained": 1.5})").error().key == "calibration.gemm_sustained");
    CHECK(parse_calibration_json(R"({"comm_sms": -1})").error().key == "calibration.comm_sms");

    auto step_s = [](const std::string& calibration) {
        Result<Config> config = load_config(R"({"model": "gpt3-13b", "gpu": "h100-sxm", "num_gpus": 64,
            "parallel": {"tp": 8, "overlap_tp_comm": true}, "training": {"seq_len": 2048, "global_batch": 64}, "calibration": )" +
                                            calibration + "}");
        REQUIRE(config.ok());
        return predict(config.value()).iteration_time_s;
    };
    const double base = step_s("{}");
    CHECK(step_s(R"({"gemm_sustained": 0.5})") > base);  // slower GEMMs
    CHECK(step_s(R"({"gemm_sustained": 1.0})") < base);
    CHECK(step_s(R"({"comm_sms": 0})") < base);  // compute overlapped with TP collectives keeps every SM
}

// A stack whose per-step host work is derived (megatron-lm) does not read calibration.step_overhead_s:
// the prediction says so instead of dropping the figure silently; a stack on the fitted remainder reads it.
TEST_CASE("A calibration's step_overhead_s is said to be unused where the stack derives its per-step work", "[calibration]") {
    auto use_of = [](const std::string& framework, const std::string& calibration) {
        Result<Config> config = load_config(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "framework": ")" + framework +
                                            R"(", "training": {"seq_len": 2048, "global_batch": 64}, "calibration": )" + calibration + "}");
        REQUIRE(config.ok());
        return calibration_use(config.value());
    };
    auto says_unused = [](const std::optional<CalibrationUse>& use) {
        return use && std::any_of(use->warnings.begin(), use->warnings.end(), [](const std::string& w) {
                   return w.find("states step_overhead_s, which framework megatron-lm does not use") != std::string::npos;
               });
    };
    CHECK(says_unused(use_of("megatron-lm", R"({"step_overhead_s": 0.05})")));
    CHECK(says_unused(use_of("megatron-lm", R"({"gpus": {"a100-sxm4-80gb": {"step_overhead_s": 0.05}}})")));
    CHECK_FALSE(says_unused(use_of("megatron-lm", R"({"host_op_s": 0.00005})")));
    const std::optional<CalibrationUse> pytorch = use_of("pytorch", R"({"step_overhead_s": 0.05})");
    REQUIRE(pytorch);
    CHECK(std::none_of(pytorch->warnings.begin(), pytorch->warnings.end(),
                       [](const std::string& w) { return w.find("step_overhead_s") != std::string::npos; }));
}

// The table of constants (presets/tables/constants.json, perf/constants.hpp): each one named once,
// inside its bounds, with a source; the calibration defaults are read from it.
TEST_CASE("Every fitted or assumed constant has one row with bounds and a source", "[calibration]") {
    const auto& table = model_constants();
    for (size_t i = 0; i < table.size(); ++i) {
        const ModelConstant& c = table[i];
        INFO(c.name);
        CHECK(c.name == kConstantNames[i]);
        CHECK(c.low <= c.value);
        CHECK(c.value <= c.high);
        CHECK(c.source.size() > 10);
        for (size_t j = 0; j < i; ++j) CHECK(table[j].name != c.name);
        // A row fitted here is refit by validate --refit and names the validation sets it is fitted on:
        // all of them, or the one set its cases are in ("presets/validation set public-2 (...").
        // A kernel constant fitted on the component microbenchmarks (validate --components) is not refit
        // on end-to-end rows and names the component file's rows it is fitted on.
        const std::string components = "fitted on presets/validation/components ";
        if (c.source.rfind(components, 0) == 0) {
            CHECK(c.refit == FitKnob::none);
            CHECK(c.source.find("-", components.size()) != std::string::npos);  // row ids ("AZ-129")
        } else if (c.source.rfind("fitted on", 0) == 0) {
            CHECK(c.refit != FitKnob::none);
            const bool all_sets = std::all_of(std::begin(constants::kFitSets), std::end(constants::kFitSets),
                                              [&](const char* set) { return c.source.find(set) != std::string::npos; });
            const bool one_set = std::any_of(std::begin(constants::kFitSets), std::end(constants::kFitSets), [&](const char* set) {
                return c.source.rfind("fitted on presets/validation set " + std::string(set) + " ", 0) == 0;
            });
            CHECK((all_sets || one_set));
        }
    }
    // Read from the text exactly: the datasheet ratio its source states (H100 SXM fp32 67 / bf16 989.5).
    CHECK(constant(Constant::flash2_vector_of_tensor) == 67.0 / 989.5);
    CHECK(constant(Constant::kernel_launch_s) == 10e-6);
    CHECK(model_constants()[size_t(Constant::attention_flash2_fp8_gpus)].fp8_gpus == 1);
    CHECK(model_constants()[size_t(Constant::attention_flash3)].attention_kernel == int(AttentionKernel::flash3));
    GpuSpec bare = fixtures::gpu("a100-sxm4-80gb");
    bare.measured_gemm_efficiency = {};
    bare.measured_memory_efficiency = 0;
    const Calibration c = resolve_calibration(bare, {});
    CHECK(c.gemm_efficiency[int(DType::bf16)] == constant(Constant::nvidia_gemm));
    CHECK(c.gemm_efficiency[int(DType::fp8)] == constant(Constant::nvidia_gemm) * constant(Constant::fp8_of_bf16_gemm));
    CHECK(c.gemm_sustained == constant(Constant::gemm_sustained));
    CHECK(c.memory_efficiency == constant(Constant::hbm_stream) * constant(Constant::training_kernels_of_stream));
    CHECK(c.comm_sms == constant(Constant::comm_sms));
}
