// trainclock: collectives on a two-tier network (DESIGN.md 2.3).
// Alpha-beta ring/tree costs per collective; process groups placed in Megatron rank order
// (TP innermost, then CP, EP, DP, PP) so a group knows whether it crosses nodes.
#pragma once

#include <cstdint>

#include "trainclock/model/config.hpp"
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
};

// A process group: `size` ranks spaced `stride` ranks apart in the global rank order.
struct GroupPlacement {
    int64_t size = 1;
    int64_t stride = 1;
    int64_t world = 0;  // ranks of the job (tp*cp*dp*pp); 0 = unknown: as many as one block of groups
};

// Effective link a group's collectives run on (achievable bandwidth, per-step latency).
struct Link {
    double bw_bytes_per_s = 0;  // per GPU, one direction, after the achievable-fraction efficiency
    double latency_s = 0;       // per algorithm step
    bool inter_node = false;
};

GroupPlacement group_placement(const ParallelSpec& parallel, Group group);
// Whether every instance of the group lies inside one NVLink domain of `domain_gpus` ranks (ranks
// fill domains in order: a job of 128 GPUs on NVL72 racks is 72 + 56). A block of groups spans
// size x stride consecutive ranks; a block that straddles a domain boundary holds groups that cross.
bool group_in_one_domain(GroupPlacement placement, int64_t domain_gpus);
// Intra-node link when the group stays inside an NVLink domain (gpus_per_node), else the NICs.
Link group_link(const NodeSpec& node, const Calibration& cal, GroupPlacement placement);

// Bytes each GPU puts on the wire for one call (nccl-tests PERFORMANCE.md busbw factors):
// all-reduce 2(n-1)/n S, reduce-scatter / all-gather (n-1)/n S, all-to-all (n-1)/n S, p2p S.
double collective_wire_bytes(Collective collective, double bytes, int64_t ranks);
// Wire bytes over the link bandwidth plus latency steps (ring; NCCL switches to a tree, 2 log2 n
// steps, when that is shorter).
double collective_time_s(Collective collective, double bytes, int64_t ranks, const Link& link);

// Exposed seconds of a context-parallel ring exchange of `comm_s` in all beside `attention_s` of
// attention in cp ring steps (Transformer Engine's P2P ring; all of it without overlap).
double cp_exposed_s(double comm_s, double attention_s, double cp, bool overlap);

}  // namespace trainclock
