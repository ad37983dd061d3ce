// trainclock: operator lists of one micro-batch and their roofline costs (operators.hpp).
//
// Index
//   [SECTION] Emitting ops (the per-GPU shapes and dtypes come from the Execution record)
//   [SECTION] Building blocks: linear layers with their precision ops, norms, attention, MLPs
//   [SECTION] Pieces: transformer layer, embedding, LM head, optimizer step
//   [SECTION] Cost: dtype fallback, GEMM shape efficiency, roofline
//
// Conventions: T = tokens of one micro-batch on this GPU (b s / cp); TP splits heads and the MLP
// width (Megatron-LM, Shoeybi et al. 2019, arXiv 1909.08053); with sequence parallelism the norms,
// dropouts and residuals work on T / tp tokens (Korthikanti et al. 2022, arXiv 2205.05198, sec. 4.2.2).
// A GEMM of m x k by k x n costs 2mnk FLOPs; backward = dgrad + wgrad = 2x forward (Narayanan et al.
// SC'21, arXiv 2104.04473, sec. 3.5). Bytes are HBM traffic at each tensor's dtype width.
#include "trainclock/perf/operators.hpp"

#include "perf/constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trainclock {

Op make_op(const char* name, OpKind kind, DType dtype, double flops, double bytes, double count) {
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

Op linear_fprop_op(const char* name, DType dtype, double m, double k, double n, double w_gemm, double w_out, double count) {
    return make_gemm(name, OpKind::gemm, dtype, m, n, k, (m * k + k * n) * w_gemm + m * n * w_out, count);
}

Op linear_dgrad_op(DType dtype, double m, double k, double n, double w_gemm, double w_out, double count) {
    return make_gemm("dgrad", OpKind::gemm, dtype, m, k, n, (m * n + n * k) * w_gemm + m * k * w_out, count);
}

// wgrad accumulates into the main gradient buffer (Megatron gradient-accumulation fusion): read and write w_grad.
Op linear_wgrad_op(DType dtype, double m, double k, double n, double w_gemm, double w_grad, double count) {
    return make_gemm("wgrad", OpKind::gemm, dtype, k, n, m, (m * k + m * n) * w_gemm + 2 * k * n * w_grad, count);
}

// FlashAttention: 2 b h s_q keys (d_qk + d_v) FLOPs forward (QK^T and PV), keys = s_kv, s_kv / 2
// when causal (masked blocks skipped), fewer on local layers (attended_keys); backward recomputes P
// and runs 5 matmuls: 2.5x forward (Dao 2023, sec. 3). Bytes: read Q, K, V, write O (backward: twice, plus dQ).
Op flash_attention_op(DType dtype, double batch, double heads, double kv_heads, double s_q, double s_kv, double keys, double dqk, double dv,
                      double w, bool backward) {
    const double tokens = batch * s_q;
    const double f = 2.0 * (batch * heads) * s_q * keys * (dqk + dv);
    const double q_bytes = tokens * heads * dqk * w;
    const double io = q_bytes + tokens * heads * dv * w + batch * s_kv * kv_heads * (dqk + dv) * w;
    if (!backward) return make_op("flash_attention", OpKind::attention, dtype, f, io);
    return make_op("flash_attention_bwd", OpKind::attention, dtype, 2.5 * f, 2 * io + q_bytes);
}

// Several local experts run as one grouped GEMM whose groups have data-dependent row counts, each
// padded to the kernel's M tile: half a tile per group on average (DeepGEMM README, contiguous
// layout: each expert's segment aligned to the 128-row M block; CUTLASS grouped GEMM: one tile
// grid per problem). One expert per GPU is a plain GEMM (tile rounding in gemm_efficiency).
constexpr double kExpertGroupAlignRows = 128;  // M tile of Hopper grouped GEMMs (DeepGEMM, CUTLASS 128xN tiles)
double expert_group_rows(double rows, double local_experts) { return rows + (local_experts > 1 ? 0.5 * kExpertGroupAlignRows : 0.0); }

// Router top-k over the fp32 scores (read 4 B, write index and weight); permute: gather each routed
// token's row (read + write); unpermute: read the routed rows, write the weighted sum per token.
Op moe_topk_op(DType dtype, double tokens, double experts) {
    return make_op("router_topk", OpKind::elementwise, dtype, 0, tokens * experts * 8);
}
Op moe_permute_op(DType dtype, double routed, double hidden, double w) {
    return make_op("permute", OpKind::elementwise, dtype, 0, 2 * routed * hidden * w);
}
Op moe_unpermute_op(DType dtype, double tokens, double routed, double hidden, double w) {
    return make_op("unpermute_combine", OpKind::elementwise, dtype, 0, (routed + tokens) * hidden * w);
}
namespace {
constexpr const char* kTokenCountSync = "moe_token_count_sync";
}
// The counts (8 B per expert) copied to the host; the host blocks until they arrive.
Op moe_token_count_sync_op(DType dtype, double experts) { return make_op(kTokenCountSync, OpKind::elementwise, dtype, 0, experts * 8); }
bool is_host_sync(const Op& op) { return op.name == kTokenCountSync; }

namespace {

// =====================================================================================
// [SECTION] Emitting ops (the per-GPU shapes and dtypes come from the Execution record)
// =====================================================================================

enum class Phase { forward, backward };

struct Target {  // where a block emits its ops
    OpList& ops;
    CommList& comm;
};

void add_comm(Target& out, const char* name, Collective collective, Group group, double bytes, double count = 1) {
    out.comm.add(CommOp{name, collective, group, bytes, count});
}

// =====================================================================================
// [SECTION] Building blocks: linear layers with their precision ops, norms, attention, MLPs
// =====================================================================================

// Separate projections a fused GEMM stands for, each with its own adapter (HF q/k/v_proj, gate/up_proj).
double fused_parts(const Execution& x, const char* name) {
    if (std::strcmp(name, "qkv") == 0) return 3;
    if (std::strcmp(name, "kv") == 0) return 2;
    if (std::strcmp(name, "mlp_up") == 0 && x.gated) return 2;
    return 1;
}

// LoRA beside a frozen k x n weight (Hu et al. 2021 eq. 3: h = W0 x + B A x, A r x k, B n x r), one
// adapter per fused part: forward x A (parts A's side by side) then (x A) B (block-diagonal B's: m n r
// FLOPs); backward dgrad and wgrad of both (PEFT runs them as plain GEMMs).
void lora_adapter(const Execution& x, Target& out, Phase phase, double m, double k, double n, double count, double parts) {
    const double r = x.lora_rank, ra = parts * r, wa = x.ops.w_act, wp = x.ops.w_param, wgr = x.ops.w_grad;
    const DType d = x.ops.activations;
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("lora_a", OpKind::gemm, d, m, ra, k, (m * k + k * ra) * wa + m * ra * wa, count));
        out.ops.add(make_gemm("lora_b", OpKind::gemm, d, m, n, r, (m * ra + r * n) * wa + m * n * wa, count));
        return;
    }
    out.ops.add(make_gemm("lora_b_dgrad", OpKind::gemm, d, m, r, n, (m * n + n * r) * wa + m * ra * wa, count));
    out.ops.add(make_gemm("lora_b_wgrad", OpKind::gemm, d, r, n, m, (m * ra + m * n) * wa + r * n * (wp + wgr), count));
    out.ops.add(make_gemm("lora_a_dgrad", OpKind::gemm, d, m, k, ra, (m * ra + ra * k) * wa + m * k * wa, count));
    out.ops.add(make_gemm("lora_a_wgrad", OpKind::gemm, d, k, ra, m, (m * k + m * ra) * wa + k * ra * (wp + wgr), count));
}

}  // namespace

// HBM bytes per element to quantise one GEMM operand (read at width w_in) into both layouts its
// GEMMs need (fprop / dgrad / wgrad read it row- and column-wise), by scaling recipe; q = the
// quantised width with its block scales (dtype_storage_bytes). `one_pass`: the framework makes
// both block-scaled layouts in one read (FrameworkSpec::quantize_layouts_one_pass).
double quantize_bytes_per_element(const OpPrecision& o, Operand operand, double w_in, bool one_pass) {
    const double q = o.w_gemm;
    // torchao's MX and blockwise casts run one kernel per layout, each reading the high-precision
    // tensor (torchao/prototype/mx_formats: to_mx along dim0, triton_to_mxfp8_dim1 along dim1;
    // torchtitan docs/mxfp8.md mxfp8_dim1_cast_kernel_choice): as rowwise, below.
    if (!one_pass && (o.recipe == Fp8Recipe::mxfp8 || o.recipe == Fp8Recipe::blockwise)) return 2 * (w_in + q);
    switch (o.recipe) {
    // TE DelayedScaling: the scale comes from the amax history of earlier steps, so one fused
    // cast-transpose reads the tensor once and records its amax on the way (TE docs "Using FP8 with
    // Transformer Engine": delayed scaling).
    case Fp8Recipe::delayed: return w_in + 2 * q;
    // Current (tensorwise) scaling needs this tensor's amax before it can scale: a reduction pass,
    // then the cast-transpose (TE Float8CurrentScaling; torchao float8 tensorwise dynamic scaling).
    case Fp8Recipe::tensorwise: return 2 * w_in + 2 * q;
    // Rowwise: the transpose of a row-scaled tensor is not row-scaled, so each layout is quantised
    // from the high-precision tensor with its own per-row amax (torchao float8 rowwise recipe).
    case Fp8Recipe::rowwise: return 2 * (w_in + q);
    // Blockwise (DeepSeek-V3, arXiv 2412.19437 sec. 3.3.2): activations and gradients in 1x128 tiles,
    // weights in 128x128 blocks, fp32 scales, both layouts from one read (TE Float8BlockScaling).
    case Fp8Recipe::blockwise: return w_in + 2 * (q + 4.0 / (operand == Operand::weight ? 128.0 * 128.0 : 128.0));
    // MXFP8: one e8m0 scale per 32 elements (in q), computed inside the block; rowwise and
    // columnwise data from one read (TE MXFP8BlockScaling).
    case Fp8Recipe::mxfp8: return w_in + 2 * q;
    // NVFP4 (NVIDIA, "Pretraining LLMs with NVFP4", arXiv 2509.25149, sec. 4; TE NVFP4BlockScaling):
    // a per-tensor fp32 scale above the e4m3 block scales needs the global amax first; wgrad's
    // operands (activations, gradients) get a 16x16 random Hadamard transform, whose output needs
    // its own amax; weights use 16x16 2D blocks without the transform.
    case Fp8Recipe::nvfp4: return (operand == Operand::weight ? 2 : 3) * w_in + 2 * q;
    }
    return w_in + 2 * q;
}

namespace {

// y[m x n] = x[m x k] W[k x n], `count` independent copies (experts). `after_norm`: the input comes
// from an fp32 op under autocast (norms are on torch.autocast's fp32 list) and is cast first.
void linear(const Execution& x, Target& out, Phase phase, const char* name, double m, double k, double n, double count, bool after_norm) {
    const bool head = std::strcmp(name, "lm_head") == 0;
    // Stacks that keep the LM head out of FP8/FP4 (FrameworkSpec::quantize_lm_head) run it in the
    // 16-bit dtype their recipe keeps for attention: no casts, 16-bit operands.
    const bool head_16bit = x.ops.quantized && head && !x.config->framework.quantize_lm_head;
    const bool quantized = x.ops.quantized && !head_16bit;
    const DType gemm = head_16bit ? x.ops.attention : x.ops.gemm;
    const double wg = head_16bit ? x.ops.w_attn : x.ops.w_gemm;
    // Transformer-block weights only: the LM head and MTP projection keep plain frozen weights and no adapters.
    const bool block = !head && std::strcmp(name, "mtp_proj") != 0;
    if (x.nf4 && block)  // bitsandbytes matmul_4bit: dequantize_4bit to the compute dtype, then a plain GEMM (forward and dgrad)
        out.ops.add(make_op("nf4_dequantize", OpKind::precision_overhead, x.ops.activations, 0, k * n * (kNf4BytesPerParam + wg), count));
    if (x.lora_rank > 0 && block && (x.lora_mlp || std::strncmp(name, "mlp_", 4) != 0))
        lora_adapter(x, out, phase, m, k, n, count, fused_parts(x, name));
    if (phase == Phase::forward) {
        if (x.ops.autocast) {
            // torch.autocast re-casts fp32 weights to the half dtype in every forward (the cast cache
            // lives for one autocast region), and casts fp32 inputs at op boundaries.
            out.ops.add(
                make_op("autocast_weight_cast", OpKind::precision_overhead, x.ops.activations, 0, k * n * (x.ops.w_param + wg), count));
            if (after_norm)
                out.ops.add(make_op("autocast_input_cast", OpKind::precision_overhead, x.ops.activations, 0, m * k * (4.0 + wg), count));
        }
        if (quantized) {
            // Quantise the input and the weight for every micro-batch, both layouts (TE fp8 docs: FP8
            // GEMM operands need both for fprop and wgrad), as the recipe does it.
            out.ops.add(make_op(
                "fp8_input_cast_transpose", OpKind::precision_overhead, x.ops.activations, 0,
                m * k * quantize_bytes_per_element(x.ops, Operand::activation, x.ops.w_act, x.config->framework.quantize_layouts_one_pass),
                count));
            out.ops.add(make_op(
                "fp8_weight_cast_transpose", OpKind::precision_overhead, x.ops.activations, 0,
                k * n * quantize_bytes_per_element(x.ops, Operand::weight, x.ops.w_param, x.config->framework.quantize_layouts_one_pass),
                count));
        }
        out.ops.add(linear_fprop_op(name, gemm, m, k, n, wg, x.ops.w_act, count));
        return;
    }
    if (quantized)  // output gradient quantised (fp8: e5m2) in both layouts for dgrad and wgrad
        out.ops.add(make_op(
            "fp8_grad_cast_transpose", OpKind::precision_overhead, x.ops.activations, 0,
            m * n * quantize_bytes_per_element(x.ops, Operand::gradient, x.ops.w_act, x.config->framework.quantize_layouts_one_pass),
            count));
    out.ops.add(linear_dgrad_op(gemm, m, k, n, wg, x.ops.w_act, count));
    if (!x.train_weights) return;  // frozen weight: no gradient (autograd skips W.grad)
    out.ops.add(linear_wgrad_op(gemm, m, k, n, wg, x.ops.w_grad, count));
    if (x.ops.autocast)  // half wgrad cast to the fp32 .grad of the fp32 parameter
        out.ops.add(make_op("autocast_grad_cast", OpKind::precision_overhead, x.ops.activations, 0, k * n * (wg + x.ops.w_grad), count));
    // The backward of autocast's input cast is a cast: the half dgrad goes back to the fp32 norm
    // output it came from (autograd records the cast; torch.amp docs: backward ops run in the dtype
    // autocast chose for their forward).
    if (x.ops.autocast && after_norm)
        out.ops.add(make_op("autocast_input_grad_cast", OpKind::precision_overhead, x.ops.activations, 0, m * k * (wg + 4.0), count));
}

// Width of the residual stream: under autocast it stays fp32, as the embedding output (fp32
// weights) and every residual add (fp32 + half promotes to fp32: PyTorch type promotion; add is on
// none of autocast's lists) are fp32; else the activation dtype.
double residual_width(const Execution& x) { return x.ops.autocast ? 4.0 : x.ops.w_act; }

// RMSNorm written as eager tensor ops (Hugging Face LlamaRMSNorm: x.to(float32), pow(2),
// mean(-1), x * rsqrt(var + eps), .to(input dtype), weight * x; torchtitan's nn.RMSNorm without
// torch.compile), frameworks with fused_norms false: one kernel per op, each reading and writing
// the e elements (fp32 in between; the mean writes one value per row). Autograd runs one backward
// kernel per forward op that reads its saved inputs and the output gradient and writes the input
// gradient: twice the forward traffic. LayerNorm is one ATen kernel (native_layer_norm) everywhere.
void unfused_rms_norm(const Execution& x, Target& out, Phase phase, double e, double w_in, double w_out) {
    const double w = x.ops.w_act;
    struct Pass {
        const char* name;
        double bytes_per_element;
    };
    const Pass passes[] = {{"rmsnorm_to_fp32", w_in + 4}, {"rmsnorm_pow", 8},          {"rmsnorm_mean", 4},
                           {"rmsnorm_rsqrt_mul", 8},      {"rmsnorm_to_dtype", 4 + w}, {"rmsnorm_weight_mul", w + w_out}};
    const double backward = phase == Phase::backward ? 2.0 : 1.0;
    for (const Pass& pass : passes)
        out.ops.add(make_op(pass.name, OpKind::elementwise, x.ops.activations, 0, backward * e * pass.bytes_per_element));
}

// LayerNorm / RMSNorm over `tokens` x h: read input, write output (fp32 under autocast); backward
// reads the gradient and the saved input and writes the input gradient.
void norm(const Execution& x, Target& out, Phase phase, double tokens) {
    const double e = tokens * x.hidden;
    const double w_in = residual_width(x);  // norms read the residual stream
    const double w_out = x.ops.autocast ? 4.0 : x.ops.w_act;
    // Under torch.compile the forward norm is computed in the residual add's kernel (dropout_residual).
    if (x.norm_in_residual && phase == Phase::forward) return;
    if (x.config->model.norm == Norm::rmsnorm && !x.fused_norms) {
        unfused_rms_norm(x, out, phase, e, w_in, w_out);
        return;
    }
    if (phase == Phase::forward)
        out.ops.add(make_op("norm", OpKind::elementwise, x.ops.activations, 0, e * (w_in + w_out)));
    else
        out.ops.add(make_op("norm_bwd", OpKind::elementwise, x.ops.activations, 0, e * 3 * w_in));
}

// Dropout + residual add (1-byte mask, Korthikanti et al. 2022 sec. 4.1): forward reads the
// branch output and the residual and writes the sum; backward reads the sum's gradient and writes
// the branch's (the residual's passes through), both residual-stream wide except the branch.
void dropout_residual(const Execution& x, Target& out, Phase phase) {
    const double e = x.tokens_sp * x.hidden;
    const double w_res = residual_width(x);
    if (!x.fused_elementwise && phase == Phase::forward) {
        // Eager dropout, then its own add (DeepLearningExamples BERT: LayerNorm(dropout(h) + input)):
        // the dropped branch is written and read once more; backward costs the same (the add passes
        // its gradient through without a kernel).
        out.ops.add(make_op("dropout", OpKind::elementwise, x.ops.activations, 0, e * (2 * x.ops.w_act + 1)));
        out.ops.add(make_op("residual_add", OpKind::elementwise, x.ops.activations, 0, e * (x.ops.w_act + 2 * w_res)));
        return;
    }
    // torch.compile: the next block's norm is one more output of this kernel (Execution::norm_in_residual;
    // per layer each residual add feeds one norm, so the counts match).
    const double norm_out = x.norm_in_residual && phase == Phase::forward ? (x.ops.autocast ? 4.0 : x.ops.w_act) : 0.0;
    out.ops.add(make_op(phase == Phase::forward ? "dropout_residual" : "dropout_residual_bwd", OpKind::elementwise, x.ops.activations, 0,
                        e * (x.ops.w_act + 2 * w_res + 1 + norm_out)));
}

// The ops [from, to) of one linear layer (or of a block ending with it) in a phase's list.
struct OpSpan {
    int from = 0, to = 0;
};

// Megatron's column-parallel linears issue the all-reduce of their input gradient asynchronously and
// compute their weight gradient beside it, waiting only afterwards (microsoft/Megatron-DeepSpeed@c08e2cc2
// megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication.backward:
// all_reduce(grad_input, async_op=True), then grad_output.t().matmul(total_input), then handle.wait();
// without sequence parallelism, --async-tensor-model-parallel-allreduce on by default). Returns the
// seconds of the last weight-gradient GEMM among `linear`'s ops; 0 where the stack does not
// (FrameworkSpec::async_tp_grad_all_reduce), all TP comm overlaps already (overlap_tp_comm), or the
// span has none (forward, a frozen weight).
double async_grad_all_reduce_beside_s(const Execution& x, const OpList& ops, OpSpan linear) {
    if (!x.config->framework.async_tp_grad_all_reduce || x.sp || x.config->parallel.overlap_tp_comm) return 0.0;
    for (int i = linear.to - 1; i >= linear.from; --i) {
        const Op& op = ops.items[size_t(i)];
        if (std::strcmp(op.name, "wgrad") == 0) return op.count * op_time_s(op, x.config->gpu, x.cal);
    }
    return 0.0;
}

// TP collectives of one block (Megatron f/g operators): forward all-reduce after the row-parallel
// GEMM; with sequence parallelism an all-gather before the block and a reduce-scatter after it
// (Korthikanti et al. 2022, sec. 4.2.2). Backward mirrors them.
// `input_linear`: the block's column-parallel input linear, whose weight gradient the backward
// all-reduce may run beside.
void tp_block_comm(const Execution& x, Target& out, double tokens, Group group = Group::tp, OpSpan input_linear = {}) {
    if ((group == Group::tp ? x.tp : x.etp) <= 1) return;
    const double bytes = tokens * x.hidden * x.ops.w_act;
    if (x.sp || group == Group::etp) {
        add_comm(out, "tp_all_gather", Collective::all_gather, group, bytes);
        add_comm(out, "tp_reduce_scatter", Collective::reduce_scatter, group, bytes);
    } else {
        out.comm.add(
            CommOp{"tp_all_reduce", Collective::all_reduce, group, bytes, 1, async_grad_all_reduce_beside_s(x, out.ops, input_linear)});
    }
}

// Megatron's FusedScaleMaskSoftmax on causal self-attention, in a stack that runs it
// (fused_causal_softmax_max_keys; microsoft/Megatron-DeepSpeed@c08e2cc2 megatron/model/fused_softmax.py).
// is_kernel_available runs scaled_upper_triang_masked_softmax on 16-bit scores with 16 < s <= the
// stack's limit, s a multiple of 4 and the micro-batch's score matrices (micro-batch x local heads) a
// multiple of the kernel's rows per block (get_batch_per_block, scaled_masked_softmax.h: 4 warps of
// one row, of two up to 128 keys). That kernel loads row i's first i + 1 scores and writes the whole
// row; backward loads that triangle of the gradient and the probabilities
// (megatron/fused_kernels/scaled_upper_triang_masked_softmax.h). Otherwise forward_torch_softmax runs.
// Its input is 16-bit (fp16/bf16 training without autocast): the kernel needs it, the fallback casts it.
bool megatron_scores_16bit(const Execution& x) { return !x.ops.autocast && dtype_storage_bytes(x.ops.activations) == 2; }

enum class CausalSoftmax { other, triangle, torch_fp32 };
CausalSoftmax megatron_causal_softmax(const Execution& x, double s_kv, bool causal_self) {
    const FrameworkSpec& fw = x.config->framework;
    const double max_keys = fw.fused_elementwise ? fw.fused_causal_softmax_max_keys : 0;  // --no-masked-softmax-fusion: none
    if (max_keys <= 0 || !causal_self || x.s_q != s_kv) return CausalSoftmax::other;
    const double matrices = x.micro_batch * x.heads_local, rows_per_block = s_kv <= 128 ? 8 : 4;
    const bool fits =
        megatron_scores_16bit(x) && s_kv > 16 && s_kv <= max_keys && std::fmod(s_kv, 4) == 0 && std::fmod(matrices, rows_per_block) == 0;
    return fits ? CausalSoftmax::triangle : CausalSoftmax::torch_fp32;
}

// forward_torch_softmax in fp32 (softmax_in_fp32, which Megatron-LM's default query-key layer scaling
// forces): 16-bit scores cast up, scaled by the layer number, masked_fill_ with the [s, s] bool mask
// (megatron/model/utils.py attention_mask_func), softmax, cast back; autograd runs each backward.
void megatron_torch_softmax(const Execution& x, Target& out, Phase phase, double scores, double mask_bytes) {
    const bool cast = megatron_scores_16bit(x);
    const double cast_bytes = scores * (x.ops.w_act + 4), fp32_pass = scores * 8;
    if (phase == Phase::forward) {
        if (cast) out.ops.add(make_op("softmax_input_cast", OpKind::precision_overhead, x.ops.activations, 0, cast_bytes));
        out.ops.add(make_op("attn_scale", OpKind::elementwise, x.ops.activations, 0, fp32_pass));
        out.ops.add(make_op("attn_mask_fill", OpKind::elementwise, x.ops.activations, 0, fp32_pass + mask_bytes));
        out.ops.add(make_op("softmax", OpKind::elementwise, x.ops.activations, 0, fp32_pass));
        if (cast) out.ops.add(make_op("softmax_probs_cast", OpKind::precision_overhead, x.ops.activations, 0, cast_bytes));
        return;
    }
    if (cast) out.ops.add(make_op("softmax_probs_cast_bwd", OpKind::precision_overhead, x.ops.activations, 0, cast_bytes));
    out.ops.add(make_op("softmax_bwd", OpKind::elementwise, x.ops.activations, 0, scores * 12));
    out.ops.add(make_op("attn_mask_fill_bwd", OpKind::elementwise, x.ops.activations, 0, fp32_pass + mask_bytes));
    out.ops.add(make_op("attn_scale_bwd", OpKind::elementwise, x.ops.activations, 0, fp32_pass));
    if (cast) out.ops.add(make_op("softmax_input_cast_bwd", OpKind::precision_overhead, x.ops.activations, 0, cast_bytes));
}

// Attention core for queries of `s_q` and keys of `s_kv` tokens; `local`: the layer attends locally.
void attention_core(const Execution& x, Target& out, Phase phase, double s_kv, bool causal, bool local) {
    const double bh = x.micro_batch * x.heads_local;
    const double dqk = x.head_dim_qk, dv = x.head_dim_v;
    if (x.ops.flash) {
        LayerKind kind;
        kind.local = local;
        const double keys = causal ? attended_keys(x.config->model, kind, s_kv) : s_kv;
        out.ops.add(flash_attention_op(x.ops.attention, x.micro_batch, x.heads_local, x.kv_heads_local, x.s_q, s_kv, keys, dqk, dv,
                                       x.ops.w_attn, phase != Phase::forward));
        return;
    }
    // Materialised attention (Vaswani et al. 2017): batched QK^T, scale-mask-softmax and dropout over
    // the s_q x s_kv score matrix (memory-bound), batched PV. The full matrix is computed even when causal.
    const double scores = bh * x.s_q * s_kv;
    const double wa = x.ops.w_attn;
    const double w_soft = x.ops.autocast ? 4.0 : x.ops.w_act;  // softmax is on autocast's fp32 list
    // Transformer-XL relative attention (Dai et al. 2019 sec. 3.3; reference code kimiyoung/transformer-xl
    // pytorch/mem_transformer.py RelPartialLearnableMultiHeadAttn, which NVIDIA's DeepLearningExamples
    // version keeps): besides the content scores AC a position projection r_net (s_kv x h x h, shared by
    // the batch), the position scores BD (a second QK^T-sized matmul), _rel_shift (zero-pad concat and
    // a strided copy: read + write of the padded matrix), then AC + BD (read 2, write 1), scale and
    // mask as separate passes (read 1, write 1 each). Backward mirrors the matmuls and copies.
    const double w_s = x.ops.w_act;
    if (x.relative && phase == Phase::forward) {
        out.ops.add(make_gemm("rel_pos_proj", OpKind::gemm, x.ops.gemm, s_kv, x.heads_local * x.head_dim, x.hidden,
                              s_kv * x.hidden * 2 * x.ops.w_gemm + s_kv * x.heads_local * x.head_dim * x.ops.w_act, 1));
        out.ops.add(make_gemm("attn_pos_scores", OpKind::attention, x.ops.attention, x.s_q, s_kv, x.head_dim,
                              (x.s_q + s_kv) * x.head_dim * wa + x.s_q * s_kv * x.ops.w_act, bh));
        out.ops.add(make_op("rel_shift", OpKind::elementwise, x.ops.activations, 0, scores * 3 * w_s));
        out.ops.add(make_op("score_add_scale_mask", OpKind::elementwise, x.ops.activations, 0, scores * 7 * w_s));
    }
    if (x.relative && phase == Phase::backward) {
        out.ops.add(make_op("rel_shift_bwd", OpKind::elementwise, x.ops.activations, 0, scores * 3 * w_s));
        out.ops.add(make_op("score_scale_bwd", OpKind::elementwise, x.ops.activations, 0, scores * 2 * w_s));
        out.ops.add(make_gemm("attn_pos_scores_dgrad", OpKind::attention, x.ops.attention, x.s_q, x.head_dim, s_kv,
                              x.s_q * s_kv * wa + s_kv * x.head_dim * wa + x.s_q * x.head_dim * x.ops.w_act, bh));
        out.ops.add(make_gemm("attn_pos_scores_wgrad", OpKind::attention, x.ops.attention, s_kv, x.head_dim, x.s_q,
                              x.s_q * s_kv * wa + x.s_q * x.head_dim * wa + s_kv * x.head_dim * x.ops.w_act, bh));
        out.ops.add(make_gemm(
            "rel_pos_proj_wgrad", OpKind::gemm, x.ops.gemm, x.hidden, x.heads_local * x.head_dim, s_kv,
            s_kv * (x.hidden + x.heads_local * x.head_dim) * x.ops.w_gemm + x.hidden * x.heads_local * x.head_dim * x.ops.w_grad, 1));
    }
    // Eager attention (fused_elementwise false) scales and masks the scores in passes of their own
    // before the softmax (DeepLearningExamples BERT: scores / sqrt(d), + mask); backward scales the
    // gradient once more (the mask add passes it through). Transformer-XL's passes are above.
    const bool eager_scale_mask = !x.fused_elementwise && !x.relative;
    const CausalSoftmax megatron = megatron_causal_softmax(x, s_kv, causal && !local && !x.relative);
    const double read = megatron == CausalSoftmax::triangle ? (s_kv + 1) / (2 * s_kv) : 1.0;  // share of the scores a pass loads
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("attn_scores", OpKind::attention, x.ops.attention, x.s_q, s_kv, dqk,
                              (x.s_q + s_kv) * dqk * wa + x.s_q * s_kv * x.ops.w_act, bh));
        if (eager_scale_mask) {
            out.ops.add(make_op("attn_scale", OpKind::elementwise, x.ops.activations, 0, scores * 2 * w_s));
            out.ops.add(make_op("attn_mask_add", OpKind::elementwise, x.ops.activations, 0, scores * 2 * w_s));
        }
        if (megatron == CausalSoftmax::torch_fp32)
            megatron_torch_softmax(x, out, phase, scores, x.s_q * s_kv);
        else
            out.ops.add(make_op("softmax", OpKind::elementwise, x.ops.activations, 0, scores * (read * x.ops.w_act + w_soft)));
        if (x.ops.autocast)
            out.ops.add(make_op("autocast_probs_cast", OpKind::precision_overhead, x.ops.activations, 0, scores * (4.0 + wa)));
        out.ops.add(make_op("attn_dropout", OpKind::elementwise, x.ops.activations, 0, scores * (2 * x.ops.w_act + 1)));
        out.ops.add(make_gemm("attn_context", OpKind::attention, x.ops.attention, x.s_q, dv, s_kv,
                              x.s_q * s_kv * wa + s_kv * dv * wa + x.s_q * dv * x.ops.w_act, bh));
        return;
    }
    out.ops.add(make_gemm("attn_context_dgrad", OpKind::attention, x.ops.attention, x.s_q, s_kv, dv,
                          (x.s_q + s_kv) * dv * wa + x.s_q * s_kv * x.ops.w_act, bh));
    out.ops.add(make_gemm("attn_context_wgrad", OpKind::attention, x.ops.attention, s_kv, dv, x.s_q,
                          (x.s_q * s_kv + x.s_q * dv) * wa + s_kv * dv * x.ops.w_act, bh));
    out.ops.add(make_op("attn_dropout_bwd", OpKind::elementwise, x.ops.activations, 0, scores * (2 * x.ops.w_act + 1)));
    if (megatron == CausalSoftmax::torch_fp32)
        megatron_torch_softmax(x, out, phase, scores, x.s_q * s_kv);
    else
        out.ops.add(make_op("softmax_bwd", OpKind::elementwise, x.ops.activations, 0, scores * (2 * read * w_soft + x.ops.w_act)));
    if (eager_scale_mask) out.ops.add(make_op("attn_scale_bwd", OpKind::elementwise, x.ops.activations, 0, scores * 2 * w_s));
    out.ops.add(make_gemm("attn_scores_dgrad", OpKind::attention, x.ops.attention, x.s_q, dqk, s_kv,
                          x.s_q * s_kv * wa + s_kv * dqk * wa + x.s_q * dqk * x.ops.w_act, bh));
    out.ops.add(make_gemm("attn_scores_wgrad", OpKind::attention, x.ops.attention, s_kv, dqk, x.s_q,
                          x.s_q * s_kv * wa + x.s_q * dqk * wa + s_kv * dqk * x.ops.w_act, bh));
}

// MLA projections (DeepSeek-V2 eqs. 9-14 and 16-18; Megatron-Core MLASelfAttention): the down
// projections of Q and of K/V (+ the shared RoPE key) are duplicated over TP and run on the block
// input's T_sp tokens, their latents are RMS-normed and, with SP, all-gathered over TP; the up
// projections split the heads. RoPE itself is an elementwise op on q^R, k^R, not costed (as for
// every rotary model here).
void mla_projections(const Execution& x, Target& out, Phase phase) {
    const MlaSpec& a = x.config->model.mla;
    const double ql = double(a.q_lora_rank), kvl = double(a.kv_lora_rank), rope = double(a.qk_rope_head_dim);
    auto latent_norm = [&](double width) {
        const double e = x.tokens * width;
        out.ops.add(make_op(phase == Phase::forward ? "mla_latent_norm" : "mla_latent_norm_bwd", OpKind::elementwise, x.ops.activations, 0,
                            e * (phase == Phase::forward ? 2 : 3) * x.ops.w_act));
    };
    if (ql > 0) {
        linear(x, out, phase, "mla_q_down", x.tokens_sp, x.hidden, ql, 1, true);
        latent_norm(ql);
        linear(x, out, phase, "mla_q_up", x.tokens, ql, x.heads_local * x.head_dim_qk, 1, true);
    } else {
        linear(x, out, phase, "mla_q", x.tokens, x.hidden, x.heads_local * x.head_dim_qk, 1, true);
    }
    linear(x, out, phase, "mla_kv_down", x.tokens_sp, x.hidden, kvl + rope, 1, true);
    latent_norm(kvl);
    linear(x, out, phase, "mla_kv_up", x.tokens, kvl, x.heads_local * (double(a.qk_nope_head_dim) + x.head_dim_v), 1, true);
    if (x.sp) add_comm(out, "tp_mla_latent_all_gather", Collective::all_gather, Group::tp, x.tokens * (ql + kvl + rope) * x.ops.w_act);
}

// Attention block: [SP all-gather] norm, QKV (or Q and KV for cross-attention), core, output
// projection, [all-reduce | reduce-scatter], dropout + residual.
void attention_block(const Execution& x, Target& out, Phase phase, bool causal, bool cross, bool local) {
    const double q_out = x.heads_local * x.head_dim, kv_out = 2 * x.kv_heads_local * x.head_dim;
    if (phase == Phase::forward) norm(x, out, phase, x.tokens_sp);
    if (x.mla && !cross) {
        mla_projections(x, out, phase);
        attention_core(x, out, phase, x.seq_len, causal, local);
        linear(x, out, phase, "attn_out", x.tokens, x.heads_local * x.head_dim_v, x.hidden, 1, false);
        dropout_residual(x, out, phase);
        if (phase == Phase::backward) norm(x, out, phase, x.tokens_sp);
        // The latents are all-gathered instead of the block input; the output is reduced as usual.
        if (x.tp > 1) {
            const double bytes = x.tokens * x.hidden * x.ops.w_act;
            if (x.sp)
                add_comm(out, "tp_reduce_scatter", Collective::reduce_scatter, Group::tp, bytes);
            else
                add_comm(out, "tp_all_reduce", Collective::all_reduce, Group::tp, bytes);
        }
        const int64_t cp = x.config->parallel.cp;
        if (cp > 1) {  // ring exchange of the up-projected K and V, as below
            const double bytes = x.micro_batch * x.s_q * x.heads_local * (x.head_dim_qk + x.head_dim_v) * x.ops.w_act;
            add_comm(out, "cp_kv_exchange", Collective::p2p, Group::cp, bytes, double(cp - 1) * (phase == Phase::forward ? 1 : 2));
        }
        return;
    }
    const int first = out.ops.size;
    if (cross) {  // Q from the decoder, K and V from the encoder output (same length here)
        linear(x, out, phase, "q", x.tokens, x.hidden, q_out, 1, true);
        linear(x, out, phase, "kv", x.tokens, x.hidden, kv_out, 1, false);
    } else {
        // Transformer-XL projects the concatenated [memory, segment] (Dai et al. 2019 eq. in sec. 3.3;
        // reference code: qkv_net(cat([mems, w]))), so Q, K and V run over b (s + memory_len) tokens.
        linear(x, out, phase, "qkv", x.tokens + x.micro_batch * x.memory_len, x.hidden, q_out + kv_out, 1, true);
    }
    const OpSpan input_linear{first, out.ops.size};  // the block's column-parallel input linear
    attention_core(x, out, phase, x.seq_len + x.memory_len, causal && !cross, local && !cross);
    linear(x, out, phase, "attn_out", x.tokens, q_out, x.hidden, 1, false);
    dropout_residual(x, out, phase);
    if (phase == Phase::backward) norm(x, out, phase, x.tokens_sp);
    tp_block_comm(x, out, x.tokens, Group::tp, input_linear);
    // Context parallelism: ring exchange of the local K/V chunk with the other cp-1 ranks forward;
    // K/V again plus dK/dV backward (Liu et al. 2023 Ring Attention; Megatron-Core CP).
    const int64_t cp = x.config->parallel.cp;
    if (cp > 1) {
        const double bytes = x.micro_batch * x.s_q * kv_out * x.ops.w_act;
        add_comm(out, "cp_kv_exchange", Collective::p2p, Group::cp, bytes, double(cp - 1) * (phase == Phase::forward ? 1 : 2));
    }
}

// Dense MLP of width `ffn` (already TP-split) over m tokens, `count` copies (experts).
void mlp_core(const Execution& x, Target& out, Phase phase, double m, double ffn, double count) {
    const double up = x.gated ? 2.0 : 1.0;  // gate + up fused
    const double act_in = m * ffn * up, act_out = m * ffn;
    if (phase == Phase::forward) {
        linear(x, out, phase, "mlp_up", m, x.hidden, ffn * up, count, true);
        out.ops.add(make_op("activation", OpKind::elementwise, x.ops.activations, 0, (act_in + act_out) * x.ops.w_act, count));
        linear(x, out, phase, "mlp_down", m, ffn, x.hidden, count, false);
    } else {
        linear(x, out, phase, "mlp_down", m, ffn, x.hidden, count, false);
        out.ops.add(make_op("activation_bwd", OpKind::elementwise, x.ops.activations, 0, (2 * act_in + act_out) * x.ops.w_act, count));
        linear(x, out, phase, "mlp_up", m, x.hidden, ffn * up, count, true);
    }
}

// Passes over the routed token rows that a framework's MoE layer runs besides the first permute
// (by expert, before the dispatch) and the un-permute (after the combine), each a memory-bound
// kernel that reads and writes the rows (moe_permute_op), forward and backward alike (the gradient
// of a row gather is the scatter of the same rows, that of a copy a copy).
// - Megatron-Core's alltoall dispatcher leaves the received tokens ordered by source rank and sorts
//   them by local expert before the grouped GEMM ("Permutation 2", sort_chunks_by_idxs: torch.cat of
//   the chunks; drop-and-pad: a transpose(0, 1).contiguous()), and back after it ("Unpermutation 2"),
//   whenever there are several local experts (NVIDIA/Megatron-LM@0014f13713bfa38a8bab4ae11edd6917d35165ce
//   megatron/core/transformer/moe/token_dispatcher.py dispatch_postprocess / combine_preprocess; the
//   probabilities are applied in the experts' activation, experts.py bias_act_func).
// - torchtitan's grouped-mm experts pad and reorder their rows with _permute (a torch.vstack copy with
//   a zero row, then x[permuted_indices, :]) and restore them with _unpermute (an index_put), with or
//   without EP (ExpertParallel._token_dispatch, else indices_padding_wrapper); its MoE.forward scales the
//   routed rows by their scores in fp32 (score_before_experts: .to(float32) * scores, .to(bf16): three
//   kernels eager, one when compiled) and un-sorts the experts' output into a zero-filled buffer (torch.zeros,
//   index_put) before summing the top-k copies per token (the un-permute) (pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce
//   torchtitan/models/moe/utils.py, moe.py).
struct MoeReorder {
    bool sort_local = false;  // Megatron-Core permutation 2 and its inverse
    bool titan = false;       // torchtitan's _permute / _unpermute, score scaling and zero-filled un-sort
};
MoeReorder moe_reorder(const Execution& x, MoeDispatcher dispatcher, double local_experts) {
    MoeReorder r;
    r.titan = x.config->framework.torch_grouped_mm;
    r.sort_local = !r.titan && dispatcher == MoeDispatcher::alltoall && local_experts > 1;
    return r;
}
// `tokens`: the rank's tokens; `sent`: its routed rows (before the dispatch, after the combine);
// `received`: the rows its local experts get.
void moe_reorder_ops(const Execution& x, Target& out, const MoeReorder& r, double tokens, double sent, double received,
                     bool before_experts) {
    const DType d = x.ops.activations;
    const double w = x.ops.w_act, h = x.hidden;
    if (r.sort_local)
        out.ops.add(make_op(before_experts ? "moe_sort_chunks" : "moe_unsort_chunks", OpKind::elementwise, d, 0, 2 * received * h * w));
    // Megatron-Core's unfused unpermute scatter-adds into torch.zeros(restore_shape) (moe_utils.py
    // unpermute), as the backward of permute's index_select adds into zeros: a fill of the tokens.
    if (!r.titan && !before_experts) out.ops.add(make_op("moe_unpermute_zero_fill", OpKind::elementwise, d, 0, tokens * h * w));
    if (!r.titan) return;
    if (before_experts) {
        if (x.config->training.compile) {
            out.ops.add(make_op("moe_score_scale", OpKind::elementwise, d, 0, 2 * sent * h * w));
        } else {  // bf16 -> fp32, x scores, fp32 -> bf16
            out.ops.add(make_op("moe_score_to_fp32", OpKind::elementwise, d, 0, sent * h * (w + 4)));
            out.ops.add(make_op("moe_score_scale", OpKind::elementwise, d, 0, sent * h * 8));
            out.ops.add(make_op("moe_score_to_bf16", OpKind::elementwise, d, 0, sent * h * (4 + w)));
        }
        out.ops.add(make_op("moe_pad_rows", OpKind::elementwise, d, 0, 2 * received * h * w));     // torch.vstack
        out.ops.add(make_op("moe_pad_permute", OpKind::elementwise, d, 0, 2 * received * h * w));  // x[permuted_indices, :]
    } else {
        out.ops.add(make_op("moe_pad_unpermute", OpKind::elementwise, d, 0, 2 * received * h * w));  // index_put
        out.ops.add(make_op("moe_unsort_zero_fill", OpKind::elementwise, d, 0, sent * h * w));       // torch.zeros
        out.ops.add(make_op("moe_unsort", OpKind::elementwise, d, 0, 2 * sent * h * w));             // index_put
    }
}

// The router's small kernels over the [tokens, experts] scores besides its GEMM and the top-k,
// each one launch over the fp32 scores (moe_topk_op's bytes), counted in the framework's code:
// - Megatron-Core (moe_router_fusion off, its default): topk_softmax_with_capacity runs softmax over the
//   top-k scores, zeros_like + scatter (probs), zeros_like + int + scatter + bool (routing map) and a
//   sum (tokens per expert); token dropping (capacity factor) adds topk over the tokens, zeros_like +
//   scatter + bool (capacity mask), logical_and and the masking multiply; the router also computes the
//   scores for the aux loss (softmax) and permute() gathers the probabilities (transpose contiguous,
//   masked_select). Backward: the masking multiply, the scatter's gather, softmax backward, topk's
//   zero-filled scatter and the probabilities' masked_scatter (two). (NVIDIA/Megatron-LM@0014f13713bfa38a8bab4ae11edd6917d35165ce
//   megatron/core/transformer/moe/moe_utils.py topk_softmax_with_capacity, permute; router.py
//   aux_loss_load_balancing, compute_routing_scores_for_aux_loss: moe_aux_loss_coeff 0 by default.)
// - torchtitan: TokenChoiceTopKRouter casts to fp32, applies the sigmoid, adds the expert bias, gathers
//   the top scores, scales them and counts tokens per expert (histc); MoE.forward accumulates the
//   counts; TokenReorderer runs histc, argsort, a gather of the scores and the token index division.
//   Backward: the gather's zero-filled scatter (two), the scale, sigmoid and cast backward. Compiled,
//   Inductor fuses the pointwise chains: the cast, sigmoid and bias add are one kernel, the division
//   joins the gather, the backward's pointwise ops one (pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce
//   torchtitan/models/moe/moe.py TokenChoiceTopKRouter.forward, TokenReorderer.forward, MoE.forward).
double moe_router_small_kernels(const Execution& x, bool backward) {
    if (x.config->framework.torch_grouped_mm) {
        if (x.config->training.compile) return backward ? 3 : 6;
        return backward ? 5 : 11;
    }
    const bool dropping = x.config->model.moe.capacity_factor > 0;
    if (backward) return 6 + (dropping ? 1 : 0);
    return 11 + (dropping ? 6 : 0);
}

// Routed-expert MLP (Shazeer et al. 2017; Fedus et al. 2021): router GEMM, top-k, permute, EP
// all-to-all dispatch, the local experts' GEMMs on top_k T ep / E tokens each, all-to-all combine,
// weighted un-permute; plus always-active shared experts (DeepSeekMoE, Dai et al. 2024).
void moe_mlp(const Execution& x, Target& out, Phase phase) {
    const MoeSpec& moe = x.config->model.moe;
    const double E = double(std::max<int64_t>(moe.experts, 1));
    const double ep = x.ep;
    const double k = double(std::max<int64_t>(moe.top_k, 1));
    // Each rank routes its share of the TP group's tokens: all of them when etp = tp, etp / tp of them
    // when the experts fold into their own etp x ep groups (Megatron-Core MoEAlltoAllTokenDispatcher:
    // all-to-all over EP, then gather over the expert-TP group).
    const double fold = x.etp / x.tp;
    const double routed = x.tokens * k * fold;
    const double f_local = double(moe.expert_ffn_hidden) / x.etp;  // expert columns over expert TP
    const DType router_dtype = x.ops.attention;                    // routers are not quantised to fp8
    const double wr = dtype_storage_bytes(router_dtype);
    if (phase == Phase::forward) {
        out.ops.add(make_gemm("router", OpKind::gemm, router_dtype, x.tokens, E, x.hidden,
                              (x.tokens * x.hidden + x.hidden * E) * wr + x.tokens * E * 4, 1));
        out.ops.add(moe_topk_op(x.ops.activations, x.tokens, E));
    }
    for (double i = 0, n = moe_router_small_kernels(x, phase == Phase::backward); i < n; ++i) {
        Op op = moe_topk_op(x.ops.activations, x.tokens, E);
        op.name = "router_elementwise";
        out.ops.add(op);
    }
    if (phase == Phase::backward) {
        out.ops.add(make_gemm("router_dgrad", OpKind::gemm, router_dtype, x.tokens, x.hidden, E,
                              (x.tokens * E + x.hidden * E) * wr + x.tokens * x.hidden * x.ops.w_act, 1));
        out.ops.add(make_gemm("router_wgrad", OpKind::gemm, router_dtype, x.hidden, E, x.tokens,
                              (x.tokens * x.hidden + x.tokens * E) * wr + x.hidden * E * 4, 1));
    }
    out.ops.add(moe_permute_op(x.ops.activations, routed, x.hidden, x.ops.w_act));
    // Dropless routing sizes the dispatch on the host, so the forward waits for the token counts:
    // Megatron-Core's alltoall dispatcher syncs "before_ep_alltoall" (EP > 1 or several local
    // experts; drop-and-pad: "no_sync"), its allgather dispatcher calls tokens_per_expert.cpu()
    // (NVIDIA/Megatron-LM@0014f13713bfa38a8bab4ae11edd6917d35165ce megatron/core/transformer/moe/
    // token_dispatcher.py); torchtitan's EP dispatch copies the output splits to the host with
    // non_blocking=False ("this would incur a device-to-host sync", pytorch/torchtitan
    // torchtitan/distributed/expert_parallel.py); DeepEP's dispatch is not costed with one here.
    const MoeDispatcher dispatcher = x.config->training.moe_dispatcher;
    const bool dropless = !(moe.capacity_factor > 0);
    const bool several_local = E / ep > 1 && !x.config->framework.torch_grouped_mm;
    if (phase == Phase::forward && dropless &&
        (dispatcher == MoeDispatcher::allgather || (dispatcher == MoeDispatcher::alltoall && (ep > 1 || several_local))))
        out.ops.add(moe_token_count_sync_op(x.ops.activations, E));
    // The busiest EP rank sets the pace of the dispatch and of the experts (Execution::expert_load).
    const double load = x.expert_load;
    // Dispatch and combine in the activation dtype (Megatron-Core fused_a2a.py: DeepEP and HybridEP
    // dispatch the bf16 hidden states, fp8_dispatch off), by the dispatcher's pattern (moe_exchange).
    if (dispatcher == MoeDispatcher::allgather) {
        const MoeExchange d = moe_exchange(dispatcher, false, x.tokens * fold, routed, x.hidden, ep, x.ops.w_act);
        const MoeExchange c = moe_exchange(dispatcher, true, x.tokens * fold, routed, x.hidden, ep, x.ops.w_act);
        add_comm(out, "ep_all_gather", d.collective, Group::ep, d.bytes);
        add_comm(out, "ep_reduce_scatter", c.collective, Group::ep, c.bytes);
    } else {
        const MoeExchange d = moe_exchange(dispatcher, false, load * x.tokens * fold, load * routed, x.hidden, ep, x.ops.w_act);
        add_comm(out, "ep_all_to_all", d.collective, Group::ep, d.bytes, 2);  // dispatch + combine
        if (dispatcher == MoeDispatcher::alltoall && ep > 1) {
            const bool titan = x.config->framework.torch_grouped_mm;
            // The token counts per expert, exchanged before the dispatch can be sized (forward only: the
            // backward reuses the splits): Megatron-Core's preprocess all-gathers them over the TP x EP
            // group (token_dispatcher.py gather_from_sequence_parallel_region(num_local_tokens_per_expert)),
            // torchtitan all-to-alls them (pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce
            // torchtitan/distributed/expert_parallel.py _token_dispatch, all_to_all_single).
            if (phase == Phase::forward)
                add_comm(out, "ep_token_counts", titan ? Collective::all_to_all : Collective::all_gather, Group::ep,
                         (titan ? 1.0 : ep) * E * 8);
            // Megatron-Core sends the routing probabilities of the rows in an all-to-all of their own
            // (dispatch_all_to_all: global_probs, in the logits' dtype), their gradient back in the backward.
            if (!titan) add_comm(out, "ep_probs_all_to_all", Collective::all_to_all, Group::ep, load * routed * x.ops.w_act);
        }
    }
    // The local experts run as one grouped GEMM, each group padded to the M tile (expert_group_rows).
    const double local_experts = E / ep;
    const double rows = expert_group_rows(load * routed * ep / E, local_experts);
    // The token rows reordered around the experts beyond the first permute (moe_reorder_ops).
    const MoeReorder reorder = moe_reorder(x, dispatcher, local_experts);
    moe_reorder_ops(x, out, reorder, x.tokens * fold, routed, load * routed, true);
    const int first = out.ops.size;
    mlp_core(x, out, phase, rows, f_local, local_experts);
    for (int i = first; i < out.ops.size; ++i)  // the framework's grouped kernel (Calibration::grouped_gemm_rate)
        if (out.ops.items[size_t(i)].kind == OpKind::gemm) out.ops.items[size_t(i)].grouped = true;
    moe_reorder_ops(x, out, reorder, x.tokens * fold, routed, load * routed, false);
    out.ops.add(moe_unpermute_op(x.ops.activations, x.tokens * fold, routed, x.hidden, x.ops.w_act));
    // Shared experts are a dense MLP over the attention TP group (Megatron-Core SharedExpertMLP),
    // whose output the routed experts' output is then added to (a third elementwise pass over the
    // tokens: Megatron-Core token_dispatcher.py `output += shared_expert_output`, torchtitan moe.py
    // `out + out_experts`, commits as in moe_reorder).
    if (moe.shared_experts > 0) {
        mlp_core(x, out, phase, x.tokens, double(moe.expert_ffn_hidden) / x.tp * double(moe.shared_experts), 1);
        out.ops.add(make_op("shared_expert_add", OpKind::elementwise, x.ops.activations, 0, 3 * x.tokens * fold * x.hidden * x.ops.w_act));
    }
}

void mlp_block(const Execution& x, Target& out, Phase phase, bool moe) {
    if (phase == Phase::forward) norm(x, out, phase, x.tokens_sp);
    const int first = out.ops.size;
    if (moe)
        moe_mlp(x, out, phase);
    else
        mlp_core(x, out, phase, x.tokens, double(x.config->model.ffn_hidden) / x.tp, 1);
    const OpSpan mlp = moe ? OpSpan{} : OpSpan{first, out.ops.size};  // its backward ends with the up projection
    dropout_residual(x, out, phase);
    if (phase == Phase::backward) norm(x, out, phase, x.tokens_sp);
    // Folded experts gather and scatter their tokens over the expert-TP group instead of TP.
    if (moe && x.etp != x.tp)
        tp_block_comm(x, out, x.tokens * x.etp / x.tp, Group::etp);
    else
        tp_block_comm(x, out, x.tokens, Group::tp, mlp);
}

void layer(const Execution& x, Target& out, Phase phase, LayerKind kind) {
    attention_block(x, out, phase, kind.causal, false, kind.local);
    if (kind.cross_attention) attention_block(x, out, phase, false, true, false);
    mlp_block(x, out, phase, kind.moe);
}

// ZeRO-3 / FSDP: gather the layer's weights for forward and again for backward, reduce-scatter its
// gradients every micro-batch (Rajbhandari et al. 2020, sec. 5.3; PyTorch FSDP FULL_SHARD).
// Expert weights shard over the expert data-parallel group (dp / ep ranks, Megatron-Core
// expert_data_parallel_group), as the ZeRO-1/2 reduction does (predict.cpp), the rest over dp.
// Only the trainable part has gradients to reduce (LoRA adapters count as dense); a frozen layer
// (no backward) gathers once.
void zero3_comm(const Execution& x, CommList& fwd, CommList& bwd, double params, double expert_params, double trainable, bool backward) {
    const Config& c = *x.config;
    const PrecisionSpec& p = x.precision();
    if (c.parallel.zero < 3 || c.parallel.weight_replicas() <= 1) return;
    const double expert_trainable = c.training.finetune.adapters() ? 0.0 : std::min(expert_params, trainable);
    const double shards[2][2] = {{params - expert_params, trainable - expert_trainable}, {expert_params, expert_trainable}};
    const Group groups[2] = {Group::dp, Group::expert_dp};
    for (int i = 0; i < 2; ++i) {
        const double n = shards[i][0], n_trainable = shards[i][1];
        if (n <= 0) continue;
        const CommOp gather{"zero3_param_all_gather", Collective::all_gather, groups[i], n * dtype_storage_bytes(p.params), 1};
        fwd.add(gather);
        if (!backward) continue;
        bwd.add(gather);
        if (n_trainable > 0)
            bwd.add(CommOp{"zero3_grad_reduce_scatter", Collective::reduce_scatter, groups[i],
                           n_trainable * dtype_storage_bytes(p.grad_reduce), 1});
    }
}

// The linear layers of one layer kind as (k, n, copies on this GPU, is MLP, separate projections
// fused in it: LoRA gives each its own A), TP/EP-sharded.
struct LinearShape {
    double k, n, count;
    bool mlp;
    double parts = 1;
};
FixedList<LinearShape, 12> layer_linears(const ModelSpec& m, LayerKind kind, double t, double ep, double etp) {
    FixedList<LinearShape, 12> out;
    const double h = double(m.hidden), heads_l = double(m.heads) / t, hd = double(m.effective_head_dim());
    const double kv_l = std::max(double(m.kv_heads > 0 ? m.kv_heads : m.heads) / t, 1.0);
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
    const double up = gated_mlp(m.activation) ? 2 : 1;
    auto mlp = [&](double f, double copies) {
        out.add({h, f * up, copies, true, up});
        out.add({f, h, copies, true});
    };
    if (!kind.moe) {
        mlp(double(m.ffn_hidden) / t, 1);
    } else {
        mlp(double(m.moe.expert_ffn_hidden) / etp, double(m.moe.experts) / ep);
        if (m.moe.shared_experts > 0) mlp(double(m.moe.expert_ffn_hidden * m.moe.shared_experts) / t, 1);
    }
    return out;
}

double adapter_params(const Config& c, LayerKind kind, double tp, double ep, double etp) {
    const FinetuneSpec& ft = c.training.finetune;
    if (!ft.adapters() || kind.frozen) return 0;
    double params = 0;
    for (const LinearShape& l : layer_linears(c.model, kind, tp, ep, etp))
        if (!l.mlp || ft.lora_targets == LoraTargets::all_linear) params += l.count * double(ft.lora_rank) * (l.parts * l.k + l.n);
    return params;
}

// =====================================================================================
// [SECTION] Pieces: transformer layer, embedding, LM head, optimizer step
// =====================================================================================

}  // namespace

double layer_adapter_params_local(const Execution& x, LayerKind kind) { return adapter_params(*x.config, kind, x.tp, x.ep, x.etp); }
double layer_adapter_params(const Config& c, LayerKind kind) { return adapter_params(c, kind, 1, 1, 1); }

double layer_nf4_params_local(const Execution& x, LayerKind kind) {
    if (!x.nf4) return 0;
    double params = 0;
    for (const LinearShape& l : layer_linears(x.config->model, kind, x.tp, x.ep, x.etp)) params += l.count * l.k * l.n;
    return params;
}

double layer_trainable_params_local(const Execution& x, LayerKind kind) {
    if (kind.frozen) return 0;
    return x.config->training.finetune.adapters() ? layer_adapter_params_local(x, kind) : layer_params_local(x, kind);
}

double layer_params_local(const Execution& x, LayerKind kind) {
    const ModelSpec& m = x.config->model;
    const double t = x.tp;
    const double h = double(m.hidden);
    const double replicated = double(attention_replicated_parameter_count(m));  // MLA down projections: whole on every TP rank
    const double attn = replicated + (double(attention_parameter_count(m)) - replicated) / t;
    const double mats = double(mlp_matrices(m.activation));
    double mlp = mats * h * double(m.ffn_hidden) / t;
    if (kind.moe) {
        const double ep = x.ep;
        const double expert = mats * h * double(m.moe.expert_ffn_hidden) / t;
        if (x.etp == t) {
            mlp = h * double(m.moe.experts) + expert * (double(m.moe.experts) / ep + double(m.moe.shared_experts));
        } else {  // routed experts over expert TP, shared experts over TP
            const double routed = mats * h * double(m.moe.expert_ffn_hidden) / x.etp;
            mlp = h * double(m.moe.experts) + routed * double(m.moe.experts) / ep + expert * double(m.moe.shared_experts);
        }
    }
    const double norms = (m.norm == Norm::layernorm ? 2 : 1) * h * (kind.cross_attention ? 3 : 2);
    return attn * (kind.cross_attention ? 2 : 1) + mlp + norms;
}

double layer_expert_params_local(const Execution& x, LayerKind kind) {
    if (!kind.moe) return 0;
    const ModelSpec& m = x.config->model;
    const double ep = x.ep;
    return double(mlp_matrices(m.activation)) * double(m.hidden) * double(m.moe.expert_ffn_hidden) / x.etp * double(m.moe.experts) / ep;
}

namespace {

// Output widths of the separate torch matmuls (aten.mm) a fused GEMM of ours stands for, in forward
// order: torchtitan's Llama runs wq, wk, wv and w1, w3 as their own nn.Linear (torchtitan/models/llama3).
std::vector<double> matmul_parts(const Execution& x, const Op& op) {
    const double q = x.heads_local * x.head_dim;
    if (std::strcmp(op.name, "qkv") == 0 && op.n > q) return {q, (op.n - q) / 2, (op.n - q) / 2};
    if (fused_parts(x, op.name) == 2) return {op.n / 2, op.n / 2};
    return {op.n};
}

// torchtitan per-op selective activation checkpointing (torchtitan/distributed/activation_checkpoint.py
// _apply_op_sac): the outputs of mm, SDPA and reduce-scatter are saved "except every second mm" of
// the layer; every other op is re-run before the layer's backward. JAX's
// checkpoint_dots_with_no_batch_dims (jax/_src/ad_checkpoint.py: a dot_general without batch
// dimensions, i.e. every weight matmul) saves all weight matmuls; the attention core (batched dots
// or a fused-attention custom call) is re-run with the rest. Returns the recompute's ops and
// `saved_width`, the output width per token of the saved matmuls (for memory.cpp).
OpList op_sac_recompute(const Execution& x, const OpList& forward, double* saved_width) {
    OpList out;
    int mm = 0;
    double saved = 0;
    for (const Op& op : forward) {
        if (op.kind == OpKind::attention && !x.sac_saves_matmuls) continue;  // SDPA output saved
        if (op.kind != OpKind::gemm) {
            out.add(op);
            continue;
        }
        double recomputed = 0;
        for (double width : matmul_parts(x, op)) {
            if (++mm % 2 == 0 && !x.sac_saves_matmuls)
                recomputed += width;
            else
                saved += width * op.count * op.m / std::max(x.tokens, 1.0);
        }
        if (recomputed <= 0) continue;
        Op re = op;
        const double share = recomputed / op.n;
        re.n *= share;
        re.flops *= share;
        re.bytes *= share;
        out.add(re);
    }
    if (saved_width) *saved_width = saved;
    return out;
}

}  // namespace

double op_sac_saved_width(const Execution& x, LayerKind kind) {
    OpList forward;
    CommList comm;
    Target fwd{forward, comm};
    layer(x, fwd, Phase::forward, kind);
    double saved = 0;
    op_sac_recompute(x, forward, &saved);
    return saved;
}

PieceOps layer_ops(const Execution& x, LayerKind kind) {
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    layer(x, fwd, Phase::forward, kind);
    if (kind.frozen) {  // leading frozen layers: nothing before them needs a gradient, so no backward
        zero3_comm(x, out.comm_forward, out.comm_backward, layer_params_local(x, kind), layer_expert_params_local(x, kind), 0, false);
        return out;
    }
    // Recompute (Korthikanti et al. 2022 sec. 5): full re-runs the layer forward (with its TP
    // collectives) before its backward; selective re-runs only the attention core, which flash
    // attention already recomputes inside its backward kernel.
    if (x.recompute == Recompute::full) {
        for (const Op& op : out.forward) out.backward.add(op);
        for (const CommOp& op : out.comm_forward) out.comm_backward.add(op);
    } else if (x.op_level_sac) {
        for (const Op& op : op_sac_recompute(x, out.forward, nullptr)) out.backward.add(op);
    } else if (x.recompute == Recompute::selective && !x.ops.flash) {
        CommList unused;
        Target re{out.backward, unused};
        attention_core(x, re, Phase::forward, x.seq_len + x.memory_len, kind.causal, kind.local);
        if (kind.cross_attention) attention_core(x, re, Phase::forward, x.seq_len, false, false);
    }
    layer(x, bwd, Phase::backward, kind);
    zero3_comm(x, out.comm_forward, out.comm_backward, layer_params_local(x, kind), layer_expert_params_local(x, kind),
               layer_trainable_params_local(x, kind), true);
    return out;
}

PieceOps mtp_ops(const Execution& x) {
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    // h'_k = M [RMSNorm(h_{k-1}); RMSNorm(Emb(t_{i+k}))] (arXiv 2412.19437 eq. 21), per module.
    norm(x, fwd, Phase::forward, x.tokens_sp);
    norm(x, fwd, Phase::forward, x.tokens_sp);
    linear(x, fwd, Phase::forward, "mtp_proj", x.tokens, 2 * x.hidden, x.hidden, 1, true);
    linear(x, bwd, Phase::backward, "mtp_proj", x.tokens, 2 * x.hidden, x.hidden, 1, true);
    norm(x, bwd, Phase::backward, x.tokens_sp);
    norm(x, bwd, Phase::backward, x.tokens_sp);
    if (x.recompute == Recompute::full)
        for (const Op& op : out.forward) out.backward.add(op);
    return out;
}

PieceOps embedding_ops(const Execution& x) {
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    const double e = x.tokens * x.hidden;
    // Vocab-parallel lookup: gather rows, write activations, embedding dropout; partial rows are
    // all-reduced (reduce-scattered with SP) over TP (Megatron VocabParallelEmbedding).
    out.forward.add(make_op("embedding", OpKind::elementwise, x.ops.activations, 0, e * (x.ops.w_param + x.ops.w_act)));
    out.forward.add(
        make_op("embedding_dropout", OpKind::elementwise, x.ops.activations, 0, x.tokens_sp * x.hidden * (2 * x.ops.w_act + 1)));
    if (x.tp > 1)
        add_comm(fwd, "tp_embedding_reduce", x.sp ? Collective::reduce_scatter : Collective::all_reduce, Group::tp, e * x.ops.w_act);
    // Backward: scatter-add of the token gradients into the fp32 main gradient (none when frozen).
    if (embedding_trains(*x.config))
        out.backward.add(make_op("embedding_bwd", OpKind::elementwise, x.ops.activations, 0, e * (x.ops.w_act + 2 * x.ops.w_grad)));
    if (x.recompute == Recompute::full) out.backward.add(out.forward.items[0]);  // re-run the lookup
    return out;
}

PieceOps head_ops(const Execution& x) {
    PieceOps out;
    Target fwd{out.forward, out.comm_forward};
    Target bwd{out.backward, out.comm_backward};
    norm(x, fwd, Phase::forward, x.tokens_sp);  // final norm
    if (x.sp) add_comm(fwd, "tp_all_gather", Collective::all_gather, Group::tp, x.tokens * x.hidden * x.ops.w_act);
    linear(x, fwd, Phase::forward, "lm_head", x.tokens, x.hidden, x.logits_local, 1, true);
    // Cross-entropy in fp32 over the (vocab-parallel) logits: logits to fp32, max, exp-sum, normalise
    // (3 small all-reduces of T floats over TP); backward writes softmax - 1.
    const double logits = x.tokens * x.logits_local;
    // Megatron's vocab_parallel_cross_entropy (microsoft/Megatron-DeepSpeed@c08e2cc2 megatron/model/gpt_model.py
    // post_language_model_processing: output.float(); megatron/core/tensor_parallel/cross_entropy.py
    // _VocabParallelCrossEntropy) runs each step as a kernel of its own over the fp32 logits: the cast
    // (w_act + 4), max (4), logits - max (4 + 4), exp in place (4 + 4), sum (4), div_ by the sum in
    // place (4 + 4); backward updates the saved probabilities in place (the target's entries, T of
    // them), mul_ by the loss gradient (4 + 4) and the cast back for the LM-head GEMMs (4 + w_act).
    const bool megatron = x.config->framework.vocab_parallel_cross_entropy;
    const double fwd_bytes = megatron ? x.ops.w_act + 4 + 4 + 8 + 8 + 4 + 8 : x.ops.w_act + 3 * 4.0;
    out.forward.add(make_op("cross_entropy", OpKind::elementwise, x.ops.activations, 0, logits * fwd_bytes));
    if (x.tp > 1) add_comm(fwd, "tp_loss_all_reduce", Collective::all_reduce, Group::tp, x.tokens * 4.0, 3);
    // Backward otherwise: the fp32 loss gradient is written (4), the log-softmax backward reads it and
    // the saved fp32 probabilities and writes the fp32 logit gradient (3 x 4), which is cast to the
    // activation dtype for the LM-head GEMMs (4 + w_act): torch log_softmax/nll_loss backward.
    const double bwd_bytes = megatron ? 8 + 4 + x.ops.w_act : 4.0 + 3 * 4.0 + 4.0 + x.ops.w_act;
    out.backward.add(make_op("cross_entropy_bwd", OpKind::elementwise, x.ops.activations, 0, logits * bwd_bytes));
    const int first = out.backward.size;
    linear(x, bwd, Phase::backward, "lm_head", x.tokens, x.hidden, x.logits_local, 1, true);
    const double bytes = x.tokens * x.hidden * x.ops.w_act;
    if (x.tp > 1 && x.sp) add_comm(bwd, "tp_reduce_scatter", Collective::reduce_scatter, Group::tp, bytes);
    if (x.tp > 1 && !x.sp)  // a column-parallel linear too (Megatron parallel_lm_logits: async_grad_allreduce)
        bwd.comm.add(CommOp{"tp_all_reduce", Collective::all_reduce, Group::tp, bytes, 1,
                            async_grad_all_reduce_beside_s(x, out.backward, {first, out.backward.size})});
    norm(x, bwd, Phase::backward, x.tokens_sp);
    return out;
}

// One pipeline stage's share of the model's parameter tensors: per layer its two norms and
// `per_layer` more tensors, plus the embedding, the final norm and Transformer-XL's two global
// position biases.
double stage_parameter_tensors(const Execution& x, double per_layer) {
    const ModelSpec& m = x.config->model;
    const double norm_tensors = m.norm == Norm::layernorm ? 2 : 1;  // scale, + bias for LayerNorm
    const double tensors = double(x.layers) * (2 * norm_tensors + per_layer) + 1 + norm_tensors + (m.relative_position ? 2 : 0);
    return tensors / double(x.stages);
}

// Parameter tensors of one pipeline stage in the module layout of the per-tensor optimizer loops.
double parameter_tensors(const Execution& x) {
    if (x.config->training.optimizer == Optimizer::lamb_per_tensor) {
        // Transformer-XL (DLE mem_transformer.py): fused QKV and output projections and the
        // relative-position projection without biases (qkv_net/o_net/r_net), FFN matrices with biases.
        return stage_parameter_tensors(x, 2 + (x.gated ? 3 : 4) + (x.config->model.relative_position ? 1 : 0));
    }
    // Eager Hugging Face / DLE modules: separate query, key, value and output projections, the FFN
    // matrices (3 gated), every Linear with a bias in the GPT-2/BERT lineage (non-gated: nn.Linear's
    // default bias=True, DLE BERT modeling.py) and none in the gated Llama lineage (bias=False).
    const double linears = 4 + (x.gated ? 3 : 2);
    return stage_parameter_tensors(x, linears * (x.gated ? 1 : 2));
}

double megatron_parameter_tensors(const Execution& x) {
    // microsoft/Megatron-DeepSpeed@c08e2cc2 megatron/model/transformer.py: ParallelAttention's fused
    // query_key_value and dense; ParallelMLP's dense_h_to_4h (gate and up fused for swiglu) and
    // dense_4h_to_h: 4 linears, each with a bias in the GPT lineage (add_bias_linear on) and none in the
    // gated Llama lineage (--disable-bias-linear), as parameter_tensors reads the biases.
    return stage_parameter_tensors(x, 4 * (x.gated ? 1 : 2));
}

double per_tensor_optimizer_kernels(const Execution& x) {
    if (x.config->training.optimizer != Optimizer::lamb_per_tensor) return 0;
    // NVIDIA DLE Transformer-XL's jitlamb (lamb.py) calls one TorchScript function per tensor from a
    // Python loop: the moment update, the weight and update norms and the apply run as ~3 dispatched
    // ops of our host_op_s size (several fused kernels each), so the loop is host-bound for small
    // tensors; the fused (apex multi-tensor) FusedLAMB of BERT has none.
    constexpr double kOpsPerTensor = 3;
    return parameter_tensors(x) * kOpsPerTensor;
}

double per_tensor_eager_kernels(const Execution& x) {
    switch (x.config->training.optimizer) {
    // DLE Transformer-XL's train.py calls torch.nn.utils.clip_grad_norm_ every step, which before
    // PyTorch 2.0's foreach path loops over the tensors: a norm per tensor, then a mul_ per tensor
    // (torch/nn/utils/clip_grad.py): 2 eager ops.
    case Optimizer::lamb_per_tensor: return parameter_tensors(x) * 2;
    // DLE BERT optimization.py BertAdam.step (the fp32/TF32 path of run_squad.py; its AMP path builds
    // apex FusedAdam): per tensor m.mul_, add_, v.mul_, addcmul_, sqrt, + eps, m / (.), weight decay
    // mul, update +=, lr mul, neg, p.add_: 12 eager kernels, one launch each.
    case Optimizer::adamw_per_tensor: return parameter_tensors(x) * 12;
    default: return 0;
    }
}

double amp_master_grad_host_ops(const Execution& x) {
    if (!x.config->framework.amp_master_grads_per_tensor || !keeps_master(x.precision())) return 0;
    // Apex amp O2 (NVIDIA/apex apex/amp/_process_optimizer.py post_backward_with_master_weights, "This
    // is a lot of python overhead..."): after every backward a Python loop over the fp16/fp32 parameter
    // pairs allocates each fp32 master gradient (fp32_param.grad = torch.empty_like(fp32_param)),
    // since the patched optimizer.step cleared them (new_step: param.grad = None per master param);
    // one eager op per tensor, no kernel (the unscale itself is one multi_tensor_scale launch).
    return parameter_tensors(x);
}

double eager_adamw_bytes_per_param(double wg, double wu, double ws) {
    // BertAdam's 12 passes (per_tensor_eager_kernels), temporaries at the state width: m.mul_ 2 ws;
    // add_(g) 2 ws + wg; v.mul_ 2 ws; addcmul_(g, g) 2 ws + 2 wg; sqrt 2 ws; + eps 2 ws; m / d 3 ws;
    // wd * p wu + ws; update += 3 ws; lr * update 2 ws; neg 2 ws; p.add_ 2 wu + ws.
    return 24 * ws + 3 * wg + 3 * wu;
}

double foreach_adamw_bytes_per_param(double wg, double wu, double ws) {
    // torch.optim.AdamW(foreach=True) (torch/optim/adamw.py _multi_tensor_adamw): every line is a
    // pass over all parameters: _foreach_mul_(p, 1 - lr wd) 2 wu; _foreach_lerp_(m, g) 2 ws + wg;
    // _foreach_mul_(v, beta2) 2 ws; _foreach_addcmul_(v, g, g) 2 ws + wg; _foreach_sqrt(v) -> d
    // ws + 4; _foreach_div_(d) 8; _foreach_add_(d, eps) 8; _foreach_addcdiv_(p, m, d) 2 wu + ws + 4.
    return 4 * wu + 2 * wg + 8 * ws + 24;
}

double optimizer_state_bytes_per_param(const TrainingSpec& t, const PrecisionSpec& p) {
    // bitsandbytes 8-bit states: one byte per element plus an fp32 absmax per 2048-element block.
    if (t.optimizer == Optimizer::adamw8bit) return optimizer_state_count(t.optimizer) * (1.0 + 4.0 / 2048);
    return optimizer_state_count(t.optimizer) * dtype_storage_bytes(p.optimizer_states);
}

OpList step_ops(const Execution& x, double params_local, double params_shard) {
    const Config& c = *x.config;
    const PrecisionSpec& p = x.precision();
    OpList ops;
    const double wg = dtype_storage_bytes(p.grads);
    const double wp = dtype_storage_bytes(p.params);
    const bool master = keeps_master(p);
    const double wu = master ? 4.0 : wp;  // the copy the optimizer updates
    // Megatron's fp16/bf16 optimizer (Float16OptimizerWithFloat16Params, microsoft/Megatron-DeepSpeed@c08e2cc2
    // megatron/optimizer/optimizer.py) casts every main_grad to an fp32 master gradient
    // (_copy_model_grads_to_main_grads: main_param.grad = model_param.main_grad.float()), then unscales
    // (_amp_foreach_non_finite_check_and_unscale_), norms (clip_grad_norm_fp32) and applies them in fp32.
    const bool fp32_grads = master && c.framework.fp32_master_grads;
    const double wo = fp32_grads ? 4.0 : wg;  // the gradient width the step reads
    if (fp32_grads) ops.add(make_op("master_grad_cast", OpKind::precision_overhead, p.activations, 0, params_shard * (wg + 4.0)));
    // Fused Adam(W) (apex/TE multi-tensor apply): read grad, read+write weight and both moments.
    // SGD with momentum keeps one state; LAMB adds a pass for the trust ratio (You et al. 2019).
    double bytes = params_shard * (wo + 2 * wu + 2 * optimizer_state_bytes_per_param(c.training, p));
    const bool adam = c.training.optimizer == Optimizer::adam || c.training.optimizer == Optimizer::adamw;
    if (adam && !c.framework.fused_optimizer)  // the foreach AdamW of torch.optim (fused_optimizer false)
        bytes = params_shard * foreach_adamw_bytes_per_param(wg, wu, dtype_storage_bytes(p.optimizer_states));
    if (c.training.optimizer == Optimizer::adamw_per_tensor)  // unfused eager passes, tensor by tensor
        bytes = params_shard * eager_adamw_bytes_per_param(wg, wu, dtype_storage_bytes(p.optimizer_states));
    if (optimizer_trust_ratio(c.training.optimizer)) bytes += params_shard * (wg + wu);
    ops.add(make_op("optimizer_step", OpKind::optimizer, p.activations, 0, bytes));
    ops.add(make_op("grad_norm_clip", OpKind::optimizer, p.activations, 0, params_shard * wo));
    ops.add(make_op("zero_grad", OpKind::optimizer, p.activations, 0, params_local * wg));
    // Precision-only work per step (DESIGN.md 2.1 effect 3).
    if (master)  // refresh the half working weights from the fp32 master copy (Micikevicius et al. 2018)
        ops.add(make_op("master_weight_copy", OpKind::precision_overhead, p.activations, 0, params_shard * (4.0 + wp)));
    if (p.loss_scaling == LossScaling::dynamic)  // unscale + inf/nan check (torch GradScaler.unscale_)
        ops.add(make_op("loss_scale_unscale_check", OpKind::precision_overhead, p.activations, 0, params_shard * 2 * wo));
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
        {DType::fp32, DType::fp32, DType::fp32},   // fp32
        {DType::tf32, DType::fp32, DType::fp32},   // tf32 -> CUDA cores (V100)
        {DType::fp16, DType::bf16, DType::fp32},   // fp16
        {DType::bf16, DType::fp16, DType::fp32},   // bf16 -> fp16 units (V100 has no bf16)
        {DType::fp8, DType::bf16, DType::fp16},    // fp8
        {DType::mxfp8, DType::fp8, DType::bf16},   // mxfp8
        {DType::nvfp4, DType::mxfp8, DType::fp8},  // nvfp4
    };
    for (DType f : kFallback[static_cast<int>(d)])
        if (gpu.supports(f)) return f;
    return gpu.supports(DType::bf16) ? DType::bf16 : DType::fp32;
}

double gemm_efficiency(const Op& op, const GpuSpec& gpu, const Calibration& cal, const KernelContext& context) {
    // Tensor-core GEMMs in training lose gemm_sustained to real shapes, power-limited clocks and NCCL
    // sharing (calibration.cpp); alone they run at the large-GEMM (MAMF) figure. CUDA-core SGEMM's
    // efficiency is a sustained measurement already.
    const DType d = compute_dtype(gpu, op.dtype);
    double base = cal.gemm_efficiency[static_cast<int>(d)] * (d == DType::fp32 || context.alone ? 1.0 : cal.gemm_sustained) *
                  (op.grouped ? (d == DType::mxfp8 || d == DType::nvfp4 ? cal.grouped_block_scaled_rate : cal.grouped_gemm_rate) : 1.0);
    // A grouped kernel's fixed work per group (its weights' tiles, the group's scheduling) over the
    // group's token rows (K of a weight gradient, M otherwise): m / (m + m_half), fitted per kernel
    // class on the VeOmni component rows (constants.json torch_grouped_mm_m_half_rows).
    if (op.grouped && cal.grouped_m_half_rows > 0) {
        const double rows = op.name && std::strcmp(op.name, "wgrad") == 0 ? op.k : op.m;
        if (rows > 0) base *= rows / (rows + cal.grouped_m_half_rows);
    }
    if (op.m <= 0 || op.n <= 0 || op.k <= 0) return base;
    // Short K: each tile's prologue (pipeline fill) and epilogue (write C) are amortised over its K
    // extent (the K that halves it, per dtype: calibration.cpp).
    const double k_half = cal.gemm_k_half[static_cast<int>(d)];
    const double reuse = cal.tile_reuse[static_cast<int>(d)];
    // Tile and wave quantisation: cuBLAS/CUTLASS cover C with tm x tn tiles, one per SM at a time;
    // the last wave and partial tiles idle part of the GPU (NVIDIA "Matrix Multiplication Background
    // User's Guide", tile/wave quantisation). Smaller tiles reuse operands less: relative mainloop
    // efficiency by tile size (constants table tile_*, assumed),
    // stated for 16-bit tensor cores; a dtype suffers the share `reuse` of that loss (calibration.cpp).
    // Split-K (cuBLAS heuristics, CUTLASS "split-K" / "stream-K"): a C with few tiles and a long K
    // (weight gradients: k = tokens) is split into `split` K slices that fill the SMs, each paying
    // its own prologue and epilogue on k / split.
    struct Tile {
        double tm, tn, rel;
    };
    static const Tile kTiles[] = {{256, 128, constant(Constant::tile_256x128)},
                                  {128, 128, constant(Constant::tile_128x128)},
                                  {128, 64, constant(Constant::tile_128x64)},
                                  {64, 64, constant(Constant::tile_64x64)}};
    static constexpr double kSplits[] = {1, 2, 4, 8};
    const double sms = double(std::max<int64_t>(gpu.sm_count, 1));
    // Stream-K (Osama et al. 2023, arXiv 2301.03598): NVIDIA's libraries for Hopper and later run
    // persistent kernels whose tile scheduler can share the mainloop iterations of all tiles evenly
    // over the SMs (CUTLASS 3 sm90 "StreamKScheduler", cuBLASLt's stream-K kernels), so a partial
    // last wave idles no SM. Taken as a candidate on NVIDIA GPUs with FP8 units (Ada and later), for
    // kernels alone: in training it made the Hopper and Blackwell sets worse (cross-source: Hopper
    // 12.5 -> 13.3 %, simumax-b200 17.8 -> 18.9 %), whose efficiencies are fitted end to end without it.
    const bool stream_k = context.alone && gpu.vendor == "NVIDIA" && gpu.supports(DType::fp8);
    // A grouped kernel's M (token rows) already holds each group's padding to the M tile
    // (expert_group_rows: half a tile per group on average); rounding it up again counts it twice.
    const bool padded_m = op.grouped && op.count > 1 && !(op.name && std::strcmp(op.name, "wgrad") == 0);
    const double batch = std::max(op.count, 1.0);
    // A search asks for the same few shapes millions of times: a small per-thread memo of the shape
    // factor (the same arithmetic on the same inputs, so bit-identical).
    struct Memo {
        double m = -1, n = 0, k = 0, batch = 0, sms = 0, k_half = 0, reuse = 0, shape = 0;
        bool stream_k = false, padded_m = false;
    };
    thread_local Memo memo[64];
    auto bits = [](double x) {
        uint64_t u;
        std::memcpy(&u, &x, sizeof u);
        return u;
    };  // no UB for NaN or huge
    const uint64_t h = bits(op.m) * 0x9E3779B97F4A7C15ull ^ bits(op.n) * 0xC2B2AE3D27D4EB4Full ^ bits(batch) * 0x165667B19E3779F9ull ^
                       bits(op.k) * 0x27D4EB2F165667C5ull;
    Memo& slot = memo[h >> 58];  // the top bits mix every input bit (integer-valued doubles end in zeros)
    if (slot.m != op.m || slot.n != op.n || slot.k != op.k || slot.batch != batch || slot.sms != sms || slot.k_half != k_half ||
        slot.reuse != reuse || slot.stream_k != stream_k || slot.padded_m != padded_m) {
        double shape = 0;
        for (const Tile& tile : kTiles) {
            const double tiles = (padded_m ? op.m / tile.tm : std::ceil(op.m / tile.tm)) * std::ceil(op.n / tile.tn) * batch;
            const double rel = 1.0 - (1.0 - tile.rel) * reuse;
            for (double split : kSplits) {
                if (split > 1 && tiles * split > 2 * sms) break;  // enough tiles already: no split
                const double waves = std::ceil(tiles * split / sms);
                const double k_slice = op.k / split;
                shape =
                    std::max(shape, rel * (op.m * op.n * batch * split) / (waves * sms * tile.tm * tile.tn) * k_slice / (k_slice + k_half));
            }
            if (stream_k) {
                // Each SM runs `share` K iterations (whole K blocks of k_half) across share / k + 1 tile
                // segments: one prologue and epilogue (k_half) per segment, and per tile boundary crossed
                // the fix-up: the fp32 partial tile (2x the 16-bit C the epilogue writes) written by one
                // SM and read back by the next, 2 k_half more.
                const double share = std::ceil(tiles * op.k / (sms * k_half)) * k_half;
                const double busy = share + k_half + 3.0 * k_half * share / op.k;
                shape = std::max(shape, rel * (op.m * op.n * batch) / (tiles * tile.tm * tile.tn) * (tiles * op.k) / (sms * busy));
            }
        }
        slot = Memo{op.m, op.n, op.k, batch, sms, k_half, reuse, shape, stream_k, padded_m};
    }
    return base * slot.shape;
}

namespace {

// Fused attention: the calibration's figure is the time-weighted mean of the forward kernel and the
// backward one (2.5x the FLOPs, Dao 2023 sec. 3), which runs at attention_bwd_of_fwd the forward's
// rate (FlashAttention-2 and -4 on B200: the component rows FAISS-001..024).
double fused_attention_efficiency(const Op& op, const Calibration& cal, const KernelContext& context) {
    const double bwd_of_fwd = constant(Constant::attention_bwd_of_fwd);
    const double fwd = (context.alone ? cal.attention_alone_efficiency : cal.attention_efficiency) * (1 + 2.5 / bwd_of_fwd) / 3.5;
    const size_t len = op.name ? std::strlen(op.name) : 0;
    const bool backward = len >= 4 && std::strcmp(op.name + len - 4, "_bwd") == 0;
    return backward ? fwd * bwd_of_fwd : fwd;
}

}  // namespace

double op_time_s(const Op& op, const GpuSpec& gpu, const Calibration& cal, const KernelContext& context) {
    double compute_s = 0;
    const bool gemm = op.m > 0 || op.kind == OpKind::gemm;
    if (op.flops > 0) {
        const DType d = compute_dtype(gpu, op.dtype);
        const double eff = gemm ? gemm_efficiency(op, gpu, cal, context) : fused_attention_efficiency(op, cal, context);
        // Datasheet peaks are at the boost clock; under sustained training power the SM clock drops
        // where the preset gives a measured ratio (compute only: HBM keeps its clock). A short
        // microbenchmark runs at boost (the b200 preset's source: MAMF runs are short bursts).
        const double clock = gpu.measured_sustained_clock > 0 && !context.alone ? gpu.measured_sustained_clock : 1.0;
        const double peak = gpu.peak_flops(d) * clock;
        if (peak > 0 && eff > 0) compute_s = op.flops / (peak * eff);
    }
    const double bw = gpu.memory_bw_gbps * 1e9 * (context.alone ? cal.memory_stream_efficiency : cal.memory_efficiency);
    const double memory_s = bw > 0 ? op.bytes / bw : 0;
    // A GEMM overlaps its operand loads with its MMAs only inside the mainloop: the pipeline fill and
    // the epilogue's C stores are exposed, so alone, near the ridge point, it runs below the
    // roofline's max (Williams et al. 2009: an upper bound): a p-norm of the two times, p
    // (gemm_roofline_p) fitted on the component GEMM rows. In training the efficiencies fitted end to
    // end with the max absorb it (the p-norm there made vTrain's cross-source MAPE 12.5 -> 14.1 %).
    if (gemm && context.alone && compute_s > 0 && memory_s > 0) {
        const double p = constant(Constant::gemm_roofline_p);
        const double hi = std::max(compute_s, memory_s), lo = std::min(compute_s, memory_s) / hi;
        return hi * std::pow(1.0 + std::pow(lo, p), 1.0 / p);
    }
    return std::max(compute_s, memory_s);  // roofline (Williams et al. 2009)
}

double kernel_alone_s(const Op& op, const GpuSpec& gpu, const Calibration& cal, bool profiled) {
    // A profiler's kernel duration (DeepGEMM's bench_kineto) starts at the first CTA: no launch-to-start
    // gap, only the kernel's own ramp (kernel_profiled_latency_s).
    const double latency = profiled ? constant(Constant::kernel_profiled_latency_s) : cal.kernel_device_latency_s;
    return latency + std::max(op.count, 1.0) * op_time_s(op, gpu, cal, kAlone);
}

double host_copy_bytes_per_s(const GpuSpec& gpu, const HostCopy& copy) {
    // nvbandwidth / TransferBench host copies reach host_link_efficiency of the line rate each way.
    double bw = gpu.host_link_gbps * 1e9 * constant(Constant::host_link_efficiency);
    // Device writes to host memory are PCIe posted writes; without the Relaxed Ordering attribute the
    // root complex must retire them in order (PCIe Base Spec 2.4.1 ordering rules): mlx5e measured
    // 10 vs 40 GB/s with relaxed ordering off/on (Linux commit 17347d5430c4, "net/mlx5e: Add support
    // for PCI relaxed ordering"), constant strict_order_write_fraction.
    if (copy.device_to_host && copy.strictly_ordered_writes) bw *= constant(Constant::strict_order_write_fraction);
    return bw;
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

}  // namespace trainclock
