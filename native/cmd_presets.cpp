// `trainclock presets [models|gpus|nodes|precisions|frameworks]`: the embedded preset catalogue.
#include <algorithm>
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/api/api.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/model/model.hpp"
#include "trainclock/catalogue/presets.hpp"

namespace trainclock::cli {
namespace {

std::string model_table() {
    TextTable table({"model", "name", "params", "arch", "layers", "hidden", "heads/kv", "ffn", "vocab"});
    for (const std::string& id : preset_names(PresetKind::model)) {
        const auto m = model_preset(id);
        if (!m) continue;
        const ModelSpec& s = m.value();
        std::string arch = s.architecture == Architecture::decoder   ? "decoder"
                           : s.architecture == Architecture::encoder ? "encoder"
                                                                     : "enc-dec";
        if (s.is_moe()) arch += " moe " + std::to_string(s.moe.experts) + "x top" + std::to_string(s.moe.top_k);
        table.add({id, s.display_name, format_count(double(parameter_count(s)), ""), arch, std::to_string(s.layers + s.decoder_layers),
                   std::to_string(s.hidden), std::to_string(s.heads) + "/" + std::to_string(s.kv_heads), std::to_string(s.ffn_hidden),
                   std::to_string(s.vocab)});
    }
    return table.render();
}

std::string gpu_table() {
    TextTable table({"gpu", "name", "memory", "HBM", "fp32", "tf32", "bf16", "fp16", "fp8", "TDP", "$/h", "node"});
    for (const std::string& id : preset_names(PresetKind::gpu)) {
        const auto g = gpu_preset(id);
        if (!g) continue;
        const GpuSpec& s = g.value();
        auto peak = [&](DType dtype) { return s.supports(dtype) ? format_fixed(s.peak_tflops[int(dtype)], 0) : "-"; };
        table.add({id, s.display_name, format_fixed(s.memory_gib, 0) + " GiB", format_fixed(s.memory_bw_gbps, 0) + " GB/s",
                   peak(DType::fp32), peak(DType::tf32), peak(DType::bf16), peak(DType::fp16), peak(DType::fp8),
                   format_fixed(s.tdp_w, 0) + " W", s.price_per_gpu_hour_usd > 0 ? format_fixed(s.price_per_gpu_hour_usd, 2) : "-",
                   s.default_node});
    }
    return table.render() + "(peaks: dense TFLOP/s)\n";
}

std::string node_table() {
    TextTable table({"node", "name", "GPUs", "intra GB/s", "inter GB/s", "intra link"});
    for (const std::string& id : preset_names(PresetKind::node)) {
        const auto n = node_preset(id);
        if (!n) continue;
        const NodeSpec& s = n.value();
        table.add({id, s.display_name, std::to_string(s.gpus_per_node), format_fixed(s.intra_bw_gbps, 0), format_fixed(s.inter_bw_gbps, 1),
                   s.intra_link});
    }
    return table.render() + "(bandwidths per GPU, one direction)\n";
}

std::string precision_table() {
    TextTable table({"precision", "gemm", "activ.", "params", "master", "grads", "reduce", "states", "loss scale", "autocast"});
    for (const std::string& id : preset_names(PresetKind::precision)) {
        const auto p = precision_preset(id);
        if (!p) continue;
        const PrecisionSpec& s = p.value();
        table.add({id, std::string(dtype_name(s.gemm)), std::string(dtype_name(s.activations)), std::string(dtype_name(s.params)),
                   s.master_weights == MasterWeights::fp32 ? "fp32" : "none", std::string(dtype_name(s.grads)),
                   std::string(dtype_name(s.grad_reduce)), std::string(dtype_name(s.optimizer_states)),
                   s.loss_scaling == LossScaling::dynamic ? "dynamic" : "none", s.autocast ? "yes" : "no"});
    }
    return table.render();
}

std::string framework_table() {
    TextTable table({"framework", "attention pre-Hopper/Hopper/Blackwell", "overlap tp dp pp cp ep", "fp8", "fused opt/norm/elementwise",
                     "host/op", "gathers"});
    for (const std::string& id : preset_names(PresetKind::framework)) {
        const auto f = framework_preset(id);
        if (!f) continue;
        const FrameworkSpec& s = f.value();
        auto kernel = [&](GpuGeneration g) { return s.attention_kernel[int(g)] == AttentionKernel::flash3 ? "flash3" : "flash2"; };
        auto yn = [](bool b) { return b ? "y" : "-"; };
        table.add(
            {id,
             std::string(kernel(GpuGeneration::pre_hopper)) + "/" + kernel(GpuGeneration::hopper) + "/" + kernel(GpuGeneration::blackwell),
             std::string(yn(s.overlap_tp_comm)) + " " + yn(s.overlap_dp_comm) + " " + yn(s.overlap_pp_comm) + " " + yn(s.overlap_cp_comm) +
                 " " + yn(s.overlap_ep_comm),
             std::string(fp8_recipe_name(s.fp8_recipe)),
             std::string(yn(s.fused_optimizer)) + "/" + yn(s.fused_norms) + "/" + yn(s.fused_elementwise),
             format_fixed(s.host_op_s * 1e6, 0) + " us",
             s.gather_prefetch == GatherPrefetch::none    ? "none"
             : s.gather_prefetch == GatherPrefetch::layer ? "layer"
                                                          : "bucket"});
    }
    return table.render() + "(no framework given: " + std::string(kDefaultFramework) + "; " + std::string(kNoFramework) +
           ": the knobs' own defaults, those of " + std::string(kDefaultFrameworkEquivalent) +
           "; sources per value: trainclock presets frameworks --json)\n";
}

int run(const Args& args) {
    if (args.positionals().size() > 1) return report_error({args.positionals()[1], "unexpected argument"});
    std::string kind = args.positionals().empty() ? "" : args.positionals()[0];
    const std::vector<std::string> kinds = {"models", "gpus", "nodes", "precisions", "frameworks"};
    if (!kind.empty() && kind.back() != 's') kind += 's';
    if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        const std::string guess = did_you_mean(kind, kinds);
        return report_error(
            {args.positionals()[0], "unknown preset kind" + (guess.empty() ? "; expected models, gpus, nodes, precisions or frameworks"
                                                                           : "; did you mean " + guess + "?")});
    }
    if (args.has("--json")) {
        std::cout << presets_json(kind) << "\n";
        return kExitOk;
    }
    const std::pair<const char*, std::string (*)()> sections[] = {{"models", model_table},
                                                                  {"gpus", gpu_table},
                                                                  {"nodes", node_table},
                                                                  {"precisions", precision_table},
                                                                  {"frameworks", framework_table}};
    bool first = true;
    for (const auto& [name, table] : sections) {
        if (!kind.empty() && kind != name) continue;
        if (!first) std::cout << "\n";
        first = false;
        std::cout << table();
    }
    return kExitOk;
}

const CommandRegistrar registrar({
    "presets",
    "list the model, GPU, node, precision and framework presets",
    "trainclock presets [models|gpus|nodes|precisions|frameworks] [--json]",
    "Without a kind, lists all five. --json prints the full preset objects ({\"models\": [...], ...}).",
    {{"--json", "", "print the presets as JSON"}},
    false,
    run,
});

}  // namespace
}  // namespace trainclock::cli
