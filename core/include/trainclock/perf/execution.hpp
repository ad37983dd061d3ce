// trainclock: the execution of one validated config, derived once (after Calculon's Execution,
// Isaev et al. SC'23): the pipeline shape, the layers of each stage, the per-GPU shapes of one
// micro-batch, the dtype each op class runs in and the kernel decisions that follow, the resolved
// calibration, price and power. Operators, memory, predict and search read it instead of
// re-deriving these facts from the Config.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "trainclock/model/config.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/pipeline.hpp"

namespace trainclock {

// What a transformer layer contains.
struct LayerKind {
    bool causal = true;            // decoder self-attention (encoder: bidirectional)
    bool cross_attention = false;  // decoder layer of an encoder-decoder
    bool moe = false;              // routed-expert MLP instead of the dense one (model.moe: dense_layers, every)
    bool local = false;            // sliding-window / chunked attention (model.local_attention)
    bool frozen = false;           // training.finetune.frozen_layers: forward only, nothing trains
};
// Kinds of layer: frozen x (second stack of an encoder-decoder) x MoE x local; a dense index for per-kind memos.
inline constexpr int kLayerKindSlots = 16;
inline int kind_slot(LayerKind kind) {
    return (kind.frozen ? 8 : 0) + (kind.cross_attention ? 4 : 0) + (kind.moe ? 2 : 0) + (kind.local ? 1 : 0);
}

// Layers in pipeline order (total_layers, model.hpp): an encoder-decoder's encoder stack, then its decoder stack.
LayerKind layer_kind_at(const ModelSpec& model, int64_t index);
// End (exclusive, at most `limit`) of the run of layers of the same kind that starts at `index`.
int64_t layer_kind_run_end(const ModelSpec& model, int64_t index, int64_t limit);
// The same with the training's frozen leading layers marked (what predict, memory and search walk).
LayerKind layer_kind_at(const Config& config, int64_t index);
int64_t layer_kind_run_end(const Config& config, int64_t index, int64_t limit);

// Keys a query attends to on average, over a sequence of `s_kv` tokens: s_kv / 2 for full causal
// attention (the convention of attention_core), fewer on local layers (closed forms in execution.cpp).
double attended_keys(const ModelSpec& model, LayerKind kind, double s_kv);
// Routed tokens on the busiest expert-parallel rank over the balanced mean: the busiest expert
// (moe.imbalance, capped by moe.capacity_factor) beside experts / ep - 1 others at the mean.
double expert_load_factor(const ModelSpec& model, const ParallelSpec& parallel);
// Whether the input embedding / the LM head train: frozen under LoRA (PEFT trains only adapters by
// default), the embedding also with frozen_layers.
bool embedding_trains(const Config& config);
bool head_trains(const Config& config);

// The dtype each op class runs in under one precision setting on this GPU, its storage width, and
// the kernel decisions that follow from them.
struct OpPrecision {
    DType gemm = DType::bf16;                                           // linear layers
    DType activations = DType::bf16;                                    // stored activations and elementwise ops
    DType attention = DType::bf16;                                      // attention matmuls (FP8 recipes keep them in bf16/fp16)
    double w_act = 2, w_gemm = 2, w_attn = 2, w_param = 2, w_grad = 4;  // storage bytes per element
    bool quantized = false;                                             // FP8/FP4 GEMMs (cast + transpose of every operand)
    Fp8Recipe recipe = Fp8Recipe::delayed;                              // their scaling recipe (effective_fp8_recipe)
    bool autocast = false;                                              // torch.autocast casts at op boundaries
    bool flash = false;  // fused attention runs: asked for, a kernel for the dtype, absolute positions
};
OpPrecision op_precision(const Config& config, const PrecisionSpec& precision);

// The precision-blind baseline: every op at one 16-bit tensor-core dtype (reference_dtype), no
// precision-only ops (one static record per reference dtype).
const PrecisionSpec& blind_precision(const GpuSpec& gpu);
// M = global batch / (micro-batch x DP), at least 1 (DESIGN.md 2.4).
int64_t micro_batch_count(const Config& config);

// Derived from a validated config (load_config / validate_config), with its calibration resolved
// or given (a search resolves it once for every layout and derives an execution per layout probed,
// so it is built in place and refers to the config and the calibration instead of copying them).
struct Execution {
    explicit Execution(const Config& config);                 // resolves the calibration
    Execution(const Config& config, const Calibration& cal);  // `cal` outlives the execution
    Execution(const Config&& config) = delete;                // the execution refers to its config
    Execution(const Config&& config, const Calibration& cal) = delete;
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;

private:
    std::optional<Calibration> resolved_;  // the calibration when resolved here (before `cal`)

public:
    const Config* config = nullptr;  // the validated config it is derived from (outlives it)
    const Calibration& cal;          // resolved for the GPU and attention kernel
    OpPrecision ops;                 // what operators cost: the config's precision, or the blind one
    OpPrecision stored;              // the config's own precision: what memory holds

    // Pipeline (DESIGN.md 2.4): M = global batch / (micro-batch x DP); interleaving only where
    // Megatron can run it (else simulated as 1F1B, interleave_fallback).
    PipelineShape shape;
    bool interleave_fallback = false;                                       // interleaved with pp > 1 and v > 1 asked, but M % pp != 0
    int64_t stages = 1, chunks = 1, virtual_stages = 1, micro_batches = 1;  // p, v, p v, M
    int64_t layers = 0;                                                     // total_layers
    StageSplit stage_split;  // parallel.first/last_stage_layers, embedding/loss_in_stage_split, pipeline_layout
    // parallel.pipeline_layout parsed (empty without one): its virtual stages in order.
    std::vector<LayoutStage> layout;
    // The virtual stage holding the MTP layers (model.mtp_layers): the last, or the layout's 'm' stage;
    // their output head and loss stay with the LM head on the last (GPTModel._postprocess).
    int64_t mtp_virtual_stage = 0;
    // Layers [first, first + count) of virtual stage j (chunk * stages + stage), Megatron-Core's
    // assignment under the split (stage_split.hpp).
    LayerRange stage_layers(int64_t j) const {
        if (layout.empty()) return stage_layer_range(layers, stages, chunks, stage_split, j);
        const LayoutStage& s = layout[size_t(j)];
        return {s.first, s.layers};
    }

    // One micro-batch on one GPU: T = b s / cp tokens (context parallelism splits the queries; K/V
    // circulate), T / tp of them outside the TP regions with sequence parallelism.
    double tp = 1, cp = 1, ep = 1;
    double etp = 1;  // expert tensor parallel (ParallelSpec::etp(): tp unless parallel.expert_tp)
    double micro_batch = 1, seq_len = 1, s_q = 1, tokens = 1, tokens_sp = 1;
    bool sp = false;  // sequence parallelism in effect (asked and tp > 1)
    // The model split over TP (Megatron-LM, Shoeybi et al. 2019): heads and vocabulary columns.
    double hidden = 0, head_dim = 0;
    double heads_local = 0;     // query heads per GPU
    double kv_heads_local = 0;  // KV heads per GPU (replicated when kv_heads < tp)
    double vocab_local = 0;     // embedding rows per GPU
    double logits_local = 0;    // logits computed per token per GPU (adaptive softmax: the head cluster)
    double memory_len = 0;      // Transformer-XL memory tokens per sample
    bool relative = false;      // relative-position attention (materialised scores)
    bool gated = false;         // gated MLP (3 matrices)
    // MLA (DeepSeek-V2 eqs. 16-18): queries and keys carry d_h + d_h^R per head, values d_v; else head_dim.
    bool mla = false;
    double head_dim_qk = 0, head_dim_v = 0;
    double expert_load = 1;  // expert_load_factor: the busiest EP rank's routed tokens over the mean
    Recompute recompute = Recompute::none;
    bool op_level_sac = false;       // recompute selective as a per-op policy (FrameworkSpec::op_level_sac or selective_saves_matmuls)
    bool sac_saves_matmuls = false;  // that policy saves every weight matmul and re-runs attention (FrameworkSpec::selective_saves_matmuls)
    // Kernel fusion: the framework's own fused kernels, or torch.compile's (training.compile: Inductor
    // fuses pointwise ops and reductions into one Triton kernel per fusion group).
    bool fused_norms = true;                    // a norm is one kernel (else RMSNorm as eager tensor ops)
    bool fused_elementwise = true;              // scale-mask-softmax and dropout + residual add one kernel each
    bool norm_in_residual = false;              // torch.compile: each forward norm runs in the kernel of the residual add before it
    CudaGraphs cuda_graphs = CudaGraphs::none;  // training.cuda_graphs: what replays without per-op host dispatch
    // Fine-tuning (training.finetune): whether linear weights get gradients, and the adapters.
    bool train_weights = true;  // false: frozen base (LoRA/QLoRA), no weight-gradient GEMM
    bool nf4 = false;           // QLoRA: the frozen block linears are NF4, dequantised per GEMM
    double lora_rank = 0;       // adapters beside the block linears (0 = none)
    bool lora_mlp = false;      // adapters on the MLP too (lora_targets all-linear)

    double gpus = 1;
    double price_per_gpu_hour_usd = 0;  // the training's price, else the GPU preset's
    double power_w = 0;                 // board power of all GPUs times the node overhead

    const PrecisionSpec* costed = nullptr;  // the config's precision, or the precision-blind reference
    const PrecisionSpec& precision() const { return *costed; }

private:
    void derive(const Config& config);
};

// USD per GPU-hour: the training's price, else the GPU preset's.
double price_per_gpu_hour_usd(const Config& config);

// Built in the caller's storage (C++17 guaranteed elision): const Execution x = make_execution(c).
inline Execution make_execution(const Config& config) { return Execution(config); }
inline Execution make_execution(const Config& config, const Calibration& cal) { return Execution(config, cal); }
Execution make_execution(const Config&& config) = delete;
Execution make_execution(const Config&& config, const Calibration& cal) = delete;

// Layers of virtual stage j (chunk * stages + stage) in runs of one kind: f(first, count, kind).
template <class F>
void for_each_layer_run(const Execution& x, int64_t j, F&& f) {
    const Config& c = *x.config;
    const LayerRange r = x.stage_layers(j);
    for (int64_t i = r.first; i < r.first + r.count;) {
        const int64_t end = layer_kind_run_end(c, i, r.first + r.count);
        f(i, end - i, layer_kind_at(c, i));
        i = end;
    }
}

// The physical pipeline stage holding the MTP layers (Execution::mtp_virtual_stage).
inline int64_t mtp_stage(const Execution& x) { return x.mtp_virtual_stage % std::max<int64_t>(x.stages, 1); }

}  // namespace trainclock
