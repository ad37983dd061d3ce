// trainclock: framework presets applied to a config (framework.hpp, config.hpp apply_framework_defaults).
#include "trainclock/model/spellings.hpp"
#include "trainclock/model/framework.hpp"

#include "base/json_writer.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

// Blackwell's tensor cores run block-scaled formats (mxfp8, nvfp4: NVIDIA Blackwell architecture
// technical brief); Hopper added fp8 with wgmma/TMA on HBM3 parts (H100/H200/H800/H20), while Ada's
// fp8 parts (L4, L40S, RTX 4090) carry GDDR6/6X at <= 1.1 TB/s and have no wgmma (CUDA C++
// programming guide, compute capability 8.9 vs 9.0).
GpuGeneration gpu_kernel_generation(const GpuSpec& gpu) {
    if (gpu.vendor != "NVIDIA") return GpuGeneration::pre_hopper;
    if (gpu.supports(DType::mxfp8)) return GpuGeneration::blackwell;
    constexpr double kHbmBandwidthGbps = 1500;  // above every GDDR part, below every HBM3 Hopper
    if (gpu.supports(DType::fp8) && gpu.memory_bw_gbps >= kHbmBandwidthGbps) return GpuGeneration::hopper;
    return GpuGeneration::pre_hopper;
}

std::optional<Fp8Recipe> effective_fp8_recipe(const Config& c) {
    const DType gemm = c.precision.gemm;
    if (!default_fp8_recipe(gemm)) return std::nullopt;
    if (c.precision.fp8_recipe) return c.precision.fp8_recipe;
    if (!c.framework.name.empty() && fp8_recipe_fits(c.framework.fp8_recipe, gemm)) return c.framework.fp8_recipe;
    return default_fp8_recipe(gemm);
}

void apply_framework_defaults(Config& c) {
    c.framework_defaults.clear();
    const FrameworkSpec& f = c.framework;
    if (f.name.empty()) return;
    const GpuGeneration generation = gpu_kernel_generation(c.gpu);
    if (!c.explicit_knobs.attention_kernel) {
        c.training.attention_kernel = f.attention_kernel[static_cast<int>(generation)];
        c.framework_defaults.push_back("training.attention_kernel = " + std::string(enum_name(c.training.attention_kernel)) + " (" +
                                       std::string(gpu_generation_name(generation)) + ")");
    }
    if (!c.explicit_knobs.overlap_tp_comm) {
        c.parallel.overlap_tp_comm = f.overlap_tp_comm;
        c.framework_defaults.push_back(std::string("parallel.overlap_tp_comm = ") + (f.overlap_tp_comm ? "true" : "false"));
    }
    if (!c.explicit_knobs.overlap_dp_comm) {
        c.parallel.overlap_dp_comm = f.overlap_dp_comm;
        c.framework_defaults.push_back(std::string("parallel.overlap_dp_comm = ") + (f.overlap_dp_comm ? "true" : "false"));
    }
    if (!c.explicit_knobs.cuda_graphs) {
        c.training.cuda_graphs = f.cuda_graphs;
        c.framework_defaults.push_back("training.cuda_graphs = " + std::string(enum_name(f.cuda_graphs)));
    }
    // A stack without a fused attention kernel (XLA without cuDNN FMHA) materialises the scores
    // unless the config asks for fused attention; stacks that have one leave the config's choice.
    if (!c.explicit_knobs.flash_attention && !f.flash_attention) {
        c.training.flash_attention = false;
        c.framework_defaults.push_back("training.flash_attention = false");
    }
    if (!c.explicit_knobs.moe_dispatcher) {
        c.training.moe_dispatcher = f.moe_dispatcher;
        // Stated only where it matters (routed experts), so dense configs keep their warnings.
        if (c.model.is_moe()) c.framework_defaults.push_back("training.moe_dispatcher = " + std::string(enum_name(f.moe_dispatcher)));
    }
    if (!c.explicit_knobs.compile) {
        c.training.compile = f.compile;
        c.framework_defaults.push_back(std::string("training.compile = ") + (f.compile ? "true" : "false"));
    }
    if (!c.precision.fp8_recipe && default_fp8_recipe(c.precision.gemm) && fp8_recipe_fits(f.fp8_recipe, c.precision.gemm))
        c.framework_defaults.push_back("precision.fp8_recipe = " + std::string(fp8_recipe_name(f.fp8_recipe)));
    bool host_set = c.calibration.host_op_s.has_value();
    for (const auto& [gpu, overrides] : c.calibration.per_gpu) host_set = host_set || (gpu == c.gpu.name && overrides.host_op_s);
    if (!host_set) c.framework_defaults.push_back("calibration.host_op_s = " + json_number(f.host_op_s));
}

}  // namespace trainclock
