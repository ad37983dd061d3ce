// trainclock: the efficiency parameters of the cost model, one record per GPU x dtype (DESIGN.md 2.2).
// Defaults come from the GPU preset's "measured" block when present, else from documented physical
// defaults per vendor (core/src/perf/calibration.cpp says where each comes from); CalibrationSpec overrides.
#pragma once

#include <array>

#include "trainclock/model/config.hpp"
#include "trainclock/model/hardware.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

struct Calibration {
    std::array<double, kDTypeCount> gemm_efficiency{};  // large-GEMM fraction of the dtype's peak (MAMF-like)
    double gemm_sustained = 0;  // training-time fraction of the large-GEMM figure (real shapes, sustained clocks, SMs shared with NCCL)
    double attention_efficiency = 0;                // fused (flash) attention fraction of the attention dtype's peak
    double memory_efficiency = 0;                   // achievable fraction of HBM bandwidth for memory-bound kernels
    double intra_node_efficiency = 0;               // achievable fraction (NCCL busbw / line rate) of the intra-node link
    double inter_node_efficiency = 0;               // achievable fraction of the NICs
    double kernel_launch_s = 0;                     // fixed GPU-side cost per kernel (launch latency + inter-kernel gap)
    double host_op_s = 0;                           // CPU time to dispatch one kernel (framework + launch); binds small kernels
    double step_overhead_s = 0;                     // fixed cost per optimizer step (framework, data loader, logging)
    std::array<double, kDTypeCount> gemm_k_half{};  // per dtype: K at which a GEMM's mainloop efficiency halves (prologue/epilogue)
    std::array<double, kDTypeCount> tile_reuse{};   // per dtype: share of the 16-bit small-tile loss it suffers (operands per FLOP)
    double comm_sms = 0;  // SMs a running NCCL collective occupies (its channels): compute overlapped with it slows by comm_sms / sm_count
    bool precision_blind = false;  // cost every op at one reference dtype (static-graph baseline)
};

// The record for one GPU and fused-attention kernel: preset "measured" figures, then vendor
// defaults, then the framework's (host cost per op), then the user's overrides.
Calibration resolve_calibration(const GpuSpec& gpu, const CalibrationSpec& overrides,
                                AttentionKernel attention_kernel = AttentionKernel::flash2, const FrameworkSpec* framework = nullptr);

// Reference dtype of the precision-blind baseline: bf16 where the GPU has it, else fp16 (V100, T4).
DType reference_dtype(const GpuSpec& gpu);

}  // namespace trainclock
