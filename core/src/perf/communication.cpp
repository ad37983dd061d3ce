// trainclock: alpha-beta collective costs and group placement (communication.hpp).
#include "trainclock/perf/communication.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "perf/constants.hpp"
#include "trainclock/model/framework.hpp"

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

namespace {

// NCCL's compute-capability index (tuning.cc compCapIndex): Volta, Ampere, Hopper, Blackwell. Parts
// that are not NVIDIA's take the index of their class (bf16 units: Ampere-like; RCCL's own constants: Link::rccl).
int nccl_arch(const GpuSpec& gpu) {
    switch (gpu_kernel_generation(gpu)) {
    case GpuGeneration::blackwell: return 3;
    case GpuGeneration::hopper: return 2;
    case GpuGeneration::pre_hopper: break;
    }
    return gpu.supports(DType::bf16) ? 1 : 0;
}

// NVLink SHARP (NVLS) needs NVSwitch gen3+ (Hopper and later NVIDIA GPUs; NCCL 2.17+ "NVLS" algorithm).
bool has_nvls(const NodeSpec& node, const GpuSpec& gpu) {
    return gpu.vendor == "NVIDIA" && nccl_arch(gpu) >= 2 && node.intra_link.find("Switch") != std::string::npos;
}

}  // namespace

Link group_link(const NodeSpec& node, const GpuSpec& gpu, const Calibration& cal, GroupPlacement g) {
    const int64_t per_node = std::max<int64_t>(node.gpus_per_node, 1);
    // Without peer-to-peer NCCL falls back to its SHM transport: "SHM is used between devices when
    // peer-to-peer cannot happen, therefore, host memory is used" (NCCL docs, environment variables,
    // NCCL_SHM_DISABLE / NCCL_P2P_DISABLE); each byte is copied GPU -> pinned host buffer -> GPU, two
    // transfers over the same x16 links and root complex, so half the link's rate per hop.
    const double p2p = node.peer_to_peer ? 1.0 : 0.5;
    const double intra = node.intra_bw_gbps * 1e9 * cal.intra_node_efficiency * p2p;
    Link link;
    link.nccl_arch = nccl_arch(gpu);
    link.pcie = node.intra_link.find("PCIe") != std::string::npos;
    link.rccl = gpu.vendor == "AMD";
    // NCCL's latencyInter is the net plugin's latency (NVIDIA/nccl@5067397 src/graph/search.cc: graph->latencyInter
    // = net->net.latency); per network: NCCL's own IB / RoCE transport from the node's inter_latency_us (scaled),
    // EFA and TCPXO fitted on the component rows (aws-ofi-nccl sets 150 / 75 / 35 us by instance: aws/aws-ofi-nccl@01666ec
    // src/platform-aws.cpp platform_data_map), each with its Simple-protocol multiple (NCCL: 2, the flush).
    link.net_latency_s = node.inter_latency_us * 1e-6 * constant(Constant::nccl_net_latency_scale);
    switch (node.network) {
    case NetworkKind::infiniband:
    case NetworkKind::roce: break;
    case NetworkKind::efa:
        link.net_latency_s = constant(Constant::efa_net_latency_s);
        link.simple_net_factor = constant(Constant::efa_simple_latency_factor);
        link.flush_chunk_s = constant(Constant::efa_flush_chunk_s);
        break;
    case NetworkKind::efa_sendrecv:
        link.net_latency_s = constant(Constant::efa_sendrecv_net_latency_s);
        link.simple_net_factor = constant(Constant::efa_sendrecv_simple_latency_factor);
        // No LL128 across either: EFA's SRD delivers out of order, and aws-ofi-nccl forces NCCL_PROTO=simple on an endpoint
        // without byte delivery ordering "as the LL/LL128 protocols can lead to data corruption" (aws/aws-ofi-nccl@2daf7d3
        // src/platform-aws.cpp); LL's 8-byte flag-and-data stores survive it, LL128's 128-byte lines do not. The p4de
        // 2-32 MiB rows (AWS-031..048) run at the Simple tree/ring times, 30-60 % slower than LL128's.
        link.ll128_across = false;
        break;
    case NetworkKind::tcpxo:
        link.net_latency_s = constant(Constant::tcpxo_net_latency_s);
        link.simple_net_factor = constant(Constant::tcpxo_simple_latency_factor);
        // LL128 across nodes needs 128-byte ordered writes from the NIC (NVIDIA/nccl@5067397 src/graph/tuning.cc: LL128
        // only up to PATH_PXN); TCPXO's host-staged copies do not give it: A3M-001..072 run at NCCL's multi-node LL
        // ceiling (llMaxBws 39 GB/s busBw, algbw 20.8 GB/s on 16 ranks) from 256 KiB to 8 MiB.
        link.ll128_across = false;
        break;
    }
    // NVLS all-reduce: every GPU sends and receives the buffer once, the switch reduces; algbw =
    // link x NCCL's nvlsEfficiency (tuning.cc: 0.85 Hopper, 0.74 Blackwell) x the fitted channel share.
    static constexpr double kNvlsEfficiency[] = {0.0, 0.0, 0.85, 0.74};
    const double nvls = has_nvls(node, gpu) ? intra * kNvlsEfficiency[link.nccl_arch] * constant(Constant::nvls_bandwidth_fraction) : 0.0;
    if (group_in_one_domain(g, per_node)) {
        link.latency_s = node.intra_latency_us * 1e-6;
        link.bw_bytes_per_s = intra;
        link.nvls_bytes_per_s = nvls;
        // Without a switch a group smaller than the node only drives the links among its members
        // (NVLink cube-mesh, xGMI mesh: stas00/ml-engineering measured MI300X 2-GPU busbw 47.7 vs 312.9
        // GB/s on 8): the node's figure for the smallest listed group that holds it.
        for (const auto& [k, bw_gbps] : node.intra_group_bw_gbps) {
            if (g.size <= k) {
                link.bw_bytes_per_s = bw_gbps * 1e9 * cal.intra_node_efficiency * p2p;
                break;
            }
        }
        link.intra_bytes_per_s = link.bw_bytes_per_s;
        return link;
    }
    // Crossing nodes: a ring through k members per node drives k NICs in parallel (NCCL uses one
    // channel per NIC), so busbw = k x NIC bandwidth per GPU, capped by the intra-node link.
    const int64_t k = g.stride >= per_node ? 1 : std::min<int64_t>(per_node / g.stride, g.size);
    const double inter = double(k) * node.inter_bw_gbps * 1e9 * cal.inter_node_efficiency;
    link.bw_bytes_per_s = std::min(intra > 0 ? intra : inter, inter);
    link.latency_s = node.inter_latency_us * 1e-6;
    link.inter_node = true;
    link.intra_bytes_per_s = intra > 0 ? intra : inter;
    link.node_nic_bytes_per_s = inter;
    link.nvls_bytes_per_s = k > 1 ? nvls : 0.0;  // NVLS-tree: NVLS inside each node, a tree across
    link.nodes = (g.size + k - 1) / k;
    link.intra_latency_s = node.intra_latency_us * 1e-6;
    return link;
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

namespace {

// NVIDIA/nccl src/graph/tuning.cc (ncclTunerConstantsDefaults), in us: baseLatencies per algorithm
// and protocol (LL, LL128, Simple), hwLatencies per hardware (NVLink, PCI, NET), ring and tree.
constexpr double kBaseLatRing[3] = {6.6, 14.0, 8.4}, kBaseLatTree[3] = {6.8, 14.0, 8.4};
constexpr double kHwLatRing[3][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};  // NVLink, PCI, NET
constexpr double kHwLatTree[3][3] = {{0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};
constexpr double kHwLatNvls = 25.0;  // hwLatencies[NVLINK][NVLS][Simple]
// llMaxBws (GB/s) by [arch or CPU class][nodes 1, 2, >2]: one node by GPU architecture, more by CPU
// (Intel row, the x86 default).
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// treeCorrectionFactor[protocol][log2(bytes / 64)] (ncclTopoGetAlgoTime).
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// RCCL's tuning model (ROCm/rccl@0cbce2a src/graph/tuning.cc), tuning_model_5: the one src/graph/rome_models.cc selects for
// 8 fully connected MI300X (rome_model_79, "tuning=5"). baseLat (LL, LL128, Simple), hwLat over xGMI (RCCL's NCCL_HW_NVLINK)
// for ring and tree; bwRatio scales busBw in place of NCCL's refinements (index: 2 nodes or fewer, more); LL128 has none
// (ratio 0: off); tree and ring correction factors by log2(bytes / 64), capped at 26 (ring: multi-node only).
constexpr double kRcclBaseLat[3] = {12.0, 12.0, 17.0};
constexpr double kRcclHwLatRing[3] = {0.8, 0.0, 2.1}, kRcclHwLatTree[3] = {0.9, 0.0, 2.3};
constexpr double kRcclRingRatio[2][3] = {{0.08, 0.0, 1.0}, {0.08, 0.0, 1.0}}, kRcclTreeRatio[2][3] = {{0.06, 0.0, 0.11}, {0.06, 0.0, 0.59}};
constexpr double kRcclTreeCorrection[3][27] = {
    {.1, .1, .1, .1, .1, .1, 1, 1, 1, 1, 1, .6, 1, .9, 1, 1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1},
    {0},
    {.1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, .8}};
constexpr double kRcclRingCorrection[3][27] = {
    {.1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, 1, .2, 1, .4, .4, .1, .2, .2, .1, .1, .1, .1, .1, .1, .1, .1},
    {0},
    {.1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .1, .8, 1, 1, 1}};

// NVLS channels: NVIDIA/nccl@5067397 src/transport/nvls.cc NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32.
constexpr double kNvlsChannels[4] = {16.0, 16.0, 16.0, 32.0};

// Single-node NVLS moves the buffer in chunks over channels x heads (one head per rank) concurrent operations; NCCL shrinks
// the chunk from NCCL_NVLS_CHUNKSIZE (128 KiB) to 64 / 32 / 16 KiB below 64 / 8 / 2 x ops x chunk bytes (NVIDIA/nccl@5067397
// src/enqueue.cc, NCCL_ALGO_NVLS); each chunk an operation moves costs nvls_chunk_s beyond the bandwidth (fitted).
double nvls_chunk_overhead_s(double bytes, int64_t ranks, int arch) {
    const double ops = kNvlsChannels[arch] * double(ranks);
    double chunk = 128.0 * 1024;
    if (bytes < 64 * ops * chunk) chunk = 65536;
    if (bytes < 8 * ops * chunk) chunk = 32768;
    if (bytes < 2 * ops * chunk) chunk = 16384;
    return bytes / (ops * chunk) * constant(Constant::nvls_chunk_s);
}

// NCCL 2.18's NVLS-tree chunk: one Simple step (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 = 512 KiB), shrunk to 256 / 128 / 64 /
// 32 KiB below 32 / 16 / 4 / 1 x ops x chunk bytes, ops = NVLS channels x heads, one head per GPU of the node
// (NVIDIA/nccl@v2.18.5-1 src/enqueue.cc computeColl, NCCL_ALGO_NVLS_TREE): the chunks each operation moves.
double nvls_tree_chunks_2_18(double bytes, double heads, int arch) {
    const double ops = kNvlsChannels[arch] * heads;
    double chunk = 512.0 * 1024;
    if (bytes < 32 * ops * chunk) chunk = 262144;
    if (bytes < 16 * ops * chunk) chunk = 131072;
    if (bytes < 4 * ops * chunk) chunk = 65536;
    if (bytes < ops * chunk) chunk = 32768;
    return bytes / (ops * chunk);
}

}  // namespace

NcclChoice nccl_time_s(Collective c, double bytes, int64_t ranks, const Link& link, const NcclAlgo* only) {
    NcclChoice best{std::numeric_limits<double>::infinity(), NcclAlgo::ring, NcclProto::simple};
    const double n = double(ranks), N = double(std::max<int64_t>(link.nodes, 1)), ppn = n / N;
    const bool all_reduce = c == Collective::all_reduce;
    // Before NCCL 2.19.1 (NVIDIA/nccl@v2.18.5-1): NVLS-tree's tuner latency is baseLat 23 + 2 (nNodes - 1) x 19 us with no
    // latencyInter (src/graph/tuning.cc), below every ring and tree estimate, which carry latencyInter per inter-node step,
    // so NCCL runs NVLS-tree across NVSwitch nodes at every size; and NET_FORCE_FLUSH defaults to 1, so Hopper flushes
    // every Simple receive over the network too (src/graph/paths.cc ncclTopoNeedFlush; 2.19.1-1: "Disable network flush
    // by default on H100"; aws/aws-ofi-nccl@74fd41a6 sets NCCL_NET_FORCE_FLUSH=0 on p5 for NCCL < 2.19.1).
    const bool before_2_19_1 = !link.rccl && link.nccl_version > 0 && link.nccl_version < 21901;
    static constexpr NcclAlgo kNvlsTree = NcclAlgo::nvls_tree;
    if (before_2_19_1 && !only && all_reduce && link.nodes > 1 && link.nvls_bytes_per_s > 0 && ranks >= 2) only = &kNvlsTree;
    // Measured steps against NCCL's hwLat: Hopper's, RCCL's and the other generations' (constants.json).
    const double scale = link.rccl             ? constant(Constant::rccl_latency_scale)
                         : link.nccl_arch == 2 ? constant(Constant::nccl_latency_scale_hopper)
                                               : constant(Constant::nccl_latency_scale);
    const int intra_hw = link.pcie ? 1 : 0;
    const int node_index = link.nodes <= 2 ? int(link.nodes) - 1 : 2;
    const double ll_max = kLlMaxBw[link.nodes == 1 ? link.nccl_arch : 0][node_index] * 1e9;
    const double net_lat = link.net_latency_s * 1e6;
    auto consider = [&](NcclAlgo a, int p, double lat_us, double seconds_bw) {
        if (only && *only != a) return;
        const double t = lat_us * 1e-6 + seconds_bw;
        if (t < best.seconds) best = {t, a, NcclProto(p)};
    };
    const int log_size = bytes >= 64 ? int(std::floor(std::log2(bytes / 64))) : -1;
    const int rccl_log = std::clamp(log_size, 0, 26), rccl_nodes = link.nodes <= 2 ? 0 : 1;
    // Ring: busBw = the ring link; LL halves it (capped by llMaxBw), LL128 keeps 120/128 (0.92);
    // latency = base + intra steps x hwLat + inter steps x (NET hwLat + latencyInter, twice for
    // Simple's flush); multi-node Simple all-reduce pays the ring plateau (x1.4, x1.9 before Ampere).
    // RCCL: busBw x bwRatio (x ringCorrectionFactor across nodes), its base and xGMI latencies, no plateau.
    const double nsteps = all_reduce ? 2 * (n - 1) : n - 1;
    const double inter_steps = link.nodes == 1 ? 0 : all_reduce ? 2 * (N - 1) : N - 1;
    const double wire = collective_wire_bytes(c, bytes, ranks);
    for (int p = 0; p < 3; ++p) {
        const double bus = link.bw_bytes_per_s;
        double bw = p == 0 ? std::min(ll_max, bus * 0.5) : p == 1 ? bus * 0.92 : bus;
        double hw_lat = kHwLatRing[intra_hw][p];
        if (link.rccl) {
            bw = bus * kRcclRingRatio[rccl_nodes][p] * (link.nodes > 1 ? kRcclRingCorrection[p][rccl_log] : 1.0);
            if (!link.pcie) hw_lat = kRcclHwLatRing[p];
        }
        if (!(bw > 0)) continue;
        double intra_lat = hw_lat * scale;
        if (link.nodes > 1) intra_lat = std::max(intra_lat, p == 2 ? 3.0 : 1.0);  // getNetOverhead: 1 us, x3 for Simple
        if (p == 1 && link.nodes > 1 && !link.ll128_across) continue;
        const double inter_lat = kHwLatRing[2][p] + net_lat * (p == 2 ? link.simple_net_factor : 1);
        double lat = (link.rccl ? kRcclBaseLat[p] : kBaseLatRing[p]) + (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        if (!link.rccl && p == 2 && link.nodes > 1 && all_reduce && bytes / (16 * n) >= 64) lat *= link.nccl_arch >= 1 ? 1.4 : 1.9;
        consider(NcclAlgo::ring, p, lat, wire / bw);
    }
    if (!all_reduce) return best;  // NCCL runs all-gather / reduce-scatter as rings (PAT: one GPU per node only)
    // Tree (all-reduce): a chain inside each node, a double binary tree across nodes; algBw = busBw / 2
    // with busBw = 0.92 x the link (tuning.cc). Across nodes each node moves S per direction on 2
    // nodes and 2 S on more (double binary tree: interior in one tree, leaf in the other).
    // RCCL: busBw x bwRatio x treeCorrectionFactor; no Simple tree inside one node on gfx94 (all AMD parts here).
    const double across = link.node_nic_bytes_per_s * (link.nodes == 2 ? 1.0 : 0.5);
    const double tree_bw = link.nodes == 1 ? 0.46 * link.intra_bytes_per_s : std::min(0.46 * link.intra_bytes_per_s, across);
    for (int p = 0; p < 3; ++p) {
        double bw = tree_bw;
        double hw_lat = kHwLatTree[intra_hw][p];
        if (link.rccl) {
            const double link_bw = 0.5 * link.intra_bytes_per_s * kRcclTreeRatio[rccl_nodes][p];
            bw = (link.nodes == 1 ? link_bw : std::min(link_bw, across)) * kRcclTreeCorrection[p][rccl_log];
            if (p == 2 && link.nodes == 1) bw = 0;
            if (!link.pcie) hw_lat = kRcclHwLatTree[p];
        } else {
            if (p == 0) bw = std::min(bw / 3.8, 0.5 * ll_max);
            if (p == 1) bw *= link.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
            if (log_size >= 0 && log_size < 23) bw *= kTreeCorrection[p][log_size];
        }
        if (p == 1 && link.nodes > 1 && !link.ll128_across) continue;
        const double intra_lat = hw_lat * scale;
        const double inter_lat = kHwLatTree[2][p] + net_lat * (p == 2 ? link.simple_net_factor : 1);
        const double lat = (link.rccl ? kRcclBaseLat[p] : kBaseLatTree[p]) + 2 * ((ppn - 1) * intra_lat + std::log2(N) * inter_lat);
        if (bw > 0) consider(NcclAlgo::tree, p, lat, bytes / bw);
    }
    // NVLS inside one node (latency hwLat NVLS 25 us); NVLS-tree across nodes: NVLS in each node, the
    // tree across (latency intra + 2 log2(nodes) x inter).
    if (link.nvls_bytes_per_s > 0 && ranks >= 2) {
        if (link.nodes == 1) {
            consider(NcclAlgo::nvls, 2, kHwLatNvls, bytes / link.nvls_bytes_per_s + nvls_chunk_overhead_s(bytes, ranks, link.nccl_arch));
        } else {
            const double bw = std::min(link.nvls_bytes_per_s, across);
            const double lat = kHwLatNvls + 2 * std::log2(N) * (kHwLatTree[2][2] + link.simple_net_factor * net_lat);
            // A flushed receive holds its operation: each moves at most one chunk per flush_chunk_s (fitted).
            const double flushed = before_2_19_1 ? nvls_tree_chunks_2_18(bytes, ppn, link.nccl_arch) * link.flush_chunk_s : 0.0;
            if (bw > 0) consider(NcclAlgo::nvls_tree, 2, lat, std::max(bytes / bw, flushed));
        }
    }
    return best;
}

double collective_time_s(Collective c, double bytes, int64_t ranks, const Link& link, const NcclAlgo* only) {
    if (ranks <= 1 || bytes <= 0 || link.bw_bytes_per_s <= 0) return 0;
    const bool nccl = c == Collective::all_reduce || c == Collective::reduce_scatter || c == Collective::all_gather;
    if (nccl && link.intra_bytes_per_s > 0) return nccl_time_s(c, bytes, ranks, link, only).seconds + constant(Constant::collective_call_s);
    const double n = double(ranks);
    if (c == Collective::all_to_all && link.nodes > 1 && link.node_nic_bytes_per_s > 0 && link.intra_bytes_per_s > 0) {
        // Each rank sends (N - 1) / N of its buffer to the other nodes through its own NIC and the
        // rest to its node's peers over NVLink, concurrently (DeepEP README: NVLink intranode, RDMA
        // internode; NCCL all-to-all is grouped send/recv to every peer). The sends to all peers are in
        // flight together (one ncclGroupStart/End; DeepEP's IBGDA puts from every rank at once), so one
        // latency per link, not one per peer: DeepEP's low-latency dispatch takes 173-194 us on 8-32
        // nodes (README table), flat where the NIC bound is (DSEP-021..031).
        const double N = double(link.nodes), ppn = n / N;
        const double net_s = (N - 1) / N * bytes / (link.node_nic_bytes_per_s / ppn);
        const double nvlink_s = (ppn - 1) / n * bytes / link.intra_bytes_per_s;
        return std::max(net_s, nvlink_s) + link.intra_latency_s + link.latency_s;
    }
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

MoeExchange moe_exchange(MoeDispatcher dispatcher, bool combine, double tokens, double routed, double hidden, double ep, double width) {
    // All-gather dispatcher (Megatron-Core MoEAllGatherTokenDispatcher): every rank gathers all the
    // group's tokens (gather_from_sequence_parallel_region over tp_ep_group), keeps its experts' rows,
    // and the combine reduce-scatters the full buffer back (reduce_scatter_to_sequence_parallel_region).
    if (dispatcher == MoeDispatcher::allgather)
        return {combine ? Collective::reduce_scatter : Collective::all_gather, std::max(ep, 1.0) * tokens * hidden * width};
    // All-to-all (MoEAlltoAllTokenDispatcher) and DeepEP (Megatron-Core flex dispatcher; DeepEP
    // README): each rank sends one copy of a token per routed expert, top_k rows per token.
    return {Collective::all_to_all, routed * hidden * width};
}

}  // namespace trainclock
