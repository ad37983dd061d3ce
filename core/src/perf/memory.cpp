// trainclock: memory per GPU (memory.hpp).
#include "trainclock/perf/memory.hpp"

#include <algorithm>
#include <array>
#include <numeric>

#include "perf/constants.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/operators.hpp"

namespace trainclock {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double layer_activation_bytes(const Execution& x, LayerKind kind, Recompute recompute);

struct StageState {
    double dense_params = 0, expert_params = 0;        // held by one GPU of the stage (TP/EP-sharded)
    double trainable_dense = 0, trainable_expert = 0;  // of which get gradients and optimizer states (+ LoRA adapters)
    double nf4_params = 0;                             // of which stored as NF4 (QLoRA)
    double activations = 0;
    double layer_activations = 0;   // one layer's saved activations of one micro-batch (the largest kind)
    double logits_activations = 0;  // the last stage's logits and softmax (kept on the GPU by activation offload)
    double recompute_buffer = 0;    // the layer being recomputed, whole, during its backward
    double zero3_gather = 0;        // largest gathered layer (ZeRO-3 prefetch buffer)
};

StageState stage_state(const Execution& x, int64_t stage) {
    StageState st;
    const ModelSpec& m = x.config->model;
    const int64_t p = x.stages, v = x.chunks;
    const double w_act = x.stored.w_act;
    // Activations of one micro-batch through this stage's chunk(s); units in flight from the schedule.
    double act_per_chunk = 0, layer_count = 0;
    struct PerKind {  // memo per layer kind (kind_slot)
        bool known = false;
        double params = 0, experts = 0, activations = 0, trainable = 0, adapters = 0, nf4 = 0;
    };
    std::array<PerKind, kLayerKindSlots> memo{};
    const bool adapters = x.config->training.finetune.adapters();
    auto per_kind = [&](LayerKind kind) -> const PerKind& {
        PerKind& k = memo[size_t(kind_slot(kind))];
        // A frozen leading layer runs forward without autograd: it keeps no activations.
        if (!k.known)
            k = {true,
                 layer_params_local(x, kind),
                 layer_expert_params_local(x, kind),
                 kind.frozen ? 0.0 : activation_bytes_per_layer(x, kind),
                 layer_trainable_params_local(x, kind),
                 layer_adapter_params_local(x, kind),
                 layer_nf4_params_local(x, kind)};
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
        for_each_layer_run(x, chunk * p + stage, [&](int64_t, int64_t count, LayerKind kind) {
            const double n = double(count);
            const PerKind& k = per_kind(kind);
            add_layers(k, n);
            st.zero3_gather = std::max(st.zero3_gather, k.params);
            st.layer_activations = std::max(st.layer_activations, k.activations);
            act_per_chunk += n * k.activations;
            layer_count += n;
        });
    }
    act_per_chunk /= double(v);
    double units = 1;  // the last stage finishes each micro-batch's forward before the next
    if (stage == 0)
        units = double(stage0_units_in_flight(x.shape));
    else if (x.shape.schedule == PipelineSchedule::gpipe)
        units = double(x.micro_batches);
    else if (stage < p - 1) {
        // A middle stage (read only for uneven splits): stage s warms up as stage 0 of a pipeline of
        // p - s stages (1F1B: p - s micro-batches; interleaved: 2 (p - s - 1) + (v - 1) p + 1 chunks).
        const int64_t m_units = x.micro_batches * v;
        units = double(v == 1 ? std::min(p - stage, m_units) : std::min(2 * (p - stage - 1) + (v - 1) * p + 1, m_units));
    }
    const double tokens = x.tokens;
    st.activations = units * act_per_chunk;
    if ((x.recompute == Recompute::full || x.op_level_sac) && layer_count > 0) {
        // The layer being recomputed holds its full activations during its backward.
        st.recompute_buffer = layer_activation_bytes(x, layer_kind_at(m, 0), Recompute::none);
        st.activations += st.recompute_buffer;
    }
    const double vocab_l = x.vocab_local;
    if (stage == 0) {  // embedding output + dropout mask per in-flight micro-batch
        st.dense_params += vocab_l * double(m.hidden);
        if (embedding_trains(*x.config)) st.trainable_dense += vocab_l * double(m.hidden);
        st.activations += units / double(v) * tokens * double(m.hidden) * (w_act + 1) / (x.sp ? x.tp : 1.0);
    }
    if (stage == p - 1) {
        // LM head (a second copy when tied and PP > 1, Megatron keeps both ends in sync) and the fp32
        // softmax plus the logits of one micro-batch kept by the vocab-parallel cross-entropy.
        if (!m.tied_embeddings || p > 1) {
            st.dense_params += vocab_l * double(m.hidden);
            if (head_trains(*x.config)) st.trainable_dense += vocab_l * double(m.hidden);
        }
        st.activations += tokens * x.logits_local * (4.0 + w_act);
        st.logits_activations = tokens * x.logits_local * (4.0 + w_act);
    }
    const bool mtp_here = stage == mtp_stage(x);
    if (m.mtp_layers > 0 && (stage == p - 1 || mtp_here)) {
        // MTP modules (arXiv 2412.19437 sec. 2.2): a layer of the last layer's kind, the projection
        // (its 2h input kept) and a second set of logits each, for every micro-batch in flight; the
        // modules on the last stage or where a pipeline layout puts them, the logits on the last stage
        // (Megatron-Core gpt_model.py _postprocess).
        const PerKind& k = per_kind(layer_kind_at(m, m.layers - 1));
        const double n = double(m.mtp_layers), extra = double(mtp_extra_parameter_count(m)) / x.tp;
        if (mtp_here) {
            add_layers(k, n);
            st.dense_params += n * extra;
            if (!adapters) st.trainable_dense += n * extra;
            st.activations += n * units * (k.activations + tokens * 2 * double(m.hidden) * w_act / (x.sp ? x.tp : 1.0));
            if (stage !=
                0) {  // its own embedding copy, beside the output layer on the last stage (gpt_model.py: pre_process or mtp_process)
                st.dense_params += vocab_l * double(m.hidden);
                if (embedding_trains(*x.config)) st.trainable_dense += vocab_l * double(m.hidden);
            }
        }
        if (stage == p - 1) st.activations += n * tokens * x.logits_local * (4.0 + w_act);
    }
    return st;
}

double layer_activation_bytes(const Execution& x, LayerKind kind, Recompute recompute) {
    const ModelSpec& m = x.config->model;
    const double t = x.tp;
    const double b = x.micro_batch, s_kv = x.seq_len, s = x.s_q;
    const double T = x.tokens, h = x.hidden, hd = x.head_dim;
    const double T_sp = x.tokens_sp;
    const double w = x.stored.w_act;
    // FP8 (Transformer Engine) saves GEMM inputs in FP8 for the backward pass.
    const double w_in = x.stored.quantized ? x.stored.w_gemm : w;
    if (recompute == Recompute::full) return T_sp * h * w;  // only the layer input (Korthikanti 2sbh)
    const double heads_l = x.heads_local, kv_l = x.kv_heads_local;
    const bool flash = x.stored.flash;
    // Per-op SAC (operators.cpp op_sac_recompute): the layer input, the saved matmul outputs and the
    // SDPA output with its fp32 logsumexp per head (FlashAttention-2 saves O and L: Dao 2023, alg. 1),
    // which the policy that re-runs attention does not keep.
    if (recompute == Recompute::selective && x.op_level_sac && (flash || x.sac_saves_matmuls)) {
        const double sdpa = x.sac_saves_matmuls ? 0.0 : T * heads_l * x.head_dim_v * w + T * heads_l * 4;
        return T_sp * h * w + T * op_sac_saved_width(x, kind) * w + sdpa;
    }
    // Korthikanti sec. 4.1 term by term, generalised to GQA, head_dim, gated MLPs and dtype widths:
    // attention block: norm input, QKV input, Q and K, V, (softmax output, dropout mask, dropout
    // output: 5 a s^2 b), projection input, dropout mask; MLP block: norm input, MLP input, up output,
    // activation output, dropout mask.
    const MlaSpec& mla = m.mla;
    auto attention = [&](bool cross) {
        double bytes =
            T_sp * h * w + T_sp * h * w_in + T * (heads_l + kv_l) * hd * w + T * kv_l * hd * w + T * heads_l * hd * w_in + T_sp * h;
        if (mla.enabled() && !cross) {
            // MLA (DeepSeek-V2 sec. 2.1): norm input, down-projection input, the latents before and
            // after their norms (the latent KV c^KV and c^Q, up-projection inputs), the shared RoPE key,
            // the up-projected Q, K (d_h + d_h^R) and V (d_v), the output-projection input, dropout mask.
            const double ql = double(mla.q_lora_rank), kvl = double(mla.kv_lora_rank), rope = double(mla.qk_rope_head_dim);
            const double dqk = x.head_dim_qk, dv = x.head_dim_v;
            bytes = T_sp * h * w + T_sp * h * w_in + T * (ql + kvl) * (w + w_in) + T * rope * w + T * heads_l * (2 * dqk + dv) * w +
                    T * heads_l * dv * w_in + T_sp * h;
        }
        if (cross) bytes += T * h * w_in;  // encoder output feeding K/V
        if (!flash && recompute != Recompute::selective) bytes += b * heads_l * s * s_kv * (2 * w + 1);
        return bytes;
    };
    const double up = x.gated ? 2.0 : 1.0;
    double mlp = T_sp * h * w + T_sp * h * w_in + T_sp * h;  // norm input, MLP input, dropout mask
    if (kind.moe) {
        // Routed tokens on the busiest EP rank (imbalance, capacity: Execution::expert_load).
        // Folded experts (expert_tp != tp) see etp / tp of the TP group's tokens at width f / etp.
        const double fold = x.etp == t ? 1.0 : x.etp / t;
        const double k = double(std::max<int64_t>(m.moe.top_k, 1)) * x.expert_load * fold, f = double(m.moe.expert_ffn_hidden) / x.etp;
        mlp += T * k * h * w_in + T * k * f * (up * w + w_in);  // permuted tokens, expert up output, activation output
        const double f_shared = double(m.moe.expert_ffn_hidden) / t;
        if (m.moe.shared_experts > 0) mlp += T * f_shared * double(m.moe.shared_experts) * (up * w + w_in);
        mlp += T * double(m.moe.experts) * 4;  // router probabilities (fp32)
    } else {
        const double f = double(m.ffn_hidden) / t;
        mlp += T * f * (up * w + w_in);
    }
    return attention(false) + (kind.cross_attention ? attention(true) : 0) + mlp;
}

// The largest trainable tensor one GPU holds: the (vocab-parallel) embedding or LM head when it trains,
// else the biggest linear weight (TP-sharded; an expert's under MoE), or under LoRA the biggest adapter
// matrix (r x the wider side).
double largest_trainable_tensor(const Execution& x) {
    const Config& c = *x.config;
    const ModelSpec& m = c.model;
    const double h = x.hidden;
    const double ffn = std::max(double(m.ffn_hidden) / x.tp, m.is_moe() ? double(m.moe.expert_ffn_hidden) / x.etp : 0.0);
    const double widest = std::max({h, ffn, x.heads_local * x.head_dim_qk});
    if (c.training.finetune.adapters()) return x.lora_rank * widest;
    double largest = h * widest;
    if (embedding_trains(c) || head_trains(c)) largest = std::max(largest, x.vocab_local * h);
    return largest;
}

}  // namespace

double activation_bytes_per_layer(const Execution& x, LayerKind kind) { return layer_activation_bytes(x, kind, x.recompute); }

double checkpoint_bytes(const Config& c) {
    const PrecisionSpec& p = c.precision;
    const double state = (keeps_master(p) ? 4.0 : 0.0) + optimizer_state_bytes_per_param(c.training, p);
    const double per_param = dtype_storage_bytes(p.params) + state;
    const FinetuneSpec& ft = c.training.finetune;
    if (ft.is_default()) return double(parameter_count(c.model)) * per_param;
    const ModelSpec& m = c.model;
    const double embedding = double(m.vocab) * double(m.hidden);
    if (ft.adapters()) {
        // LoRA / QLoRA: what a resume needs, the adapters and their optimizer states; the frozen base is
        // the published checkpoint the run started from (PEFT PeftModel.save_pretrained writes only the
        // adapter weights; torchtune LoRA recipes with save_adapter_weights_only: True, the optimizer
        // state in the recipe state; torchtune's default also writes the merged model once per epoch,
        // not modelled here).
        double adapters = 0;
        for (int64_t i = 0; i < total_layers(m); ++i) adapters += layer_adapter_params(c, layer_kind_at(c, i));
        adapters += double(m.mtp_layers) * layer_adapter_params(c, layer_kind_at(m, m.layers - 1));
        return adapters * per_param;
    }
    // Full fine-tuning with frozen leading layers: every weight, optimizer states for those that train.
    double frozen = ft.frozen_layers > 0 && !m.tied_embeddings ? embedding : 0.0;
    for (int64_t i = 0; i < std::min(ft.frozen_layers, total_layers(m)); ++i) frozen += double(layer_parameter_count(m, i, false));
    return double(parameter_count(m)) * dtype_storage_bytes(p.params) + std::max(double(parameter_count(m)) - frozen, 0.0) * state;
}

MemoryBreakdown memory_per_gpu(const Execution& x) {
    const Config& c = *x.config;
    const PrecisionSpec& p = c.precision;
    const double dp = double(c.parallel.weight_replicas()), edp = double(c.parallel.expert_weight_replicas());
    const int64_t zero = c.parallel.zero;
    const bool master = keeps_master(p);
    const double state_bytes = optimizer_state_bytes_per_param(c.training, p);
    MemoryBreakdown best;
    const int64_t last = x.stages - 1;
    // The first stage holds the most micro-batches, the last the LM head; with an uneven split the
    // second may hold more layers than the first.
    const int64_t second = c.parallel.stage_split.any() && last > 1 ? 1 : 0;
    // A pipeline layout may load any stage most (its MTP stage, a heavy middle one): every stage.
    const int64_t examined = x.layout.empty() ? 3 : x.stages, usual[3] = {0, second, last};
    for (int64_t i = 0; i < examined; ++i) {
        const int64_t stage = x.layout.empty() ? usual[i] : i;
        const StageState st = stage_state(x, stage);
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
        mem[MemoryPart::weights] = (zero >= 3 ? sharded / std::max(all, 1.0) : 1.0) * weight_bytes / kGiB;
        mem[MemoryPart::grads] = (zero >= 2 ? trainable_sharded : trainable) * dtype_storage_bytes(p.grads) / kGiB;
        mem[MemoryPart::master] = master ? (zero >= 1 ? trainable_sharded : trainable) * 4.0 / kGiB : 0;
        mem[MemoryPart::optimizer] = (zero >= 1 ? trainable_sharded : trainable) * state_bytes / kGiB;
        mem[MemoryPart::activations] = st.activations / kGiB;
        // CPU offload (ZeRO-Offload, Ren et al. 2021 arXiv 2101.06840 sec. 4: gradients, fp32 master
        // and optimizer states on the host, the step on the CPU; ZeRO-Infinity / FSDP CPU offload: the
        // weights on the host too, streamed per layer): the GPU keeps none of them.
        const bool streamed = c.training.offload_params;
        mem.host_gib = 0;
        if (c.training.offload_optimizer) {
            mem.host_gib += mem[MemoryPart::grads] + mem[MemoryPart::master] + mem[MemoryPart::optimizer];
            mem[MemoryPart::grads] = mem[MemoryPart::master] = mem[MemoryPart::optimizer] = 0;
        }
        if (streamed) {
            mem.host_gib += mem[MemoryPart::weights];
            mem[MemoryPart::weights] = 0;
        }
        // Optimizer in backward (torchtune optimizer_in_bwd; PyTorch register_post_accumulate_grad_hook):
        // each parameter steps as its gradient is complete and frees it, one parameter's gradient at a time.
        if (c.training.optimizer_in_backward)
            mem[MemoryPart::grads] = std::min(mem[MemoryPart::grads], largest_trainable_tensor(x) * dtype_storage_bytes(p.grads) / kGiB);
        // Activation offload (torchtune OffloadActivations: each saved tensor goes to pinned CPU memory on
        // a side stream in forward and is prefetched back one layer ahead in backward): the GPU holds the
        // layer being computed and the one in flight; the last stage's logits stay (the output is not offloaded).
        if (c.training.offload_activations && st.layer_activations > 0) {
            const double kept = std::min(st.activations, 2 * st.layer_activations + st.logits_activations + st.recompute_buffer) / kGiB;
            mem.activations_offloaded_gib = mem[MemoryPart::activations] - kept;
            mem.host_gib += mem.activations_offloaded_gib;
            mem[MemoryPart::activations] = kept;
        }
        // CUDA context, one NCCL communicator per process group of more than one rank, ZeRO-3's (and
        // streamed weights') two gathered layers (current + prefetch), and the allocator reserve on what
        // churns each step.
        int communicators = 0;
        for (int g = 0; g < kGroupCount; ++g) {
            const bool expert_group = Group(g) == Group::ep || Group(g) == Group::expert_dp || Group(g) == Group::etp;
            if (expert_group && !c.model.is_moe()) continue;  // dense models build no expert groups
            communicators += group_placement(c.parallel, Group(g)).size > 1 ? 1 : 0;
        }
        const double gathered_gib = zero >= 3 || streamed ? 2 * st.zero3_gather * dtype_storage_bytes(p.params) / kGiB : 0;
        const double churn_gib = mem[MemoryPart::activations] + mem[MemoryPart::grads] + gathered_gib;
        // Outside the tensors (constants table): the CUDA context, NCCL's buffers per communicator and
        // the caching allocator's reserve on the memory freed and re-allocated each step.
        mem[MemoryPart::other] = constant(Constant::cuda_context_gib) + communicators * constant(Constant::nccl_communicator_gib) +
                                 gathered_gib + constant(Constant::allocator_reserve) * churn_gib;
        mem.per_gpu_gib = std::accumulate(mem.gib.begin(), mem.gib.end(), 0.0);
        // Paged optimizer (QLoRA sec. 3: NVIDIA unified memory, pages evicted to CPU RAM when the GPU runs
        // out and paged back for the update): states beyond the capacity live in host memory.
        if (c.training.paged_optimizer && mem.per_gpu_gib > c.gpu.memory_gib) {
            mem.paged_gib = std::min(mem.per_gpu_gib - c.gpu.memory_gib, mem[MemoryPart::optimizer]);
            mem[MemoryPart::optimizer] -= mem.paged_gib;
            mem.host_gib += mem.paged_gib;
            mem.per_gpu_gib -= mem.paged_gib;
        }
        if (mem.per_gpu_gib > best.per_gpu_gib) best = mem;
    }
    best.capacity_gib = c.gpu.memory_gib;
    // The user's headroom (fragmentation, a larger batch later, another process): a layout fits only with it left free.
    best.headroom_gib = std::max(c.training.memory_headroom_gib, c.training.memory_headroom_pct / 100 * best.capacity_gib);
    best.fits = best.per_gpu_gib <= best.capacity_gib - best.headroom_gib;
    return best;
}

}  // namespace trainclock
