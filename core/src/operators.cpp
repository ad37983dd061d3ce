// trainclock: operator lists of one micro-batch and their roofline costs (operators.hpp).
//
// Index
//   [SECTION] Context: per-GPU shapes and dtype widths of one micro-batch
//   [SECTION] Building blocks: linear layers with their precision ops, norms, attention, MLPs
//   [SECTION] Pieces: transformer layer, embedding, LM head, optimizer step
//   [SECTION] Cost: dtype fallback, GEMM shape efficiency, roofline
//
// Conventions: T = tokens of one micro-batch on this GPU (b s / cp); TP splits heads and the MLP
// width (Megatron-LM, Shoeybi et al. 2019, arXiv 1909.08053); with sequence parallelism the norms,
// dropouts and residuals work on T / tp tokens (Korthikanti et al. 2022, arXiv 2205.05198, sec. 4.2.2).
// A GEMM of m x k by k x n costs 2mnk FLOPs; backward = dgrad + wgrad = 2x forward (Narayanan et al.
// SC'21, arXiv 2104.04473, sec. 3.5). Bytes are HBM traffic at each tensor's dtype width.
#include "trainclock/operators.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trainclock {
namespace {

// =====================================================================================
// [SECTION] Context: per-GPU shapes and dtype widths of one micro-batch
// =====================================================================================

enum class Phase { forward, backward };

struct Ctx {
    const Config* config = nullptr;
    double b = 1, s_q = 1, s_kv = 1, T = 1, T_sp = 1, t = 1;
    double h = 0, hd = 0, heads_l = 0, kv_l = 0, vocab_l = 0;
    double hd_qk = 0, hd_v = 0;  // per-head widths of Q/K and V inside attention (differ under MLA)
    DType gemm = DType::bf16, act = DType::bf16, attn = DType::bf16;
    double w_act = 2, w_gemm = 2, w_param = 2, w_grad = 4, w_attn = 2;
    double mem = 0;  // Transformer-XL memory tokens per sample (model.memory_len)
    bool flash = true, autocast = false, quantized = false, sp = false, relative = false;
    bool local = false;  // the layer being built attends locally (LayerKind::local)
    Recompute recompute = Recompute::none;
    // Fine-tuning (training.finetune): whether linear weights get gradients, and the adapters.
    bool train_weights = true;       // false: frozen base (LoRA/QLoRA), no weight-gradient GEMM
    bool nf4 = false;                // QLoRA: the frozen linear weights are NF4, dequantised per GEMM
    double lora_rank = 0;            // adapters beside the linear layers (0 = none)
    bool lora_mlp = false;           // adapters on the MLP too (lora_targets all-linear)
};

bool is_quantized(DType d) { return d == DType::fp8 || d == DType::mxfp8 || d == DType::nvfp4; }

Ctx make_ctx(const Config& c, const PrecisionSpec& p) {
    Ctx x;
    x.config = &c;
    const ModelSpec& m = c.model;
    const double cp = double(std::max<int64_t>(c.parallel.cp, 1));
    x.t = double(std::max<int64_t>(c.parallel.tp, 1));
    x.b = double(std::max<int64_t>(c.training.micro_batch, 1));
    x.s_kv = double(std::max<int64_t>(c.training.seq_len, 1));
    x.s_q = x.s_kv / cp;  // context parallelism splits the queries; K/V circulate (ring attention)
    x.T = x.b * x.s_q;
    x.sp = c.parallel.sequence_parallel && c.parallel.tp > 1;
    x.T_sp = x.sp ? x.T / x.t : x.T;
    x.h = double(m.hidden);
    x.hd = double(m.effective_head_dim());
    x.heads_l = double(m.heads) / x.t;
    x.kv_l = std::max(double(m.kv_heads > 0 ? m.kv_heads : m.heads) / x.t, 1.0);  // KV heads replicate when kv < tp
    // MLA: queries and keys carry d_h + d_h^R per head, values d_v (DeepSeek-V2 eqs. 16-18).
    x.hd_qk = m.mla.enabled() ? double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : x.hd;
    x.hd_v = m.mla.enabled() ? double(m.mla.v_head_dim) : x.hd;
    x.vocab_l = double(m.softmax_head > 0 ? m.softmax_head : m.vocab) / x.t;  // logits actually computed
    x.mem = double(m.memory_len);
    x.relative = m.relative_position;
    x.gemm = p.gemm;
    x.act = p.activations;
    x.quantized = is_quantized(p.gemm);
    // Attention matmuls: FP8 recipes keep attention in bf16 (Transformer Engine runs DotProductAttention
    // in bf16/fp16 unless fp8_dpa); fp32/tf32 run it in their own dtype.
    x.attn = x.quantized ? (c.gpu.supports(DType::bf16) ? DType::bf16 : DType::fp16) : p.gemm;
    // Fused flash attention exists for fp16/bf16 only (Dao et al. 2022, arXiv 2205.14135; FA2 2307.08691).
    // Relative-position scores (Transformer-XL) need the materialised score matrix.
    x.flash = c.training.flash_attention && (x.attn == DType::fp16 || x.attn == DType::bf16) && !x.relative;
    x.w_act = dtype_storage_bytes(p.activations);
    x.w_gemm = dtype_storage_bytes(p.gemm);
    x.w_attn = dtype_storage_bytes(x.attn);
    x.w_param = dtype_storage_bytes(p.params);
    x.w_grad = dtype_storage_bytes(p.grads);
    x.autocast = p.autocast;
    x.recompute = c.training.recompute;
    const FinetuneSpec& ft = c.training.finetune;
    x.train_weights = !ft.adapters();
    x.nf4 = ft.method == FinetuneMethod::qlora;
    x.lora_rank = ft.adapters() ? double(ft.lora_rank) : 0;
    x.lora_mlp = ft.lora_targets == LoraTargets::all_linear;
    return x;
}

struct Target {  // where a block emits its ops
    OpList& ops;
    CommList& comm;
};

Op make_op(const char* name, OpKind kind, DType dtype, double flops, double bytes, double count = 1) {
    Op op{};
    op.name = name;
    op.kind = kind;
    op.dtype = dtype;
    op.flops = flops;
    op.bytes = bytes;
    op.count = count;
    return op;
}

Op make_gemm(const char* name, OpKind kind, DType dtype, double m, double n, double k, double bytes, double count) {
    Op op = make_op(name, kind, dtype, 2.0 * m * n * k, bytes, count);
    op.m = m;
    op.n = n;
    op.k = k;
    return op;
}

void add_comm(Target& out, const char* name, Collective collective, Group group, double bytes, double count = 1) {
    CommOp op{};
    op.name = name;
    op.collective = collective;
    op.group = group;
    op.bytes = bytes;
    op.count = count;
    out.comm.add(op);
}

// =====================================================================================
// [SECTION] Building blocks: linear layers with their precision ops, norms, attention, MLPs
// =====================================================================================

// Separate projections a fused GEMM stands for, each with its own adapter (HF q/k/v_proj, gate/up_proj).
double fused_parts(const ModelSpec& m, const char* name) {
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    if (std::strcmp(name, "qkv") == 0) return 3;
    if (std::strcmp(name, "kv") == 0) return 2;
    if (std::strcmp(name, "mlp_up") == 0 && gated) return 2;
    return 1;
}

// LoRA beside a frozen k x n weight (Hu et al. 2021 eq. 3: h = W0 x + B A x, A r x k, B n x r), one
// adapter per fused part: forward x A (parts A's side by side) then (x A) B (block-diagonal B's: m n r
// FLOPs); backward dgrad and wgrad of both (PEFT runs them as plain GEMMs).
void lora_adapter(const Ctx& x, Target& out, Phase phase, double m, double k, double n, double count, double parts) {
    const double r = x.lora_rank, ra = parts * r, wa = x.w_act, wp = x.w_param, wgr = x.w_grad;
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("lora_a", OpKind::gemm, x.act, m, ra, k, (m * k + k * ra) * wa + m * ra * wa, count));
        out.ops.add(make_gemm("lora_b", OpKind::gemm, x.act, m, n, r, (m * ra + r * n) * wa + m * n * wa, count));
        return;
    }
    out.ops.add(make_gemm("lora_b_dgrad", OpKind::gemm, x.act, m, r, n, (m * n + n * r) * wa + m * ra * wa, count));
    out.ops.add(make_gemm("lora_b_wgrad", OpKind::gemm, x.act, r, n, m, (m * ra + m * n) * wa + r * n * (wp + wgr), count));
    out.ops.add(make_gemm("lora_a_dgrad", OpKind::gemm, x.act, m, k, ra, (m * ra + ra * k) * wa + m * k * wa, count));
    out.ops.add(make_gemm("lora_a_wgrad", OpKind::gemm, x.act, k, ra, m, (m * k + m * ra) * wa + k * ra * (wp + wgr), count));
}

// y[m x n] = x[m x k] W[k x n], `count` independent copies (experts). `after_norm`: the input comes
// from an fp32 op under autocast (norms are on torch.autocast's fp32 list) and is cast first.
void linear(const Ctx& x, Target& out, Phase phase, const char* name, double m, double k, double n, double count,
            bool after_norm) {
    const double wg = x.w_gemm;
    // Transformer-block weights only: the LM head and MTP projection keep plain frozen weights and no adapters.
    const bool block = std::strcmp(name, "lm_head") != 0 && std::strcmp(name, "mtp_proj") != 0;
    if (x.nf4 && block)  // bitsandbytes matmul_4bit: dequantize_4bit to the compute dtype, then a plain GEMM (forward and dgrad)
        out.ops.add(make_op("nf4_dequantize", OpKind::precision_overhead, x.act, 0, k * n * (kNf4BytesPerParam + wg), count));
    if (x.lora_rank > 0 && block && (x.lora_mlp || std::strncmp(name, "mlp_", 4) != 0))
        lora_adapter(x, out, phase, m, k, n, count, fused_parts(x.config->model, name));
    if (phase == Phase::forward) {
        if (x.autocast) {
            // torch.autocast re-casts fp32 weights to the half dtype in every forward (the cast cache
            // lives for one autocast region), and casts fp32 inputs at op boundaries.
            out.ops.add(make_op("autocast_weight_cast", OpKind::precision_overhead, x.act, 0, k * n * (x.w_param + wg), count));
            if (after_norm) out.ops.add(make_op("autocast_input_cast", OpKind::precision_overhead, x.act, 0, m * k * (4.0 + wg), count));
        }
        if (x.quantized) {
            // Transformer Engine: cast + transpose (+ amax) of the input and of the weight for every
            // micro-batch (TE fp8 docs: FP8 GEMM operands need both layouts for fprop and wgrad).
            out.ops.add(make_op("fp8_input_cast_transpose", OpKind::precision_overhead, x.act, 0, m * k * (x.w_act + 2 * wg), count));
            out.ops.add(make_op("fp8_weight_cast_transpose", OpKind::precision_overhead, x.act, 0, k * n * (x.w_param + 2 * wg), count));
        }
        out.ops.add(make_gemm(name, OpKind::gemm, x.gemm, m, n, k, (m * k + k * n) * wg + m * n * x.w_act, count));
        return;
    }
    if (x.quantized)  // output gradient to FP8 (e5m2) in both layouts for dgrad and wgrad
        out.ops.add(make_op("fp8_grad_cast_transpose", OpKind::precision_overhead, x.act, 0, m * n * (x.w_act + 2 * wg), count));
    out.ops.add(make_gemm("dgrad", OpKind::gemm, x.gemm, m, k, n, (m * n + n * k) * wg + m * k * x.w_act, count));
    if (!x.train_weights) return;  // frozen weight: no gradient (autograd skips W.grad)
    // wgrad accumulates into the main gradient buffer (Megatron gradient-accumulation fusion).
    out.ops.add(make_gemm("wgrad", OpKind::gemm, x.gemm, k, n, m, (m * k + m * n) * wg + 2 * k * n * x.w_grad, count));
    if (x.autocast)  // half wgrad cast to the fp32 .grad of the fp32 parameter
        out.ops.add(make_op("autocast_grad_cast", OpKind::precision_overhead, x.act, 0, k * n * (wg + x.w_grad), count));
}

// LayerNorm / RMSNorm over `tokens` x h: read input, write output (fp32 under autocast); backward
// reads the gradient and the saved input and writes the input gradient.
void norm(const Ctx& x, Target& out, Phase phase, double tokens) {
    const double e = tokens * x.h;
    const double w_out = x.autocast ? 4.0 : x.w_act;
    if (phase == Phase::forward) out.ops.add(make_op("norm", OpKind::elementwise, x.act, 0, e * (x.w_act + w_out)));
    else out.ops.add(make_op("norm_bwd", OpKind::elementwise, x.act, 0, e * 3 * x.w_act));
}

// Dropout + residual add (1-byte mask, Korthikanti et al. 2022 sec. 4.1).
void dropout_residual(const Ctx& x, Target& out, Phase phase) {
    const double e = x.T_sp * x.h;
    out.ops.add(make_op(phase == Phase::forward ? "dropout_residual" : "dropout_residual_bwd", OpKind::elementwise,
                        x.act, 0, e * (3 * x.w_act + 1)));
}

// TP collectives of one block (Megatron f/g operators): forward all-reduce after the row-parallel
// GEMM; with sequence parallelism an all-gather before the block and a reduce-scatter after it
// (Korthikanti et al. 2022, sec. 4.2.2). Backward mirrors them.
void tp_block_comm(const Ctx& x, Target& out, double tokens) {
    if (x.t <= 1) return;
    const double bytes = tokens * x.h * x.w_act;
    if (x.sp) {
        add_comm(out, "tp_all_gather", Collective::all_gather, Group::tp, bytes);
        add_comm(out, "tp_reduce_scatter", Collective::reduce_scatter, Group::tp, bytes);
    } else {
        add_comm(out, "tp_all_reduce", Collective::all_reduce, Group::tp, bytes);
    }
}

// Keys per query of causal self-attention: s_kv / 2, or the local closed form (attended_keys).
double attended_local_or_causal(const Ctx& x, double s_kv) {
    LayerKind kind;
    kind.local = x.local;
    return attended_keys(x.config->model, kind, s_kv);
}

// Attention core for queries of `s_q` and keys of `s_kv` tokens.
void attention_core(const Ctx& x, Target& out, Phase phase, double s_kv, bool causal) {
    const double bh = x.b * x.heads_l;
    const double q_bytes = x.T * x.heads_l * x.hd_qk * x.w_attn;
    const double io = q_bytes + x.T * x.heads_l * x.hd_v * x.w_attn + x.b * s_kv * x.kv_l * (x.hd_qk + x.hd_v) * x.w_attn;  // read Q, K, V; write O
    if (x.flash) {
        // FlashAttention: 2 b h s_q keys (d_qk + d_v) FLOPs forward (QK^T and PV), keys = s_kv, s_kv / 2
        // when causal (masked blocks skipped), the window on local layers (attended_keys); backward
        // recomputes P and runs 5 matmuls: 2.5x forward (Dao 2023, sec. 3).
        const double keys = causal ? attended_local_or_causal(x, s_kv) : s_kv;
        const double f = 2.0 * bh * x.s_q * keys * (x.hd_qk + x.hd_v);
        if (phase == Phase::forward) out.ops.add(make_op("flash_attention", OpKind::attention, x.attn, f, io));
        else out.ops.add(make_op("flash_attention_bwd", OpKind::attention, x.attn, 2.5 * f, 2 * io + q_bytes));
        return;
    }
    // Materialised attention (Vaswani et al. 2017): batched QK^T, scale-mask-softmax and dropout over
    // the s_q x s_kv score matrix (memory-bound), batched PV. The full matrix is computed even when causal.
    const double scores = bh * x.s_q * s_kv;
    const double wa = x.w_attn;
    const double w_soft = x.autocast ? 4.0 : x.w_act;  // softmax is on autocast's fp32 list
    // Transformer-XL relative attention (Dai et al. 2019 sec. 3.3; reference code kimiyoung/transformer-xl
    // pytorch/mem_transformer.py RelPartialLearnableMultiHeadAttn, which NVIDIA's DeepLearningExamples
    // version keeps): besides the content scores AC a position projection r_net (s_kv x h x h, shared by
    // the batch), the position scores BD (a second QK^T-sized matmul), _rel_shift (zero-pad concat and
    // a strided copy: read + write of the padded matrix), then AC + BD (read 2, write 1), scale and
    // mask as separate passes (read 1, write 1 each). Backward mirrors the matmuls and copies.
    const double w_s = x.w_act;
    if (x.relative && phase == Phase::forward) {
        out.ops.add(make_gemm("rel_pos_proj", OpKind::gemm, x.gemm, s_kv, x.heads_l * x.hd, x.h,
                              s_kv * x.h * 2 * x.w_gemm + s_kv * x.heads_l * x.hd * x.w_act, 1));
        out.ops.add(make_gemm("attn_pos_scores", OpKind::attention, x.attn, x.s_q, s_kv, x.hd,
                              (x.s_q + s_kv) * x.hd * wa + x.s_q * s_kv * x.w_act, bh));
        out.ops.add(make_op("rel_shift", OpKind::elementwise, x.act, 0, scores * 3 * w_s));
        out.ops.add(make_op("score_add_scale_mask", OpKind::elementwise, x.act, 0, scores * 7 * w_s));
    }
    if (x.relative && phase == Phase::backward) {
        out.ops.add(make_op("rel_shift_bwd", OpKind::elementwise, x.act, 0, scores * 3 * w_s));
        out.ops.add(make_op("score_scale_bwd", OpKind::elementwise, x.act, 0, scores * 2 * w_s));
        out.ops.add(make_gemm("attn_pos_scores_dgrad", OpKind::attention, x.attn, x.s_q, x.hd, s_kv,
                              x.s_q * s_kv * wa + s_kv * x.hd * wa + x.s_q * x.hd * x.w_act, bh));
        out.ops.add(make_gemm("attn_pos_scores_wgrad", OpKind::attention, x.attn, s_kv, x.hd, x.s_q,
                              x.s_q * s_kv * wa + x.s_q * x.hd * wa + s_kv * x.hd * x.w_act, bh));
        out.ops.add(make_gemm("rel_pos_proj_wgrad", OpKind::gemm, x.gemm, x.h, x.heads_l * x.hd, s_kv,
                              s_kv * (x.h + x.heads_l * x.hd) * x.w_gemm + x.h * x.heads_l * x.hd * x.w_grad, 1));
    }
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("attn_scores", OpKind::attention, x.attn, x.s_q, s_kv, x.hd_qk,
                              (x.s_q + s_kv) * x.hd_qk * wa + x.s_q * s_kv * x.w_act, bh));
        out.ops.add(make_op("softmax", OpKind::elementwise, x.act, 0, scores * (x.w_act + w_soft)));
        if (x.autocast) out.ops.add(make_op("autocast_probs_cast", OpKind::precision_overhead, x.act, 0, scores * (4.0 + wa)));
        out.ops.add(make_op("attn_dropout", OpKind::elementwise, x.act, 0, scores * (2 * x.w_act + 1)));
        out.ops.add(make_gemm("attn_context", OpKind::attention, x.attn, x.s_q, x.hd_v, s_kv,
                              x.s_q * s_kv * wa + s_kv * x.hd_v * wa + x.s_q * x.hd_v * x.w_act, bh));
        return;
    }
    out.ops.add(make_gemm("attn_context_dgrad", OpKind::attention, x.attn, x.s_q, s_kv, x.hd_v,
                          (x.s_q + s_kv) * x.hd_v * wa + x.s_q * s_kv * x.w_act, bh));
    out.ops.add(make_gemm("attn_context_wgrad", OpKind::attention, x.attn, s_kv, x.hd_v, x.s_q,
                          (x.s_q * s_kv + x.s_q * x.hd_v) * wa + s_kv * x.hd_v * x.w_act, bh));
    out.ops.add(make_op("attn_dropout_bwd", OpKind::elementwise, x.act, 0, scores * (2 * x.w_act + 1)));
    out.ops.add(make_op("softmax_bwd", OpKind::elementwise, x.act, 0, scores * (2 * w_soft + x.w_act)));
    out.ops.add(make_gemm("attn_scores_dgrad", OpKind::attention, x.attn, x.s_q, x.hd_qk, s_kv,
                          x.s_q * s_kv * wa + s_kv * x.hd_qk * wa + x.s_q * x.hd_qk * x.w_act, bh));
    out.ops.add(make_gemm("attn_scores_wgrad", OpKind::attention, x.attn, s_kv, x.hd_qk, x.s_q,
                          x.s_q * s_kv * wa + x.s_q * x.hd_qk * wa + s_kv * x.hd_qk * x.w_act, bh));
}

// Attention block: [SP all-gather] norm, QKV (or Q and KV for cross-attention), core, output
// projection, [all-reduce | reduce-scatter], dropout + residual.
// MLA projections (DeepSeek-V2 eqs. 9-14 and 16-18; Megatron-Core MLASelfAttention): the down
// projections of Q and of K/V (+ the shared RoPE key) are duplicated over TP and run on the block
// input's T_sp tokens, their latents are RMS-normed and, with SP, all-gathered over TP; the up
// projections split the heads. RoPE itself is an elementwise op on q^R, k^R, not costed (as for
// every rotary model here).
void mla_projections(const Ctx& x, Target& out, Phase phase) {
    const MlaSpec& a = x.config->model.mla;
    const double ql = double(a.q_lora_rank), kvl = double(a.kv_lora_rank), rope = double(a.qk_rope_head_dim);
    auto latent_norm = [&](double width) {
        const double e = x.T * width;
        out.ops.add(make_op(phase == Phase::forward ? "mla_latent_norm" : "mla_latent_norm_bwd", OpKind::elementwise, x.act, 0,
                            e * (phase == Phase::forward ? 2 : 3) * x.w_act));
    };
    if (ql > 0) {
        linear(x, out, phase, "mla_q_down", x.T_sp, x.h, ql, 1, true);
        latent_norm(ql);
        linear(x, out, phase, "mla_q_up", x.T, ql, x.heads_l * x.hd_qk, 1, true);
    } else {
        linear(x, out, phase, "mla_q", x.T, x.h, x.heads_l * x.hd_qk, 1, true);
    }
    linear(x, out, phase, "mla_kv_down", x.T_sp, x.h, kvl + rope, 1, true);
    latent_norm(kvl);
    linear(x, out, phase, "mla_kv_up", x.T, kvl, x.heads_l * (double(a.qk_nope_head_dim) + x.hd_v), 1, true);
    if (x.sp) add_comm(out, "tp_mla_latent_all_gather", Collective::all_gather, Group::tp, x.T * (ql + kvl + rope) * x.w_act);
}

void attention_block(const Ctx& x, Target& out, Phase phase, bool causal, bool cross) {
    const double q_out = x.heads_l * x.hd, kv_out = 2 * x.kv_l * x.hd;
    if (phase == Phase::forward) norm(x, out, phase, x.T_sp);
    if (x.config->model.mla.enabled() && !cross) {
        mla_projections(x, out, phase);
        attention_core(x, out, phase, x.s_kv, causal);
        linear(x, out, phase, "attn_out", x.T, x.heads_l * x.hd_v, x.h, 1, false);
        dropout_residual(x, out, phase);
        if (phase == Phase::backward) norm(x, out, phase, x.T_sp);
        // The latents are all-gathered instead of the block input; the output is reduced as usual.
        if (x.t > 1) {
            const double bytes = x.T * x.h * x.w_act;
            if (x.sp) add_comm(out, "tp_reduce_scatter", Collective::reduce_scatter, Group::tp, bytes);
            else add_comm(out, "tp_all_reduce", Collective::all_reduce, Group::tp, bytes);
        }
        const int64_t cp = x.config->parallel.cp;
        if (cp > 1) {  // ring exchange of the up-projected K and V, as below
            const double bytes = x.b * x.s_q * x.heads_l * (x.hd_qk + x.hd_v) * x.w_act;
            add_comm(out, "cp_kv_exchange", Collective::p2p, Group::cp, bytes, double(cp - 1) * (phase == Phase::forward ? 1 : 2));
        }
        return;
    }
    if (cross) {  // Q from the decoder, K and V from the encoder output (same length here)
        linear(x, out, phase, "q", x.T, x.h, q_out, 1, true);
        linear(x, out, phase, "kv", x.T, x.h, kv_out, 1, false);
    } else {
        // Transformer-XL projects the concatenated [memory, segment] (Dai et al. 2019 eq. in sec. 3.3;
        // reference code: qkv_net(cat([mems, w]))), so Q, K and V run over b (s + memory_len) tokens.
        linear(x, out, phase, "qkv", x.T + x.b * x.mem, x.h, q_out + kv_out, 1, true);
    }
    attention_core(x, out, phase, x.s_kv + x.mem, causal && !cross);
    linear(x, out, phase, "attn_out", x.T, q_out, x.h, 1, false);
    dropout_residual(x, out, phase);
    if (phase == Phase::backward) norm(x, out, phase, x.T_sp);
    tp_block_comm(x, out, x.T);
    // Context parallelism: ring exchange of the local K/V chunk with the other cp-1 ranks forward;
    // K/V again plus dK/dV backward (Liu et al. 2023 Ring Attention; Megatron-Core CP).
    const int64_t cp = x.config->parallel.cp;
    if (cp > 1) {
        const double bytes = x.b * x.s_q * kv_out * x.w_act;
        add_comm(out, "cp_kv_exchange", Collective::p2p, Group::cp, bytes, double(cp - 1) * (phase == Phase::forward ? 1 : 2));
    }
}

// Dense MLP of width `ffn` (already TP-split) over m tokens, `count` copies (experts).
void mlp_core(const Ctx& x, Target& out, Phase phase, double m, double ffn, double count) {
    const Activation a = x.config->model.activation;
    const double up = (a == Activation::swiglu || a == Activation::geglu) ? 2.0 : 1.0;  // gate + up fused
    const double act_in = m * ffn * up, act_out = m * ffn;
    if (phase == Phase::forward) {
        linear(x, out, phase, "mlp_up", m, x.h, ffn * up, count, true);
        out.ops.add(make_op("activation", OpKind::elementwise, x.act, 0, (act_in + act_out) * x.w_act, count));
        linear(x, out, phase, "mlp_down", m, ffn, x.h, count, false);
    } else {
        linear(x, out, phase, "mlp_down", m, ffn, x.h, count, false);
        out.ops.add(make_op("activation_bwd", OpKind::elementwise, x.act, 0, (2 * act_in + act_out) * x.w_act, count));
        linear(x, out, phase, "mlp_up", m, x.h, ffn * up, count, true);
    }
}

// Routed-expert MLP (Shazeer et al. 2017; Fedus et al. 2021): router GEMM, top-k, permute, EP
// all-to-all dispatch, the local experts' GEMMs on top_k T ep / E tokens each, all-to-all combine,
// weighted un-permute; plus always-active shared experts (DeepSeekMoE, Dai et al. 2024).
constexpr double kExpertGroupAlignRows = 128;  // M tile of Hopper grouped GEMMs (DeepGEMM, CUTLASS 128xN tiles)

void moe_mlp(const Ctx& x, Target& out, Phase phase) {
    const MoeSpec& moe = x.config->model.moe;
    const double E = double(std::max<int64_t>(moe.experts, 1));
    const double ep = double(std::max<int64_t>(x.config->parallel.ep, 1));
    const double k = double(std::max<int64_t>(moe.top_k, 1));
    const double routed = x.T * k;
    const double f_local = double(moe.expert_ffn_hidden) / x.t;  // expert tensor parallelism = TP
    // The busiest EP rank sets the pace of the dispatch and of the experts (expert_load_factor).
    const double load = expert_load_factor(x.config->model, x.config->parallel);
    const DType router_dtype = x.attn;                            // routers are not quantised to fp8
    const double wr = dtype_storage_bytes(router_dtype);
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("router", OpKind::gemm, router_dtype, x.T, E, x.h, (x.T * x.h + x.h * E) * wr + x.T * E * 4, 1));
        out.ops.add(make_op("router_topk", OpKind::elementwise, x.act, 0, x.T * E * 8));
    } else {
        out.ops.add(make_gemm("router_dgrad", OpKind::gemm, router_dtype, x.T, x.h, E, (x.T * E + x.h * E) * wr + x.T * x.h * x.w_act, 1));
        out.ops.add(make_gemm("router_wgrad", OpKind::gemm, router_dtype, x.h, E, x.T, (x.T * x.h + x.T * E) * wr + x.h * E * 4, 1));
    }
    out.ops.add(make_op("permute", OpKind::elementwise, x.act, 0, 2 * routed * x.h * x.w_act));
    add_comm(out, "ep_all_to_all", Collective::all_to_all, Group::ep, load * routed * x.h * x.w_act, 2);  // dispatch + combine
    // Several local experts run as one grouped GEMM whose groups have data-dependent row counts, each
    // padded to the kernel's M tile: half a tile per group on average (DeepGEMM README, contiguous
    // layout: each expert's segment aligned to the 128-row M block; CUTLASS grouped GEMM: one tile
    // grid per problem). One expert per GPU is a plain GEMM (tile rounding in gemm_efficiency).
    const double local_experts = E / ep;
    const double rows = load * routed * ep / E + (local_experts > 1 ? 0.5 * kExpertGroupAlignRows : 0.0);
    mlp_core(x, out, phase, rows, f_local, local_experts);
    out.ops.add(make_op("unpermute_combine", OpKind::elementwise, x.act, 0, (routed + x.T) * x.h * x.w_act));
    if (moe.shared_experts > 0) mlp_core(x, out, phase, x.T, f_local * double(moe.shared_experts), 1);
}

void mlp_block(const Ctx& x, Target& out, Phase phase, bool moe) {
    if (phase == Phase::forward) norm(x, out, phase, x.T_sp);
    if (moe) moe_mlp(x, out, phase);
    else mlp_core(x, out, phase, x.T, double(x.config->model.ffn_hidden) / x.t, 1);
    dropout_residual(x, out, phase);
    if (phase == Phase::backward) norm(x, out, phase, x.T_sp);
    tp_block_comm(x, out, x.T);
}

void layer(const Ctx& x, Target& out, Phase phase, LayerKind kind) {
    attention_block(x, out, phase, kind.causal, false);
    if (kind.cross_attention) attention_block(x, out, phase, false, true);
    mlp_block(x, out, phase, kind.moe);
}

// ZeRO-3 / FSDP: gather the layer's weights for forward and again for backward, reduce-scatter its
// gradients every micro-batch (Rajbhandari et al. 2020, sec. 5.3; PyTorch FSDP FULL_SHARD).
// Only the trainable part has gradients to reduce; a frozen layer (no backward) gathers once.
void zero3_comm(const Config& c, const PrecisionSpec& p, CommList& fwd, CommList& bwd, double params, double trainable,
                bool backward) {
    if (c.parallel.zero < 3 || c.parallel.weight_replicas() <= 1) return;
    const double w = params * dtype_storage_bytes(p.params);
    CommOp gather{"zero3_param_all_gather", Collective::all_gather, Group::dp, w, 1};
    fwd.add(gather);
    if (!backward) return;
    bwd.add(gather);
    if (trainable > 0)
        bwd.add(CommOp{"zero3_grad_reduce_scatter", Collective::reduce_scatter, Group::dp,
                       trainable * dtype_storage_bytes(p.grad_reduce), 1});
}

// =====================================================================================
// [SECTION] Pieces: transformer layer, embedding, LM head, optimizer step
// =====================================================================================

} // namespace

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
        const LayerKind first = layer_kind_at(m, index);
        int64_t end = index + 1;
        while (end < limit && layer_kind_slot(layer_kind_at(m, end)) == layer_kind_slot(first)) ++end;
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

double layer_params_local(const Config& c, LayerKind kind) {
    const ModelSpec& m = c.model;
    const double t = double(std::max<int64_t>(c.parallel.tp, 1));
    const double h = double(m.hidden);
    const double replicated = double(attention_replicated_parameter_count(m));  // MLA down projections: whole on every TP rank
    const double attn = replicated + (double(attention_parameter_count(m)) - replicated) / t;
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    const double mats = gated ? 3 : 2;
    double mlp = mats * h * double(m.ffn_hidden) / t;
    if (kind.moe) {
        const double ep = double(std::max<int64_t>(c.parallel.ep, 1));
        const double expert = mats * h * double(m.moe.expert_ffn_hidden) / t;
        mlp = h * double(m.moe.experts) + expert * (double(m.moe.experts) / ep + double(m.moe.shared_experts));
    }
    const double norms = (m.norm == Norm::layernorm ? 2 : 1) * h * (kind.cross_attention ? 3 : 2);
    return attn * (kind.cross_attention ? 2 : 1) + mlp + norms;
}

bool embedding_trains(const Config& c) { return !c.training.finetune.adapters() && c.training.finetune.frozen_layers == 0; }
bool head_trains(const Config& c) { return !c.training.finetune.adapters(); }

LayerKind layer_kind_at(const Config& c, int64_t index) {
    LayerKind kind = layer_kind_at(c.model, index);
    kind.frozen = index < c.training.finetune.frozen_layers;
    return kind;
}

int64_t layer_kind_run_end(const Config& c, int64_t index, int64_t limit) {
    const int64_t frozen = c.training.finetune.frozen_layers;
    return layer_kind_run_end(c.model, index, index < frozen ? std::min(limit, frozen) : limit);
}

namespace {

// The linear layers of one layer kind as (k, n, copies on this GPU, is MLP, separate projections
// fused in it: LoRA gives each its own A), TP/EP-sharded.
struct LinearShape { double k, n, count; bool mlp; double parts = 1; };
FixedList<LinearShape, 12> layer_linears(const ModelSpec& m, LayerKind kind, int64_t tp, int64_t ep) {
    FixedList<LinearShape, 12> out;
    const double t = double(std::max<int64_t>(tp, 1)), h = double(m.hidden);
    const double heads_l = double(m.heads) / t, hd = double(m.effective_head_dim());
    const double kv_l = std::max(double(m.kv_heads > 0 ? m.kv_heads : m.heads) / t, 1.0);
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    auto attention = [&](bool cross) {
        if (m.mla.enabled() && !cross) {  // as mla_projections
            const MlaSpec& a = m.mla;
            const double qk = heads_l * double(a.qk_nope_head_dim + a.qk_rope_head_dim);
            if (a.q_lora_rank > 0) {
                out.add({h, double(a.q_lora_rank), 1, false});
                out.add({double(a.q_lora_rank), qk, 1, false});
            } else {
                out.add({h, qk, 1, false});
            }
            out.add({h, double(a.kv_lora_rank + a.qk_rope_head_dim), 1, false});
            out.add({double(a.kv_lora_rank), heads_l * double(a.qk_nope_head_dim + a.v_head_dim), 1, false});
            out.add({heads_l * double(a.v_head_dim), h, 1, false});
            return;
        }
        if (cross) {
            out.add({h, heads_l * hd, 1, false});
            out.add({h, 2 * kv_l * hd, 1, false, 2});
        } else {
            out.add({h, heads_l * hd + 2 * kv_l * hd, 1, false, 3});  // fused QKV
        }
        out.add({heads_l * hd, h, 1, false});
    };
    attention(false);
    if (kind.cross_attention) attention(true);
    const double up = gated ? 2 : 1;
    auto mlp = [&](double f, double copies) {
        out.add({h, f * up, copies, true, up});
        out.add({f, h, copies, true});
    };
    if (!kind.moe) {
        mlp(double(m.ffn_hidden) / t, 1);
    } else {
        mlp(double(m.moe.expert_ffn_hidden) / t, double(m.moe.experts) / double(std::max<int64_t>(ep, 1)));
        if (m.moe.shared_experts > 0) mlp(double(m.moe.expert_ffn_hidden * m.moe.shared_experts) / t, 1);
    }
    return out;
}

double adapter_params(const Config& c, LayerKind kind, int64_t tp, int64_t ep) {
    const FinetuneSpec& ft = c.training.finetune;
    if (!ft.adapters() || kind.frozen) return 0;
    double params = 0;
    for (const LinearShape& l : layer_linears(c.model, kind, tp, ep))
        if (!l.mlp || ft.lora_targets == LoraTargets::all_linear) params += l.count * double(ft.lora_rank) * (l.parts * l.k + l.n);
    return params;
}

} // namespace

double layer_adapter_params_local(const Config& c, LayerKind kind) { return adapter_params(c, kind, c.parallel.tp, c.parallel.ep); }
double layer_adapter_params(const Config& c, LayerKind kind) { return adapter_params(c, kind, 1, 1); }

double layer_nf4_params_local(const Config& c, LayerKind kind) {
    if (c.training.finetune.method != FinetuneMethod::qlora) return 0;
    double params = 0;
    for (const LinearShape& l : layer_linears(c.model, kind, c.parallel.tp, c.parallel.ep)) params += l.count * l.k * l.n;
    return params;
}

double layer_trainable_params_local(const Config& c, LayerKind kind) {
    if (kind.frozen) return 0;
    return c.training.finetune.adapters() ? layer_adapter_params_local(c, kind) : layer_params_local(c, kind);
}

double layer_expert_params_local(const Config& c, LayerKind kind) {
    if (!kind.moe) return 0;
    const ModelSpec& m = c.model;
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    const double t = double(std::max<int64_t>(c.parallel.tp, 1)), ep = double(std::max<int64_t>(c.parallel.ep, 1));
    return (gated ? 3 : 2) * double(m.hidden) * double(m.moe.expert_ffn_hidden) / t * double(m.moe.experts) / ep;
}

PieceOps layer_ops(const Config& c, const PrecisionSpec& p, LayerKind kind) {
    Ctx x = make_ctx(c, p);
    x.local = kind.local;
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    layer(x, fwd, Phase::forward, kind);
    if (kind.frozen) {  // leading frozen layers: nothing before them needs a gradient, so no backward
        zero3_comm(c, p, out.comm_forward, out.comm_backward, layer_params_local(c, kind), 0, false);
        return out;
    }
    // Recompute (Korthikanti et al. 2022 sec. 5): full re-runs the layer forward (with its TP
    // collectives) before its backward; selective re-runs only the attention core, which flash
    // attention already recomputes inside its backward kernel.
    if (x.recompute == Recompute::full) {
        for (const Op& op : out.forward) out.backward.add(op);
        for (const CommOp& op : out.comm_forward) out.comm_backward.add(op);
    } else if (x.recompute == Recompute::selective && !x.flash) {
        CommList unused;
        Target re{out.backward, unused};
        attention_core(x, re, Phase::forward, x.s_kv + x.mem, kind.causal);
        if (kind.cross_attention) attention_core(x, re, Phase::forward, x.s_kv, false);
    }
    layer(x, bwd, Phase::backward, kind);
    zero3_comm(c, p, out.comm_forward, out.comm_backward, layer_params_local(c, kind), layer_trainable_params_local(c, kind), true);
    return out;
}

PieceOps mtp_ops(const Config& c, const PrecisionSpec& p) {
    const Ctx x = make_ctx(c, p);
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    // h'_k = M [RMSNorm(h_{k-1}); RMSNorm(Emb(t_{i+k}))] (arXiv 2412.19437 eq. 21), per module.
    norm(x, fwd, Phase::forward, x.T_sp);
    norm(x, fwd, Phase::forward, x.T_sp);
    linear(x, fwd, Phase::forward, "mtp_proj", x.T, 2 * x.h, x.h, 1, true);
    linear(x, bwd, Phase::backward, "mtp_proj", x.T, 2 * x.h, x.h, 1, true);
    norm(x, bwd, Phase::backward, x.T_sp);
    norm(x, bwd, Phase::backward, x.T_sp);
    if (x.recompute == Recompute::full)
        for (const Op& op : out.forward) out.backward.add(op);
    return out;
}

PieceOps embedding_ops(const Config& c, const PrecisionSpec& p) {
    const Ctx x = make_ctx(c, p);
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    const double e = x.T * x.h;
    // Vocab-parallel lookup: gather rows, write activations, embedding dropout; partial rows are
    // all-reduced (reduce-scattered with SP) over TP (Megatron VocabParallelEmbedding).
    out.forward.add(make_op("embedding", OpKind::elementwise, x.act, 0, e * (x.w_param + x.w_act)));
    out.forward.add(make_op("embedding_dropout", OpKind::elementwise, x.act, 0, x.T_sp * x.h * (2 * x.w_act + 1)));
    if (x.t > 1) add_comm(fwd, "tp_embedding_reduce", x.sp ? Collective::reduce_scatter : Collective::all_reduce, Group::tp, e * x.w_act);
    // Backward: scatter-add of the token gradients into the fp32 main gradient (none when frozen).
    if (embedding_trains(c)) out.backward.add(make_op("embedding_bwd", OpKind::elementwise, x.act, 0, e * (x.w_act + 2 * x.w_grad)));
    if (x.recompute == Recompute::full) out.backward.add(out.forward.items[0]);  // re-run the lookup
    return out;
}

PieceOps head_ops(const Config& c, const PrecisionSpec& p) {
    const Ctx x = make_ctx(c, p);
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    norm(x, fwd, Phase::forward, x.T_sp);  // final norm
    if (x.sp) add_comm(fwd, "tp_all_gather", Collective::all_gather, Group::tp, x.T * x.h * x.w_act);
    linear(x, fwd, Phase::forward, "lm_head", x.T, x.h, x.vocab_l, 1, true);
    // Vocab-parallel cross-entropy in fp32 (Megatron vocab_parallel_cross_entropy): logits to fp32,
    // max, exp-sum, normalise (3 small all-reduces of T floats over TP); backward writes softmax - 1.
    const double logits = x.T * x.vocab_l;
    out.forward.add(make_op("cross_entropy", OpKind::elementwise, x.act, 0, logits * (x.w_act + 3 * 4.0)));
    if (x.t > 1) add_comm(fwd, "tp_loss_all_reduce", Collective::all_reduce, Group::tp, x.T * 4.0, 3);
    // Backward: the fp32 loss gradient is written (4), the log-softmax backward reads it and the saved
    // fp32 probabilities and writes the fp32 logit gradient (3 x 4), which is cast to the activation
    // dtype for the LM-head GEMMs (4 + w_act): torch log_softmax/nll_loss backward and Megatron's
    // softmax - one-hot alike.
    out.backward.add(make_op("cross_entropy_bwd", OpKind::elementwise, x.act, 0, logits * (4.0 + 3 * 4.0 + 4.0 + x.w_act)));
    linear(x, bwd, Phase::backward, "lm_head", x.T, x.h, x.vocab_l, 1, true);
    if (x.t > 1) add_comm(bwd, x.sp ? "tp_reduce_scatter" : "tp_all_reduce", x.sp ? Collective::reduce_scatter : Collective::all_reduce,
                          Group::tp, x.T * x.h * x.w_act);
    norm(x, bwd, Phase::backward, x.T_sp);
    return out;
}

double per_tensor_optimizer_kernels(const Config& c) {
    if (c.training.optimizer != "lamb-per-tensor") return 0;
    // Parameter tensors per layer: two norms (scale, + bias for LayerNorm), fused QKV and output
    // projections (no biases: Transformer-XL's qkv_net/o_net/r_net, Megatron's default keeps them in
    // the GEMM epilogue), FFN matrices (3 gated) with biases when not gated, the relative-position
    // projection; plus embedding, final norm and Transformer-XL's two global position biases.
    const ModelSpec& m = c.model;
    const bool gated = m.activation == Activation::swiglu || m.activation == Activation::geglu;
    const double norm_tensors = m.norm == Norm::layernorm ? 2 : 1;
    const double per_layer = 2 * norm_tensors + 2 + (gated ? 3 : 4) + (m.relative_position ? 1 : 0);
    const double tensors = double(total_layers(m)) * per_layer + 1 + norm_tensors + (m.relative_position ? 2 : 0);
    // NVIDIA DLE Transformer-XL's jitlamb (lamb.py) calls one TorchScript function per tensor from a
    // Python loop: the moment update, the weight and update norms and the apply run as ~3 dispatched
    // ops of our host_op_s size (several fused kernels each), so the loop is host-bound for small
    // tensors. 3 per tensor: TXL base fp16 on V100 misses ~30 ms per step (1 GPU, 16x192 tokens),
    // 179 tensors x 3 x 60 us = 32 ms; the fused (apex multi-tensor) FusedLAMB of BERT has none.
    constexpr double kOpsPerTensor = 3;
    return tensors * kOpsPerTensor / double(std::max<int64_t>(c.parallel.pp, 1));
}

double optimizer_state_bytes_per_param(const TrainingSpec& t, const PrecisionSpec& p) {
    if (t.optimizer == "adamw8bit") return 2 * (1.0 + 4.0 / 2048);
    return (t.optimizer == "sgd" ? 1 : 2) * dtype_storage_bytes(p.optimizer_states);
}

OpList step_ops(const Config& c, const PrecisionSpec& p, double params_local, double params_shard) {
    OpList ops;
    const double wg = dtype_storage_bytes(p.grads);
    const double wp = dtype_storage_bytes(p.params);
    const bool master = p.master_weights == MasterWeights::fp32 && p.params != DType::fp32;
    const double wu = master ? 4.0 : wp;  // the copy the optimizer updates
    // Fused Adam(W) (apex/TE multi-tensor apply): read grad, read+write weight and both moments.
    // SGD with momentum keeps one state; LAMB adds a pass for the trust ratio (You et al. 2019).
    const std::string& name = c.training.optimizer;
    double bytes = params_shard * (wg + 2 * wu + 2 * optimizer_state_bytes_per_param(c.training, p));
    if (name == "lamb" || name == "lamb-per-tensor") bytes += params_shard * (wg + wu);
    ops.add(make_op("optimizer_step", OpKind::optimizer, p.activations, 0, bytes));
    ops.add(make_op("grad_norm_clip", OpKind::optimizer, p.activations, 0, params_shard * wg));
    ops.add(make_op("zero_grad", OpKind::optimizer, p.activations, 0, params_local * wg));
    // Precision-only work per step (DESIGN.md 2.1 effect 3).
    if (master)  // refresh the half working weights from the fp32 master copy (Micikevicius et al. 2018)
        ops.add(make_op("master_weight_copy", OpKind::precision_overhead, p.activations, 0, params_shard * (4.0 + wp)));
    if (p.loss_scaling == LossScaling::dynamic)  // unscale + inf/nan check (torch GradScaler.unscale_)
        ops.add(make_op("loss_scale_unscale_check", OpKind::precision_overhead, p.activations, 0, params_shard * 2 * wg));
    if (p.grad_reduce != p.grads && c.parallel.weight_replicas() > 1)  // cast gradients to the reduction dtype and back
        ops.add(make_op("grad_reduce_cast", OpKind::precision_overhead, p.activations, 0,
                        params_local * 2 * (wg + dtype_storage_bytes(p.grad_reduce))));
    return ops;
}

// =====================================================================================
// [SECTION] Cost: dtype fallback, GEMM shape efficiency, roofline
// =====================================================================================

DType compute_dtype(const GpuSpec& gpu, DType d) {
    // Without a unit for the dtype, frameworks run the next wider format that exists.
    static constexpr DType kFallback[kDTypeCount][3] = {
        {DType::fp32, DType::fp32, DType::fp32},    // fp32
        {DType::tf32, DType::fp32, DType::fp32},    // tf32 -> CUDA cores (V100)
        {DType::fp16, DType::bf16, DType::fp32},    // fp16
        {DType::bf16, DType::fp16, DType::fp32},    // bf16 -> fp16 units (V100 has no bf16)
        {DType::fp8, DType::bf16, DType::fp16},     // fp8
        {DType::mxfp8, DType::fp8, DType::bf16},    // mxfp8
        {DType::nvfp4, DType::mxfp8, DType::fp8},   // nvfp4
    };
    for (DType f : kFallback[static_cast<int>(d)])
        if (gpu.supports(f)) return f;
    return gpu.supports(DType::bf16) ? DType::bf16 : DType::fp32;
}

double gemm_efficiency(const Op& op, const GpuSpec& gpu, const Calibration& cal) {
    // Tensor-core GEMMs lose gemm_sustained to power-limited clocks and NCCL sharing (calibration.cpp);
    // CUDA-core SGEMM's efficiency is a sustained measurement already.
    const DType d = compute_dtype(gpu, op.dtype);
    const double base = cal.gemm_efficiency[static_cast<int>(d)] * (d == DType::fp32 ? 1.0 : cal.gemm_sustained);
    if (op.m <= 0 || op.n <= 0 || op.k <= 0) return base;
    // Short K: each tile's prologue (pipeline fill) and epilogue (write C) are amortised over its K
    // extent (the K that halves it, per dtype: calibration.cpp).
    const double k_half = cal.gemm_k_half[static_cast<int>(d)];
    const double reuse = cal.tile_reuse[static_cast<int>(d)];
    // Tile and wave quantisation: cuBLAS/CUTLASS cover C with tm x tn tiles, one per SM at a time;
    // the last wave and partial tiles idle part of the GPU (NVIDIA "Matrix Multiplication Background
    // User's Guide", tile/wave quantisation). Smaller tiles reuse operands less: relative mainloop
    // efficiency 1.0 / 0.95 / 0.85 / 0.7 for 256x128 / 128x128 / 128x64 / 64x64 (physical default),
    // stated for 16-bit tensor cores; a dtype suffers the share `reuse` of that loss (calibration.cpp).
    // Split-K (cuBLAS heuristics, CUTLASS "split-K" / "stream-K"): a C with few tiles and a long K
    // (weight gradients: k = tokens) is split into `split` K slices that fill the SMs, each paying
    // its own prologue and epilogue on k / split.
    struct Tile { double tm, tn, rel; };
    static constexpr Tile kTiles[] = {{256, 128, 1.0}, {128, 128, 0.95}, {128, 64, 0.85}, {64, 64, 0.7}};
    static constexpr double kSplits[] = {1, 2, 4, 8};
    const double sms = double(std::max<int64_t>(gpu.sm_count, 1));
    const double batch = std::max(op.count, 1.0);
    // A search asks for the same few shapes millions of times: a small per-thread memo of the shape
    // factor (the same arithmetic on the same inputs, so bit-identical).
    struct Memo { double m = -1, n = 0, k = 0, batch = 0, sms = 0, k_half = 0, reuse = 0, shape = 0; };
    thread_local Memo memo[64];
    auto bits = [](double x) { uint64_t u; std::memcpy(&u, &x, sizeof u); return u; };  // no UB for NaN or huge
    const uint64_t h = bits(op.m) * 0x9E3779B97F4A7C15ull ^ bits(op.n) * 0xC2B2AE3D27D4EB4Full ^
                       bits(batch) * 0x165667B19E3779F9ull ^ bits(op.k) * 0x27D4EB2F165667C5ull;
    Memo& slot = memo[h >> 58];  // the top bits mix every input bit (integer-valued doubles end in zeros)
    if (slot.m != op.m || slot.n != op.n || slot.k != op.k || slot.batch != batch || slot.sms != sms ||
        slot.k_half != k_half || slot.reuse != reuse) {
        double shape = 0;
        for (const Tile& tile : kTiles) {
            const double tiles = std::ceil(op.m / tile.tm) * std::ceil(op.n / tile.tn) * batch;
            const double rel = 1.0 - (1.0 - tile.rel) * reuse;
            for (double split : kSplits) {
                if (split > 1 && tiles * split > 2 * sms) break;  // enough tiles already: no split
                const double waves = std::ceil(tiles * split / sms);
                const double k_slice = op.k / split;
                shape = std::max(shape, rel * (op.m * op.n * batch * split) / (waves * sms * tile.tm * tile.tn) *
                                            k_slice / (k_slice + k_half));
            }
        }
        slot = Memo{op.m, op.n, op.k, batch, sms, k_half, reuse, shape};
    }
    return base * slot.shape;
}

double op_time_s(const Op& op, const GpuSpec& gpu, const Calibration& cal) {
    double compute_s = 0;
    if (op.flops > 0) {
        const DType d = compute_dtype(gpu, op.dtype);
        const double eff = (op.m > 0 || op.kind == OpKind::gemm) ? gemm_efficiency(op, gpu, cal) : cal.attention_efficiency;
        const double peak = gpu.peak_flops(d);
        if (peak > 0 && eff > 0) compute_s = op.flops / (peak * eff);
    }
    const double bw = gpu.memory_bw_gbps * 1e9 * cal.memory_efficiency;
    const double memory_s = bw > 0 ? op.bytes / bw : 0;
    return std::max(compute_s, memory_s);  // roofline (Williams et al. 2009)
}

double OpCost::total_s() const {
    double s = launch_s;
    for (double v : seconds) s += v;
    return s;
}

OpCost cost_ops(const OpList& ops, const GpuSpec& gpu, const Calibration& cal) {
    OpCost cost;
    for (const Op& op : ops) {
        cost.seconds[static_cast<int>(op.kind)] += op.count * op_time_s(op, gpu, cal);
        cost.flops += op.count * op.flops;
        // A batched or grouped GEMM is one kernel however many copies it runs (count is the batch).
        cost.launch_s += cal.kernel_launch_s;
    }
    return cost;
}

} // namespace trainclock
