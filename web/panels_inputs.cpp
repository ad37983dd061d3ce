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
#include <string_view>
#include <vector>

#include "app.hpp"
#include "imgui.h"
#include "trainclock/formats/link.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/model/framework.hpp"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

// [SECTION] Helpers ------------------------------------------------------------------------------

namespace {

bool input_int(const char* label, int64_t& value) { return ImGui::InputScalar(label, ImGuiDataType_S64, &value, nullptr, nullptr, "%lld"); }

bool input_double(const char* label, double& value, const char* format = "%.4g") {
    return ImGui::InputDouble(label, &value, 0.0, 0.0, format);
}

// Marks a control whose value the framework preset set (the config does not name it).
void framework_default(bool shown) {
    if (!shown) return;
    ImGui::SameLine();
    ImGui::TextDisabled("(framework's)");
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

// A combo over the core's spellings of an enum-valued config key (names.hpp enum_names); returns
// true on change. While open, each item is published as "key=name" (key: the config key, by
// default `names_path`), so tests can click them.
template <class E>
bool App::enum_combo(const char* label, E& value, std::string_view names_path, std::string_view key) {
    const std::vector<std::string_view> names = enum_names(names_path);
    const size_t index = static_cast<size_t>(value);
    const std::string preview = index < names.size() ? std::string(names[index]) : "?";
    const std::string prefix = std::string(key.empty() ? names_path : key) + "=";
    bool changed = false;
    if (ImGui::BeginCombo(label, preview.c_str())) {
        for (size_t i = 0; i < names.size(); ++i) {
            const std::string name(names[i]);
            if (ImGui::Selectable(name.c_str(), i == index) && i != index) {
                value = static_cast<E>(i);
                changed = true;
            }
            controls_[prefix + name] = widgets::item_rect();
            if (i == index) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    return changed;
}

// A number whose unset value (`unset`) means "the documented default": a "default" box (published
// as key + ".default"), and the field when cleared; `shown` is the value in effect.
bool App::optional_number(const char* label, double& value, double unset, double shown, const std::string& key, const char* format) {
    bool is_default = value == unset;
    bool changed = false;
    ImGui::PushID(label);
    if (ImGui::Checkbox("default", &is_default)) {
        value = is_default ? unset : shown;
        changed = true;
    }
    annotate(key + ".default");
    ImGui::SameLine();
    if (is_default) {
        ImGui::BeginDisabled();
        ImGui::InputDouble(label, &shown, 0.0, 0.0, format);
        ImGui::EndDisabled();
    } else {
        changed |= ImGui::InputDouble(label, &value, 0.0, 0.0, format);
    }
    ImGui::PopID();
    annotate(key);
    return changed;
}

template <class E>
void App::framework_knob_combo(const char* label, E& value, E in_effect, bool& named, const char* key) {
    E shown = named ? value : in_effect;
    if (enum_combo(label, shown, key)) {
        value = shown;
        named = true;
    }
    annotate(key);
    framework_default(!named && !edit_.framework.name.empty());
}

void App::framework_knob_checkbox(const char* label, bool& value, bool in_effect, bool& named, const char* key) {
    bool shown = named ? value : in_effect;
    if (ImGui::Checkbox(label, &shown)) {
        value = shown;
        named = true;
    }
    annotate(key);
    framework_default(!named && !edit_.framework.name.empty());
}

void App::draw_inputs() {
    ImGui::PushItemWidth(-170.0f);  // leaves room for the labels on the right
    draw_import();
    draw_model_inputs();
    draw_system_inputs();
    draw_stack_inputs();
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
    changed |= enum_combo("architecture", m.architecture, "model.architecture");
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
    changed |= enum_combo("activation", m.activation, "model.activation");
    annotate("model.activation");
    changed |= enum_combo("norm", m.norm, "model.norm");
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
    // The node's PCIe peer-to-peer (node key peer_to_peer; false on GeForce cards): without it NCCL's
    // intra-node traffic goes through host memory at half the link's bandwidth. Editing it makes the
    // node a custom one (its preset named as the base in the link).
    bool p2p = edit_.node.name.empty() ? valid_.node.peer_to_peer : edit_.node.peer_to_peer;
    if (ImGui::Checkbox("GPU peer-to-peer (PCIe P2P / NVLink)", &p2p)) {
        if (edit_.node.name.empty()) edit_.node = valid_.node;  // the GPU's default node, made explicit
        edit_.node.peer_to_peer = p2p;
        if (edit_.node.name != "custom") {
            edit_.node.display_name = "Custom (from " + edit_.node.name + ")";
            edit_.node.name = "custom";
        }
    }
    annotate("node.peer_to_peer");
    help("off: the GPUs cannot read each other's memory (GeForce cards: the driver disables P2P), so intra-node collectives go "
         "through host memory at half the intra-node bandwidth");
    widgets::slider_int("GPUs", edit_.num_gpus, 1, 65536);
    annotate("num_gpus");
}

// [SECTION] Software stack -----------------------------------------------------------------------

void App::draw_stack_inputs() {
    section("Software stack");
    std::string id = edit_.framework.name.empty() ? std::string(kNoFramework) : edit_.framework.name;
    widgets::ItemRects items;
    const bool picked = widgets::search_combo("framework", id, catalogue_.frameworks, &items);
    for (const auto& [item, rect] : items) controls_["framework=" + item] = rect;
    if (picked) {
        if (id == kNoFramework) {
            edit_.framework = FrameworkSpec{};
        } else if (auto preset = framework_preset(id)) {
            edit_.framework = preset.value();
        }
    }
    annotate("framework");
    help("the training stack's defaults: attention kernel per GPU generation, overlapped collectives, FP8 recipe, host cost per op");
    if (!valid_.framework_defaults.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        std::string set;
        for (const std::string& line : valid_.framework_defaults) set += (set.empty() ? "" : "; ") + line;
        ImGui::TextDisabled("framework sets: %s", set.c_str());
        ImGui::PopTextWrapPos();
    }
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
    input_int("expert TP", p.expert_tp);
    annotate("parallel.expert_tp");
    help("Megatron-Core --expert-tensor-parallel-size: 0 = TP; expert TP x EP folds into TP x CP x DP");
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
    enum_combo("schedule", p.schedule, "parallel.schedule");
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
    framework_knob_checkbox("overlap DP communication", p.overlap_dp_comm, valid_.parallel.overlap_dp_comm,
                            edit_.explicit_knobs.overlap_dp_comm, "parallel.overlap_dp_comm");
    framework_knob_checkbox("overlap TP communication", p.overlap_tp_comm, valid_.parallel.overlap_tp_comm,
                            edit_.explicit_knobs.overlap_tp_comm, "parallel.overlap_tp_comm");
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
    enum_combo("activation recompute", t.recompute, "training.recompute");
    annotate("training.recompute");
    // A framework sets these unless the config names them (explicit key > framework > default);
    // a stack without a fused kernel (tensorflow) turns flash attention off.
    ExplicitKnobs& named = edit_.explicit_knobs;
    const TrainingSpec& in_effect = valid_.training;
    framework_knob_checkbox("flash attention", t.flash_attention, in_effect.flash_attention, named.flash_attention,
                            "training.flash_attention");
    framework_knob_combo("attention kernel", t.attention_kernel, in_effect.attention_kernel, named.attention_kernel,
                         "training.attention_kernel");
    framework_knob_combo("CUDA graphs", t.cuda_graphs, in_effect.cuda_graphs, named.cuda_graphs, "training.cuda_graphs");
    framework_knob_checkbox("torch.compile", t.compile, in_effect.compile, named.compile, "training.compile");
    enum_combo("optimizer", t.optimizer, "training.optimizer");
    annotate("training.optimizer");
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
    draw_finetune_inputs();
    draw_run_inputs();
}

void App::draw_finetune_inputs() {
    section("Fine-tuning and offload");
    FinetuneSpec& f = edit_.training.finetune;
    if (enum_combo("fine-tuning", f.method, "training.finetune.method") && f.adapters() && f.lora_rank <= 0) f.lora_rank = 16;
    annotate("training.finetune.method");
    help("full: every weight trains; lora: rank-r adapters beside frozen layers (Hu et al. 2021); qlora: + 4-bit frozen weights");
    if (f.adapters()) {
        input_int("LoRA rank", f.lora_rank);
        annotate("training.finetune.lora_rank");
        enum_combo("LoRA targets", f.lora_targets, "training.finetune.lora_targets");
        annotate("training.finetune.lora_targets");
    }
    input_int("frozen layers", f.frozen_layers);
    annotate("training.finetune.frozen_layers");
    help("the input embedding and the first N layers stay frozen (no gradients, no optimizer states)");
    ImGui::Checkbox("offload optimizer to CPU", &edit_.training.offload_optimizer);
    annotate("training.offload_optimizer");
    ImGui::Checkbox("offload parameters to CPU", &edit_.training.offload_params);
    annotate("training.offload_params");
    help("ZeRO-Offload / ZeRO-Infinity: parameters need ZeRO 3 with DP > 1");
    // Less common keys, collapsed so the panel keeps its height.
    const bool more = ImGui::TreeNode("more keys");
    annotate("training.more");
    help("MoE dispatcher, pipeline layout, paged optimizer, optimizer in backward, activation offload, memory headroom");
    if (!more) return;
    TrainingSpec& t = edit_.training;
    framework_knob_combo("MoE dispatcher", t.moe_dispatcher, valid_.training.moe_dispatcher, edit_.explicit_knobs.moe_dispatcher,
                         "training.moe_dispatcher");
    std::string& layout = edit_.parallel.stage_split.pipeline_layout;
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%s", layout.c_str());
    if (ImGui::InputText("pipeline layout", buffer, sizeof buffer)) layout = buffer;
    annotate("parallel.pipeline_layout");
    help("Megatron-Core --pipeline-model-parallel-layout: E embedding, t layer, m MTP, L loss, | stage, *N repeats");
    ImGui::Checkbox("paged optimizer", &t.paged_optimizer);
    annotate("training.paged_optimizer");
    ImGui::Checkbox("optimizer in backward", &t.optimizer_in_backward);
    annotate("training.optimizer_in_backward");
    ImGui::Checkbox("offload activations to CPU", &t.offload_activations);
    annotate("training.offload_activations");
    input_double("memory headroom (GiB per GPU)", t.memory_headroom_gib);
    annotate("training.memory_headroom_gib");
    ImGui::TreePop();
}

void App::draw_run_inputs() {
    section("Whole run (checkpoints, failures)");
    TrainingSpec& t = edit_.training;
    const WholeRun& run = result_.run;
    if (t.ideal) ImGui::BeginDisabled();
    double interval = t.checkpoint_interval_s;
    if (optional_number("checkpoint interval (s)", interval, 0.0, run.checkpoint_interval_s, "training.checkpoint_interval_s", "%.0f")) {
        t.checkpoint_interval_s = interval;
        if (interval > 0) t.checkpoint_interval_steps = 0;
    }
    help("default: Young's optimum sqrt(2 x save time / interruption rate)");
    input_int("checkpoint steps", t.checkpoint_interval_steps);
    annotate("training.checkpoint_interval_steps");
    help("optimizer steps between checkpoints, instead of the interval in seconds (0 = by time)");
    optional_number("storage bandwidth (GB/s)", t.storage_bw_gbps, 0.0, run.storage_bw_gbps, "training.storage_bw_gbps");
    optional_number("restart (s)", t.restart_s, -1.0, run.restart_s, "training.restart_s", "%.0f");
    optional_number("failures per GPU-hour", t.failure_rate_per_gpu_hour, -1.0, run.failure_rate_per_gpu_hour,
                    "training.failure_rate_per_gpu_hour", "%.3g");
    help("default 1.97e-5: Llama 3, 419 unexpected interruptions in 54 days on 16,384 GPUs");
    if (t.ideal) ImGui::EndDisabled();
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
    // The recipe travels inside the precision object (link key p); "default" is the framework's, else the dtype's.
    const std::optional<Fp8Recipe> effective = effective_fp8_recipe(valid_);
    int recipe = edit_.precision.fp8_recipe ? 1 + int(*edit_.precision.fp8_recipe) : 0;
    const std::vector<std::string_view> recipes = enum_names("precision.fp8_recipe");
    const std::string default_label =
        "default" + (effective && !edit_.precision.fp8_recipe ? " (" + std::string(fp8_recipe_name(*effective)) + ")" : std::string());
    if (ImGui::BeginCombo("FP8/FP4 recipe", recipe == 0 ? default_label.c_str() : recipes[size_t(recipe - 1)].data())) {
        for (int i = 0; i <= int(recipes.size()); ++i) {
            const bool picked = ImGui::Selectable(i == 0 ? default_label.c_str() : recipes[size_t(i - 1)].data(), recipe == i);
            controls_["precision.fp8_recipe=" + (i == 0 ? std::string("default") : std::string(recipes[size_t(i - 1)]))] =
                widgets::item_rect();
            if (picked && recipe != i) {
                recipe = i;
                if (i == 0)
                    edit_.precision.fp8_recipe.reset();
                else
                    edit_.precision.fp8_recipe = Fp8Recipe(i - 1);
                edit_.explicit_knobs.fp8_recipe = i != 0;
            }
        }
        ImGui::EndCombo();
    }
    annotate("precision.fp8_recipe");
    help("scaling recipe of quantised GEMMs: delayed/tensorwise/rowwise/blockwise (fp8), mxfp8, nvfp4; only used when GEMMs are quantised");
    if (!ImGui::TreeNode("Custom dtypes per tensor category")) return;
    PrecisionSpec& p = edit_.precision;
    bool changed = false;
    changed |= enum_combo("GEMMs and attention", p.gemm, "dtype", "precision.gemm");
    annotate("precision.gemm");
    changed |= enum_combo("activations", p.activations, "dtype", "precision.activations");
    annotate("precision.activations");
    changed |= enum_combo("working weights", p.params, "dtype", "precision.params");
    annotate("precision.params");
    changed |= enum_combo("master weights", p.master_weights, "precision.master_weights");
    annotate("precision.master_weights");
    changed |= enum_combo("gradient accumulation", p.grads, "dtype", "precision.grads");
    annotate("precision.grads");
    changed |= enum_combo("gradient all-reduce", p.grad_reduce, "dtype", "precision.grad_reduce");
    annotate("precision.grad_reduce");
    changed |= enum_combo("optimizer states", p.optimizer_states, "dtype", "precision.optimizer_states");
    annotate("precision.optimizer_states");
    changed |= enum_combo("loss scaling", p.loss_scaling, "precision.loss_scaling");
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
