// Tests for trainclock/hardware.hpp: units of the GPU and node specs, and the physical sanity of
// every GPU and node preset (datasheet figures are transcribed by hand, so check their shape).
#include <catch2/catch.hpp>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/hardware.hpp"

using namespace trainclock;

namespace {
GpuSpec preset_gpu(const std::string& name) {
    auto spec = gpu_preset(name);
    REQUIRE(spec.ok());
    return spec.value();
}
}  // namespace

TEST_CASE("peak_flops converts the datasheet TFLOP/s to FLOP/s and supports() follows it") {
    GpuSpec gpu;
    gpu.peak_tflops[static_cast<int>(DType::bf16)] = 989.5;
    CHECK(gpu.peak_flops(DType::bf16) == Approx(989.5e12));
    CHECK(gpu.supports(DType::bf16));
    CHECK_FALSE(gpu.supports(DType::fp8));
    CHECK(gpu.peak_flops(DType::fp8) == 0);
}

TEST_CASE("datasheet anchors: V100, A100 and H100 peaks per dtype") {
    const GpuSpec v100 = preset_gpu("v100-sxm2-32gb");
    CHECK(v100.peak_tflops[static_cast<int>(DType::fp32)] == Approx(15.7));  // CUDA cores
    CHECK(v100.peak_tflops[static_cast<int>(DType::fp16)] == Approx(125));   // tensor cores
    CHECK_FALSE(v100.supports(DType::tf32));
    CHECK_FALSE(v100.supports(DType::bf16));

    const GpuSpec a100 = preset_gpu("a100-sxm4-80gb");
    CHECK(a100.peak_tflops[static_cast<int>(DType::tf32)] == Approx(156));
    CHECK(a100.peak_tflops[static_cast<int>(DType::bf16)] == Approx(312));
    CHECK_FALSE(a100.supports(DType::fp8));

    const GpuSpec h100 = preset_gpu("h100-sxm");
    CHECK(h100.peak_tflops[static_cast<int>(DType::fp8)] == Approx(2 * h100.peak_tflops[static_cast<int>(DType::bf16)]));
}

TEST_CASE("datasheet anchors: Blackwell Ultra B300 (HGX) and GB300 (NVL72) dense peaks, HBM3e, TDP") {
    // NVIDIA HGX B300: per 8 GPUs FP8 72 PF and BF16 36 PF sparse (dense = half), FP4 108 PF dense.
    const GpuSpec b300 = preset_gpu("b300");
    CHECK(b300.peak_tflops[static_cast<int>(DType::fp8)] == Approx(72e3 / 8 / 2));
    CHECK(b300.peak_tflops[static_cast<int>(DType::bf16)] == Approx(36e3 / 8 / 2));
    CHECK(b300.peak_tflops[static_cast<int>(DType::nvfp4)] == Approx(108e3 / 8));
    CHECK(b300.tdp_w == Approx(1100));
    CHECK(b300.default_node == "dgx-b300");
    // NVIDIA GB300 NVL72: per 72 GPUs FP8 720 PF and BF16 360 PF sparse, FP4 1,080 PF dense, 576 TB/s.
    const GpuSpec gb300 = preset_gpu("gb300");
    CHECK(gb300.peak_tflops[static_cast<int>(DType::fp8)] == Approx(720e3 / 72 / 2));
    CHECK(gb300.peak_tflops[static_cast<int>(DType::bf16)] == Approx(360e3 / 72 / 2));
    CHECK(gb300.peak_tflops[static_cast<int>(DType::nvfp4)] == Approx(1080e3 / 72));
    CHECK(gb300.memory_bw_gbps == Approx(576e3 / 72));
    CHECK(gb300.tdp_w == Approx(1400));
    CHECK(gb300.memory_gib > b300.memory_gib);  // 279 vs 270 GB usable of 288 GB HBM3e
    const Result<NodeSpec> nvl = node_preset("gb300-nvl72"), dgx = node_preset("dgx-b300");
    REQUIRE(nvl.ok());
    REQUIRE(dgx.ok());
    CHECK(nvl.value().gpus_per_node == 72);
    CHECK(nvl.value().host_gpus() == 4);
    CHECK(dgx.value().host_gpus() == 8);
    CHECK(nvl.value().intra_bw_gbps == Approx(1800 / 2));   // NVLink 5: 1.8 TB/s bidirectional per GPU
    CHECK(dgx.value().inter_bw_gbps == Approx(800.0 / 8));  // one 800 Gb/s ConnectX-8 per GPU
}

TEST_CASE("every GPU preset is physically plausible") {
    for (const auto& name : preset_names(PresetKind::gpu)) {
        INFO(name);
        const GpuSpec gpu = preset_gpu(name);
        CHECK(gpu.memory_gib > 0);
        CHECK(gpu.memory_gib <= 512);
        CHECK(gpu.memory_bw_gbps > 100);
        CHECK(gpu.memory_bw_gbps < 20000);
        CHECK(gpu.tdp_w >= 0);
        // Narrower formats never run slower than wider ones on the same tensor unit (dense figures).
        const double tf32 = gpu.peak_tflops[static_cast<int>(DType::tf32)];
        const double fp16 = gpu.peak_tflops[static_cast<int>(DType::fp16)];
        const double bf16 = gpu.peak_tflops[static_cast<int>(DType::bf16)];
        const double fp8 = gpu.peak_tflops[static_cast<int>(DType::fp8)];
        const double fp4 = gpu.peak_tflops[static_cast<int>(DType::nvfp4)];
        if (tf32 > 0 && bf16 > 0) CHECK(bf16 >= tf32);
        if (fp8 > 0 && bf16 > 0) CHECK(fp8 >= bf16);
        if (fp8 > 0 && fp16 > 0) CHECK(fp8 >= fp16);
        if (fp4 > 0 && fp8 > 0) CHECK(fp4 >= fp8);
        for (int i = 0; i < kDTypeCount; ++i) {
            CHECK(gpu.peak_tflops[size_t(i)] >= 0);
            CHECK(gpu.peak_tflops[size_t(i)] < 20000);
        }
    }
}

TEST_CASE("every node preset has a faster or equal link inside the node than out of it") {
    for (const auto& name : preset_names(PresetKind::node)) {
        INFO(name);
        const auto node = node_preset(name);
        REQUIRE(node.ok());
        const NodeSpec& spec = node.value();
        CHECK(spec.gpus_per_node >= 1);
        CHECK(spec.intra_bw_gbps > 0);
        CHECK(spec.inter_bw_gbps > 0);
        CHECK(spec.intra_bw_gbps >= spec.inter_bw_gbps);
        CHECK(spec.intra_latency_us >= 0);
        CHECK(spec.inter_latency_us >= spec.intra_latency_us);
        CHECK(spec.power_overhead >= 1.0);
    }
}
