// trainclock: collectives on a two-tier network (DESIGN.md 2.3).
// All-reduce, all-gather and reduce-scatter as NCCL runs them: ring, tree, NVLS and NVLS-tree with
// the LL / LL128 / Simple protocols, the fastest by NCCL's own latency and bandwidth model
// (NVIDIA/nccl src/graph/tuning.cc); all-to-all and p2p alpha-beta. Process groups are placed in
// Megatron rank order (TP innermost, then CP, EP, DP, PP) so a group knows whether it crosses nodes.
#pragma once

#include <cstdint>

#include "trainclock/model/config.hpp"
#include "trainclock/model/hardware.hpp"
#include "trainclock/perf/calibration.hpp"

namespace trainclock {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, p2p };
// expert_dp: DP group of expert weights (tp cp dp / (etp ep)); etp: the experts' own tensor-parallel
// group where it differs from tp (MoE parallel folding, ParallelSpec::expert_tp).
enum class Group { tp, cp, ep, dp, expert_dp, pp, etp };
inline constexpr int kGroupCount = 7;

// One collective of a layer or a step: `bytes` is the full (unsharded) buffer of one call, per GPU.
// Plain aggregate (value-initialise: CommOp op{}).
struct CommOp {
    const char* name;  // static label ("tp_all_reduce")
    Collective collective;
    Group group;
    double bytes;
    double count;  // calls per micro-batch (or per step)
    // Seconds of compute one call runs beside, issued asynchronously before it (Megatron's async
    // all-reduce of a column-parallel input gradient beside its weight-gradient GEMM): only the
    // excess is exposed. 0: none.
    double beside_s = 0;
};

// A process group: `size` ranks spaced `stride` ranks apart in the global rank order.
struct GroupPlacement {
    int64_t size = 1;
    int64_t stride = 1;
    int64_t world = 0;  // ranks of the job (tp*cp*dp*pp); 0 = unknown: as many as one block of groups
};

// Effective link a group's collectives run on (achievable bandwidth, per-step latency).
struct Link {
    double bw_bytes_per_s = 0;  // ring busbw: per GPU, one direction, after the achievable-fraction efficiency
    double latency_s = 0;       // per algorithm step (all-to-all, p2p)
    bool inter_node = false;
    // NCCL's model of all-reduce / all-gather / reduce-scatter (0 = unknown: the alpha-beta ring alone).
    double intra_bytes_per_s = 0;     // one GPU's link inside its node, after efficiency
    double node_nic_bytes_per_s = 0;  // the NICs of the group's members in one node together, after efficiency
    double nvls_bytes_per_s = 0;      // NVLink SHARP all-reduce algbw inside a node (0 = no NVLS)
    double net_latency_s = 0;         // NCCL's latencyInter: per inter-node step
    double simple_net_factor = 2;     // Simple's inter-node latency in net_latency_s (NCCL: 2, the flush; fitted per network)
    bool ll128_across = true;         // LL128 runs across nodes (not over GPUDirect-TCPXO or EFA send/recv)
    double intra_latency_s = 0;       // per step between GPUs of one node (all-to-all across nodes)
    int64_t nodes = 1;                // nodes the group spans
    int nccl_arch = 2;                // NCCL's compute-capability index: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
    bool pcie = false;                // intra-node hardware PCIe (NCCL_HW_PCI latencies), else NVLink
    bool rccl = false;                // AMD GPUs: RCCL's tuning model (its latencies and busBw ratios), else NCCL's
    // NCCL release the collective runs (nccl.h NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch; 0 = not
    // stated: the current release's behaviour). Before 2.19.1 NCCL runs NVLS-tree across NVSwitch nodes at every
    // size and flushes every Simple receive over the network on Hopper too (nccl_time_s).
    int nccl_version = 0;
    double flush_chunk_s = 0;  // per chunk a flushed network receive adds (EFA: efa_flush_chunk_s; 0 = not identified)
};

GroupPlacement group_placement(const ParallelSpec& parallel, Group group);
// Whether every instance of the group lies inside one NVLink domain of `domain_gpus` ranks (ranks
// fill domains in order: a job of 128 GPUs on NVL72 racks is 72 + 56). A block of groups spans
// size x stride consecutive ranks; a block that straddles a domain boundary holds groups that cross.
bool group_in_one_domain(GroupPlacement placement, int64_t domain_gpus);
// Intra-node link when the group stays inside an NVLink domain (gpus_per_node), else the NICs;
// the GPU sets NCCL's architecture index and whether the node's NVSwitch runs NVLS (Hopper and later).
Link group_link(const NodeSpec& node, const GpuSpec& gpu, const Calibration& cal, GroupPlacement placement);

// Bytes each GPU puts on the wire for one call (nccl-tests PERFORMANCE.md busbw factors):
// all-reduce 2(n-1)/n S, reduce-scatter / all-gather (n-1)/n S, all-to-all (n-1)/n S, p2p S.
double collective_wire_bytes(Collective collective, double bytes, int64_t ranks);
// Seconds of one call, launch excluded. All-reduce, all-gather, reduce-scatter on a link with NCCL's
// fields: the fastest algorithm x protocol of nccl_time_s (what NCCL's tuner picks) plus
// collective_call_s (`only`: the algorithm NCCL_ALGO forces); all-to-all across nodes: each rank's
// share for other nodes through its own NIC beside the rest over NVLink; else (and p2p) wire bytes
// over the bandwidth plus latency steps.
enum class NcclAlgo { ring, tree, nvls, nvls_tree };
double collective_time_s(Collective collective, double bytes, int64_t ranks, const Link& link, const NcclAlgo* only = nullptr);

// One direction of an MoE layer's token exchange over the EP group (training.moe_dispatcher): each of
// the `ep` ranks holds `tokens` tokens of `hidden` values at `width` bytes each, `routed` rows once
// each token is copied to its top_k experts. The collective and its bytes in collective_time_s's convention; predict
// (operators.cpp moe_mlp) and validate --components (the DeepEP rows) cost it the same way.
struct MoeExchange {
    Collective collective;
    double bytes;
};
MoeExchange moe_exchange(MoeDispatcher dispatcher, bool combine, double tokens, double routed, double hidden, double ep, double width);
// Bytes per value of DeepEP's FP8 dispatch: e4m3 plus one fp32 scale per 128 values (DeepEP README).
inline constexpr double kDeepEpFp8DispatchBytes = 1.0 + 4.0 / 128;

enum class NcclProto { ll, ll128, simple };
struct NcclChoice {
    double seconds = 0;  // NCCL's estimate, latency scaled (nccl_latency_scale), call overhead excluded
    NcclAlgo algo = NcclAlgo::ring;
    NcclProto proto = NcclProto::simple;
};
// NCCL's choice for one call (ncclTopoTuneModel + ncclTopoGetAlgoTime, tuning.cc); `only` restricts
// the algorithm (NCCL_ALGO), nullptr = any. Needs a Link from group_link.
NcclChoice nccl_time_s(Collective collective, double bytes, int64_t ranks, const Link& link, const NcclAlgo* only = nullptr);

// Exposed seconds of a context-parallel ring exchange of `comm_s` in all beside `attention_s` of
// attention in cp ring steps (Transformer Engine's P2P ring; all of it without overlap).
double cp_exposed_s(double comm_s, double attention_s, double cp, bool overlap);

}  // namespace trainclock
