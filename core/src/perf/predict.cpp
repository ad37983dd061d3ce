// trainclock: predict() — operators, costs, collectives, pipeline schedule, memory (DESIGN.md 2).
// predict() runs named phases in order, each a function below reading the Execution record:
// stages -> (the search's early exit) -> simulate -> dp_sync -> optimizer step -> summarise.
//
// Index
//   [SECTION] Cost vectors: seconds per breakdown category
//   [SECTION] Phase costs: one phase of one piece (layer kind, embedding, head), and its floor
//   [SECTION] Stages: per virtual stage durations and weights, the busiest stage
//   [SECTION] DP sync and optimizer step
//   [SECTION] Simulate and summarise: throughput, FLOPs, MFU, totals, memory, warnings
#include "trainclock/perf/prediction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "perf/constants.hpp"
#include "perf/phases.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/pipeline.hpp"
#include "trainclock/perf/run.hpp"

namespace trainclock {

using phases::Network;

namespace {

// =====================================================================================
// [SECTION] Cost vectors: seconds per breakdown part
// =====================================================================================

struct Cost {
    StepBreakdown s{};
    double flops = 0;
    // How far the host runs ahead of the GPU by the phase's end: the GPU seconds beyond the phase's
    // dispatch (0 where the host bounds it or waits inside it); host-only work after the phase
    // overlaps the GPU's remaining queue for that long.
    double host_lead_s = 0;
    double total() const {
        double t = 0;
        for (double v : s.seconds) t += v;
        return t;
    }
    void add(const Cost& o, double times = 1.0) {
        for (size_t i = 0; i < kStepPartCount; ++i) s.seconds[i] += times * o.s.seconds[i];
        flops += times * o.flops;
        host_lead_s += times * o.host_lead_s;
    }
};

// An op's kind is the breakdown part its seconds land in.
static_assert(int(OpKind::gemm) == int(StepPart::gemm) && int(OpKind::attention) == int(StepPart::attention) &&
              int(OpKind::elementwise) == int(StepPart::elementwise) &&
              int(OpKind::precision_overhead) == int(StepPart::precision_overhead) && int(OpKind::optimizer) == int(StepPart::optimizer) &&
              kOpKindCount == int(StepPart::optimizer) + 1);
Cost from_ops(const OpCost& oc) {
    Cost c;
    for (int k = 0; k < kOpKindCount; ++k) c.s.seconds[size_t(k)] = oc.seconds[size_t(k)];
    c.s[StepPart::overhead] = oc.launch_s;
    c.flops = oc.flops;
    return c;
}

StepPart comm_part(Group g) {
    switch (g) {
    case Group::tp:
    case Group::etp: return StepPart::tp_comm;
    case Group::cp: return StepPart::cp_comm;
    case Group::ep: return StepPart::ep_comm;
    case Group::pp: return StepPart::pp_comm;
    case Group::dp:
    case Group::expert_dp: return StepPart::dp_comm;
    }
    return StepPart::tp_comm;
}

double comm_time_s(const CommOp& op, const Network& net) {
    const size_t g = size_t(op.group);
    return op.count * collective_time_s(op.collective, op.bytes, net.ranks[g], net.link[g]);
}

// Share of the SMs a running collective holds (its NCCL channels): compute overlapped with it runs
// at (1 - share) speed.
// sm_count 0 (no SMs, or unknown): no SM contention is modelled (a warning says so).
double comm_sm_share(const Execution& x) {
    if (x.config->gpu.sm_count == 0) return 0;
    return std::min(x.cal.comm_sms / double(std::max<int64_t>(x.config->gpu.sm_count, 1)), constant(Constant::comm_sm_share_cap));
}

// =====================================================================================
// [SECTION] Phase costs: one phase of one piece (layer kind, embedding, head), and its floor
// =====================================================================================

// Seconds of a phase's collectives by breakdown part, before overlap; `launch_s` and `kernels` gain a
// kernel per collective of a group with more than one rank. `gather_s`: the ZeRO-3/FSDP parameter
// all-gathers among the DP seconds. A collective issued beside compute (CommOp::beside_s) counts only
// its excess over it; `beside_hidden_s` gains the seconds it hid.
StepBreakdown comm_seconds(const CommList& comm, const Execution& x, const Network& net, double& launch_s, double& kernels,
                           double* gather_s = nullptr, double* beside_hidden_s = nullptr) {
    StepBreakdown comm_s{};
    for (const CommOp& op : comm) {
        const double whole = comm_time_s(op, net);
        const double t = op.beside_s > 0 ? std::max(0.0, whole - op.count * op.beside_s) : whole;
        if (beside_hidden_s) *beside_hidden_s += whole - t;
        comm_s[comm_part(op.group)] += t;
        if (gather_s && op.collective == Collective::all_gather && (op.group == Group::dp || op.group == Group::expert_dp)) *gather_s += t;
        if (net.ranks[size_t(op.group)] > 1) {
            launch_s += x.cal.kernel_launch_s;
            kernels += op.count;
        }
    }
    return comm_s;
}

// Compute plus the exposed part of each collective: TP is on the critical path unless TP comm
// overlap is on (then hidden behind the phase's GEMMs); the CP ring hides behind attention step by
// step (cp_exposed_s) where the framework overlaps it; ZeRO-3 gathers are prefetched behind the
// phase's compute unless the framework gathers on demand (gather_prefetch none); EP all-to-all is
// exposed unless the framework overlaps it with another micro-batch's compute.
// Host seconds stated for an x86 DGX host, on this run's CPU (node host_op_scale: Grace runs a
// torch.nn.Linear forward's host side 2.75x slower than a Xeon 8480C, NVIDIA/TransformerEngine issue 2053).
double on_this_host(const Execution& x, double x86_s) { return x86_s * x.config->node.host_op_scale; }

// One op's host dispatch: the framework's figure (host_op_s), or in a torch.compile'd layer the
// Inductor wrapper's launch of one kernel (inductor_kernel_host_s).
double op_dispatch_s(const Execution& x, bool compiled) {
    return on_this_host(x, compiled ? constant(Constant::inductor_kernel_host_s) : x.cal.host_op_s);
}

// CPU seconds to issue a phase's `kernels` (the host runs ahead of the GPU; phase_cost takes the
// longer of the two). A CUDA graph replays what it captured with one launch instead of dispatching
// each op (CUDA C++ Programming Guide, "CUDA Graphs"): per-layer graphs (Megatron-Core
// cuda_graph_impl local / transformer_engine, NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
// megatron/core/transformer/transformer_config.py) leave one launch per layer forward and backward
// and the embedding, LM head and loss dispatched op by op; a full-iteration graph ("full_iteration":
// the whole forward-backward) leaves one launch per iteration, charged in optimizer_step_phase.
// A torch.compile'd layer (training.compile; torchtitan compiles each TransformerBlock) launches its
// Inductor kernels from generated wrapper code: inductor_kernel_host_s per kernel and
// inductor_graph_host_s per compiled call (meta-pytorch/tritonbench PR 1017), on the node's CPU.
double host_dispatch_s(const Execution& x, double kernels, bool captured, bool compiled) {
    if (x.cuda_graphs == CudaGraphs::full) return 0;
    if (captured) return constant(Constant::cuda_graph_launch_s);
    const double per_call = compiled ? on_this_host(x, constant(Constant::inductor_graph_host_s)) : 0.0;
    return kernels * op_dispatch_s(x, compiled) + per_call;
}

// Whether per-layer graphs capture a layer of this kind: Megatron-Core captures a MoE layer's MLP
// only with drop-and-pad routing (docs/user-guide/features/cuda_graph.md, same commit: "moe ... for
// MoE layers (drop-and-pad only)"; dropless token counts are data-dependent shapes).
bool layer_captured(const Execution& x, LayerKind kind) {
    return x.cuda_graphs == CudaGraphs::layers && (!kind.moe || x.config->model.moe.capacity_factor > 0);
}

// The dispatch-bound length of a phase whose host waits for the GPU inside it (is_host_sync ops:
// dropless MoE routing's token counts). A sync drains the GPU and lets the host run ahead no more:
// each stretch between syncs takes the longer of its dispatch and its GPU work, and after a sync
// the GPU idles until the host has issued the next kernel (one op's dispatch). The collectives'
// kernels and seconds count in the last stretch. Without a sync: max(host_s, gpu_s), as before.
double synced_dispatch_s(const OpList& ops, const Execution& x, double host_s, double gpu_s, double h) {
    bool any = false;
    for (const Op& op : ops) any = any || is_host_sync(op);
    if (!any) return std::max(host_s, gpu_s);
    double total = 0, stretch_host = 0, stretch_gpu = 0, gpu_sum = 0, host_sum = 0;
    bool after_sync = false;
    for (const Op& op : ops) {
        const double g = op.count * op_time_s(op, x.config->gpu, x.cal) + x.cal.kernel_launch_s;
        stretch_host += h;
        stretch_gpu += g;
        if (is_host_sync(op)) {
            total += std::max(stretch_host, stretch_gpu + (after_sync ? h : 0.0));
            gpu_sum += stretch_gpu;
            host_sum += stretch_host;
            stretch_host = stretch_gpu = 0;
            after_sync = true;
        }
    }
    gpu_sum += stretch_gpu;
    host_sum += stretch_host;
    stretch_gpu += std::max(0.0, gpu_s - gpu_sum);
    stretch_host += std::max(0.0, host_s - host_sum);
    return total + std::max(stretch_host, stretch_gpu + h);
}

Cost phase_cost(const OpList& ops, const CommList& comm, const Execution& x, const Network& net, bool captured, bool compiled) {
    const Calibration& cal = x.cal;
    const FrameworkSpec& fw = x.config->framework;
    Cost cost = from_ops(cost_ops(ops, x.config->gpu, cal));
    double kernels = double(ops.size), gather_s = 0, beside_hidden_s = 0;
    const StepBreakdown comm_s = comm_seconds(comm, x, net, cost.s[StepPart::overhead], kernels, &gather_s, &beside_hidden_s);
    const bool overlap_tp = x.config->parallel.overlap_tp_comm;
    const double compute =
        cost.s[StepPart::gemm] + cost.s[StepPart::attention] + cost.s[StepPart::elementwise] + cost.s[StepPart::precision_overhead];
    cost.s[StepPart::tp_comm] = overlap_tp ? std::max(0.0, comm_s[StepPart::tp_comm] - cost.s[StepPart::gemm]) : comm_s[StepPart::tp_comm];
    cost.s[StepPart::cp_comm] = cp_exposed_s(comm_s[StepPart::cp_comm], cost.s[StepPart::attention], x.cp, fw.overlap_cp_comm);
    // On-demand gathers (no prefetch) wait in full; the gradient reduce-scatters still overlap.
    const double serial_gather_s = fw.gather_prefetch == GatherPrefetch::none ? gather_s : 0.0;
    cost.s[StepPart::dp_comm] = serial_gather_s + std::max(0.0, comm_s[StepPart::dp_comm] - serial_gather_s - compute);
    // Megatron-Core overlap_moe_expert_parallel_comm (1F1B A2A overlap: one micro-batch's dispatch and
    // combine run beside another's forward/backward, Megatron-Core MoE docs) and DeepSeek-V3's
    // DualPipe (arXiv 2412.19437 sec. 3.2.1) hide the all-to-all behind compute.
    cost.s[StepPart::ep_comm] = fw.overlap_ep_comm ? std::max(0.0, comm_s[StepPart::ep_comm] - compute) : comm_s[StepPart::ep_comm];
    // Overlap is not free: the compute that runs beside a collective proceeds at (1 - f) speed
    // (charged to the collective's category).
    const double f = comm_sm_share(x);
    const double overlapped_tp = overlap_tp ? std::min(comm_s[StepPart::tp_comm], cost.s[StepPart::gemm]) : 0.0;
    cost.s[StepPart::tp_comm] += (overlapped_tp + beside_hidden_s) * f / (1 - f);
    cost.s[StepPart::cp_comm] += (comm_s[StepPart::cp_comm] - cost.s[StepPart::cp_comm]) * f / (1 - f);
    cost.s[StepPart::dp_comm] += (comm_s[StepPart::dp_comm] - cost.s[StepPart::dp_comm]) * f / (1 - f);
    cost.s[StepPart::ep_comm] += (comm_s[StepPart::ep_comm] - cost.s[StepPart::ep_comm]) * f / (1 - f);
    // The host dispatches kernels asynchronously: the phase takes the longer of the GPU's work and
    // the CPU's dispatch of its kernels; any excess is framework overhead (DESIGN.md 5).
    const double host_s = host_dispatch_s(x, kernels, captured, compiled), gpu_s = cost.total();
    const bool dispatched = !captured && x.cuda_graphs != CudaGraphs::full;  // a graph holds no host sync
    const double phase_s = dispatched ? synced_dispatch_s(ops, x, host_s, gpu_s, op_dispatch_s(x, compiled)) : std::max(host_s, gpu_s);
    if (phase_s > gpu_s) cost.s[StepPart::overhead] += phase_s - gpu_s;
    // A host sync inside the phase (synced_dispatch_s) leaves the host no lead at its end.
    if (phase_s == std::max(host_s, gpu_s)) cost.host_lead_s = std::max(0.0, gpu_s - host_s);
    return cost;
}

struct PieceCost {
    Cost fwd, bwd;
};

// `captured`: per-layer CUDA graphs replay this piece (layer_captured); `compiled`: a torch.compile'd layer.
PieceCost piece_cost(const PieceOps& ops, const Execution& x, const Network& net, bool captured = false, bool compiled = false) {
    return {phase_cost(ops.forward, ops.comm_forward, x, net, captured, compiled),
            phase_cost(ops.backward, ops.comm_backward, x, net, captured, compiled)};
}

// =====================================================================================
// [SECTION] Stages: per virtual stage durations and weights, the busiest stage
// =====================================================================================

// Weights that train on one GPU of a stage (gradients reduced over DP, updated by the optimizer).
struct StageParams {
    double dense = 0, expert = 0, layers = 0;
    double embedding = 0;  // input embedding weights (their gradient is ready last in backward)
};

// `n` layers of `kind`: their trainable weights (all, none when frozen, the adapters under LoRA).
void add_trainable(StageParams& sp, const Execution& x, LayerKind kind, double n) {
    const double trainable = layer_trainable_params_local(x, kind);
    const double experts = x.config->training.finetune.adapters() || trainable == 0 ? 0.0 : layer_expert_params_local(x, kind);
    sp.dense += n * (trainable - experts);
    sp.expert += n * experts;
    sp.layers += n;
}

// One micro-batch through every virtual stage, and the weights of every stage.
struct Stages {
    std::vector<Cost> fwd, bwd;        // by virtual stage j = chunk * p + stage
    std::vector<double> fwd_s, bwd_s;  // their totals by stage * v + chunk (simulate_pipeline's order)
    std::vector<StageParams> params;   // by stage
    int64_t busiest = 0;               // the stage with the most work per micro-batch
    double busiest_s = -1;             // its forward + backward seconds of one micro-batch
};

// Each distinct layer kind, the embedding and the head are built and costed once; a run of layers
// of one kind costs its count times the kind's cost.
const Stages& stages_phase(const Execution& x, const Network& net) {
    thread_local Stages st;  // reused: a search predicts millions of layouts
    const ModelSpec& m = x.config->model;
    const int64_t p = x.stages, v = x.chunks, vs = x.virtual_stages;
    std::array<PieceCost, kLayerKindSlots> kinds{};
    std::array<bool, kLayerKindSlots> have{};
    const PieceCost embed = piece_cost(embedding_ops(x), x, net);
    const PieceCost head = piece_cost(head_ops(x), x, net);
    // P2P of one activation per micro-batch boundary, 1/tp of it per GPU (scatter-gather
    // optimisation, Narayanan et al. SC'21 sec. 4.1); a blocking send on the producing stage.
    const double p2p_bytes = x.tokens * x.hidden * x.ops.w_act / x.tp;
    const double p2p_s = p > 1 ? collective_time_s(Collective::p2p, p2p_bytes, 2, net.link[size_t(Group::pp)]) + x.cal.kernel_launch_s : 0;

    st.fwd.assign(size_t(vs), Cost{});
    st.bwd.assign(size_t(vs), Cost{});
    st.params.assign(size_t(p), StageParams{});
    const double vocab_params = double(m.vocab) * x.hidden / x.tp;
    for (int64_t j = 0; j < vs; ++j) {
        const int64_t stage = j % p;
        for_each_layer_run(x, j, [&](int64_t, int64_t count, LayerKind kind) {
            const int slot = kind_slot(kind);
            const double n = double(count);
            if (!have[size_t(slot)]) {
                kinds[size_t(slot)] = piece_cost(layer_ops(x, kind), x, net, layer_captured(x, kind), x.config->training.compile);
                have[size_t(slot)] = true;
            }
            st.fwd[size_t(j)].add(kinds[size_t(slot)].fwd, n);
            st.bwd[size_t(j)].add(kinds[size_t(slot)].bwd, n);
            add_trainable(st.params[size_t(stage)], x, kind, n);
        });
        if (j == 0) {
            st.fwd[0].add(embed.fwd);
            st.bwd[0].add(embed.bwd);
            if (embedding_trains(*x.config)) {
                st.params[0].dense += vocab_params;
                st.params[0].embedding = vocab_params;
            }
        }
        if (j == vs - 1) {
            st.fwd[size_t(j)].add(head.fwd);
            st.bwd[size_t(j)].add(head.bwd);
            if ((!m.tied_embeddings || p > 1) && head_trains(*x.config)) st.params[size_t(p - 1)].dense += vocab_params;
        }
        if (m.mtp_layers > 0 && (j == vs - 1 || j == x.mtp_virtual_stage)) {
            // DeepSeek-V3 MTP modules on the last stage (as DualPipe places them, arXiv 2412.19437
            // sec. 3.2.1), or where a pipeline layout puts its 'm's: per module its projection, a
            // transformer layer of the last layer's kind, and the shared output head with its loss,
            // which Megatron-Core runs on the last stage (gpt_model.py _postprocess, process_mtp_loss).
            const LayerKind kind = layer_kind_at(m, m.layers - 1);
            const int slot = kind_slot(kind);
            if (!have[size_t(slot)]) {
                kinds[size_t(slot)] = piece_cost(layer_ops(x, kind), x, net, layer_captured(x, kind), x.config->training.compile);
                have[size_t(slot)] = true;
            }
            const PieceCost mtp = piece_cost(mtp_ops(x), x, net);
            const double n = double(m.mtp_layers);
            const bool modules = j == x.mtp_virtual_stage;
            const PieceCost* parts[] = {modules ? &kinds[size_t(slot)] : nullptr, modules ? &mtp : nullptr, j == vs - 1 ? &head : nullptr};
            for (const PieceCost* piece : parts) {
                if (!piece) continue;
                st.fwd[size_t(j)].add(piece->fwd, n);
                st.bwd[size_t(j)].add(piece->bwd, n);
            }
            if (modules) {
                StageParams& sp = st.params[size_t(stage)];
                add_trainable(sp, x, kind, n);
                if (!x.config->training.finetune.adapters()) sp.dense += n * double(mtp_extra_parameter_count(m)) / x.tp;
                // An MTP stage other than the first builds its own copy of the embedding, the last one
                // beside its output layer (gpt_model.py: "if self.pre_process or self.mtp_process:
                // self.embedding = ..."; language_module.py shared_embedding_or_output_weight).
                if (stage != 0 && embedding_trains(*x.config)) sp.dense += vocab_params;
            }
        }
        if (j < vs - 1) st.fwd[size_t(j)].s[StepPart::pp_comm] += p2p_s;
        if (j > 0) st.bwd[size_t(j)].s[StepPart::pp_comm] += p2p_s;
    }

    st.fwd_s.resize(size_t(vs));
    st.bwd_s.resize(size_t(vs));
    for (int64_t j = 0; j < vs; ++j) {
        const int64_t stage = j % p, chunk = j / p;
        st.fwd_s[size_t(stage * v + chunk)] = st.fwd[size_t(j)].total();
        st.bwd_s[size_t(stage * v + chunk)] = st.bwd[size_t(j)].total();
    }
    st.busiest = 0;
    st.busiest_s = -1;
    for (int64_t s = 0; s < p; ++s) {
        double busy = 0;
        for (int64_t ch = 0; ch < v; ++ch) busy += st.fwd_s[size_t(s * v + ch)] + st.bwd_s[size_t(s * v + ch)];
        if (busy > st.busiest_s) {
            st.busiest_s = busy;
            st.busiest = s;
        }
    }
    return st;
}

// The busiest stage sets the breakdown: M times its per-micro-batch work (the rest is bubble).
Cost busiest_stage_work(const Execution& x, const Stages& st) {
    Cost step;
    for (int64_t j = 0; j < x.virtual_stages; ++j) {
        if (j % x.stages != st.busiest) continue;
        step.add(st.fwd[size_t(j)], double(x.micro_batches));
        step.add(st.bwd[size_t(j)], double(x.micro_batches));
    }
    return step;
}

// =====================================================================================
// [SECTION] DP sync and optimizer step
// =====================================================================================

// Data-parallel gradient sync once per step (ZeRO <= 2): all-reduce, or reduce-scatter of the
// gradients + all-gather of the updated weights with a distributed optimizer / ZeRO 1-2
// (Rajbhandari et al. 2020). Gradients reduce behind the last micro-batch's backward (bucketed,
// Li et al. 2020 PyTorch DDP) except the first layers' bucket; the gather hides behind the next
// forward (Megatron overlap_param_gather). Each stage syncs its own weights; the slowest counts.
// The exposed once-per-step sync of stage s with ZeRO-stage `zero` (<= 2) volumes.
double step_sync_exposed(const Execution& x, const Stages& st, const Network& net, int64_t s, int64_t zero) {
    const PrecisionSpec& prec = x.precision();
    const int64_t v = x.chunks;
    const double w_reduce = dtype_storage_bytes(prec.grad_reduce), w_param = dtype_storage_bytes(prec.params);
    const StageParams& sp = st.params[size_t(s)];
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
    if (x.config->parallel.overlap_dp_comm && sp.layers > 0) {
        double f1 = 0, b1 = 0;  // one micro-batch through this stage
        for (int64_t ch = 0; ch < v; ++ch) {
            f1 += st.fwd_s[size_t(s * v + ch)];
            b1 += st.bwd_s[size_t(s * v + ch)];
        }
        // The last bucket holds the first layer and, on the first stage, the input embedding,
        // whose gradient (tied or not) is complete only at the very end of backward: it
        // cannot overlap (a 267k-word table is most of Transformer-XL base's gradients).
        const double layer_w = (sp.dense - sp.embedding) / sp.layers + sp.expert / sp.layers + sp.embedding;
        const double last = grad_s * layer_w / std::max(sp.dense + sp.expert, 1.0);
        exposed = std::max(last, grad_s - b1) + std::max(gather_s / sp.layers, gather_s - f1);
        // The hidden part still slows the compute it hides behind (as in phase_cost).
        const double f = comm_sm_share(x);
        exposed += (grad_s + gather_s - exposed) * f / (1 - f);
    }
    return exposed;
}

double dp_sync_phase(const Execution& x, const Stages& st, const Network& net) {
    double dp_exposed = 0;
    const int64_t zero = x.config->parallel.zero;
    for (int64_t s = 0; s < x.stages; ++s) {
        if (zero < 3) {
            dp_exposed = std::max(dp_exposed, step_sync_exposed(x, st, net, s, zero));
            continue;
        }
        // ZeRO-3 reduces and gathers every micro-batch (operators.cpp zero3_comm): it moves ZeRO-2's
        // gradient reduce-scatter and parameter all-gather and more (1.5x the volume, Rajbhandari et
        // al. 2020 sec. 7.2) on the same groups, so its exposed DP time is at least ZeRO-2's; the
        // per-layer overlap of phase_cost already charged part of it inside the micro-batches.
        double in_phases = 0;
        for (int64_t j = s; j < x.virtual_stages; j += x.stages)
            in_phases += double(x.micro_batches) * (st.fwd[size_t(j)].s[StepPart::dp_comm] + st.bwd[size_t(j)].s[StepPart::dp_comm]);
        dp_exposed = std::max(dp_exposed, std::max(0.0, step_sync_exposed(x, st, net, s, 2) - in_phases));
    }
    return dp_exposed;
}

double host_link_bytes_per_s(const Config& c) { return host_copy_bytes_per_s(c.gpu); }

// The weights one GPU updates per step on the stage holding the most (its ZeRO shard).
double updated_shard(const Execution& x, const Stages& st) {
    double most = 0;
    for (const StageParams& sp : st.params) most = std::max(most, sp.dense + sp.expert);
    const ParallelSpec& par = x.config->parallel;
    if (par.zero < 1) return most;
    const StageParams* heavy = &st.params[0];
    for (const StageParams& sp : st.params)
        if (sp.dense + sp.expert >= heavy->dense + heavy->expert) heavy = &sp;
    return heavy->dense / double(par.weight_replicas()) + heavy->expert / double(par.expert_weight_replicas());
}

}  // namespace

// The optimizer step on the CPU (training.offload_optimizer): the host's CPUs update the shards of all
// its GPUs' ranks, streaming gradient, weight (or fp32 master) and states through DRAM; a vectorised
// Adam does ~10 FLOPs per 30 bytes, so DRAM bandwidth bounds it (ZeRO-Offload, Ren et al. 2021 arXiv
// 2101.06840 sec. 4.2 CPU-Adam; FSDP CPUOffload runs torch.optim on the CPU shard). Not overlapped:
// FSDP and ZeRO-Offload (without its optional delayed parameter update) step after the backward and the
// next forward needs the updated weights. 0 when the node has no host_memory_bw_gbps.
double phases::cpu_optimizer_step_s(const Execution& x, double shard) {
    const Config& c = *x.config;
    if (!c.training.offload_optimizer || c.node.host_memory_bw_gbps <= 0) return 0;
    const PrecisionSpec& p = x.precision();
    const bool master = keeps_master(p);
    const double wp = dtype_storage_bytes(p.params), wu = master ? 4.0 : wp;
    // Read the gradient, read and write the updated copy and the states; with a master copy also write
    // the half weights that go back to the GPU (fused Adam's traffic, as step_ops).
    const double bytes =
        shard * (dtype_storage_bytes(p.grads) + 2 * wu + 2 * optimizer_state_bytes_per_param(c.training, p) + (master ? wp : 0.0));
    const double ranks = double(std::min<int64_t>(std::max<int64_t>(c.num_gpus, 1), c.node.host_gpus()));
    return ranks * bytes / (c.node.host_memory_bw_gbps * 1e9 * constant(Constant::cpu_adam_memory_efficiency));
}

namespace {

// Optimizer step and per-step precision ops on the stage holding the most weights.
Cost optimizer_step_phase(const Execution& x, const Stages& st) {
    double most = 0;
    for (const StageParams& sp : st.params) most = std::max(most, sp.dense + sp.expert);
    const double shard = updated_shard(x, st);
    const ParallelSpec& par = x.config->parallel;
    Cost cost = from_ops(cost_ops(step_ops(x, most, shard), x.config->gpu, x.cal));
    const Config& c = *x.config;
    if (c.training.offload_optimizer) {
        // ZeRO-Offload (Ren et al. 2021 sec. 4): the reduced gradient shard goes to the host and the
        // updated weights come back, over the host link, once per step; the GPU-side step is gone, the
        // CPU's runs instead. Gradients leave as they are reduced, behind the backward (ZeRO-Offload
        // sec. 4.1; FSDP2 CPUOffloadPolicy copies each reduce-scattered gradient to the CPU on its own
        // stream): the last layer's, or what the last micro-batch's backward cannot hide, is exposed.
        // Streamed weights (offload_params) stay on the host: the next forward fetches them per layer.
        const PrecisionSpec& p = x.precision();
        const double down_s = shard * dtype_storage_bytes(p.grad_reduce) / host_link_bytes_per_s(c);
        const double up_s = c.training.offload_params ? 0.0 : shard * dtype_storage_bytes(p.params) / host_link_bytes_per_s(c);
        double b1 = 0;  // one micro-batch's backward on the busiest stage
        for (int64_t ch = 0; ch < x.chunks; ++ch) b1 += st.bwd_s[size_t(st.busiest * x.chunks + ch)];
        const double layers = std::max(double(x.layers) / double(x.stages), 1.0);
        const double down_exposed = c.parallel.overlap_dp_comm ? std::max(down_s / layers, down_s - b1) : down_s;
        cost.s[StepPart::optimizer] = down_exposed + up_s + phases::cpu_optimizer_step_s(x, shard);
    }
    if (c.training.paged_optimizer) {
        // Paged-out optimizer states come back for the update and go out again when the next forward
        // needs the memory (CUDA unified memory page migration over the host link, both ways).
        const double paged = memory_per_gpu(x).paged_gib * 1024.0 * 1024.0 * 1024.0;
        cost.s[StepPart::optimizer] += 2 * paged / host_link_bytes_per_s(c);
    }
    if (c.training.offload_params) {
        // Weights streamed from host memory per micro-batch, for the forward and again for the
        // backward (ZeRO-Infinity, Rajbhandari et al. 2021 arXiv 2104.07857; FSDP CPU offload),
        // prefetched behind the busiest stage's compute: the excess is exposed (dp_comm, beside the
        // ZeRO-3 gathers it feeds).
        // The weights one GPU holds: the model over pp x tp (experts and the embedding evenly spread).
        const double held = double(parameter_count(c.model)) / (double(x.stages) * x.tp);
        const double stream_s =
            2 * held / double(par.weight_replicas()) * dtype_storage_bytes(x.precision().params) / host_copy_bytes_per_s(c.gpu);
        cost.s[StepPart::dp_comm] += double(x.micro_batches) * std::max(0.0, stream_s - st.busiest_s);
    }
    // An eager per-tensor loop launches each of its kernels on its own (GPU-side cost per kernel as
    // in cost_ops).
    const double eager_kernels = per_tensor_eager_kernels(x);
    cost.s[StepPart::overhead] += eager_kernels * x.cal.kernel_launch_s;
    // A per-tensor optimizer loop is dispatched by the host tensor by tensor: host-bound as in phase_cost.
    // The optimizer step runs outside a full-iteration graph (Megatron-Core "full_iteration": forward-
    // backward only), after that graph's one launch per iteration.
    const double graph_launch_s = x.cuda_graphs == CudaGraphs::full ? constant(Constant::cuda_graph_launch_s) : 0.0;
    const double host_s =
        on_this_host(x, per_tensor_optimizer_kernels(x) * x.cal.host_op_s + eager_kernels * constant(Constant::eager_op_host_s)) +
        graph_launch_s;
    if (host_s > cost.total()) cost.s[StepPart::overhead] += host_s - cost.total();
    // Apex amp O2's master-gradient allocations (amp_master_grad_host_ops, eager ops without a kernel)
    // run on the host right after backward() returns, before the unscale and its overflow check
    // (apex/amp/handle.py scale_loss: _post_amp_backward, then update_scale's .item()): they overlap
    // the GPU's queued backward (the last micro-batch's backward on the first stage, which ends the
    // step) and only their excess over the host's lead is on the critical path.
    const double amp_host_s = on_this_host(x, amp_master_grad_host_ops(x) * constant(Constant::eager_op_host_s));
    cost.s[StepPart::overhead] += std::max(0.0, amp_host_s - st.bwd[0].host_lead_s);
    return cost;
}

// Activation offload (training.offload_activations): each micro-batch's saved activations of the busiest
// stage go to the host during its forward and come back during its backward on a side stream
// (torchtune OffloadActivations use_streams: "communications get overlapped with the computation");
// what a direction's transfer takes beyond the phase it hides behind is exposed, every micro-batch.
double activation_offload_exposed_s(const Execution& x, const Stages& st) {
    const Config& c = *x.config;
    if (!c.training.offload_activations) return 0;
    const double layers = double(x.layers) / double(x.stages);
    const double bytes = layers * activation_bytes_per_layer(x, layer_kind_at(c, int64_t(0)));
    const double transfer_s = bytes / host_link_bytes_per_s(c);
    double f1 = 0, b1 = 0;
    for (int64_t ch = 0; ch < x.chunks; ++ch) {
        f1 += st.fwd_s[size_t(st.busiest * x.chunks + ch)];
        b1 += st.bwd_s[size_t(st.busiest * x.chunks + ch)];
    }
    return double(x.micro_batches) * (std::max(0.0, transfer_s - f1) + std::max(0.0, transfer_s - b1));
}

}  // namespace

// Model FLOPs per token, PaLM appendix B (Chowdhery et al. 2022: 6 N + 12 L H Q T) generalised per
// layer. N_i: the matmul weights a token passes through (norm gains do no matmul; the input embedding
// is a lookup). A layer that trains costs 2 N_i forward + 2 N_i input gradients + 2 N_i weight
// gradients and 3x its attention forward 2 H (d_qk + d_v) K, K the keys a query attends to: half
// the sequence under causal masking (the masked half is never used; FlashAttention skips it, Dao 2023
// sec. 3.1 -- the convention of Megatron-LM's and torchtitan's MFU), fewer on local layers
// (attended_keys), the whole sequence bidirectional and for cross-attention. A frozen leading layer
// costs its forward only; under LoRA the base gets no weight gradients (4 N_i) and the adapters train
// (6 A_i). The LM head counts over the logits actually computed, once more per MTP module.
double model_flops_per_token(const Config& c) {
    const ModelSpec& m = c.model;
    const double seq = double(c.training.seq_len);
    const double d_qk = m.mla.enabled() ? double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : double(m.effective_head_dim());
    const double d_v = m.mla.enabled() ? double(m.mla.v_head_dim) : double(m.effective_head_dim());
    const bool lora = c.training.finetune.adapters();
    auto layer_flops = [&](LayerKind kind, double n_active) {
        const double keys = attended_keys(m, kind, seq) + (kind.cross_attention ? seq : 0.0);
        const double attention = 2.0 * double(m.heads) * (d_qk + d_v) * keys;
        if (kind.frozen) return 2 * n_active + attention;
        return (lora ? 4 : 6) * n_active + 6 * layer_adapter_params(c, kind) + 3 * attention;
    };
    double sum = 0;
    for (int64_t i = 0; i < total_layers(m); ++i) sum += layer_flops(layer_kind_at(c, i), double(layer_parameter_count(m, i, true, false)));
    const double logits = double(m.softmax_head > 0 ? std::min(m.softmax_head, m.vocab) : m.vocab);
    const double head = logits * double(m.hidden) * (head_trains(c) ? 6 : 4);
    const LayerKind last = layer_kind_at(m, m.layers - 1);
    // MTP module: a layer of the last layer's kind plus its 2h -> h projection (the norms do no matmul).
    const double mtp_layer = double(layer_parameter_count(m, m.layers - 1, true, false)) + 2.0 * double(m.hidden) * double(m.hidden);
    return sum + head + double(m.mtp_layers) * (layer_flops(last, mtp_layer) + head);
}

namespace {

// =====================================================================================
// [SECTION] Simulate and summarise: throughput, FLOPs, MFU, totals, memory, warnings
// =====================================================================================

// Pipeline (DESIGN.md 2.4). Asking for the timeline must not change a single bit of the numbers
// (the page always asks, the CLI does not): with one stage the closed form (M forward/backward
// pairs) is authoritative and the spans come extra.
double simulate_phase(const Execution& x, const Stages& st, std::vector<TimelineSpan>* timeline) {
    if (x.stages > 1) return simulate_pipeline(x.shape, st.fwd_s.data(), st.bwd_s.data(), timeline);
    if (timeline) simulate_pipeline(x.shape, st.fwd_s.data(), st.bwd_s.data(), timeline);
    return double(x.micro_batches) * (st.fwd_s[0] + st.bwd_s[0]);
}

std::string format(const char* fmt, double a, double b = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, fmt, a, b);
    return buf;
}

void summarise_phase(const Execution& x, const Cost& step, double stage_flops_sum, double iteration_s, double bubble_s, Prediction& out) {
    const Config& c = *x.config;
    const ModelSpec& m = c.model;
    out.breakdown_s = step.s;  // the stage costs leave the bubble at 0: it is the simulation's
    out.breakdown_s[StepPart::pipeline_bubble] = bubble_s;

    const double gpus = x.gpus;
    const double tokens_per_step = double(c.training.global_batch) * double(c.training.seq_len);
    out.iteration_time_s = iteration_s;
    out.tokens_per_s = tokens_per_step / iteration_s;
    out.tokens_per_s_per_gpu = out.tokens_per_s / gpus;
    out.samples_per_s = double(c.training.global_batch) / iteration_s;
    out.model_tflops_per_gpu = model_flops_per_token(c) * tokens_per_step / iteration_s / gpus / 1e12;
    // Executed FLOPs (recompute included): every stage runs M micro-batches on each of its GPUs.
    out.hardware_tflops_per_gpu = stage_flops_sum * double(x.micro_batches) / double(x.stages) / iteration_s / 1e12;
    // MFU against the dense 16-bit peak, whatever the precision (Llama 3, Dubey et al. 2024 sec. 3.3.4
    // and PaLM appendix B report BF16 MFU for every run), so FP8 reads faster, not worse; beside it the
    // fraction of the peak of the dtype the GEMMs actually run in (the blind baseline: its reference).
    const double dense_peak = c.gpu.peak_flops(compute_dtype(c.gpu, reference_dtype(c.gpu)));
    const double own_peak = c.gpu.peak_flops(compute_dtype(c.gpu, x.ops.gemm));
    out.mfu = dense_peak > 0 ? out.model_tflops_per_gpu * 1e12 / dense_peak : 0;
    out.mfu_precision_peak = own_peak > 0 ? out.model_tflops_per_gpu * 1e12 / own_peak : 0;

    // Whole optimizer steps: a run cannot stop inside a step, so a partial last batch counts as one.
    const double exact_steps = c.training.tokens / tokens_per_step;
    out.steps = c.training.tokens > 0 ? std::ceil(exact_steps) : 1.0;  // 0 tokens: one step
    // Wall time of the run: checkpoints, interruptions and restarts around the steps (run.hpp).
    out.run = whole_run(c, iteration_s, out.steps);
    out.total_time_s = out.run.ideal_time_s / out.run.goodput;
    out.gpu_hours = out.total_time_s * gpus / 3600.0;
    // A price or TDP of 0 is unknown (presets/README.md): no figure rather than $0 or 0 kWh.
    out.cost_known = c.training.price_per_gpu_hour_usd >= 0 || c.gpu.price_per_gpu_hour_usd > 0;
    out.cost_usd = out.cost_known ? phases::run_cost_usd(c, out.total_time_s) : 0;
    out.energy_known = x.power_w > 0;
    out.energy_kwh = x.power_w * out.total_time_s / 3.6e6;

    out.params_total = double(parameter_count(m));
    out.params_active = double(active_parameter_count(m));
    out.memory = memory_per_gpu(x);
    if (!out.memory.fits && out.memory.headroom_gib > 0)
        out.warnings.push_back(format("does not fit: %.1f GiB > %.0f GiB", out.memory.per_gpu_gib, out.memory.capacity_gib) + " less the " +
                               format("%.1f GiB headroom", out.memory.headroom_gib));
    else if (!out.memory.fits)
        out.warnings.push_back(format("does not fit: %.1f GiB > %.0f GiB", out.memory.per_gpu_gib, out.memory.capacity_gib));
    if (bubble_s > 0.1 * iteration_s)
        out.warnings.push_back(format("pipeline bubble is %.0f %% of the step", 100.0 * bubble_s / iteration_s));
    const double comm = out.breakdown_s.exposed_comm_s();
    if (comm > 0.3 * iteration_s)
        out.warnings.push_back(format("exposed communication is %.0f %% of the step", 100.0 * comm / iteration_s));
    if (c.training.flash_attention && !x.cal.precision_blind) {
        const DType g = c.precision.gemm;
        if (g == DType::fp32 || g == DType::tf32)
            out.warnings.push_back("flash attention needs fp16/bf16: " + std::string(dtype_name(g)) +
                                   " runs materialised attention (s x s scores)");
    }
    if (c.training.offload_optimizer || c.training.offload_params || c.training.offload_activations || out.memory.host_gib > 0) {
        char text[400];
        if (c.training.offload_optimizer && c.node.host_memory_bw_gbps <= 0)
            std::snprintf(
                text, sizeof text,
                "%.1f GiB per GPU offloaded to CPU memory; host-link transfers are costed, the CPU optimizer step is not: node %s "
                "has no host_memory_bw_gbps (the host CPUs' DRAM bandwidth, GB/s; give an inline --node)",
                out.memory.host_gib, c.node.name.c_str());
        else if (c.training.offload_optimizer)
            std::snprintf(
                text, sizeof text,
                "%.1f GiB per GPU offloaded to CPU memory; the optimizer step runs on the host's CPUs, %.3g s per step at %.2g of "
                "node %s's %.0f GB/s DRAM bandwidth (cpu_adam_memory_efficiency: STREAM Triad share, Azure HBv2)",
                out.memory.host_gib, out.cpu_optimizer_s, constant(Constant::cpu_adam_memory_efficiency), c.node.name.c_str(),
                c.node.host_memory_bw_gbps);
        else
            std::snprintf(text, sizeof text, "%.1f GiB per GPU offloaded to CPU memory; host-link transfers are costed",
                          out.memory.host_gib);
        out.warnings.push_back(text);
    }
    if (m.is_moe() && m.moe.imbalance == 1 && c.parallel.ep > 1)
        out.warnings.push_back(
            "expert load assumed balanced across the ep ranks (set model.moe.imbalance: the busiest expert's load over the mean)");
    if (!out.cost_known && c.training.tokens > 0)
        out.warnings.push_back("cost unknown: gpu " + c.gpu.name + " has no price (give training.price_per_gpu_hour / --price)");
    if (!out.energy_known && c.training.tokens > 0) out.warnings.push_back("energy unknown: gpu " + c.gpu.name + " has no tdp_w");
    const std::string run_note = whole_run_note(out.run);
    if (!run_note.empty()) out.warnings.push_back(run_note);
    const std::string split_note = stage_split_note(x.layers, x.stages, x.chunks, c.parallel.stage_split);
    if (!split_note.empty()) out.warnings.push_back(split_note);
    if (c.parallel.pp > 1 && x.micro_batches < c.parallel.pp)
        out.warnings.push_back(format("fewer micro-batches (%.0f) than pipeline stages (%.0f): the pipeline never fills",
                                      double(x.micro_batches), double(c.parallel.pp)));
    if (c.training.tokens > 0 && out.steps != exact_steps) {
        char text[200];
        std::snprintf(text, sizeof text, "training.tokens = %.6g is %.2f steps of %.0f tokens: rounded up to %.0f whole steps",
                      c.training.tokens, exact_steps, tokens_per_step, out.steps);
        out.warnings.push_back(text);
    }
    if (!c.precision_default_note.empty()) out.warnings.push_back(c.precision_default_note);
    if (const std::optional<CalibrationUse> use = calibration_use(c))  // a calibration outside its scope is said (issue 25 item 4)
        for (const std::string& warning : use->warnings) out.warnings.push_back(warning);
    if (m.max_seq_len > 0 && c.training.seq_len > m.max_seq_len)
        out.warnings.push_back("training.seq_len " + std::to_string(c.training.seq_len) + " is above the " + m.name + " context length (" +
                               "model.max_seq_len " + std::to_string(m.max_seq_len) + "): positions beyond it were never trained");
    if (c.gpu.sm_count == 0)
        out.warnings.push_back(
            "gpu " + c.gpu.name +
            " has no SM count (sm_count 0: no SMs or unknown): GEMM wave quantisation and the SMs collectives hold are not "
            "modelled");
    if (!c.framework_defaults.empty()) {  // no silent assumption: what the framework preset set
        std::string applied;
        for (const std::string& d : c.framework_defaults) applied += (applied.empty() ? "" : ", ") + d;
        out.warnings.push_back("framework " + c.framework.name + " defaults: " + applied);
    }
}

}  // namespace

// =====================================================================================
// Shared with the search (phases.hpp)
// =====================================================================================

Network phases::make_network(const Execution& x) {
    Network n;
    for (int g = 0; g < kGroupCount; ++g) {
        const GroupPlacement place = group_placement(x.config->parallel, Group(g));
        n.link[size_t(g)] = group_link(x.config->node, x.config->gpu, x.cal, place);
        n.ranks[size_t(g)] = place.size;
    }
    return n;
}

double phases::phase_floor_s(const OpList& ops, const CommList& comm, const Execution& x, const Network& net) {
    const OpCost cost = cost_ops(ops, x.config->gpu, x.cal);
    double launch_s = 0, kernels = 0;  // comm launches: not part of the floor
    const StepBreakdown comm_s = comm_seconds(comm, x, net, launch_s, kernels);
    const double attention_s = cost.seconds[size_t(OpKind::attention)];
    const FrameworkSpec& fw = x.config->framework;
    const double compute_s = cost.total_s() - cost.launch_s - cost.seconds[size_t(OpKind::optimizer)];
    return cost.total_s() + (x.config->parallel.overlap_tp_comm ? 0.0 : comm_s[StepPart::tp_comm]) +
           (fw.overlap_ep_comm ? std::max(0.0, comm_s[StepPart::ep_comm] - compute_s) : comm_s[StepPart::ep_comm]) +
           cp_exposed_s(comm_s[StepPart::cp_comm], attention_s, x.cp, fw.overlap_cp_comm);
}

double phases::piece_floor_s(const PieceOps& ops, const Execution& x, const Network& net) {
    return phase_floor_s(ops.forward, ops.comm_forward, x, net) + phase_floor_s(ops.backward, ops.comm_backward, x, net);
}

double phases::fitted_step_overhead_s(const Config& c, const Calibration& cal) {
    return c.framework.step_overhead_fitted ? cal.step_overhead_s : 0.0;
}

namespace {

// The stack's own host work once per optimizer step, outside the forward-backward (framework keys,
// each preset citing its train step): after each host sync (.item(), .cpu()) the GPU idles until the
// host has issued the next kernel, one op's dispatch (as synced_dispatch_s); dynamic loss scaling reads
// its overflow flag on the host once more (Megatron found_inf.item(), torch GradScaler, Apex amp's
// overflow_buf.item()); the eager ops the stack issues tensor by tensor from Python run on the host
// while the GPU waits (eager_op_host_s each). A stack not derived yet pays the fitted remainder instead.
double step_host_s(const Execution& x) {
    const Config& c = *x.config;
    const FrameworkSpec& fw = c.framework;
    if (fw.step_overhead_fitted) return phases::fitted_step_overhead_s(c, x.cal);
    const double syncs = fw.step_host_syncs + (x.precision().loss_scaling == LossScaling::dynamic ? 1.0 : 0.0);
    return syncs * op_dispatch_s(x, false) +
           on_this_host(x, fw.step_host_ops_per_tensor * megatron_parameter_tensors(x) * constant(Constant::eager_op_host_s));
}

}  // namespace

double phases::step_cost_usd(const Config& c, double iteration_time_s) {
    return iteration_time_s / 3600.0 * double(c.num_gpus) * price_per_gpu_hour_usd(c);
}

double phases::run_cost_usd(const Config& c, double total_time_s) {
    const double gpu_hours = total_time_s * double(std::max<int64_t>(c.num_gpus, 1)) / 3600.0;  // as Prediction::gpu_hours
    return gpu_hours * price_per_gpu_hour_usd(c);
}

Prediction predict(const Config& c, const PredictOptions& options) {
    Prediction out;
    const Execution x = make_execution(c);
    if (x.interleave_fallback)
        out.warnings.push_back(format("interleaved schedule needs micro-batches (%.0f) divisible by pp (%.0f); simulated as 1F1B",
                                      double(x.micro_batches), double(x.stages)));
    const Network net = phases::make_network(x);

    const Stages& st = stages_phase(x, net);
    Cost step = busiest_stage_work(x, st);
    double stage_flops_sum = 0;
    for (int64_t j = 0; j < x.virtual_stages; ++j) stage_flops_sum += st.fwd[size_t(j)].flops + st.bwd[size_t(j)].flops;
    const double dp_exposed = dp_sync_phase(x, st, net);
    const Cost step_ops_cost = optimizer_step_phase(x, st);
    const double offload_s = activation_offload_exposed_s(x, st);

    // A search only needs layouts that can beat its current K-th best: the busiest stage works
    // M x busiest_s serially, so the pipeline takes at least that (less 1e-9 relative: the steady-state
    // skip of pipeline.cpp is exact to that); above the cutoff the simulation is skipped.
    const double step_host = step_host_s(x);
    const double rest_s = dp_exposed + step_ops_cost.total() + step_host + offload_s;
    const double bound_s = double(x.micro_batches) * st.busiest_s * (1.0 - 1e-9) + rest_s;
    if (bound_s > options.bound_above_s && !options.timeline) {
        out.bounded = true;
        out.iteration_time_s = bound_s;
        return out;
    }

    const double pipe_s = simulate_phase(x, st, options.timeline ? &out.timeline : nullptr);
    const double bubble_s = std::max(0.0, pipe_s - double(x.micro_batches) * st.busiest_s);
    const double iteration_s = pipe_s + dp_exposed + step_ops_cost.total() + step_host + offload_s;
    step.add(step_ops_cost);
    step.s[StepPart::dp_comm] += dp_exposed;
    step.s[StepPart::overhead] += step_host + offload_s;
    out.cpu_optimizer_s = phases::cpu_optimizer_step_s(x, updated_shard(x, st));
    out.activation_offload_s = offload_s;
    summarise_phase(x, step, stage_flops_sum, iteration_s, bubble_s, out);
    return out;
}

}  // namespace trainclock
