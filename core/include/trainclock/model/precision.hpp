// trainclock: numeric formats and precision settings (DESIGN.md 2.1).
// A precision setting is a record of dtypes, one per tensor category, not one flag.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace trainclock {

// Numeric formats a GPU may execute. Order is stable (used as an array index).
enum class DType : int {
    fp32,   // IEEE single, CUDA/vector cores
    tf32,   // fp32 storage, tensor cores with 10-bit mantissa inputs (Ampere+)
    fp16,   // IEEE half
    bf16,   // bfloat16
    fp8,    // e4m3/e5m2 with per-tensor (delayed or current) scaling (Hopper+, Transformer Engine)
    mxfp8,  // OCP microscaling fp8: e4m3 + one e8m0 scale per 32 elements (Blackwell)
    nvfp4,  // NVIDIA fp4 e2m1 + one fp8 scale per 16 elements + per-tensor fp32 scale (Blackwell)
};
inline constexpr int kDTypeCount = 7;

std::string_view dtype_name(DType dtype);                     // "bf16"
std::optional<DType> dtype_from_name(std::string_view name);  // nullopt when unknown
double dtype_storage_bytes(DType dtype);                      // bytes per element incl. block scales (tf32 -> 4, mxfp8 -> 1 + 1/32)
// FP8 and FP4 GEMM formats: scaled, with cast/amax/transpose ops around every GEMM (Transformer Engine).
bool is_quantized(DType dtype);

// FP8 scaling recipes (Transformer Engine, torchao, DeepSeek-V3): where the scales live and how
// they are found. delayed: per-tensor scale from an amax history; tensorwise: per-tensor scale from
// the current amax; rowwise: one scale per row; blockwise: 1x128 activation / 128x128 weight blocks;
// mxfp8: one e8m0 scale per 32 elements in the tensor core; nvfp4: fp4 with one e4m3 scale per 16.
enum class Fp8Recipe { delayed, tensorwise, rowwise, blockwise, mxfp8, nvfp4 };  // names: model/spellings.hpp

enum class LossScaling { none, dynamic };
enum class MasterWeights { none, fp32 };

// One precision setting (a preset in presets/precisions/ or an inline object in the config).
struct PrecisionSpec {
    std::string name;                                    // preset id ("bf16-mixed") or "custom"
    std::string description;                             // one line for help text and UI tooltips
    DType gemm = DType::bf16;                            // dtype the matmuls (and attention matmuls) run in
    DType activations = DType::bf16;                     // stored activations and elementwise ops
    DType params = DType::bf16;                          // working weights as read by the forward pass
    MasterWeights master_weights = MasterWeights::fp32;  // extra fp32 copy updated by the optimizer
    DType grads = DType::fp32;                           // gradient accumulation buffer
    DType grad_reduce = DType::fp32;                     // dtype of the data-parallel reduction on the wire
    DType optimizer_states = DType::fp32;                // Adam m and v
    LossScaling loss_scaling = LossScaling::none;        // dynamic: unscale + inf/nan check every step
    bool autocast = false;                               // torch-autocast style: casts at op boundaries, fp32 weights recast per forward
    std::optional<Fp8Recipe> fp8_recipe;  // scaling recipe of quantised GEMMs; unset: the framework's, else the dtype's (fp8: delayed)
};

// An fp32 master copy distinct from the working weights (updated by the optimizer, copied back).
inline bool keeps_master(const PrecisionSpec& p) { return p.master_weights == MasterWeights::fp32 && p.params != DType::fp32; }
// The recipe a quantised GEMM dtype runs by itself: mxfp8 and nvfp4 have one each; fp8 is TE's
// default, delayed scaling. nullopt for unquantised dtypes.
std::optional<Fp8Recipe> default_fp8_recipe(DType gemm);
// Whether `recipe` scales GEMMs of `gemm`: the four fp8 recipes need fp8, mxfp8 and nvfp4 their dtype.
bool fp8_recipe_fits(Fp8Recipe recipe, DType gemm);

}  // namespace trainclock
