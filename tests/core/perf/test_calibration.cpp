// The calibration record: preset measurements > vendor defaults, user overrides on top.
#include "model_fixtures.hpp"

#include "trainclock/perf/calibration.hpp"

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
