// trainclock: alpha-beta collective costs and group placement (communication.hpp).
#include "trainclock/perf/communication.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trainclock {

GroupPlacement group_placement(const ParallelSpec& p, Group group) {
    // Megatron-LM rank order (parallel_state.py, "tp-cp-ep-dp-pp"): TP innermost, then CP; EP is
    // carved out of DP (same stride as DP); PP outermost.
    const int64_t ep = std::max<int64_t>(p.ep, 1);
    const int64_t world = std::max<int64_t>(p.tp, 1) * std::max<int64_t>(p.cp, 1) * std::max<int64_t>(p.dp, 1) * std::max<int64_t>(p.pp, 1);
    switch (group) {
    case Group::tp: return {p.tp, 1, world};
    case Group::cp: return {p.cp, p.tp, world};
    // Folded MoE layouts (ParallelSpec::ep_folded) order the expert layers' ranks tp-ep-dp-pp with
    // etp innermost (Megatron-Core parallel_state.py, expert RankGenerator).
    case Group::ep: return {ep, p.ep_folded() ? p.etp() : p.tp * p.cp, world};
    // Gradient reduction and ZeRO span the CP ranks too (ParallelSpec::weight_replicas); the CP
    // members come first, tp apart (the DP members of an expert group are further apart).
    case Group::dp: return {p.weight_replicas(), p.cp > 1 ? p.tp : p.tp * p.cp, world};
    case Group::expert_dp:
        if (p.ep_folded()) return {p.expert_weight_replicas(), p.etp() * ep, world};
        return {p.expert_weight_replicas(), p.cp > 1 ? p.tp : p.tp * p.cp * ep, world};
    case Group::pp: return {p.pp, p.tp * p.cp * p.dp, world};
    case Group::etp: return {p.etp() != p.tp ? p.etp() : 1, 1, world};
    }
    return {1, 1, world};
}

bool group_in_one_domain(GroupPlacement g, int64_t domain) {
    if (g.size <= 1) return true;
    domain = std::max<int64_t>(domain, 1);
    const int64_t span = g.size * g.stride;
    if (span > domain) return false;
    if (domain % span == 0) return true;
    // Blocks start at multiples of span; the pattern repeats every lcm(span, domain) ranks.
    const int64_t world = g.world > 0 ? g.world : span;
    const int64_t period = span / std::gcd(span, domain) * domain;
    for (int64_t start = 0; start < std::min(world, period); start += span)
        if (start / domain != (start + span - 1) / domain) return false;
    return true;
}

Link group_link(const NodeSpec& node, const Calibration& cal, GroupPlacement g) {
    const int64_t per_node = std::max<int64_t>(node.gpus_per_node, 1);
    // Without peer-to-peer NCCL falls back to its SHM transport: "SHM is used between devices when
    // peer-to-peer cannot happen, therefore, host memory is used" (NCCL docs, environment variables,
    // NCCL_SHM_DISABLE / NCCL_P2P_DISABLE); each byte is copied GPU -> pinned host buffer -> GPU, two
    // transfers over the same x16 links and root complex, so half the link's rate per hop.
    const double p2p = node.peer_to_peer ? 1.0 : 0.5;
    const double intra = node.intra_bw_gbps * 1e9 * cal.intra_node_efficiency * p2p;
    if (group_in_one_domain(g, per_node)) {
        // Without a switch a group smaller than the node only drives the links among its members
        // (NVLink cube-mesh, xGMI mesh: stas00/ml-engineering measured MI300X 2-GPU busbw 47.7 vs 312.9
        // GB/s on 8): the node's figure for the smallest listed group that holds it.
        for (const auto& [k, bw_gbps] : node.intra_group_bw_gbps) {
            if (g.size <= k) return {bw_gbps * 1e9 * cal.intra_node_efficiency * p2p, node.intra_latency_us * 1e-6, false};
        }
        return {intra, node.intra_latency_us * 1e-6, false};
    }
    // Crossing nodes: a ring through k members per node drives k NICs in parallel (NCCL uses one
    // channel per NIC), so busbw = k x NIC bandwidth per GPU, capped by the intra-node link.
    const int64_t k = g.stride >= per_node ? 1 : std::min<int64_t>(per_node / g.stride, g.size);
    const double inter = double(k) * node.inter_bw_gbps * 1e9 * cal.inter_node_efficiency;
    return {std::min(intra > 0 ? intra : inter, inter), node.inter_latency_us * 1e-6, true};
}

double collective_wire_bytes(Collective c, double bytes, int64_t ranks) {
    const double n = double(ranks);
    if (ranks <= 1) return 0;
    switch (c) {
    case Collective::all_reduce: return 2.0 * (n - 1.0) / n * bytes;  // ring RS + AG
    case Collective::reduce_scatter:
    case Collective::all_gather:
    case Collective::all_to_all: return (n - 1.0) / n * bytes;
    case Collective::p2p: return bytes;
    }
    return 0;
}

double collective_time_s(Collective c, double bytes, int64_t ranks, const Link& link) {
    if (ranks <= 1 || bytes <= 0 || link.bw_bytes_per_s <= 0) return 0;
    const double n = double(ranks);
    // Latency steps: ring n-1 per phase (2 phases for all-reduce); a tree needs ~2 log2 n.
    double steps = 0;
    switch (c) {
    case Collective::all_reduce: steps = std::min(2.0 * (n - 1.0), 2.0 * std::ceil(std::log2(n))); break;
    case Collective::reduce_scatter:
    case Collective::all_gather: steps = std::min(n - 1.0, 2.0 * std::ceil(std::log2(n))); break;
    case Collective::all_to_all: steps = n - 1.0; break;
    case Collective::p2p: steps = 1.0; break;
    }
    return collective_wire_bytes(c, bytes, ranks) / link.bw_bytes_per_s + steps * link.latency_s;
}

// Ring attention (Transformer Engine context_parallel.py AttnFuncWithCPAndKVP2P, Megatron-Core's
// CP): step i's attention runs while the K/V chunk of step i+1 (backward: K/V and dK/dV) is in
// flight, cp steps of equal work a = A / cp (load-balanced causal chunks: each rank holds chunks r
// and 2 cp - 1 - r) and cp - 1 exchanges of m = C / (cp - 1): the phase takes cp a + (cp - 1)
// max(0, m - a), so (cp - 1) max(0, m - a) is exposed. Without overlap the exchange is serial: C.
double cp_exposed_s(double comm_s, double attention_s, double cp, bool overlap) {
    if (cp <= 1 || !overlap) return comm_s;
    const double steps = cp - 1;
    return steps * std::max(0.0, comm_s / steps - attention_s / cp);
}

}  // namespace trainclock
