// trainclock: operator lists of one micro-batch and their roofline costs (DESIGN.md 2.1, 2.2).
// Every op is {kind, dtype, flops, bytes, count}; ops that exist only because of the precision
// setting are OpKind::precision_overhead. Collectives of a layer come with it as CommOps.
#pragma once

#include <array>
#include <cstdint>

#include "trainclock/model/config.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"

namespace trainclock {

enum class OpKind { gemm, attention, elementwise, precision_overhead, optimizer };
inline constexpr int kOpKindCount = 5;

// Plain aggregate (value-initialise: Op op{}), so fixed lists of them cost nothing to create.
struct Op {
    const char* name;  // static label ("qkv", "flash_attention", "fp8_cast_transpose")
    OpKind kind;
    DType dtype;     // dtype whose peak the FLOPs run at
    double flops;    // per execution
    double bytes;    // HBM bytes read + written per execution
    double count;    // executions per micro-batch (experts, heads of a batched GEMM)
    double m, n, k;  // GEMM shape of one execution (0 for non-GEMMs)
    bool grouped;    // routed experts' GEMMs in one grouped kernel (calibration grouped_gemm_rate)
};

// Fixed-capacity lists: building and costing a layer allocates nothing, and a default-initialised
// list leaves its (trivial) items unwritten until added.
template <class T, int N>
struct FixedList {
    std::array<T, N> items;
    int size = 0;
    void add(const T& item) {
        if (size < N) items[size_t(size++)] = item;
    }
    const T* begin() const { return items.data(); }
    const T* end() const { return items.data() + size; }
};
using OpList = FixedList<Op, 192>;
using CommList = FixedList<CommOp, 16>;

// One micro-batch through a piece of the model on one GPU. `backward` includes recomputation.
struct PieceOps {
    OpList forward, backward;
    CommList comm_forward, comm_backward;
};

// NF4 storage per weight: 4 bits + double-quantised block constants, 8/64 + 32/(64 x 256) bits
// (QLoRA, Dettmers et al. 2023 arXiv 2305.14314 sec. 3: 0.127 bits per parameter).
inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;

// The ops of one micro-batch at the execution's costed precision (Execution::ops).
PieceOps layer_ops(const Execution& execution, LayerKind kind);
// Per-op SAC (Execution::op_level_sac): output width per token of the layer's matmuls it saves.
double op_sac_saved_width(const Execution& execution, LayerKind kind);
PieceOps embedding_ops(const Execution& execution);  // first stage
PieceOps head_ops(const Execution& execution);       // last stage: norm, LM head, loss
// The DeepSeek-V3 MTP modules' own ops besides their transformer layer and the shared LM head:
// two RMSNorms and the 2h -> h projection per module (arXiv 2412.19437 sec. 2.2), last stage.
PieceOps mtp_ops(const Execution& execution);
// Once per optimizer step on one GPU: `params_local` weights held, `params_shard` updated by it
// (params_local / dp under ZeRO >= 1).
OpList step_ops(const Execution& execution, double params_local, double params_shard);
// Ops of host_op_s size the host dispatches per step for an optimizer that calls a TorchScript
// function per parameter tensor ("lamb-per-tensor"), per pipeline stage; 0 for multi-tensor (fused)
// optimizers.
double per_tensor_optimizer_kernels(const Execution& execution);
// Single eager kernels per step of a per-tensor loop, each launched and dispatched on its own, per
// pipeline stage: "adamw-per-tensor" (DLE BERT's BertAdam) and the per-tensor gradient clipping
// beside "lamb-per-tensor"; 0 for every other optimizer.
double per_tensor_eager_kernels(const Execution& execution);
// Parameter tensors of one pipeline stage in Megatron-LM's module layout (fused QKV, gate and up fused), for
// the per-tensor host ops of its optimizer wrapper (framework step_host_ops_per_tensor).
double megatron_parameter_tensors(const Execution& execution);
// Host-only eager ops per step of an AMP wrapper that allocates fp32 master gradients tensor by tensor (Apex amp O2).
double amp_master_grad_host_ops(const Execution& execution);
// HBM bytes per parameter of that loop's unfused passes (gradient, updated weight, state widths).
double eager_adamw_bytes_per_param(double grad_bytes, double weight_bytes, double state_bytes);
// Bytes of optimizer state per trained parameter: SGD momentum 1 state, Adam(W)/LAMB m and v at the
// precision's optimizer_states width; adamw8bit keeps both as 8-bit block-quantised values with one
// fp32 absmax per 2048-value block (bitsandbytes, Dettmers et al. 2022 arXiv 2110.02861 sec. 2).
double optimizer_state_bytes_per_param(const TrainingSpec& training, const PrecisionSpec& precision);
// HBM bytes per parameter of torch.optim.AdamW's foreach (multi-tensor, unfused) step, for gradient,
// updated-weight and state widths wg, wu, ws (fused Adam: wg + 2 wu + 4 ws).
double foreach_adamw_bytes_per_param(double wg, double wu, double ws);

// Parameters of one layer held by one GPU (TP- and EP-sharded), for gradients and ZeRO-3 gathers.
double layer_params_local(const Execution& execution, LayerKind kind);
// The routed experts' share of layer_params_local (sharded over the expert-DP group, dp / ep).
double layer_expert_params_local(const Execution& execution, LayerKind kind);
// The LoRA adapters of one layer held by one GPU (r (parts k + n) per adapted k x n weight); 0 without LoRA.
double layer_adapter_params_local(const Execution& execution, LayerKind kind);
double layer_adapter_params(const Config& config, LayerKind kind);  // the whole layer's (no TP/EP split)
// The part of layer_params_local stored as NF4 under QLoRA (the linear weights; norms and router stay 16-bit).
double layer_nf4_params_local(const Execution& execution, LayerKind kind);
// Parameters of one layer that train (get gradients, master copy, optimizer states): all of them in
// full fine-tuning, none in a frozen layer, only the adapters under LoRA/QLoRA.
double layer_trainable_params_local(const Execution& execution, LayerKind kind);

// HBM bytes per element to quantise one GEMM operand (read at width w_in) into both layouts its
// GEMMs read, by the precision's scaling recipe (`one_pass`: both layouts from one read); what
// linear() charges per operand, also for kernels alone (validation/components).
enum class Operand { activation, weight, gradient };
double quantize_bytes_per_element(const OpPrecision& o, Operand operand, double w_in, bool one_pass);
// ---- single ops, as the layer builders emit them (also costed alone by validation/components.hpp) ----
Op make_op(const char* name, OpKind kind, DType dtype, double flops, double bytes, double count = 1);
Op make_gemm(const char* name, OpKind kind, DType dtype, double m, double n, double k, double bytes, double count);
// A linear layer's GEMMs for m tokens, k inputs, n outputs (`count` copies): forward (operands at
// w_gemm bytes, output at w_out), input gradient, weight gradient accumulated at w_grad bytes.
Op linear_fprop_op(const char* name, DType dtype, double m, double k, double n, double w_gemm, double w_out, double count);
Op linear_dgrad_op(DType dtype, double m, double k, double n, double w_gemm, double w_out, double count);
Op linear_wgrad_op(DType dtype, double m, double k, double n, double w_gemm, double w_grad, double count);
// One fused (flash) attention kernel: queries of s_q and keys of s_kv tokens, `keys` attended per query.
Op flash_attention_op(DType dtype, double batch, double heads, double kv_heads, double s_q, double s_kv, double keys, double dqk, double dv,
                      double w, bool backward);
// MoE routing's memory-bound kernels as moe_mlp emits them (tokens of the micro-batch, routed =
// tokens x top_k rows): the router's top-k, the permute gather and the weighted un-permute.
Op moe_topk_op(DType dtype, double tokens, double experts);
Op moe_permute_op(DType dtype, double routed, double hidden, double w);
Op moe_unpermute_op(DType dtype, double tokens, double routed, double hidden, double w);
// Dropless routing's device-to-host copy of the tokens per expert that the host waits for before it
// can size the dispatch (moe_mlp): a host sync inside the layer's forward (phase_cost splits the
// host's dispatch timeline there).
Op moe_token_count_sync_op(DType dtype, double experts);
bool is_host_sync(const Op& op);
// Rows of one group of a grouped expert GEMM: `rows` tokens plus the M-tile padding when several
// experts share the kernel.
double expert_group_rows(double rows, double local_experts);

// ---- cost (roofline, DESIGN.md 2.2) ----
// Dtype that executes `dtype` on this GPU (tf32 without tensor cores runs as fp32, bf16 as fp16...).
DType compute_dtype(const GpuSpec& gpu, DType dtype);
// Where a kernel runs. In training (what predict costs): sustained SM clocks under the power limit,
// real shapes and SMs shared with collectives (calibration gemm_sustained), memory-bound kernels at
// the training-kernel fraction of a stream, the per-kernel launch and gap charged by cost_ops.
// Alone: an isolated, warm microbenchmark of one kernel timed back to back (the component rows of
// presets/validation/components): boost clocks, the large-GEMM figure itself, HBM at the stream
// figure, plus the kernel's own device latency (calibration.hpp kernel_device_latency_s).
struct KernelContext {
    bool alone = false;
};
inline constexpr KernelContext kInTraining{};
inline constexpr KernelContext kAlone{true};

// Fraction of peak of one GEMM shape: large-GEMM efficiency x wave/tile quantisation x K-loop fill.
double gemm_efficiency(const Op& op, const GpuSpec& gpu, const Calibration& cal, const KernelContext& context = kInTraining);
// Seconds of one execution, launch excluded: max(flops / (peak eff), bytes / (bw mem_eff)).
double op_time_s(const Op& op, const GpuSpec& gpu, const Calibration& cal, const KernelContext& context = kInTraining);
// Seconds of the op's one kernel alone (all `count` executions plus its device latency): what an
// isolated microbenchmark of it measures, timed with events around back-to-back launches or (profiled)
// as the profiler's kernel duration.
double kernel_alone_s(const Op& op, const GpuSpec& gpu, const Calibration& cal, bool profiled = false);

// A copy between host memory and one GPU over its host link (PCIe, or NVLink-C2C on Grace parts):
// offload traffic in predict, the h2d/d2h rows of validate --components.
struct HostCopy {
    bool device_to_host = false;
    // The host retires the GPU's posted writes in strict PCIe order (no relaxed ordering reaches the
    // root complex): device-to-host copies slow down (host_copy_bytes_per_s).
    bool strictly_ordered_writes = false;
};
double host_copy_bytes_per_s(const GpuSpec& gpu, const HostCopy& copy = {});

struct OpCost {
    std::array<double, kOpKindCount> seconds{};  // by kind, launches excluded
    double launch_s = 0;                         // kernels x kernel_launch_s
    double flops = 0;
    double total_s() const;
};
OpCost cost_ops(const OpList& ops, const GpuSpec& gpu, const Calibration& cal);

}  // namespace trainclock
