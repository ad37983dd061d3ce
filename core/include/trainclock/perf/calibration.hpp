// trainclock: the efficiency parameters of the cost model, one record per GPU x dtype (DESIGN.md 2.2).
// Defaults come from the GPU preset's "measured" block when present, else from documented physical
// defaults per vendor (core/src/perf/calibration.cpp says where each comes from); CalibrationSpec overrides.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/model/config.hpp"
#include "trainclock/model/hardware.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

struct Calibration : CalibrationScalars<double> {       // the scalars: config.hpp CalibrationScalars
    std::array<double, kDTypeCount> gemm_efficiency{};  // large-GEMM fraction of the dtype's peak (MAMF-like)
    std::array<double, kDTypeCount> gemm_k_half{};      // per dtype: K at which a GEMM's mainloop efficiency halves (prologue/epilogue)
    std::array<double, kDTypeCount> tile_reuse{};       // per dtype: share of the 16-bit small-tile loss it suffers (operands per FLOP)
    bool precision_blind = false;                       // cost every op at one reference dtype (static-graph baseline)
    // Kernels alone (operators.hpp KernelContext): HBM fraction of a pure stream, and the fixed device
    // time of one kernel (launch to completion of an empty grid, tile scheduling, wave tail).
    double memory_stream_efficiency = 0;
    double kernel_device_latency_s = 0;
    double attention_alone_efficiency = 0;
    double grouped_m_half_rows = 0;        // grouped kernel: rows per group at half its rate (m / (m + this)); 0 = tile rounding only
    double grouped_gemm_rate = 1;          // routed experts' grouped GEMM kernel, rate of a dense GEMM of one group's shape
    double grouped_block_scaled_rate = 1;  // the same for block-scaled (MXFP8, NVFP4) grouped kernels
};

// The field of a resolved Calibration a fitted multiplier scales (validation/fit.hpp; the refit rows of
// presets/tables/constants.json, spelt as the enumerator). gemm: the GEMM efficiency of tensor-core dtypes (or of one dtype).
enum class FitKnob { none, gemm, attention, memory, intra_node, inter_node, kernel_launch, host_op, step_overhead, fp8_rowwise_gemm };
// FitKnob's spellings in enum order (value i is kFitKnobNames[i]), as the constants table's refit column writes them.
inline constexpr std::string_view kFitKnobNames[] = {"none",       "gemm",          "attention", "memory",        "intra_node",
                                                     "inter_node", "kernel_launch", "host_op",   "step_overhead", "fp8_rowwise_gemm"};
static_assert(std::size(kFitKnobNames) == static_cast<size_t>(FitKnob::fp8_rowwise_gemm) + 1, "one name per FitKnob");

// The record for one GPU and fused-attention kernel: preset "measured" figures, then vendor
// defaults, then the framework's (host cost per op), then the user's overrides.
Calibration resolve_calibration(const GpuSpec& gpu, const CalibrationSpec& overrides,
                                AttentionKernel attention_kernel = AttentionKernel::flash2, const FrameworkSpec* framework = nullptr);

// The calibration a config predicts with, stated (issue 25 item 4): its name and scope, the keys that
// apply to the config's GPU, and a warning for each way the config lies outside the runs it was
// fitted on (another framework, GPU or precision, or a fit that covers the precision only in part).
struct CalibrationUse {
    std::string name;                   // the calibration's "name" ("unnamed" when it has none)
    std::vector<std::string> applied;   // keys that apply to the config's GPU ("gemm_efficiency.bf16", ...)
    std::vector<std::string> warnings;  // outside its scope; empty = inside it
};
// nullopt when the config carries no calibration (the shipped constants).
std::optional<CalibrationUse> calibration_use(const Config& config);
// One line for tables: "calibration: NAME, fitted on 6 runs (gpu h100-sxm, framework megatron-core,
// precision bf16-mixed): 3 keys apply" or "calibration: none (the shipped constants)".
std::string calibration_summary(const Config& config);

// Reference dtype of the precision-blind baseline: bf16 where the GPU has it, else fp16 (V100, T4).
DType reference_dtype(const GpuSpec& gpu);

}  // namespace trainclock
