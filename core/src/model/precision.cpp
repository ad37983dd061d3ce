// trainclock: dtype names and storage widths (DESIGN.md 2.1).
#include "trainclock/model/precision.hpp"

#include <array>

namespace trainclock {

bool is_quantized(DType d) { return d == DType::fp8 || d == DType::mxfp8 || d == DType::nvfp4; }
namespace {

struct DTypeInfo {
    std::string_view name;
    double storage_bytes;  // bytes per element including block scales
};

// Storage widths: IEEE 754 (fp32 4 B, fp16 2 B), bfloat16 2 B, tf32 is an fp32 tensor in memory
// (NVIDIA A100 whitepaper: "TF32 ... operates on FP32 inputs"), fp8 1 B; OCP Microscaling spec v1.0
// (MXFP8: 8-bit elements + one 8-bit E8M0 scale per 32-element block -> 1 + 1/32 B); NVFP4 (NVIDIA
// Blackwell: 4-bit E2M1 + one FP8 E4M3 scale per 16 elements -> 0.5 + 1/16 B; the per-tensor fp32
// scale is negligible).
constexpr std::array<DTypeInfo, kDTypeCount> kDTypes = {{
    {"fp32", 4.0},
    {"tf32", 4.0},
    {"fp16", 2.0},
    {"bf16", 2.0},
    {"fp8", 1.0},
    {"mxfp8", 1.0 + 1.0 / 32.0},
    {"nvfp4", 0.5 + 1.0 / 16.0},
}};

}  // namespace

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<int>(dtype)].name; }

std::optional<DType> dtype_from_name(std::string_view name) {
    for (int i = 0; i < kDTypeCount; ++i) {
        if (kDTypes[i].name == name) return static_cast<DType>(i);
    }
    return std::nullopt;
}

double dtype_storage_bytes(DType dtype) { return kDTypes[static_cast<int>(dtype)].storage_bytes; }

std::optional<Fp8Recipe> default_fp8_recipe(DType gemm) {
    switch (gemm) {
    case DType::fp8: return Fp8Recipe::delayed;  // Transformer Engine's DelayedScaling default
    case DType::mxfp8: return Fp8Recipe::mxfp8;
    case DType::nvfp4: return Fp8Recipe::nvfp4;
    default: return std::nullopt;
    }
}

bool fp8_recipe_fits(Fp8Recipe recipe, DType gemm) {
    if (recipe == Fp8Recipe::mxfp8) return gemm == DType::mxfp8;
    if (recipe == Fp8Recipe::nvfp4) return gemm == DType::nvfp4;
    return gemm == DType::fp8;
}

}  // namespace trainclock
