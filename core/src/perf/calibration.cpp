// trainclock: default efficiency parameters per GPU x dtype and their overrides (calibration.hpp).
//
// Precedence: the user's CalibrationSpec (its section for this GPU preset, then its keys for every
// GPU) > GPU preset "measured" (published measurement) > the physical
// defaults below. Each default says where it comes from; where the public data does not constrain a
// parameter (DESIGN.md 5: FP8 and TF32 efficiencies ran to their bounds when fitted freely) it is set
// from physics or a datasheet-level measurement, never from a fit.
#include "trainclock/perf/calibration.hpp"

#include <algorithm>
#include <string_view>

#include "perf/constants.hpp"

namespace trainclock {
namespace {

constexpr int idx(DType d) { return static_cast<int>(d); }

// Large-GEMM fraction of peak when the preset has no measurement, by vendor.
// NVIDIA bf16/fp16: 0.80 = H100 SXM MAMF 794.5/989 (stas00/ml-engineering "Maximum Achievable Matmul
// FLOPS" table; A100 0.869, B200 0.776).
// AMD: 0.55 ~ MI300X MAMF 668/1300 = 0.514 and MI325X 0.604 (same table). Intel Gaudi: 0.85 (Gaudi 2
// 0.969, Gaudi 3 0.741). Google TPU: 0.80 (no public MAMF; the NVIDIA figure, said so).
double vendor_half_gemm_efficiency(std::string_view vendor) {
    if (vendor == "AMD") return constant(Constant::amd_gemm);
    if (vendor == "Intel") return constant(Constant::intel_gemm);
    return constant(Constant::nvidia_gemm);
}

// A user's overrides replace the defaults they set.
void apply_overrides(const CalibrationOverrides& o, Calibration& c) {
    for (int d = 0; d < kDTypeCount; ++d)
        if (o.gemm_efficiency[d]) c.gemm_efficiency[d] = *o.gemm_efficiency[d];
    const auto from = calibration_scalars(o);
    const auto to = calibration_scalars(c);
    for (size_t i = 0; i < from.size(); ++i)
        if (*from[i].value) *to[i].value = **from[i].value;
}

}  // namespace

DType reference_dtype(const GpuSpec& gpu) { return gpu.supports(DType::bf16) ? DType::bf16 : DType::fp16; }

Calibration resolve_calibration(const GpuSpec& gpu, const CalibrationSpec& overrides, AttentionKernel attention_kernel,
                                const FrameworkSpec* framework) {
    Calibration c;
    const double half = vendor_half_gemm_efficiency(gpu.vendor);
    // fp32 on vector units: SGEMM reaches ~90 % of the FMA peak (paranumal V100 roofline shows
    // ~14 of 15.7 TFLOP/s; cuBLAS SGEMM on A100 ~18.5 of 19.5). These are sustained figures already,
    // so gemm_sustained (fitted on tensor-core runs) does not apply to fp32 (operators.cpp).
    c.gemm_efficiency[idx(DType::fp32)] = constant(Constant::fp32_gemm);
    // tf32: the same tensor-core datapath as bf16 at half rate; xzwgit/gpu-flops-bench (cuBLASLt)
    // measured H200 NVL TF32 425.6 of 494.7 = 0.86 vs BF16 853.3 of 989 = 0.86: same fraction as bf16.
    c.gemm_efficiency[idx(DType::tf32)] = half;
    c.gemm_efficiency[idx(DType::fp16)] = half;
    c.gemm_efficiency[idx(DType::bf16)] = half;
    // fp8: H100 MAMF FP8 0.709 vs BF16 0.803 (ratio 0.88; H200 0.734, B200 0.763): bf16 x 0.88.
    const double fp8_of_bf16 = constant(Constant::fp8_of_bf16_gemm);
    c.gemm_efficiency[idx(DType::fp8)] = half * fp8_of_bf16;
    // mxfp8: B200/GB200 MAMF is for FP8 (0.763/0.723); block scaling runs in the tensor core (no
    // public separate figure): same as fp8. nvfp4: the fp8 figure (measured where the preset has one,
    // below) times nvfp4_of_fp8_gemm, fitted on the GB200 cuBLASLt rows of the component set.
    c.gemm_efficiency[idx(DType::mxfp8)] = half * fp8_of_bf16;
    // Published measurements of this GPU take precedence (presets/gpus "measured").
    for (int d = 0; d < kDTypeCount; ++d)
        if (gpu.measured_gemm_efficiency[d] > 0) c.gemm_efficiency[d] = gpu.measured_gemm_efficiency[d];
    // A measured bf16 figure with no fp16/tf32/fp8 one carries over (same datapath, see above).
    const double bf16 = c.gemm_efficiency[idx(DType::bf16)];
    if (gpu.measured_gemm_efficiency[idx(DType::bf16)] > 0) {
        if (gpu.measured_gemm_efficiency[idx(DType::fp16)] <= 0) c.gemm_efficiency[idx(DType::fp16)] = bf16;
        if (gpu.measured_gemm_efficiency[idx(DType::tf32)] <= 0) c.gemm_efficiency[idx(DType::tf32)] = bf16;
        if (gpu.measured_gemm_efficiency[idx(DType::fp8)] <= 0) c.gemm_efficiency[idx(DType::fp8)] = bf16 * fp8_of_bf16;
        if (gpu.measured_gemm_efficiency[idx(DType::mxfp8)] <= 0) c.gemm_efficiency[idx(DType::mxfp8)] = c.gemm_efficiency[idx(DType::fp8)];
    }
    if (gpu.measured_gemm_efficiency[idx(DType::nvfp4)] <= 0)
        c.gemm_efficiency[idx(DType::nvfp4)] = c.gemm_efficiency[idx(DType::fp8)] * constant(Constant::nvfp4_of_fp8_gemm);
    // Training GEMMs reach less than a brute-force MAMF: real (not best) shapes, sustained clocks under
    // the power limit, and SMs shared with concurrent NCCL kernels. One global factor, fitted on the
    // public A100 Megatron data (vTrain 1,549 iteration times; Narayanan et al. SC'21 Table 1;
    // Korthikanti et al. 2022 Table 5): 0.85 (a flat optimum: 0.82-0.90 fit about as well).
    c.gemm_sustained = constant(Constant::gemm_sustained);
    // PyTorch's _scaled_mm runs rowwise-scaled FP8 GEMMs in its own CUTLASS kernel on CUDA
    // (f8f8bf16_rowwise, aten/src/ATen/native/cuda/RowwiseScaledMM.cu) and tensorwise ones in cuBLAS
    // (torchao Float8LinearRecipeName: tensorwise "cuBLAS ... Fastest option", rowwise "CUTLASS
    // rowwise kernel"); ROCm runs both in hipBLASLt, at the fp8 figure.
    c.fp8_rowwise_gemm = gpu.vendor == "NVIDIA" ? constant(Constant::cutlass_rowwise_gemm) : 1.0;
    // Fused attention, fraction of the bf16 peak. Physics: FlashAttention-2 (Dao 2023, arXiv
    // 2307.08691) reaches 50-73 % of A100 peak forward, less backward (~0.7 of a large GEMM); on GPUs
    // with FP8 units (Hopper, Ada, Blackwell) FA2's mma.sync path and the exp (SFU) throughput, which
    // did not grow with the tensor cores (Shah et al. 2024, FlashAttention-3 sec. 1: 989 TFLOP/s
    // matmul vs 3.9 TFLOP/s exp on H100), hold it to ~35 % of peak (~0.45 of a GEMM). The public data
    // constrains it through llm-foundry's 216 runs at seq 512-65536 (Triton flash attention, 2023):
    // a further 0.55 fits them, i.e. FA1/Triton-era kernels. FA3 and cuDNN's
    // Hopper kernels are training.attention_kernel flash3 (below).
    c.attention_efficiency =
        (gpu.supports(DType::fp8) ? constant(Constant::attention_flash2_fp8_gpus) : constant(Constant::attention_flash2)) *
        c.gemm_efficiency[idx(DType::bf16)];
    // FA2-class kernels issue synchronous warp MMAs with the softmax between them in the same warps
    // (no wgmma/tcgen05 pipelining), so their exp (16 MUFU ops/clk/SM), rescaling and shared-memory
    // traffic (128 B/clk/SM) set the pace where the tensor cores outgrew them: those units are the
    // same per SM and clock on B200 as on H100 while the BF16 tensor peak is 2.25x (Zadouri et al.
    // 2026, FlashAttention-4, arXiv 2603.05451 sec. 1; FA2 runs 2.9x slower than cuDNN's sm100
    // kernel, sgl-project/sglang PR 33655; flash-attn 2.7.4 on B200: 240-380 TFLOP/s, H100-class figures,
    // Dao-AILab/flash-attention issue 1589). Their rate follows the vector (fp32) peak beyond
    // Hopper's tensor/vector balance, at which the fraction above was fitted.
    if (gpu.supports(DType::fp8) && gpu.peak_flops(DType::bf16) > 0 && gpu.peak_flops(DType::fp32) > 0)
        c.attention_efficiency *=
            std::min(1.0, gpu.peak_flops(DType::fp32) / gpu.peak_flops(DType::bf16) / constant(Constant::flash2_vector_of_tensor));
    // Hopper-native kernels (training.attention_kernel flash3: FlashAttention-3, cuDNN fused attention
    // through Transformer Engine) overlap softmax with wgmma: FA3 reaches 75 % of H100's bf16 peak
    // forward at best, ~0.6-0.65 at causal 8k, backward ~1.5-1.75x FA2 (~0.5; Shah et al. 2024, arXiv
    // 2407.08608, sec. 4.1): 0.53 of peak weighting backward 2.5x, at training's sustained clocks
    // (gemm_sustained, above).
    const double hopper_fused_attention_of_peak = constant(Constant::attention_flash3);
    // Alone (operators.hpp KernelContext): the FA2-class figures above are fitted end-to-end on runs
    // whose attention was FA1/Triton-era (llm-foundry); FlashAttention-2 itself runs faster by
    // flash2_kernel_of_training (fitted on the B200 FA2 rows of the component set). The Hopper-native
    // figure is the FA3 paper's own, without training's gemm_sustained.
    c.attention_alone_efficiency = c.attention_efficiency * constant(Constant::flash2_kernel_of_training);
    if (attention_kernel == AttentionKernel::flash3) {
        c.attention_efficiency = hopper_fused_attention_of_peak * c.gemm_sustained;
        c.attention_alone_efficiency = hopper_fused_attention_of_peak;
    }
    // HBM: cudaMemcpy 790 of 900 GB/s on V100 (paranumal.com "Rough-n-Ready Roofline: V100") = 0.878; no public figure for newer
    // parts, so 0.85 unless the preset has one. That is a pure stream; the memory-bound kernels of
    // training (norms and softmax with their reductions, broadcasts, strided einsum/permute copies,
    // several framework kernels per op of our lists) reach less: one global factor, fitted on the
    // public set and vTrain (fit.cpp fitted_constants, `trainclock validate --refit`).
    const double training_kernels_of_stream = constant(Constant::training_kernels_of_stream);
    // AMD Instinct streams reach less of their HBM peak: MI300X STREAM-like kernels 0.78 (amd_hbm_stream,
    // Azure AI-benchmarking-guide rows AZ-188..192).
    c.memory_stream_efficiency = gpu.measured_memory_efficiency > 0 ? gpu.measured_memory_efficiency
                                 : gpu.vendor == "AMD"              ? constant(Constant::amd_hbm_stream)
                                                                    : constant(Constant::hbm_stream);
    c.memory_efficiency = c.memory_stream_efficiency * training_kernels_of_stream;
    // One kernel alone pays its own device latency (the launch and gap of training are kernel_launch_s).
    c.kernel_device_latency_s = constant(Constant::kernel_device_latency_s);
    // NCCL ring busbw / line rate: 370 of 450 GB/s on H100 NVLink (sjeaugey, nccl-tests #212), 235 of
    // 300 on A100 (stas00/ml-engineering); "expect ~80 % of advertised" inter-node (same).
    // RCCL over xGMI (AMD) plateaus lower: MI300X all_reduce busbw 316 of 448 GB/s on 8 GPUs, 47.7 of
    // 64 on 2 (rccl_xgmi_efficiency, Azure AI-benchmarking-guide and stas00/ml-engineering rows).
    c.intra_node_efficiency = gpu.vendor == "AMD" ? constant(Constant::rccl_xgmi_efficiency) : constant(Constant::intra_node_efficiency);
    c.inter_node_efficiency = constant(Constant::inter_node_efficiency);
    // Per-kernel fixed GPU cost: launch latency plus the idle gap between dependent kernels; a few us
    // on CUDA (DESIGN.md 5: fixed costs dominate small models); 10 us fits vTrain's single-node rows.
    c.kernel_launch_s = constant(Constant::kernel_launch_s);
    // Host dispatch per kernel: eager PyTorch + Megatron Python runs ahead of the GPU asynchronously, so
    // it only binds when kernels are shorter than their dispatch (small models, high TP, small
    // micro-batches). DESIGN.md 5 fitted ~40 us for such a cost; per op of our lists (which fuse
    // several framework kernels) 60 us fits vTrain's single-node set best.
    c.host_op_s = constant(Constant::host_op_s);
    // Per-step framework cost (Python step loop, data loader, logging, optimizer bookkeeping).
    c.step_overhead_s = constant(Constant::step_overhead_s);
    // K extent at which mainloop efficiency halves: each output tile pays a prologue (pipeline fill)
    // and an epilogue (write C) worth about one 64-deep K block on 16-bit tensor cores (CUTLASS
    // 128x128x64 tiles); physical. Their time is latency and bytes, the same for every dtype, while a
    // K step of the mainloop takes 1 / peak: the K scales with the dtype's peak over the 16-bit one
    // (fp8 2x: CUTLASS's FP8 tiles are 128 deep; fp32 on V100's CUDA cores 1/8: SIMT SGEMM tiles are
    // 8 deep). Small tiles lose to operand traffic per FLOP, which scales with the peak times the
    // operand width: the same for fp8 (2x peak, 1 byte) and tf32 (1/2, 4 bytes), a quarter for fp32
    // on V100 (1/8, 4 bytes), where small tiles still keep the FMA units fed (operators.cpp).
    const DType reference = reference_dtype(gpu);
    const double half_peak = gpu.peak_flops(gpu.supports(reference) ? reference : DType::fp32);
    for (int d = 0; d < kDTypeCount; ++d) {
        const double peak_ratio = half_peak > 0 ? gpu.peak_flops(DType(d)) / half_peak : 1.0;
        c.gemm_k_half[d] = constant(Constant::gemm_k_half_16bit) * peak_ratio;
        c.tile_reuse[d] = std::min(1.0, peak_ratio * dtype_storage_bytes(DType(d)) / 2.0);
    }
    // NCCL runs one CTA per channel, each holding an SM for the whole collective; on NVSwitch systems
    // rings use 16 channels by default (NCCL_MIN/MAX_NCHANNELS, nccl docs "Environment variables";
    // NCCL_DEBUG=INFO on DGX A100/H100 reports 16-32 channels). Compute kernels overlapped with a
    // collective get the other SMs (and share HBM): physical default 16 SMs, not fitted.
    c.comm_sms = constant(Constant::comm_sms);
    // Grouped expert GEMMs: CUTLASS/DeepGEMM-class kernels run each group at the dense rate (DeepGEMM
    // README: contiguous grouped FP8 at the dense FP8 TFLOP/s, the DGEMM component rows);
    // torch._grouped_mm at torch_grouped_mm_of_dense of it (TAO bf16 and VeOmni rows), torchao's MXFP8
    // torch._scaled_grouped_mm (CUTLASS sm100 block-scaled grouped GEMM) at its own rate (TAO MXFP8 rows).
    if (framework && framework->torch_grouped_mm) c.grouped_gemm_rate = constant(Constant::torch_grouped_mm_of_dense);
    if (framework && framework->torch_grouped_mm) c.grouped_block_scaled_rate = constant(Constant::torch_scaled_grouped_mm_of_dense);
    // ... and lose more at few rows per group (the VeOmni rows: 704 vs 2112 rows per expert).
    if (framework && framework->torch_grouped_mm) c.grouped_m_half_rows = constant(Constant::torch_grouped_mm_m_half_rows);
    // The framework's own dispatch cost (presets/frameworks host_op_s, with its source) replaces it.
    if (framework && !framework->name.empty()) c.host_op_s = framework->host_op_s;

    apply_overrides(overrides, c);
    for (const auto& [name, per_gpu] : overrides.per_gpu)  // the GPU's own section, in file order
        if (name == gpu.name) apply_overrides(per_gpu, c);
    c.precision_blind = overrides.precision_blind;
    return c;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
}

// The keys one overrides object sets, with a prefix.
void keys_set(const CalibrationOverrides& o, const std::string& prefix, std::vector<std::string>& out) {
    for (int d = 0; d < kDTypeCount; ++d)
        if (o.gemm_efficiency[d]) out.push_back(prefix + "gemm_efficiency." + std::string(dtype_name(DType(d))));
    for (const auto& scalar : calibration_scalars(o))
        if (*scalar.value) out.push_back(prefix + std::string(scalar.key));
}

}  // namespace

std::optional<CalibrationUse> calibration_use(const Config& c) {
    const CalibrationSpec& spec = c.calibration;
    CalibrationUse use;
    keys_set(spec, "", use.applied);
    std::vector<std::string> sections;
    for (const auto& [gpu, overrides] : spec.per_gpu) {
        sections.push_back(gpu);
        if (gpu == c.gpu.name) keys_set(overrides, "gpus." + gpu + ".", use.applied);
    }
    if (spec.precision_blind) use.applied.push_back("precision_blind");
    if (use.applied.empty() && sections.empty() && spec.name.empty() && !spec.fitted_on) return std::nullopt;
    use.name = spec.name.empty() ? "unnamed" : spec.name;
    const std::string who = "calibration " + use.name;
    if (use.applied.empty())
        use.warnings.push_back(who + " has no keys for gpu " + c.gpu.name +
                               (sections.empty() ? std::string() : " (its sections: " + joined(sections) + ")") +
                               ": nothing of it applies, the shipped constants predict");
    // A stack whose per-step host work is derived from its train step (step_overhead_fitted false) does
    // not read the per-step figure: a calibration that states it is told so rather than ignored silently.
    bool states_step_overhead = spec.step_overhead_s.has_value();
    for (const auto& [gpu, overrides] : spec.per_gpu) states_step_overhead |= gpu == c.gpu.name && overrides.step_overhead_s;
    if (states_step_overhead && !c.framework.step_overhead_fitted)
        use.warnings.push_back(who + " states step_overhead_s, which framework " +
                               (c.framework.name.empty() ? std::string("none (the built-in defaults)") : c.framework.name) +
                               " does not use: its per-step host work is derived from its train step (step_host_syncs, "
                               "step_host_ops_per_tensor); a framework with step_overhead_fitted true reads it");
    if (!spec.fitted_on) {
        const bool overrides = use.applied.size() > (spec.precision_blind ? 1u : 0u);  // --precision-blind alone is a mode, not a fit
        if (overrides) use.warnings.push_back(who + " states no scope (no fitted_on, as trainclock calibrate writes): applied unchecked");
        return use;
    }
    const CalibrationScope& scope = *spec.fitted_on;
    const std::string framework = c.framework.name.empty() ? "none" : c.framework.name;  // as calibrate --framework none
    if (!scope.gpus.empty() && !contains(scope.gpus, c.gpu.name))
        use.warnings.push_back(who + " was fitted on gpu " + joined(scope.gpus) + ": gpu " + c.gpu.name + " is outside it");
    if (!scope.frameworks.empty() && !contains(scope.frameworks, framework))
        use.warnings.push_back(who + " was fitted on framework " + joined(scope.frameworks) + ": framework " + framework +
                               " is outside it (its factors absorb that stack's kernels, overlap and dispatch)");
    // (A search's base has no precision when it searches several: each hit's own prediction says it.)
    if (!scope.precisions.empty() && !c.precision.name.empty() && !contains(scope.precisions, c.precision.name)) {
        // A partial fit: the factors shared across dtypes (attention, memory, links, fixed costs) move
        // this precision, its own GEMM efficiency stays as shipped unless a fitted run used its dtype.
        const std::string gemm = "gemm_efficiency." + std::string(dtype_name(c.precision.gemm));
        bool own_gemm = false;
        std::vector<std::string> fitted;  // this GPU's fitted factors
        for (const std::string& factor : scope.factors) {
            if (factor.rfind(c.gpu.name + " ", 0) != 0) continue;
            fitted.push_back(factor.substr(c.gpu.name.size() + 1));
            own_gemm = own_gemm || fitted.back() == gemm;
        }
        use.warnings.push_back(who + " was fitted on precision " + joined(scope.precisions) + " only: " + c.precision.name +
                               " is calibrated in part (" +
                               (own_gemm ? gemm + " fitted on runs of another precision" : gemm + " as shipped") +
                               (fitted.empty() ? std::string() : "; fitted factors: " + joined(fitted)) +
                               "), so a speed-up between the two mixes calibrated and shipped figures");
    }
    return use;
}

std::string calibration_summary(const Config& c) {
    const std::optional<CalibrationUse> use = calibration_use(c);
    if (!use) return "calibration: none (the shipped constants)";
    std::string line = "calibration: " + use->name;
    if (const auto& scope = c.calibration.fitted_on)
        line +=
            ", fitted on " +
            (scope->cases > 0 ? std::to_string(scope->cases) + " run" + (scope->cases == 1 ? "" : "s") : std::string("micro-benchmarks")) +
            " (gpu " + (scope->gpus.empty() ? "any" : joined(scope->gpus)) + ", framework " +
            (scope->frameworks.empty() ? "any" : joined(scope->frameworks)) + ", precision " +
            (scope->precisions.empty() ? "any" : joined(scope->precisions)) + ")";
    else
        line += " (scope not stated)";
    line += ": " + std::to_string(use->applied.size()) + (use->applied.size() == 1 ? " key applies" : " keys apply") + " to " + c.gpu.name;
    if (!use->warnings.empty()) line += "; OUTSIDE its scope (warnings)";
    return line;
}

}  // namespace trainclock
