// trainclock: the software stack as an input (issue 9 item 1). A framework preset (presets/frameworks/)
// states the defaults a training stack applies: which fused-attention kernel it picks per GPU
// generation, which collectives it overlaps with compute, its FP8 recipe, fused optimizer and norms,
// its host cost per kernel and how it prefetches ZeRO/FSDP gathers; each value with a source.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainclock/model/hardware.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

// Generation of the fused-attention kernel: FlashAttention-1/2 and Triton-era kernels (mma.sync), or
// Hopper-native ones (FlashAttention-3, cuDNN fused attention through Transformer Engine: wgmma + TMA).
enum class AttentionKernel { flash2, flash3 };

// GPU generations a framework picks kernels by: before Hopper (no wgmma/TMA: Volta, Ampere, Ada and
// non-NVIDIA parts), Hopper, Blackwell (block-scaled tensor cores).
enum class GpuGeneration { pre_hopper, hopper, blackwell };
inline constexpr int kGpuGenerationCount = 3;

// How a framework overlaps the parameter all-gathers of ZeRO-3/FSDP with compute.
enum class GatherPrefetch {
    none,    // gathered on demand, exposed (or no sharded gathers at all)
    layer,   // the next layer's (or bucket's) gather issued while this one computes (FSDP backward_prefetch, Megatron overlap_param_gather)
    bucket,  // a byte budget of gathers in flight (DeepSpeed stage3_prefetch_bucket_size)
};

// What a training stack captures into CUDA graphs (replayed with one launch instead of dispatching
// each kernel from the host): nothing; each transformer layer's forward and backward (Megatron-Core
// cuda_graph_impl "local" / "transformer_engine", TE make_graphed_callables); the whole
// forward-backward of an iteration, optimizer step excluded (Megatron-Core "full_iteration").
enum class CudaGraphs { none, layers, full };

// How routed tokens reach the experts of other EP ranks (Megatron-Core moe_token_dispatcher_type):
// an all-to-all of the top_k routed copies (alltoall); an all-gather of every token over the EP group,
// each rank keeping its experts' tokens, and a reduce-scatter back (allgather); DeepEP's fused
// dispatch and combine kernels (Megatron-Core "flex" with the deepep backend; deepep).
enum class MoeDispatcher { alltoall, allgather, deepep };

struct FrameworkSpec {
    std::string name;  // preset id ("megatron-core") or "custom"; "" = framework "none" (kNoFramework)
    std::string display_name;
    std::array<AttentionKernel, kGpuGenerationCount> attention_kernel{};  // fused-attention kernel per GpuGeneration
    bool overlap_tp_comm = false;                                         // TP collectives overlapped with GEMMs
    bool overlap_dp_comm = true;                                          // DP gradient reduction overlapped with backward
    bool overlap_pp_comm = false;                                         // PP send/recv overlapped with compute
    bool overlap_cp_comm = true;                                          // CP ring exchange of K/V overlapped with attention
    bool overlap_ep_comm = false;                                         // EP all-to-all overlapped with expert compute
    Fp8Recipe fp8_recipe = Fp8Recipe::delayed;                            // the FP8 scaling recipe it runs by default
    bool fused_optimizer = true;                                          // multi-tensor (fused) Adam
    bool fused_norms = true;                                              // fused LayerNorm/RMSNorm kernels
    bool fused_elementwise = true;  // scale-mask-softmax and dropout + residual add as one kernel each
    double host_op_s = 60e-6;       // CPU time to dispatch one op of our lists
    GatherPrefetch gather_prefetch = GatherPrefetch::layer;
    CudaGraphs cuda_graphs = CudaGraphs::none;               // what it captures into CUDA graphs by default
    bool compile = false;                                    // torch.compile (Inductor) of the model by default
    bool flash_attention = true;                             // a fused attention kernel by default (XLA without cuDNN FMHA: none)
    MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;  // the MoE token dispatcher it runs by default
    bool op_level_sac =
        false;  // recompute "selective" = per-op SAC (save matmul and attention outputs, re-run the rest), not Megatron's attention core
    bool selective_saves_matmuls =
        false;  // recompute "selective" saves every weight matmul's output and re-runs the rest, attention included (JAX dots policy)
    bool quantize_layouts_one_pass = true;  // block-scaled (mxfp8, blockwise) operands: row- and column-wise copies from one read
    bool quantize_lm_head = true;           // FP8/FP4 precisions quantise the LM head's GEMMs too (false: it stays 16-bit)
    // The longest key length (tokens) at which its fused causal softmax runs, reading only the unmasked
    // lower triangle of the 16-bit scores (Megatron's scaled_upper_triang_masked_softmax; outside the
    // kernel's shapes Megatron's torch ops in fp32); 0: not Megatron's softmax.
    double fused_causal_softmax_max_keys = 0;
    // The loss is Megatron's vocab-parallel cross-entropy: the logits cast to fp32, then max, subtract,
    // exp, sum and normalise as passes of their own; backward scales the saved probabilities in place.
    bool vocab_parallel_cross_entropy = false;
    // Without sequence parallelism the TP all-reduce of a column-parallel linear's input gradient runs
    // beside that linear's weight-gradient GEMM (Megatron --async-tensor-model-parallel-allreduce).
    bool async_tp_grad_all_reduce = false;
    // With fp32 master weights the optimizer step works on fp32 copies of the gradients: one cast per
    // step from the 16-bit gradient buffer, then unscale, norm and update read them at 4 bytes.
    bool fp32_master_grads = false;
    bool torch_grouped_mm =
        false;  // routed experts run as torch._grouped_mm / torchao _scaled_grouped_mm (else CUTLASS/DeepGEMM-class grouped kernels)
    bool amp_master_grads_per_tensor =
        false;  // fp16/bf16 with fp32 master weights: the AMP wrapper (Apex amp O2) allocates each master gradient from Python every step
    // Per optimizer step, outside the forward-backward (perf/predict.cpp step_host_s): host waits for the GPU
    // (.item(), .cpu(), a synchronize; dynamic loss scaling's overflow read adds one), eager ops per parameter
    // tensor issued one by one from Python (Megatron-LM's module layout), and whether the fitted
    // step_overhead_s stands for this stack's per-step host work instead (not derived from its code yet).
    double step_host_syncs = 2;
    double step_host_ops_per_tensor = 2;
    bool step_overhead_fitted = false;
    std::vector<std::pair<std::string, std::string>> sources;  // key -> citation (every value key of a preset file)
};

// The generation a GPU preset belongs to, from its formats: Blackwell runs block-scaled fp8
// (mxfp8); Hopper runs fp8 on HBM (Ada's fp8 parts carry GDDR, <= 1.1 TB/s, and no wgmma).
GpuGeneration gpu_kernel_generation(const GpuSpec& gpu);  // names: model/spellings.hpp gpu_generation_name

struct Config;

// The framework's defaults for the knobs the config did not set (explicit key > framework preset >
// today's default), listed in config.framework_defaults; nothing when no framework is given.
// check_config applies it; idempotent.
void apply_framework_defaults(Config& config);

// The scaling recipe the config's quantised GEMMs run: precision.fp8_recipe, else the framework's
// when it fits the gemm dtype, else the dtype's own (fp8: delayed). nullopt when nothing is quantised.
std::optional<Fp8Recipe> effective_fp8_recipe(const Config& config);

// The framework a config that names none runs (issue 25 item 9: a current stack): config_draft
// (formats/config_json.hpp) starts every parsed config, link, CLI, Python and page config from it.
inline constexpr std::string_view kDefaultFramework = "megatron-core";

// The value "framework": "none" (FrameworkSpec::name ""): no stack's defaults, the knobs' own
// defaults, which are Megatron-LM's of 2020-23 (the default before issue 25; links of version 1).
inline constexpr std::string_view kNoFramework = "none";

// The id outputs and the config JSON name a framework by: its preset id, "custom", or "none".
inline std::string framework_id(const FrameworkSpec& framework) {
    return framework.name.empty() ? std::string(kNoFramework) : framework.name;
}

// The preset whose defaults equal framework "none" (the knobs' own defaults): megatron-lm.
inline constexpr std::string_view kDefaultFrameworkEquivalent = "megatron-lm";

}  // namespace trainclock
