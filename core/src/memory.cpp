// trainclock: memory per GPU (memory.hpp).
#include "trainclock/memory.hpp"

#include <algorithm>
#include <array>

namespace trainclock {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double layer_activation_bytes(const Config& c, LayerKind kind, Recompute recompute);

struct StageState {
    double dense_params = 0, expert_params = 0;  // held by one GPU of the stage (TP/EP-sharded)
    double trainable_dense = 0, trainable_expert = 0;  // of which get gradients and optimizer states (+ LoRA adapters)
    double nf4_params = 0;                       // of which stored as NF4 (QLoRA)
    double activations = 0;
    double zero3_gather = 0;                     // largest gathered layer (ZeRO-3 prefetch buffer)
};

StageState stage_state(const Config& c, const PipelineShape& sh, int64_t stage) {
    StageState st;
    const ModelSpec& m = c.model;
    const int64_t p = std::max<int64_t>(sh.stages, 1);
    const int64_t v = sh.schedule == PipelineSchedule::interleaved ? std::max<int64_t>(sh.chunks, 1) : 1;
    const int64_t layers = total_layers(m);
    const double t = double(std::max<int64_t>(c.parallel.tp, 1));
    const double w_act = dtype_storage_bytes(c.precision.activations);
    // Activations of one micro-batch through this stage's chunk(s); units in flight from the schedule.
    double act_per_chunk = 0, layer_count = 0;
    struct PerKind {  // memo per layer kind (layer_kind_slot)
        bool known = false;
        double params = 0, experts = 0, activations = 0, trainable = 0, adapters = 0, nf4 = 0;
    };
    std::array<PerKind, kLayerKindSlots> memo{};
    const bool adapters = c.training.finetune.adapters();
    auto per_kind = [&](LayerKind kind) -> const PerKind& {
        PerKind& k = memo[size_t(layer_kind_slot(kind))];
        // A frozen leading layer runs forward without autograd: it keeps no activations.
        if (!k.known) k = {true, layer_params_local(c, kind), layer_expert_params_local(c, kind),
                           kind.frozen ? 0.0 : activation_bytes_per_layer(c, kind), layer_trainable_params_local(c, kind),
                           layer_adapter_params_local(c, kind), layer_nf4_params_local(c, kind)};
        return k;
    };
    auto add_layers = [&](const PerKind& k, double n) {
        st.dense_params += n * (k.params - k.experts + k.adapters);
        st.expert_params += n * k.experts;
        st.nf4_params += n * k.nf4;
        // LoRA adapters count as dense (replicated over the expert-DP group as well).
        st.trainable_dense += n * (adapters ? k.trainable : k.trainable - (k.trainable > 0 ? k.experts : 0));
        st.trainable_expert += n * (adapters || k.trainable == 0 ? 0 : k.experts);
    };
    for (int64_t chunk = 0; chunk < v; ++chunk) {
        const LayerRange r = virtual_stage_layers(layers, p * v, chunk * p + stage);
        for (int64_t i = r.first; i < r.first + r.count;) {
            const LayerKind kind = layer_kind_at(c, i);
            const double n = double(layer_kind_run_end(c, i, r.first + r.count) - i);
            const PerKind& k = per_kind(kind);
            add_layers(k, n);
            st.zero3_gather = std::max(st.zero3_gather, k.params);
            act_per_chunk += n * k.activations;
            layer_count += n;
            i += int64_t(n);
        }
    }
    act_per_chunk /= double(v);
    double units = 1;  // the last stage finishes each micro-batch's forward before the next
    if (stage == 0) units = double(stage0_units_in_flight(sh));
    else if (sh.schedule == PipelineSchedule::gpipe) units = double(sh.micro_batches);
    const double cp = double(std::max<int64_t>(c.parallel.cp, 1));
    const double tokens = double(c.training.micro_batch) * double(c.training.seq_len) / cp;
    const bool sp = c.parallel.sequence_parallel && c.parallel.tp > 1;
    st.activations = units * act_per_chunk;
    if (c.training.recompute == Recompute::full && layer_count > 0) {
        // The layer being recomputed holds its full activations during its backward.
        st.activations += layer_activation_bytes(c, layer_kind_at(m, 0), Recompute::none);
    }
    const double vocab_l = double(m.vocab) / t;
    if (stage == 0) {  // embedding output + dropout mask per in-flight micro-batch
        st.dense_params += vocab_l * double(m.hidden);
        if (embedding_trains(c)) st.trainable_dense += vocab_l * double(m.hidden);
        st.activations += units / double(v) * tokens * double(m.hidden) * (w_act + 1) / (sp ? t : 1.0);
    }
    if (stage == p - 1) {
        // LM head (a second copy when tied and PP > 1, Megatron keeps both ends in sync) and the fp32
        // softmax plus the logits of one micro-batch kept by the vocab-parallel cross-entropy.
        if (!m.tied_embeddings || p > 1) {
            st.dense_params += vocab_l * double(m.hidden);
            if (head_trains(c)) st.trainable_dense += vocab_l * double(m.hidden);
        }
        const double logits_l = double(m.softmax_head > 0 ? m.softmax_head : m.vocab) / t;  // adaptive softmax: head cluster
        st.activations += tokens * logits_l * (4.0 + w_act);
        if (m.mtp_layers > 0) {
            // MTP modules (arXiv 2412.19437 sec. 2.2): a layer of the last layer's kind, the projection
            // (its 2h input kept) and a second set of logits each, for every micro-batch in flight.
            const PerKind& k = per_kind(layer_kind_at(m, m.layers - 1));
            const double n = double(m.mtp_layers);
            add_layers(k, n);
            st.dense_params += n * double(mtp_extra_parameter_count(m)) / t;
            if (!adapters) st.trainable_dense += n * double(mtp_extra_parameter_count(m)) / t;
            st.activations += n * units * (k.activations + tokens * 2 * double(m.hidden) * w_act / (sp ? t : 1.0));
            st.activations += n * tokens * logits_l * (4.0 + w_act);
        }
    }
    return st;
}

double layer_activation_bytes(const Config& c, LayerKind kind, Recompute recompute) {
    const ModelSpec& m = c.model;
    const PrecisionSpec& p = c.precision;
    const double t = double(std::max<int64_t>(c.parallel.tp, 1));
    const double cp = double(std::max<int64_t>(c.parallel.cp, 1));
    const double b = double(c.training.micro_batch), s_kv = double(c.training.seq_len), s = s_kv / cp;
    const double T = b * s, h = double(m.hidden), hd = double(m.effective_head_dim());
    const bool sp = c.parallel.sequence_parallel && c.parallel.tp > 1;
    const double T_sp = sp ? T / t : T;
    const double w = dtype_storage_bytes(p.activations);
    // FP8 (Transformer Engine) saves GEMM inputs in FP8 for the backward pass.
    const bool quantized = p.gemm == DType::fp8 || p.gemm == DType::mxfp8 || p.gemm == DType::nvfp4;
    const double w_in = quantized ? dtype_storage_bytes(p.gemm) : w;
    if (recompute == Recompute::full) return T_sp * h * w;  // only the layer input (Korthikanti 2sbh)
    const double heads_l = double(m.heads) / t;
    const double kv_l = std::max(double(m.kv_heads > 0 ? m.kv_heads : m.heads) / t, 1.0);
    const DType attn = quantized ? DType::bf16 : p.gemm;
    const bool flash = c.training.flash_attention && (attn == DType::fp16 || attn == DType::bf16);
    // Korthikanti sec. 4.1 term by term, generalised to GQA, head_dim, gated MLPs and dtype widths:
    // attention block: norm input, QKV input, Q and K, V, (softmax output, dropout mask, dropout
    // output: 5 a s^2 b), projection input, dropout mask; MLP block: norm input, MLP input, up output,
    // activation output, dropout mask.
    const MlaSpec& mla = m.mla;
    auto attention = [&](bool cross) {
        double bytes = T_sp * h * w + T_sp * h * w_in + T * (heads_l + kv_l) * hd * w + T * kv_l * hd * w
                       + T * heads_l * hd * w_in + T_sp * h;
        if (mla.enabled() && !cross) {
            // MLA (DeepSeek-V2 sec. 2.1): norm input, down-projection input, the latents before and
            // after their norms (the latent KV c^KV and c^Q, up-projection inputs), the shared RoPE key,
            // the up-projected Q, K (d_h + d_h^R) and V (d_v), the output-projection input, dropout mask.
            const double ql = double(mla.q_lora_rank), kvl = double(mla.kv_lora_rank), rope = double(mla.qk_rope_head_dim);
            const double dqk = double(mla.qk_nope_head_dim) + rope, dv = double(mla.v_head_dim);
            bytes = T_sp * h * w + T_sp * h * w_in + T * (ql + kvl) * (w + w_in) + T * rope * w
                    + T * heads_l * (2 * dqk + dv) * w + T * heads_l * dv * w_in + T_sp * h;
        }
        if (cross) bytes += T * h * w_in;  // encoder output feeding K/V
        if (!flash && recompute != Recompute::selective) bytes += b * heads_l * s * s_kv * (2 * w + 1);
        return bytes;
    };
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    const double up = gated ? 2.0 : 1.0;
    double mlp = T_sp * h * w + T_sp * h * w_in + T_sp * h;  // norm input, MLP input, dropout mask
    if (kind.moe) {
        // Routed tokens on the busiest EP rank (imbalance, capacity: expert_load_factor).
        const double k = double(std::max<int64_t>(m.moe.top_k, 1)) * expert_load_factor(m, c.parallel), f = double(m.moe.expert_ffn_hidden) / t;
        mlp += T * k * h * w_in + T * k * f * (up * w + w_in);  // permuted tokens, expert up output, activation output
        if (m.moe.shared_experts > 0) mlp += T * f * double(m.moe.shared_experts) * (up * w + w_in);
        mlp += T * double(m.moe.experts) * 4;  // router probabilities (fp32)
    } else {
        const double f = double(m.ffn_hidden) / t;
        mlp += T * f * (up * w + w_in);
    }
    return attention(false) + (kind.cross_attention ? attention(true) : 0) + mlp;
}

} // namespace

double activation_bytes_per_layer(const Config& c, LayerKind kind) {
    return layer_activation_bytes(c, kind, c.training.recompute);
}

MemoryBreakdown memory_per_gpu(const Config& c, const PipelineShape& sh) {
    const PrecisionSpec& p = c.precision;
    const double dp = double(c.parallel.weight_replicas()), edp = double(c.parallel.expert_weight_replicas());
    const int64_t zero = c.parallel.zero;
    const bool master = p.master_weights == MasterWeights::fp32 && p.params != DType::fp32;
    const double state_bytes = optimizer_state_bytes_per_param(c.training, p);
    MemoryBreakdown best;
    const int64_t last = std::max<int64_t>(sh.stages, 1) - 1;
    for (int64_t stage : {int64_t(0), last}) {
        const StageState st = stage_state(c, sh, stage);
        const double all = st.dense_params + st.expert_params;
        // ZeRO (Rajbhandari et al. 2020, fig. 1): stage 1 shards optimizer states (and the fp32
        // master copy), 2 also gradients, 3 also the weights, over the ranks holding the same weights.
        const double sharded = st.dense_params / dp + st.expert_params / edp;
        // Only trainable weights have gradients, a master copy and optimizer states; QLoRA keeps the
        // frozen linear weights as NF4.
        const double trainable = st.trainable_dense + st.trainable_expert;
        const double trainable_sharded = st.trainable_dense / dp + st.trainable_expert / edp;
        const double weight_bytes = (all - st.nf4_params) * dtype_storage_bytes(p.params) + st.nf4_params * kNf4BytesPerParam;
        MemoryBreakdown mem;
        mem.weights_gib = (zero >= 3 ? sharded / std::max(all, 1.0) : 1.0) * weight_bytes / kGiB;
        mem.grads_gib = (zero >= 2 ? trainable_sharded : trainable) * dtype_storage_bytes(p.grads) / kGiB;
        mem.master_gib = master ? (zero >= 1 ? trainable_sharded : trainable) * 4.0 / kGiB : 0;
        mem.optimizer_gib = (zero >= 1 ? trainable_sharded : trainable) * state_bytes / kGiB;
        mem.activations_gib = st.activations / kGiB;
        // CUDA context, cuBLAS workspace, NCCL buffers and allocator slack: ~1 GiB (physical default);
        // ZeRO-3 also holds two gathered layers (current + prefetch).
        mem.other_gib = 1.0 + (zero >= 3 ? 2 * st.zero3_gather * dtype_storage_bytes(p.params) / kGiB : 0);
        mem.per_gpu_gib = mem.weights_gib + mem.grads_gib + mem.master_gib + mem.optimizer_gib + mem.activations_gib
                          + mem.other_gib;
        if (mem.per_gpu_gib > best.per_gpu_gib) best = mem;
    }
    best.capacity_gib = c.gpu.memory_gib;
    best.fits = best.per_gpu_gib <= best.capacity_gib;
    return best;
}

} // namespace trainclock
