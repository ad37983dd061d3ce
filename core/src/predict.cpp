// trainclock: predict() — operators, costs, collectives, pipeline schedule, memory (DESIGN.md 2).
//
// Index
//   [SECTION] Cost vectors: seconds per breakdown category
//   [SECTION] Pieces: one layer kind / embedding / head costed once per prediction
//   [SECTION] Stages: per virtual stage durations, pipeline simulation, DP sync and optimizer step
//   [SECTION] Prediction: throughput, FLOPs, MFU, totals, memory, warnings
#include "trainclock/prediction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "trainclock/calibration.hpp"
#include "trainclock/communication.hpp"
#include "trainclock/memory.hpp"
#include "trainclock/operators.hpp"
#include "trainclock/pipeline.hpp"

namespace trainclock {
namespace {

// =====================================================================================
// [SECTION] Cost vectors: seconds per breakdown category
// =====================================================================================

enum Cat { kGemm, kAttention, kElementwise, kPrecision, kOptimizer, kTp, kPp, kDp, kCp, kEp, kOverhead, kCatCount };

struct Cost {
    std::array<double, kCatCount> s{};
    double flops = 0;
    double total() const {
        double t = 0;
        for (double v : s) t += v;
        return t;
    }
    void add(const Cost& o, double times = 1.0) {
        for (int i = 0; i < kCatCount; ++i) s[size_t(i)] += times * o.s[size_t(i)];
        flops += times * o.flops;
    }
};

Cost from_ops(const OpCost& oc) {
    Cost c;
    // OpKind order is gemm, attention, elementwise, precision_overhead, optimizer = Cat 0..4.
    for (int k = 0; k < kOpKindCount; ++k) c.s[size_t(k)] = oc.seconds[size_t(k)];
    c.s[kOverhead] = oc.launch_s;
    c.flops = oc.flops;
    return c;
}

struct Network {
    std::array<Link, kGroupCount> link{};
    std::array<int64_t, kGroupCount> ranks{};
};

Network make_network(const Config& c, const Calibration& cal) {
    Network n;
    for (int g = 0; g < kGroupCount; ++g) {
        const GroupPlacement place = group_placement(c.parallel, Group(g));
        n.link[size_t(g)] = group_link(c.node, cal, place);
        n.ranks[size_t(g)] = place.size;
    }
    return n;
}

Cat comm_category(Group g) {
    switch (g) {
    case Group::tp: return kTp;
    case Group::cp: return kCp;
    case Group::ep: return kEp;
    case Group::pp: return kPp;
    case Group::dp:
    case Group::expert_dp: return kDp;
    }
    return kTp;
}

double comm_time_s(const CommOp& op, const Network& net) {
    const size_t g = size_t(op.group);
    return op.count * collective_time_s(op.collective, op.bytes, net.ranks[g], net.link[g]);
}

// =====================================================================================
// [SECTION] Pieces: one layer kind / embedding / head costed once per prediction
// =====================================================================================

// Compute plus the exposed part of each collective: TP is on the critical path unless TP comm
// overlap is on (then hidden behind the phase's GEMMs); the CP ring hides behind attention
// (Megatron-Core CP overlaps the K/V exchange with the block computation); ZeRO-3 gathers are
// prefetched behind the phase's compute; EP all-to-all is exposed.
Cost phase_cost(const OpList& ops, const CommList& comm, const Config& c, const Calibration& cal, const Network& net) {
    Cost cost = from_ops(cost_ops(ops, c.gpu, cal));
    double kernels = double(ops.size);
    std::array<double, kCatCount> comm_s{};
    for (const CommOp& op : comm) {
        comm_s[size_t(comm_category(op.group))] += comm_time_s(op, net);
        if (net.ranks[size_t(op.group)] > 1) {
            cost.s[kOverhead] += cal.kernel_launch_s;
            kernels += op.count;
        }
    }
    const double compute = cost.s[kGemm] + cost.s[kAttention] + cost.s[kElementwise] + cost.s[kPrecision];
    cost.s[kTp] = c.parallel.overlap_tp_comm ? std::max(0.0, comm_s[kTp] - cost.s[kGemm]) : comm_s[kTp];
    cost.s[kCp] = std::max(0.0, comm_s[kCp] - cost.s[kAttention]);
    cost.s[kDp] = std::max(0.0, comm_s[kDp] - compute);
    cost.s[kEp] = comm_s[kEp];
    // Overlap is not free: while a collective runs its channels hold cal.comm_sms SMs, so the
    // compute that runs beside it proceeds at (1 - f) speed (charged to the collective's category).
    const double f = std::min(cal.comm_sms / double(std::max<int64_t>(c.gpu.sm_count, 1)), 0.5);
    const double overlapped_tp = c.parallel.overlap_tp_comm ? std::min(comm_s[kTp], cost.s[kGemm]) : 0.0;
    cost.s[kTp] += overlapped_tp * f / (1 - f);
    cost.s[kCp] += std::min(comm_s[kCp], cost.s[kAttention]) * f / (1 - f);
    cost.s[kDp] += std::min(comm_s[kDp], compute) * f / (1 - f);
    // The host dispatches kernels asynchronously: the phase takes the longer of the GPU's work and
    // the CPU's dispatch of its kernels; any excess is framework overhead (DESIGN.md 5).
    const double host_s = kernels * cal.host_op_s, gpu_s = cost.total();
    if (host_s > gpu_s) cost.s[kOverhead] += host_s - gpu_s;
    return cost;
}

struct PieceCost {
    Cost fwd, bwd;
};

PieceCost piece_cost(const PieceOps& ops, const Config& c, const Calibration& cal, const Network& net) {
    return {phase_cost(ops.forward, ops.comm_forward, c, cal, net), phase_cost(ops.backward, ops.comm_backward, c, cal, net)};
}


// =====================================================================================
// [SECTION] Stages: per virtual stage durations, pipeline simulation, DP sync and optimizer step
// =====================================================================================

// Weights that train on one GPU of a stage (gradients reduced over DP, updated by the optimizer).
struct StageParams {
    double dense = 0, expert = 0, layers = 0;
    double embedding = 0;  // input embedding weights (their gradient is ready last in backward)
};

// `n` layers of `kind`: their trainable weights (all, none when frozen, the adapters under LoRA).
void add_trainable(StageParams& sp, const Config& c, LayerKind kind, double n) {
    const double trainable = layer_trainable_params_local(c, kind);
    const double experts = c.training.finetune.adapters() || trainable == 0 ? 0.0 : layer_expert_params_local(c, kind);
    sp.dense += n * (trainable - experts);
    sp.expert += n * experts;
    sp.layers += n;
}

PrecisionSpec blind_precision(const GpuSpec& gpu) {
    // The static-graph baseline: every op at one 16-bit tensor-core dtype, no precision-only ops.
    const DType ref = reference_dtype(gpu);
    PrecisionSpec p;
    p.name = "precision-blind";
    p.gemm = p.activations = p.params = p.grads = p.grad_reduce = p.optimizer_states = ref;
    p.master_weights = MasterWeights::none;
    p.loss_scaling = LossScaling::none;
    p.autocast = false;
    return p;
}

// Model FLOPs per token, PaLM appendix B (6 N + 12 L H Q T) generalised per layer: a layer that trains
// costs 2 N_i forward + 2 N_i input gradients + 2 N_i weight gradients and 3x its attention forward
// 2 H (d_qk + d_v) keys (keys = T on full layers, PaLM's convention causal or not; 2 attended_keys on
// local ones; cross-attention layers attend twice); a frozen leading layer costs its forward only;
// under LoRA the base gets no weight gradients (4 N_i) and the adapters train (6 A_i). N excludes the
// input embedding (a lookup); the LM head counts, once more per MTP module.
double model_flops_per_token(const Config& c) {
    const ModelSpec& m = c.model;
    const double seq = double(c.training.seq_len);
    const double d_qk = m.mla.enabled() ? double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : double(m.effective_head_dim());
    const double d_v = m.mla.enabled() ? double(m.mla.v_head_dim) : double(m.effective_head_dim());
    const bool lora = c.training.finetune.adapters();
    auto layer_flops = [&](LayerKind kind, double n_active) {
        const double keys = kind.local ? 2.0 * attended_keys(m, kind, seq) : seq;
        const double attention = 2.0 * double(m.heads) * (d_qk + d_v) * keys * (kind.cross_attention ? 2.0 : 1.0);
        if (kind.frozen) return 2 * n_active + attention;
        return (lora ? 4 : 6) * n_active + 6 * layer_adapter_params(c, kind) + 3 * attention;
    };
    double sum = 0;
    for (int64_t i = 0; i < total_layers(m); ++i)
        sum += layer_flops(layer_kind_at(c, i), double(layer_parameter_count(m, i, true)));
    const double head = double(m.vocab) * double(m.hidden) * (head_trains(c) ? 6 : 4);
    const LayerKind last = layer_kind_at(m, m.layers - 1);
    const double mtp_layer = double(layer_parameter_count(m, m.layers - 1, true)) + double(mtp_extra_parameter_count(m));
    return sum + head + double(m.mtp_layers) * (layer_flops(last, mtp_layer) + head);
}

std::string format(const char* fmt, double a, double b = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, fmt, a, b);
    return buf;
}

} // namespace

Prediction predict(const Config& c, const PredictOptions& options) {
    Prediction out;
    const Calibration cal = resolve_calibration(c.gpu, c.calibration, c.training.attention_kernel);
    const PrecisionSpec blind = cal.precision_blind ? blind_precision(c.gpu) : PrecisionSpec{};
    const PrecisionSpec& prec = cal.precision_blind ? blind : c.precision;
    const Network net = make_network(c, cal);
    const ModelSpec& m = c.model;

    // Pipeline shape: M = global batch / (micro-batch x DP) (DESIGN.md 2.4).
    PipelineShape shape;
    shape.schedule = c.parallel.schedule;
    shape.stages = std::max<int64_t>(c.parallel.pp, 1);
    const int64_t per_step = std::max<int64_t>(c.training.micro_batch, 1) * std::max<int64_t>(c.parallel.dp, 1);
    shape.micro_batches = std::max<int64_t>(c.training.global_batch / per_step, 1);
    shape.chunks = shape.schedule == PipelineSchedule::interleaved ? std::max<int64_t>(c.parallel.virtual_stages, 1) : 1;
    if (shape.schedule == PipelineSchedule::interleaved && !interleaving_possible(shape)) {
        if (shape.stages > 1 && shape.chunks > 1)
            out.warnings.push_back(format("interleaved schedule needs micro-batches (%.0f) divisible by pp (%.0f); simulated as 1F1B",
                                          double(shape.micro_batches), double(shape.stages)));
        shape.schedule = PipelineSchedule::one_f_one_b;
        shape.chunks = 1;
    }
    const int64_t p = shape.stages, v = shape.chunks, vs = p * v, mb = shape.micro_batches;

    // Each distinct layer kind, the embedding and the head are built and costed once.
    std::array<PieceCost, kLayerKindSlots> kinds{};
    std::array<bool, kLayerKindSlots> have{};
    const int64_t layers = total_layers(m);
    const PieceCost embed = piece_cost(embedding_ops(c, prec), c, cal, net);
    const PieceCost head = piece_cost(head_ops(c, prec), c, cal, net);
    // P2P of one activation per micro-batch boundary, 1/tp of it per GPU (scatter-gather
    // optimisation, Narayanan et al. SC'21 sec. 4.1); a blocking send on the producing stage.
    const double tokens_mb = double(c.training.micro_batch) * double(c.training.seq_len) / double(std::max<int64_t>(c.parallel.cp, 1));
    const double p2p_bytes = tokens_mb * double(m.hidden) * dtype_storage_bytes(prec.activations) / double(std::max<int64_t>(c.parallel.tp, 1));
    const double p2p_s = p > 1 ? collective_time_s(Collective::p2p, p2p_bytes, 2, net.link[size_t(Group::pp)]) + cal.kernel_launch_s : 0;

    thread_local std::vector<Cost> vfwd, vbwd;
    thread_local std::vector<double> fwd_s, bwd_s;
    thread_local std::vector<StageParams> params;
    vfwd.assign(size_t(vs), Cost{});
    vbwd.assign(size_t(vs), Cost{});
    params.assign(size_t(p), StageParams{});
    const double vocab_params = double(m.vocab) * double(m.hidden) / double(std::max<int64_t>(c.parallel.tp, 1));
    for (int64_t j = 0; j < vs; ++j) {
        const int64_t stage = j % p;
        const LayerRange r = virtual_stage_layers(layers, vs, j);
        for (int64_t i = r.first; i < r.first + r.count;) {
            // A run of layers of one kind costs its count times the kind's cost.
            const LayerKind kind = layer_kind_at(c, i);
            const int slot = layer_kind_slot(kind);
            const int64_t n = layer_kind_run_end(c, i, r.first + r.count) - i;
            if (!have[size_t(slot)]) {
                kinds[size_t(slot)] = piece_cost(layer_ops(c, prec, kind), c, cal, net);
                have[size_t(slot)] = true;
            }
            vfwd[size_t(j)].add(kinds[size_t(slot)].fwd, double(n));
            vbwd[size_t(j)].add(kinds[size_t(slot)].bwd, double(n));
            add_trainable(params[size_t(stage)], c, kind, double(n));
            i += n;
        }
        if (j == 0) {
            vfwd[0].add(embed.fwd);
            vbwd[0].add(embed.bwd);
            if (embedding_trains(c)) {
                params[0].dense += vocab_params;
                params[0].embedding = vocab_params;
            }
        }
        if (j == vs - 1) {
            vfwd[size_t(j)].add(head.fwd);
            vbwd[size_t(j)].add(head.bwd);
            if ((!m.tied_embeddings || p > 1) && head_trains(c)) params[size_t(p - 1)].dense += vocab_params;
            if (m.mtp_layers > 0) {
                // DeepSeek-V3 MTP modules on the last stage (as DualPipe places them, arXiv 2412.19437
                // sec. 3.2.1): per module its projection, a transformer layer of the last layer's kind
                // and the shared output head with its loss.
                const LayerKind kind = layer_kind_at(m, m.layers - 1);
                const int slot = layer_kind_slot(kind);
                if (!have[size_t(slot)]) {
                    kinds[size_t(slot)] = piece_cost(layer_ops(c, prec, kind), c, cal, net);
                    have[size_t(slot)] = true;
                }
                const PieceCost mtp = piece_cost(mtp_ops(c, prec), c, cal, net);
                const double n = double(m.mtp_layers);
                const PieceCost* parts[] = {&kinds[size_t(slot)], &mtp, &head};
                for (const PieceCost* piece : parts) {
                    vfwd[size_t(j)].add(piece->fwd, n);
                    vbwd[size_t(j)].add(piece->bwd, n);
                }
                add_trainable(params[size_t(p - 1)], c, kind, n);
                if (!c.training.finetune.adapters())
                    params[size_t(p - 1)].dense += n * double(mtp_extra_parameter_count(m)) / double(std::max<int64_t>(c.parallel.tp, 1));
            }
        }
        if (j < vs - 1) vfwd[size_t(j)].s[kPp] += p2p_s;
        if (j > 0) vbwd[size_t(j)].s[kPp] += p2p_s;
    }

    // Pipeline: simulate (DESIGN.md 2.4); with one stage the schedule is M forward/backward pairs.
    fwd_s.resize(size_t(vs));
    bwd_s.resize(size_t(vs));
    for (int64_t j = 0; j < vs; ++j) {
        const int64_t stage = j % p, chunk = j / p;
        fwd_s[size_t(stage * v + chunk)] = vfwd[size_t(j)].total();
        bwd_s[size_t(stage * v + chunk)] = vbwd[size_t(j)].total();
    }
    // The busiest stage sets the breakdown: M times its per-micro-batch work; the rest is bubble.
    int64_t busiest = 0;
    double busiest_s = -1;
    for (int64_t s = 0; s < p; ++s) {
        double busy = 0;
        for (int64_t ch = 0; ch < v; ++ch) busy += fwd_s[size_t(s * v + ch)] + bwd_s[size_t(s * v + ch)];
        if (busy > busiest_s) {
            busiest_s = busy;
            busiest = s;
        }
    }
    Cost step;
    double stage_flops_sum = 0;
    for (int64_t j = 0; j < vs; ++j) {
        stage_flops_sum += vfwd[size_t(j)].flops + vbwd[size_t(j)].flops;
        if (j % p != busiest) continue;
        step.add(vfwd[size_t(j)], double(mb));
        step.add(vbwd[size_t(j)], double(mb));
    }
    // Data-parallel gradient sync once per step (ZeRO <= 2): all-reduce, or reduce-scatter of the
    // gradients + all-gather of the updated weights with a distributed optimizer / ZeRO 1-2
    // (Rajbhandari et al. 2020). Gradients reduce behind the last micro-batch's backward (bucketed,
    // Li et al. 2020 PyTorch DDP) except the first layers' bucket; the gather hides behind the next
    // forward (Megatron overlap_param_gather). Each stage syncs its own weights; the slowest counts.
    double dp_exposed = 0;
    const int64_t zero = c.parallel.zero;
    const double w_reduce = dtype_storage_bytes(prec.grad_reduce), w_param = dtype_storage_bytes(prec.params);
    if (zero < 3) {
        for (int64_t s = 0; s < p; ++s) {
            const StageParams& sp = params[size_t(s)];
            const Collective grad_op = zero == 0 ? Collective::all_reduce : Collective::reduce_scatter;
            const CommOp grads[2] = {{"dp_grad_sync", grad_op, Group::dp, sp.dense * w_reduce, 1},
                                     {"dp_expert_grad_sync", grad_op, Group::expert_dp, sp.expert * w_reduce, 1}};
            double grad_s = 0, gather_s = 0;
            for (const CommOp& op : grads) grad_s += comm_time_s(op, net);
            if (zero >= 1) {
                const CommOp gathers[2] = {{"dp_param_gather", Collective::all_gather, Group::dp, sp.dense * w_param, 1},
                                           {"dp_expert_param_gather", Collective::all_gather, Group::expert_dp, sp.expert * w_param, 1}};
                for (const CommOp& op : gathers) gather_s += comm_time_s(op, net);
            }
            double exposed = grad_s + gather_s;
            if (c.parallel.overlap_dp_comm && sp.layers > 0) {
                double f1 = 0, b1 = 0;  // one micro-batch through this stage
                for (int64_t ch = 0; ch < v; ++ch) {
                    f1 += fwd_s[size_t(s * v + ch)];
                    b1 += bwd_s[size_t(s * v + ch)];
                }
                // The last bucket holds the first layer and, on the first stage, the input embedding,
                // whose gradient (tied or not) is complete only at the very end of backward: it
                // cannot overlap (a 267k-word table is most of Transformer-XL base's gradients).
                const double layer_w = (sp.dense - sp.embedding) / sp.layers + sp.expert / sp.layers + sp.embedding;
                const double last = grad_s * layer_w / std::max(sp.dense + sp.expert, 1.0);
                exposed = std::max(last, grad_s - b1) + std::max(gather_s / sp.layers, gather_s - f1);
                // The hidden part still holds comm_sms SMs, slowing the compute it hides behind (as
                // in phase_cost).
                const double f = std::min(cal.comm_sms / double(std::max<int64_t>(c.gpu.sm_count, 1)), 0.5);
                exposed += (grad_s + gather_s - exposed) * f / (1 - f);
            }
            dp_exposed = std::max(dp_exposed, exposed);
        }
    }

    // Optimizer step and per-step precision ops on the stage holding the most weights.
    double most = 0;
    for (const StageParams& sp : params) most = std::max(most, sp.dense + sp.expert);
    double shard = most;
    if (zero >= 1) {
        const StageParams* heavy = &params[0];
        for (const StageParams& sp : params)
            if (sp.dense + sp.expert >= heavy->dense + heavy->expert) heavy = &sp;
        shard = heavy->dense / double(c.parallel.weight_replicas()) + heavy->expert / double(c.parallel.expert_weight_replicas());
    }
    Cost step_ops_cost = from_ops(cost_ops(step_ops(c, prec, most, shard), c.gpu, cal));
    // A per-tensor optimizer loop is dispatched by the host tensor by tensor: host-bound as in phase_cost.
    const double step_host_s = per_tensor_optimizer_kernels(c) * cal.host_op_s;
    if (step_host_s > step_ops_cost.total()) step_ops_cost.s[kOverhead] += step_host_s - step_ops_cost.total();

    // A search only needs layouts that can beat its current K-th best: the busiest stage works
    // M x busiest_s serially, so the pipeline takes at least that (less 1e-9 relative: the steady-state
    // skip of pipeline.cpp is exact to that); above the cutoff the simulation is skipped.
    const double rest_s = dp_exposed + step_ops_cost.total() + cal.step_overhead_s;
    const double bound_s = double(mb) * busiest_s * (1.0 - 1e-9) + rest_s;
    if (bound_s > options.bound_above_s && !options.timeline) {
        out.bounded = true;
        out.iteration_time_s = bound_s;
        return out;
    }

    // Asking for the timeline must not change a single bit of the numbers (the page always asks,
    // the CLI does not): with one stage the closed form is authoritative and the spans come extra.
    const bool single_stage = p == 1;
    const double pipe_s = single_stage ? double(mb) * (fwd_s[0] + bwd_s[0])
                                       : simulate_pipeline(shape, fwd_s.data(), bwd_s.data(),
                                                           options.timeline ? &out.timeline : nullptr);
    if (single_stage && options.timeline) simulate_pipeline(shape, fwd_s.data(), bwd_s.data(), &out.timeline);
    const double bubble_s = std::max(0.0, pipe_s - double(mb) * busiest_s);

    const double iteration_s = pipe_s + dp_exposed + step_ops_cost.total() + cal.step_overhead_s;
    step.add(step_ops_cost);
    step.s[kDp] += dp_exposed;
    step.s[kOverhead] += cal.step_overhead_s;

    // =====================================================================================
    // [SECTION] Prediction: throughput, FLOPs, MFU, totals, memory, warnings
    // =====================================================================================
    StepBreakdown& bd = out.breakdown_s;
    bd.gemm = step.s[kGemm];
    bd.attention = step.s[kAttention];
    bd.elementwise = step.s[kElementwise];
    bd.precision_overhead = step.s[kPrecision];
    bd.optimizer = step.s[kOptimizer];
    bd.tp_comm = step.s[kTp];
    bd.pp_comm = step.s[kPp];
    bd.dp_comm = step.s[kDp];
    bd.cp_comm = step.s[kCp];
    bd.ep_comm = step.s[kEp];
    bd.pipeline_bubble = bubble_s;
    bd.overhead = step.s[kOverhead];

    const double gpus = double(std::max<int64_t>(c.num_gpus, 1));
    const double tokens_per_step = double(c.training.global_batch) * double(c.training.seq_len);
    out.iteration_time_s = iteration_s;
    out.tokens_per_s = tokens_per_step / iteration_s;
    out.tokens_per_s_per_gpu = out.tokens_per_s / gpus;
    out.samples_per_s = double(c.training.global_batch) / iteration_s;
    // Model FLOPs per token, PaLM appendix B (Chowdhery et al. 2022): 6 N + 12 L H Q T, N the
    // weights a token passes through (the input embedding is a lookup; the LM head counts once);
    // cross-attention layers add one more attention term.
    const double flops_per_token = model_flops_per_token(c);
    out.model_tflops_per_gpu = flops_per_token * tokens_per_step / iteration_s / gpus / 1e12;
    // Executed FLOPs (recompute included): every stage runs M micro-batches on each of its GPUs.
    out.hardware_tflops_per_gpu = stage_flops_sum * double(mb) / double(p) / iteration_s / 1e12;
    const double peak = c.gpu.peak_flops(compute_dtype(c.gpu, prec.gemm));  // the blind baseline runs the reference dtype
    out.mfu = peak > 0 ? out.model_tflops_per_gpu * 1e12 / peak : 0;

    out.steps = c.training.tokens > 0 ? c.training.tokens / tokens_per_step : 1.0;  // 0 tokens: one step
    out.total_time_s = out.steps * iteration_s;
    out.gpu_hours = out.total_time_s * gpus / 3600.0;
    const double price = c.training.price_per_gpu_hour_usd >= 0 ? c.training.price_per_gpu_hour_usd : c.gpu.price_per_gpu_hour_usd;
    out.cost_usd = out.gpu_hours * price;
    // Energy at board power (TDP) times the node overhead (CPUs, NICs, fans) for the whole run.
    const double overhead = c.node.power_overhead > 0 ? c.node.power_overhead : 1.0;
    out.energy_kwh = gpus * c.gpu.tdp_w * overhead * out.total_time_s / 3.6e6;

    out.params_total = double(parameter_count(m));
    out.params_active = double(active_parameter_count(m));
    out.memory = memory_per_gpu(c, shape);
    if (!out.memory.fits)
        out.warnings.push_back(format("does not fit: %.1f GiB > %.0f GiB", out.memory.per_gpu_gib, out.memory.capacity_gib));
    if (bubble_s > 0.1 * iteration_s)
        out.warnings.push_back(format("pipeline bubble is %.0f %% of the step", 100.0 * bubble_s / iteration_s));
    const double comm = bd.tp_comm + bd.pp_comm + bd.dp_comm + bd.cp_comm + bd.ep_comm;
    if (comm > 0.3 * iteration_s)
        out.warnings.push_back(format("exposed communication is %.0f %% of the step", 100.0 * comm / iteration_s));
    if (c.training.flash_attention && !cal.precision_blind) {
        const DType g = c.precision.gemm;
        if (g == DType::fp32 || g == DType::tf32)
            out.warnings.push_back("flash attention needs fp16/bf16: " + std::string(dtype_name(g)) +
                                   " runs materialised attention (s x s scores)");
    }
    if (m.is_moe() && m.moe.imbalance == 1 && c.parallel.ep > 1)
        out.warnings.push_back("expert load assumed balanced across the ep ranks (set model.moe.imbalance: the busiest expert's load over the mean)");
    if (c.parallel.pp > 1 && mb < c.parallel.pp)
        out.warnings.push_back(format("fewer micro-batches (%.0f) than pipeline stages (%.0f): the pipeline never fills",
                                      double(mb), double(c.parallel.pp)));
    return out;
}

} // namespace trainclock
