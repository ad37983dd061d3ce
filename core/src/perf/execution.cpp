// trainclock: the execution record of one validated config (execution.hpp).
#include "trainclock/perf/execution.hpp"

#include <algorithm>
#include <cmath>

#include "trainclock/model/framework.hpp"

namespace trainclock {

LayerKind layer_kind_at(const ModelSpec& m, int64_t index) {
    LayerKind kind;
    const bool second_stack = m.architecture == Architecture::encoder_decoder && index >= m.layers;
    const int64_t in_stack = second_stack ? index - m.layers : index;
    kind.causal = m.architecture == Architecture::decoder || second_stack;
    kind.cross_attention = second_stack;
    kind.moe = m.is_moe_layer(in_stack);  // as model.cpp: leading dense layers per stack, every k-th after
    kind.local = !second_stack && m.is_local_layer(in_stack);
    return kind;
}

int64_t layer_kind_run_end(const ModelSpec& m, int64_t index, int64_t limit) {
    const bool periodic = m.local_attention.enabled() || (m.is_moe() && m.moe.every > 1);
    if (periodic) {  // interleaved kinds: walk (runs are at most a period long)
        const int first = kind_slot(layer_kind_at(m, index));
        int64_t end = index + 1;
        while (end < limit && kind_slot(layer_kind_at(m, end)) == first) ++end;
        return end;
    }
    // Kinds change only where the dense leading layers end and where the second stack starts.
    const int64_t dense = m.is_moe() ? m.moe.dense_layers : 0;
    const bool two_stacks = m.architecture == Architecture::encoder_decoder;
    const int64_t bounds[3] = {dense, two_stacks ? m.layers : limit, two_stacks ? m.layers + dense : limit};
    int64_t end = limit;
    for (int64_t b : bounds)
        if (b > index) end = std::min(end, b);
    return end;
}

LayerKind layer_kind_at(const Config& c, int64_t index) {
    LayerKind kind = layer_kind_at(c.model, index);
    kind.frozen = index < c.training.finetune.frozen_layers;
    return kind;
}

int64_t layer_kind_run_end(const Config& c, int64_t index, int64_t limit) {
    const int64_t frozen = c.training.finetune.frozen_layers;
    return layer_kind_run_end(c.model, index, index < frozen ? std::min(limit, frozen) : limit);
}

double attended_keys(const ModelSpec& m, LayerKind kind, double s) {
    if (!kind.causal) return s;
    const double w = double(m.local_attention.window);
    if (!kind.local || w >= s) return s / 2;  // causal: the average query sees half the sequence
    // Sliding window (Beltagy et al. 2020, arXiv 2004.05150; Mistral, Jiang et al. 2023 sec. 2): query i
    // sees min(i, w) keys; over i in [0, s] that is (w^2 / 2 + (s - w) w) / s = w - w^2 / (2 s).
    if (m.local_attention.kind == LocalAttentionKind::sliding) return w - w * w / (2 * s);
    // Chunked (Llama 4 attention_chunk_size): causal within chunks of w, n = floor(s / w) full chunks
    // and a remainder r: (n w^2 / 2 + r^2 / 2) / s.
    const double n = std::floor(s / w), r = s - n * w;
    return (n * w * w / 2 + r * r / 2) / s;
}

double expert_load_factor(const ModelSpec& m, const ParallelSpec& parallel) {
    const MoeSpec& moe = m.moe;
    if (!m.is_moe()) return 1;
    const double cap = moe.capacity_factor > 0 ? moe.capacity_factor : 1e300;  // 0 = dropless
    const double busiest = std::min(moe.imbalance, cap), others = std::min(1.0, cap);
    const double local = std::max(double(moe.experts) / double(std::max<int64_t>(parallel.ep, 1)), 1.0);
    return (busiest + (local - 1) * others) / local;
}

bool embedding_trains(const Config& c) { return !c.training.finetune.adapters() && c.training.finetune.frozen_layers == 0; }
bool head_trains(const Config& c) { return !c.training.finetune.adapters(); }

OpPrecision op_precision(const Config& c, const PrecisionSpec& p) {
    OpPrecision x;
    x.gemm = p.gemm;
    x.activations = p.activations;
    x.quantized = is_quantized(p.gemm);
    if (x.quantized) x.recipe = p.fp8_recipe ? *p.fp8_recipe : effective_fp8_recipe(c).value_or(Fp8Recipe::delayed);
    // Attention matmuls: FP8 recipes keep attention in bf16 (Transformer Engine runs DotProductAttention
    // in bf16/fp16 unless fp8_dpa); fp32/tf32 run it in their own dtype.
    x.attention = x.quantized ? (c.gpu.supports(DType::bf16) ? DType::bf16 : DType::fp16) : p.gemm;
    // Fused flash attention exists for fp16/bf16 only (Dao et al. 2022, arXiv 2205.14135; FA2 2307.08691).
    // Relative-position scores (Transformer-XL) need the materialised score matrix.
    x.flash = c.training.flash_attention && (x.attention == DType::fp16 || x.attention == DType::bf16) && !c.model.relative_position;
    x.w_act = dtype_storage_bytes(p.activations);
    x.w_gemm = dtype_storage_bytes(p.gemm);
    x.w_attn = dtype_storage_bytes(x.attention);
    x.w_param = dtype_storage_bytes(p.params);
    x.w_grad = dtype_storage_bytes(p.grads);
    x.autocast = p.autocast;
    return x;
}

const PrecisionSpec& blind_precision(const GpuSpec& gpu) {
    auto make = [](DType ref) {
        PrecisionSpec p;
        p.name = "precision-blind";
        p.gemm = p.activations = p.params = p.grads = p.grad_reduce = p.optimizer_states = ref;
        p.master_weights = MasterWeights::none;
        p.loss_scaling = LossScaling::none;
        p.autocast = false;
        return p;
    };
    static const PrecisionSpec bf16 = make(DType::bf16), fp16 = make(DType::fp16);
    return reference_dtype(gpu) == DType::bf16 ? bf16 : fp16;
}

int64_t micro_batch_count(const Config& c) {
    const int64_t per_step = std::max<int64_t>(c.training.micro_batch, 1) * std::max<int64_t>(c.parallel.dp, 1);
    return std::max<int64_t>(c.training.global_batch / per_step, 1);
}

double price_per_gpu_hour_usd(const Config& c) {
    return c.training.price_per_gpu_hour_usd >= 0 ? c.training.price_per_gpu_hour_usd : c.gpu.price_per_gpu_hour_usd;
}

namespace {

// The rate of a run's FP8 GEMM kernel relative to the fp8 figure: rowwise scales run their own
// kernel (calibration fp8_rowwise_gemm).
double fp8_kernel_rate(const Config& c, const Calibration& cal) {
    return !cal.precision_blind && effective_fp8_recipe(c) == Fp8Recipe::rowwise ? cal.fp8_rowwise_gemm : 1.0;
}

// The given calibration with the FP8 GEMM figure at the run's kernel rate, when that differs.
std::optional<Calibration> at_fp8_kernel_rate(const Config& c, const Calibration& cal) {
    const double rate = fp8_kernel_rate(c, cal);
    if (rate == 1.0) return std::nullopt;
    Calibration out = cal;
    out.gemm_efficiency[size_t(DType::fp8)] *= rate;
    return out;
}

}  // namespace

Execution::Execution(const Config& c)
    : resolved_(resolve_calibration(c.gpu, c.calibration, c.training.attention_kernel, &c.framework)), cal(*resolved_) {
    resolved_->gemm_efficiency[size_t(DType::fp8)] *= fp8_kernel_rate(c, *resolved_);
    derive(c);
}

Execution::Execution(const Config& c, const Calibration& calibration)
    : resolved_(at_fp8_kernel_rate(c, calibration)), cal(resolved_ ? *resolved_ : calibration) {
    derive(c);
}

void Execution::derive(const Config& c) {
    Execution& x = *this;
    x.config = &c;
    x.costed = cal.precision_blind ? &blind_precision(c.gpu) : &c.precision;
    x.ops = op_precision(c, x.precision());
    x.stored = cal.precision_blind ? op_precision(c, c.precision) : x.ops;

    PipelineShape& shape = x.shape;
    shape.schedule = c.parallel.schedule;
    shape.stages = std::max<int64_t>(c.parallel.pp, 1);
    shape.micro_batches = micro_batch_count(c);
    shape.chunks = shape.schedule == PipelineSchedule::interleaved ? std::max<int64_t>(c.parallel.virtual_stages, 1) : 1;
    if (shape.schedule == PipelineSchedule::interleaved && !interleaving_possible(shape)) {
        x.interleave_fallback = shape.stages > 1 && shape.chunks > 1;
        shape.schedule = PipelineSchedule::one_f_one_b;
        shape.chunks = 1;
    }
    x.stages = shape.stages;
    x.chunks = shape.chunks;
    x.virtual_stages = shape.stages * shape.chunks;
    x.micro_batches = shape.micro_batches;
    x.layers = total_layers(c.model);
    x.stage_split = c.parallel.stage_split;
    x.layout.clear();
    x.mtp_virtual_stage = x.virtual_stages - 1;
    if (!x.stage_split.pipeline_layout.empty()) {
        // Validated: one entry per virtual stage. Interleaving that Megatron cannot run (the fallback
        // above) cannot arise with a layout (micro_batch_rule), so a mismatch keeps the even split.
        auto parsed = parse_pipeline_layout(x.stage_split.pipeline_layout);
        if (parsed && int64_t(parsed.value().size()) == x.virtual_stages)
            x.layout = std::move(parsed).value();
        else
            x.stage_split.pipeline_layout.clear();
        for (int64_t j = 0; j < int64_t(x.layout.size()); ++j)
            if (x.layout[size_t(j)].mtp > 0) x.mtp_virtual_stage = j;
    }

    const ModelSpec& m = c.model;
    x.tp = double(std::max<int64_t>(c.parallel.tp, 1));
    x.cp = double(std::max<int64_t>(c.parallel.cp, 1));
    x.ep = double(std::max<int64_t>(c.parallel.ep, 1));
    x.etp = double(c.parallel.etp());
    x.micro_batch = double(std::max<int64_t>(c.training.micro_batch, 1));
    x.seq_len = double(std::max<int64_t>(c.training.seq_len, 1));
    x.s_q = x.seq_len / x.cp;
    x.tokens = x.micro_batch * x.s_q;
    x.sp = c.parallel.sequence_parallel && c.parallel.tp > 1;
    x.tokens_sp = x.sp ? x.tokens / x.tp : x.tokens;
    x.hidden = double(m.hidden);
    x.head_dim = double(m.effective_head_dim());
    x.heads_local = double(m.heads) / x.tp;
    x.kv_heads_local = std::max(double(m.kv_heads > 0 ? m.kv_heads : m.heads) / x.tp, 1.0);
    x.vocab_local = double(m.vocab) / x.tp;
    x.logits_local = double(m.softmax_head > 0 ? m.softmax_head : m.vocab) / x.tp;
    x.memory_len = double(m.memory_len);
    x.relative = m.relative_position;
    x.gated = gated_mlp(m.activation);
    x.mla = m.mla.enabled();
    x.head_dim_qk = x.mla ? double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : x.head_dim;
    x.head_dim_v = x.mla ? double(m.mla.v_head_dim) : x.head_dim;
    x.expert_load = expert_load_factor(m, c.parallel);
    x.recompute = c.training.recompute;
    x.sac_saves_matmuls = x.recompute == Recompute::selective && c.framework.selective_saves_matmuls;
    x.op_level_sac = (x.recompute == Recompute::selective && c.framework.op_level_sac) || x.sac_saves_matmuls;
    // TorchInductor lowers pointwise ops and reductions to Triton kernels and fuses producer-consumer
    // chains of them into one kernel per fusion group, GEMMs staying library calls (Ansel et al.,
    // "PyTorch 2", ASPLOS 2024, sec. 5): an eager RMSNorm's pow/mean/rsqrt/mul chain, scale + mask +
    // softmax and dropout + residual add become one kernel each, and the residual add feeds the norm
    // after it in the same kernel (its sum is written once for the residual stream, not read back).
    x.fused_norms = c.framework.fused_norms || c.training.compile;
    x.fused_elementwise = c.framework.fused_elementwise || c.training.compile;
    x.norm_in_residual = c.training.compile;
    x.cuda_graphs = c.training.cuda_graphs;
    const FinetuneSpec& ft = c.training.finetune;
    x.train_weights = !ft.adapters();
    x.nf4 = ft.method == FinetuneMethod::qlora;
    x.lora_rank = ft.adapters() ? double(ft.lora_rank) : 0;
    x.lora_mlp = ft.lora_targets == LoraTargets::all_linear;

    x.gpus = double(std::max<int64_t>(c.num_gpus, 1));
    x.price_per_gpu_hour_usd = trainclock::price_per_gpu_hour_usd(c);
    // Energy at board power (TDP) times the node overhead (CPUs, NICs, fans).
    x.power_w = x.gpus * c.gpu.tdp_w * (c.node.power_overhead > 0 ? c.node.power_overhead : 1.0);
}

}  // namespace trainclock
