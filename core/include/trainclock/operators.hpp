// trainclock: operator lists of one micro-batch and their roofline costs (DESIGN.md 2.1, 2.2).
// Every op is {kind, dtype, flops, bytes, count}; ops that exist only because of the precision
// setting are OpKind::precision_overhead. Collectives of a layer come with it as CommOps.
#pragma once

#include <array>
#include <cstdint>

#include "trainclock/calibration.hpp"
#include "trainclock/communication.hpp"
#include "trainclock/config.hpp"
#include "trainclock/execution.hpp"

namespace trainclock {

enum class OpKind { gemm, attention, elementwise, precision_overhead, optimizer };
inline constexpr int kOpKindCount = 5;

// Plain aggregate (value-initialise: Op op{}), so fixed lists of them cost nothing to create.
struct Op {
    const char* name;   // static label ("qkv", "flash_attention", "fp8_cast_transpose")
    OpKind kind;
    DType dtype;        // dtype whose peak the FLOPs run at
    double flops;       // per execution
    double bytes;       // HBM bytes read + written per execution
    double count;       // executions per micro-batch (experts, heads of a batched GEMM)
    double m, n, k;     // GEMM shape of one execution (0 for non-GEMMs)
};

// Fixed-capacity lists: building and costing a layer allocates nothing, and a default-initialised
// list leaves its (trivial) items unwritten until added.
template <class T, int N> struct FixedList {
    std::array<T, N> items;
    int size = 0;
    void add(const T& item) { if (size < N) items[size_t(size++)] = item; }
    const T* begin() const { return items.data(); }
    const T* end() const { return items.data() + size; }
};
using OpList = FixedList<Op, 96>;
using CommList = FixedList<CommOp, 12>;

// One micro-batch through a piece of the model on one GPU. `backward` includes recomputation.
struct PieceOps {
    OpList forward, backward;
    CommList comm_forward, comm_backward;
};

// The ops of one micro-batch at the execution's costed precision (Execution::ops).
PieceOps layer_ops(const Execution& execution, LayerKind kind);
PieceOps embedding_ops(const Execution& execution);  // first stage
PieceOps head_ops(const Execution& execution);       // last stage: norm, LM head, loss
// Once per optimizer step on one GPU: `params_local` weights held, `params_shard` updated by it
// (params_local / dp under ZeRO >= 1).
OpList step_ops(const Execution& execution, double params_local, double params_shard);
// Kernels the host dispatches per step for an optimizer that loops over parameter tensors one at a
// time ("lamb-per-tensor"), per pipeline stage; 0 for multi-tensor (fused) optimizers.
double per_tensor_optimizer_kernels(const Execution& execution);

// Parameters of one layer held by one GPU (TP- and EP-sharded), for gradients and ZeRO-3 gathers.
double layer_params_local(const Execution& execution, LayerKind kind);
// The routed experts' share of layer_params_local (sharded over the expert-DP group, dp / ep).
double layer_expert_params_local(const Execution& execution, LayerKind kind);

// ---- cost (roofline, DESIGN.md 2.2) ----
// Dtype that executes `dtype` on this GPU (tf32 without tensor cores runs as fp32, bf16 as fp16...).
DType compute_dtype(const GpuSpec& gpu, DType dtype);
// Fraction of peak of one GEMM shape: large-GEMM efficiency x wave/tile quantisation x K-loop fill.
double gemm_efficiency(const Op& op, const GpuSpec& gpu, const Calibration& cal);
// Seconds of one execution, launch excluded: max(flops / (peak eff), bytes / (bw mem_eff)).
double op_time_s(const Op& op, const GpuSpec& gpu, const Calibration& cal);

struct OpCost {
    std::array<double, kOpKindCount> seconds{};  // by kind, launches excluded
    double launch_s = 0;                          // kernels x kernel_launch_s
    double flops = 0;
    double total_s() const;
};
OpCost cost_ops(const OpList& ops, const GpuSpec& gpu, const Calibration& cal);

} // namespace trainclock
