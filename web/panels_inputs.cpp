// trainclock GUI: the input panels (presets, custom model/GPU editors, parallelism, training,
// precision). Every control edits App::edit_ and is annotated with its config key, so a
// validation error naming that key shows right under it.
//
// Index
// [SECTION] Helpers
// [SECTION] Model
// [SECTION] System (GPU, node, GPU count)
// [SECTION] Parallelism
// [SECTION] Training
// [SECTION] Precision
#include <algorithm>
#include <cstdio>
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "widgets.hpp"

namespace trainclock::gui {

// [SECTION] Helpers ------------------------------------------------------------------------------

namespace {

// A combo over the names of an enum; returns true on change.
template <class E, size_t N>
bool enum_combo(const char* label, E& value, const char* const (&names)[N]) {
    int index = static_cast<int>(value);
    if (!ImGui::Combo(label, &index, names, int(N))) return false;
    value = static_cast<E>(index);
    return true;
}

bool dtype_combo(const char* label, DType& dtype) {
    static const char* const names[kDTypeCount] = {"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4"};
    return enum_combo(label, dtype, names);
}

bool input_int(const char* label, int64_t& value) { return ImGui::InputScalar(label, ImGuiDataType_S64, &value, nullptr, nullptr, "%lld"); }

bool input_double(const char* label, double& value, const char* format = "%.4g") {
    return ImGui::InputDouble(label, &value, 0.0, 0.0, format);
}

void section(const char* title) {
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.0f, 0.35f, 0.6f, 1.0f), "%s", title);
    ImGui::Separator();
}

void help(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text);
}

}  // namespace

void App::draw_inputs() {
    ImGui::PushItemWidth(-170.0f);  // leaves room for the labels on the right
    draw_model_inputs();
    draw_system_inputs();
    draw_parallel_inputs();
    draw_training_inputs();
    draw_precision_inputs();
    ImGui::PopItemWidth();
}

// [SECTION] Model --------------------------------------------------------------------------------

void App::draw_model_inputs() {
    section("Model");
    std::string id = edit_.model.name;
    if (widgets::search_combo("model", id, catalogue_.models)) {
        auto preset = model_preset(id);
        if (preset) edit_.model = preset.value();
    }
    annotate("model");
    if (!ImGui::TreeNode("Custom model (edit the architecture)")) return;
    ModelSpec& m = edit_.model;
    bool changed = false;
    static const char* const architectures[] = {"decoder", "encoder", "encoder-decoder"};
    static const char* const activations[] = {"gelu", "relu", "squared-relu", "swiglu", "geglu"};
    static const char* const norms[] = {"layernorm", "rmsnorm"};
    changed |= enum_combo("architecture", m.architecture, architectures);
    annotate("model.architecture");
    changed |= input_int("layers", m.layers);
    annotate("model.layers");
    if (m.architecture == Architecture::encoder_decoder) {
        changed |= input_int("decoder layers", m.decoder_layers);
        annotate("model.decoder_layers");
    }
    changed |= input_int("hidden", m.hidden);
    annotate("model.hidden");
    changed |= input_int("heads", m.heads);
    annotate("model.heads");
    changed |= input_int("kv heads", m.kv_heads);
    annotate("model.kv_heads");
    changed |= input_int("ffn hidden", m.ffn_hidden);
    annotate("model.ffn_hidden");
    changed |= input_int("vocab", m.vocab);
    annotate("model.vocab");
    changed |= enum_combo("activation", m.activation, activations);
    annotate("model.activation");
    changed |= enum_combo("norm", m.norm, norms);
    annotate("model.norm");
    changed |= ImGui::Checkbox("tied embeddings", &m.tied_embeddings);
    annotate("model.tied_embeddings");
    changed |= input_int("MoE experts (0 = dense)", m.moe.experts);
    annotate("model.moe.experts");
    if (m.moe.experts > 0) {
        changed |= input_int("MoE top-k", m.moe.top_k);
        annotate("model.moe.top_k");
        changed |= input_int("expert ffn hidden", m.moe.expert_ffn_hidden);
        annotate("model.moe.expert_ffn_hidden");
        changed |= input_int("shared experts", m.moe.shared_experts);
        annotate("model.moe.shared_experts");
    }
    if (changed && m.name != "custom") {
        m.display_name = "Custom (from " + m.name + ")";
        m.name = "custom";
    }
    ImGui::TreePop();
}

// [SECTION] System (GPU, node, GPU count) --------------------------------------------------------

void App::draw_system_inputs() {
    section("Hardware");
    std::string id = edit_.gpu.name;
    if (widgets::search_combo("GPU", id, catalogue_.gpus)) {
        auto preset = gpu_preset(id);
        if (preset) {
            edit_.gpu = preset.value();
            auto node = node_preset(edit_.gpu.default_node);  // the GPU's usual server
            if (node) edit_.node = node.value();
        }
    }
    annotate("gpu");
    if (ImGui::TreeNode("Custom GPU (edit the datasheet)")) {
        GpuSpec& g = edit_.gpu;
        bool changed = false;
        changed |= input_double("memory (GiB)", g.memory_gib);
        annotate("gpu.memory_gib");
        changed |= input_double("memory bandwidth (GB/s)", g.memory_bw_gbps);
        annotate("gpu.memory_bw_gbps");
        for (int d = 0; d < kDTypeCount; ++d) {
            const std::string label = "peak " + std::string(dtype_name(DType(d))) + " (TFLOP/s)";
            changed |= input_double(label.c_str(), g.peak_tflops[size_t(d)]);
            annotate("gpu.peak_tflops." + std::string(dtype_name(DType(d))));
        }
        changed |= input_int("SMs / CUs", g.sm_count);
        annotate("gpu.sm_count");
        changed |= input_double("TDP (W)", g.tdp_w);
        annotate("gpu.tdp_w");
        changed |= input_double("price ($/GPU-hour)", g.price_per_gpu_hour_usd);
        annotate("gpu.price_per_gpu_hour_usd");
        if (changed && g.name != "custom") {
            g.display_name = "Custom (from " + g.name + ")";
            g.name = "custom";
        }
        ImGui::TreePop();
    }
    id = edit_.node.name.empty() ? valid_.node.name : edit_.node.name;  // empty: the GPU's default node
    if (widgets::search_combo("node", id, catalogue_.nodes)) {
        auto preset = node_preset(id);
        if (preset) edit_.node = preset.value();
    }
    annotate("node");
    widgets::slider_int("GPUs", edit_.num_gpus, 1, 65536);
    annotate("num_gpus");
}

// [SECTION] Parallelism --------------------------------------------------------------------------

void App::draw_parallel_inputs() {
    section("Parallelism");
    ParallelSpec& p = edit_.parallel;
    widgets::slider_int("TP (tensor)", p.tp, 1, 64);
    annotate("parallel.tp");
    widgets::slider_int("PP (pipeline)", p.pp, 1, 128);
    annotate("parallel.pp");
    widgets::slider_int("CP (context)", p.cp, 1, 64);
    annotate("parallel.cp");
    bool derive_dp = p.dp == 0;
    if (derive_dp) {
        int64_t shown = valid_.parallel.dp;
        ImGui::BeginDisabled();
        widgets::slider_int("DP (data)", shown, 1, 65536);
        ImGui::EndDisabled();
    } else {
        widgets::slider_int("DP (data)", p.dp, 1, 65536);
    }
    annotate("parallel.dp");
    ImGui::SameLine();
    if (ImGui::Checkbox("auto##dp", &derive_dp)) p.dp = derive_dp ? 0 : std::max<int64_t>(valid_.parallel.dp, 1);
    annotate("parallel.dp_auto");
    widgets::slider_int("EP (expert)", p.ep, 1, 256);
    annotate("parallel.ep");
    ImGui::Checkbox("sequence parallel", &p.sequence_parallel);
    annotate("parallel.sequence_parallel");
    help("Megatron SP: norms and dropout split over TP; reduce-scatter + all-gather instead of all-reduce");
    ImGui::TextUnformatted("ZeRO stage");
    for (int stage = 0; stage <= 3; ++stage) {
        ImGui::SameLine();
        char label[16];
        std::snprintf(label, sizeof label, "%d##zero", stage);
        if (ImGui::RadioButton(label, p.zero == stage)) p.zero = stage;
    }
    annotate("parallel.zero");
    help("0: none, 1: optimizer states sharded over DP, 2: + gradients, 3: + parameters (FSDP)");
    static const char* const schedules[] = {"gpipe", "1f1b", "interleaved"};
    enum_combo("schedule", p.schedule, schedules);
    annotate("parallel.schedule");
    widgets::slider_int("virtual stages", p.virtual_stages, 1, 16);
    annotate("parallel.virtual_stages");
    input_int("first stage layers", p.stage_split.first_stage_layers);
    annotate("parallel.first_stage_layers");
    input_int("last stage layers", p.stage_split.last_stage_layers);
    annotate("parallel.last_stage_layers");
    help("Megatron-Core's uneven split (--decoder-first/last-pipeline-num-layers): 0 = even");
    ImGui::Checkbox("embedding in the stage split", &p.stage_split.embedding_in_stage_split);
    annotate("parallel.embedding_in_stage_split");
    ImGui::Checkbox("loss in the stage split", &p.stage_split.loss_in_stage_split);
    annotate("parallel.loss_in_stage_split");
    help("Megatron-Core's --account-for-embedding/loss-in-pipeline-split: each counts as one layer");
    ImGui::Checkbox("overlap DP communication", &p.overlap_dp_comm);
    annotate("parallel.overlap_dp_comm");
    ImGui::Checkbox("overlap TP communication", &p.overlap_tp_comm);
    annotate("parallel.overlap_tp_comm");
}

// [SECTION] Training -----------------------------------------------------------------------------

void App::draw_training_inputs() {
    section("Training");
    TrainingSpec& t = edit_.training;
    widgets::slider_int("micro-batch", t.micro_batch, 1, 64);
    annotate("training.micro_batch");
    widgets::slider_int("global batch (samples)", t.global_batch, 1, 65536);
    annotate("training.global_batch");
    widgets::slider_int("sequence length", t.seq_len, 128, 1048576);
    annotate("training.seq_len");
    const double min_tokens = 0, max_tokens = 1e15;
    ImGui::SliderScalar("training tokens", ImGuiDataType_Double, &t.tokens, &min_tokens, &max_tokens, "%.3g",
                        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    annotate("training.tokens");
    static const char* const recomputes[] = {"none", "selective", "full"};
    enum_combo("activation recompute", t.recompute, recomputes);
    annotate("training.recompute");
    ImGui::Checkbox("flash attention", &t.flash_attention);
    annotate("training.flash_attention");
    static const char* const attention_kernels[] = {"flash2", "flash3"};
    enum_combo("attention kernel", t.attention_kernel, attention_kernels);
    annotate("training.attention_kernel");
    bool preset_price = t.price_per_gpu_hour_usd < 0;
    if (ImGui::Checkbox("GPU preset price", &preset_price))
        t.price_per_gpu_hour_usd = preset_price ? -1.0 : edit_.gpu.price_per_gpu_hour_usd;
    if (!preset_price) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(120.0f);
        input_double("$/GPU-hour", t.price_per_gpu_hour_usd, "%.2f");
    }
    annotate("training.price_per_gpu_hour");
    ImGui::Checkbox("ideal run (no checkpoints, interruptions, restarts)", &t.ideal);
    annotate("training.ideal");
    help("off: total time is wall time with checkpoint saves, interruptions (Llama 3's rate) and restarts");
}

// [SECTION] Precision ----------------------------------------------------------------------------

void App::draw_precision_inputs() {
    section("Precision");
    std::string id = edit_.precision.name;
    if (widgets::search_combo("precision", id, catalogue_.precisions)) {
        auto preset = precision_preset(id);
        if (preset) edit_.precision = preset.value();
    }
    annotate("precision");
    if (!edit_.precision.description.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("%s", edit_.precision.description.c_str());
        ImGui::PopTextWrapPos();
    }
    if (!ImGui::TreeNode("Custom dtypes per tensor category")) return;
    PrecisionSpec& p = edit_.precision;
    bool changed = false;
    changed |= dtype_combo("GEMMs and attention", p.gemm);
    annotate("precision.gemm");
    changed |= dtype_combo("activations", p.activations);
    annotate("precision.activations");
    changed |= dtype_combo("working weights", p.params);
    annotate("precision.params");
    static const char* const masters[] = {"none", "fp32"};
    changed |= enum_combo("master weights", p.master_weights, masters);
    annotate("precision.master_weights");
    changed |= dtype_combo("gradient accumulation", p.grads);
    annotate("precision.grads");
    changed |= dtype_combo("gradient all-reduce", p.grad_reduce);
    annotate("precision.grad_reduce");
    changed |= dtype_combo("optimizer states", p.optimizer_states);
    annotate("precision.optimizer_states");
    static const char* const scalings[] = {"none", "dynamic"};
    changed |= enum_combo("loss scaling", p.loss_scaling, scalings);
    annotate("precision.loss_scaling");
    changed |= ImGui::Checkbox("autocast (casts at op boundaries)", &p.autocast);
    annotate("precision.autocast");
    if (changed && p.name != "custom") {
        p.description = "Custom (from " + p.name + ")";
        p.name = "custom";
    }
    ImGui::TreePop();
}

}  // namespace trainclock::gui
