// Collectives: nccl-tests bus-bandwidth factors, latency steps, two-tier placement in Megatron order.
#include "model_fixtures.hpp"

#include <cmath>

#include "perf/constants.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"

using namespace trainclock;

TEST_CASE("Ring collective wire bytes (nccl-tests PERFORMANCE.md busbw factors)", "[communication]") {
    const double S = 1e9;
    CHECK(collective_wire_bytes(Collective::all_reduce, S, 8) == Approx(2.0 * 7 / 8 * S));
    CHECK(collective_wire_bytes(Collective::reduce_scatter, S, 8) == Approx(7.0 / 8 * S));
    CHECK(collective_wire_bytes(Collective::all_gather, S, 8) == Approx(7.0 / 8 * S));
    CHECK(collective_wire_bytes(Collective::all_to_all, S, 4) == Approx(3.0 / 4 * S));
    CHECK(collective_wire_bytes(Collective::p2p, S, 2) == Approx(S));
    CHECK(collective_wire_bytes(Collective::all_reduce, S, 1) == 0);
    // RS + AG moves exactly what one all-reduce moves (Megatron SP's equivalence).
    CHECK(collective_wire_bytes(Collective::reduce_scatter, S, 16) + collective_wire_bytes(Collective::all_gather, S, 16) ==
          Approx(collective_wire_bytes(Collective::all_reduce, S, 16)));
}

TEST_CASE("Alpha-beta time: wire bytes over bandwidth plus latency steps", "[communication]") {
    Link link{100e9, 5e-6, false};
    const double S = 1e8;
    CHECK(collective_time_s(Collective::all_reduce, S, 8, link) == Approx(2.0 * 7 / 8 * S / 100e9 + 2 * 3 * 5e-6));
    CHECK(collective_time_s(Collective::all_gather, S, 4, link) == Approx(3.0 / 4 * S / 100e9 + 3 * 5e-6));
    // Large groups: NCCL's tree keeps the latency logarithmic.
    CHECK(collective_time_s(Collective::all_reduce, 8.0, 1024, link) == Approx(2.0 * 1023 / 1024 * 8 / 100e9 + 2 * 10 * 5e-6));
    CHECK(collective_time_s(Collective::all_reduce, S, 1, link) == 0);
}

TEST_CASE("Groups in Megatron rank order land on the right tier", "[communication]") {
    NodeSpec node;
    node.gpus_per_node = 8;
    node.intra_bw_gbps = 300;
    node.inter_bw_gbps = 25;
    node.intra_latency_us = 5;
    node.inter_latency_us = 10;
    Calibration cal;
    cal.intra_node_efficiency = 0.8;
    cal.inter_node_efficiency = 0.8;
    ParallelSpec p;
    p.tp = 8;
    p.pp = 4;
    p.dp = 16;
    const GroupPlacement tp = group_placement(p, Group::tp), dp = group_placement(p, Group::dp), pp = group_placement(p, Group::pp);
    CHECK(tp.size == 8);
    CHECK(tp.stride == 1);
    CHECK(dp.stride == 8);
    CHECK(pp.stride == 8 * 16);
    const Link tp_link = group_link(node, GpuSpec{}, cal, tp);
    CHECK_FALSE(tp_link.inter_node);
    CHECK(tp_link.bw_bytes_per_s == Approx(300e9 * 0.8));
    const Link dp_link = group_link(node, GpuSpec{}, cal, dp);  // one member per node: one NIC's worth
    CHECK(dp_link.inter_node);
    CHECK(dp_link.bw_bytes_per_s == Approx(25e9 * 0.8));
    CHECK(dp_link.latency_s == Approx(10e-6));
    // TP 2: a DP group has 4 members per node and drives 4 NICs at once.
    p.tp = 2;
    const Link dp4 = group_link(node, GpuSpec{}, cal, group_placement(p, Group::dp));
    CHECK(dp4.bw_bytes_per_s == Approx(4 * 25e9 * 0.8));
    // Expert parallelism is carved out of DP: EP groups sit inside the DP stride, expert-DP beyond.
    p.tp = 1;
    p.ep = 4;
    CHECK(group_placement(p, Group::ep).stride == 1);
    CHECK(group_placement(p, Group::expert_dp).size == 4);
    CHECK(group_placement(p, Group::expert_dp).stride == 4);
}

TEST_CASE("Folded MoE groups follow Megatron-Core's expert rank order tp-ep-dp-pp", "[communication]") {
    // TP 2 x DP 32 with EP 64 and expert TP 1: the EP group is 64 adjacent ranks, no expert-DP, no
    // expert-TP group; with expert TP 2 and EP 16 the EP members sit 2 apart and expert-DP 2 beyond.
    ParallelSpec p;
    p.tp = 2;
    p.dp = 32;
    p.ep = 64;
    p.expert_tp = 1;
    CHECK(p.ep_folded());
    CHECK(group_placement(p, Group::ep).stride == 1);
    CHECK(group_placement(p, Group::ep).size == 64);
    CHECK(group_placement(p, Group::expert_dp).size == 1);
    CHECK(group_placement(p, Group::etp).size == 1);
    p.ep = 16;
    p.expert_tp = 4;
    CHECK(group_placement(p, Group::etp).size == 4);
    CHECK(group_placement(p, Group::ep).stride == 4);
    CHECK(group_placement(p, Group::expert_dp).size == 1);
    p.expert_tp = 2;
    CHECK(group_placement(p, Group::expert_dp).size == 2);
    CHECK(group_placement(p, Group::expert_dp).stride == 32);
    // Expert TP = TP with EP inside DP keeps the classic order (EP TP apart).
    p.expert_tp = 0;
    CHECK_FALSE(p.ep_folded());
    CHECK(group_placement(p, Group::ep).stride == 2);
    CHECK(group_placement(p, Group::etp).size == 1);
}

TEST_CASE("Nodes without peer-to-peer (GeForce) move NCCL traffic through host memory at half the link", "[communication]") {
    const Calibration cal;
    const NodeSpec with = node_preset("pcie-4").value();
    const NodeSpec without = node_preset("pcie-4-no-p2p").value();
    CHECK(with.peer_to_peer);
    CHECK_FALSE(without.peer_to_peer);
    CHECK(without.intra_bw_gbps == with.intra_bw_gbps);  // the same x16 links
    ParallelSpec p;
    p.dp = 4;
    const GroupPlacement dp = group_placement(p, Group::dp);
    CHECK(group_link(without, GpuSpec{}, cal, dp).bw_bytes_per_s == Approx(0.5 * group_link(with, GpuSpec{}, cal, dp).bw_bytes_per_s));
    CHECK(fixtures::gpu("rtx-4090").default_node == "pcie-4-no-p2p");
}

TEST_CASE("Gradients reduce over the DP replicas and the CP ranks (the ranks holding the same weights)", "[communication]") {
    ParallelSpec p;
    p.tp = 2;
    p.cp = 4;
    p.dp = 2;
    const GroupPlacement dp = group_placement(p, Group::dp);
    CHECK(dp.size == 8);    // dp x cp
    CHECK(dp.stride == 2);  // the CP members are TP apart
    p.dp = 1;               // CP alone still has a gradient all-reduce
    CHECK(group_placement(p, Group::dp).size == 4);
    p.cp = 1;
    p.dp = 16;
    CHECK(group_placement(p, Group::dp).size == 16);
    CHECK(group_placement(p, Group::dp).stride == 2);
}

TEST_CASE("A group smaller than an unswitched node only gets the links among its members", "[communication]") {
    // DGX-1-like cube-mesh: 1 link between GPUs 0-1, two disjoint rings over the quad 0-3.
    NodeSpec node;
    node.gpus_per_node = 8;
    node.intra_bw_gbps = 150;
    node.intra_group_bw_gbps = {{2, 25}, {4, 50}};
    Calibration cal;
    cal.intra_node_efficiency = 0.8;
    const auto link_of = [&](int64_t size) { return group_link(node, GpuSpec{}, cal, GroupPlacement{size, 1}).bw_bytes_per_s; };
    CHECK(link_of(2) == Approx(25e9 * 0.8));
    CHECK(link_of(3) == Approx(50e9 * 0.8));  // the smallest listed group that holds it
    CHECK(link_of(4) == Approx(50e9 * 0.8));
    CHECK(link_of(8) == Approx(150e9 * 0.8));  // the whole node: the per-GPU line rate
    node.intra_group_bw_gbps.clear();          // switched fabric: every group gets the line rate
    CHECK(link_of(2) == Approx(150e9 * 0.8));
}

TEST_CASE("NVLink domains: a group stays on NVLink only when every instance fits in one domain", "[communication]") {
    // Ranks fill 72-GPU domains in order; a block of groups spans size x stride ranks.
    CHECK(group_in_one_domain({8, 1, 512}, 72));         // 72 % 8 == 0: every TP 8 group inside a rack
    CHECK(group_in_one_domain({16, 1, 64}, 72));         // one block [0, 64): the whole job is in one rack
    CHECK_FALSE(group_in_one_domain({16, 1, 128}, 72));  // block [64, 80) straddles rank 72
    CHECK_FALSE(group_in_one_domain({16, 8, 128}, 72));  // spans 128 ranks > 72
    CHECK(group_in_one_domain({2, 4, 16}, 8));           // DGX: span 8
    CHECK_FALSE(group_in_one_domain({3, 2, 24}, 8));     // span 6: block [6, 12) crosses node 0 -> 1
    CHECK(group_in_one_domain({1, 1000, 4096}, 8));      // a single rank never crosses
}

TEST_CASE("GB200 NVL72 jobs of 64-512 GPUs: which collectives run on NVLink, which on the NICs", "[communication]") {
    const Result<NodeSpec> nvl72 = node_preset("gb200-nvl72");
    REQUIRE(nvl72.ok());
    CHECK(nvl72.value().gpus_per_node == 72);
    CHECK(nvl72.value().host_gpus() == 4);
    const Calibration cal;
    auto inter = [&](const ParallelSpec& p, Group g) {
        return group_link(nvl72.value(), GpuSpec{}, cal, group_placement(p, g)).inter_node;
    };
    ParallelSpec p;
    p.tp = 8;
    p.dp = 8;  // 64 GPUs: one rack, everything on NVLink
    CHECK_FALSE(inter(p, Group::tp));
    CHECK_FALSE(inter(p, Group::dp));
    p.dp = 16;  // 128 GPUs: TP 8 groups tile the 72-GPU racks (72 = 9 x 8); the DP group spans both racks
    CHECK_FALSE(inter(p, Group::tp));
    CHECK(inter(p, Group::dp));
    p.cp = 2;  // TP 8 x CP 2 on 128 GPUs: CP groups are 16-rank blocks, [64, 80) straddles the racks
    p.dp = 8;
    CHECK(inter(p, Group::cp));
    p.dp = 4;  // the same on 64 GPUs fits one rack
    CHECK_FALSE(inter(p, Group::cp));
    p.cp = 1;  // 512 GPUs, TP 8 x PP 4 x DP 16: PP members are 128 ranks apart
    p.pp = 4;
    p.dp = 16;
    CHECK(group_placement(p, Group::pp).stride == 128);
    CHECK(inter(p, Group::pp));
    CHECK_FALSE(inter(p, Group::tp));
    // The same layout on DGX H100 (8 GPUs per node): only TP stays inside the node.
    const Result<NodeSpec> dgx = node_preset("dgx-h100");
    REQUIRE(dgx.ok());
    CHECK_FALSE(group_link(dgx.value(), GpuSpec{}, cal, group_placement(p, Group::tp)).inter_node);
    CHECK(group_link(dgx.value(), GpuSpec{}, cal, group_placement(p, Group::dp)).inter_node);
}

TEST_CASE("NCCL's choice: LL for small messages, Simple for large, NVLS on Hopper NVSwitch, trees across 2 nodes", "[communication]") {
    const NodeSpec dgx_h100 = node_preset("dgx-h100").value(), dgx_a100 = node_preset("dgx-a100").value();
    const GpuSpec h100 = gpu_preset("h100-sxm").value(), a100 = gpu_preset("a100-sxm4-80gb").value();
    const Calibration cal = resolve_calibration(h100, CalibrationSpec{});
    const Link h_node = group_link(dgx_h100, h100, cal, GroupPlacement{8, 1, 8});
    const Link a_node = group_link(dgx_a100, a100, cal, GroupPlacement{8, 1, 8});
    CHECK(h_node.nvls_bytes_per_s > 0);
    CHECK(a_node.nvls_bytes_per_s == 0);  // NVSwitch gen2: no NVLink SHARP
    // tuning.cc: LL's low latency wins small sizes, Simple's full bandwidth large ones.
    CHECK(nccl_time_s(Collective::all_reduce, 1024, 8, a_node).proto == NcclProto::ll);
    const NcclChoice large = nccl_time_s(Collective::all_reduce, 8e9, 8, a_node);
    CHECK(large.algo == NcclAlgo::ring);
    CHECK(large.proto == NcclProto::simple);
    // A forced ring at 8 GB is wire bytes over the ring bandwidth, plus microseconds.
    CHECK(large.seconds == Approx(collective_wire_bytes(Collective::all_reduce, 8e9, 8) / a_node.bw_bytes_per_s).epsilon(0.01));
    CHECK(nccl_time_s(Collective::all_reduce, 8e9, 8, h_node).algo == NcclAlgo::nvls);
    CHECK(nccl_time_s(Collective::all_gather, 8e9, 8, h_node).algo == NcclAlgo::ring);  // NVLS all-gather needs CollNet
    // Two nodes of 8: a tree moves the buffer once per node and direction, a ring ~2x: the tree
    // (NVLS-tree on H100) is the faster choice at 1 GB, and faster than the forced ring.
    const Link a_two = group_link(dgx_a100, a100, cal, GroupPlacement{16, 1, 16});
    CHECK(a_two.nodes == 2);
    const NcclChoice tree = nccl_time_s(Collective::all_reduce, 1e9, 16, a_two);
    CHECK(tree.algo == NcclAlgo::tree);
    const NcclAlgo ring = NcclAlgo::ring;
    CHECK(nccl_time_s(Collective::all_reduce, 1e9, 16, a_two, &ring).seconds > 1.2 * tree.seconds);
    CHECK(nccl_time_s(Collective::all_reduce, 1e9, 16, group_link(dgx_h100, h100, cal, GroupPlacement{16, 1, 16})).algo ==
          NcclAlgo::nvls_tree);
    // Latency of a small call grows with the nodes crossed.
    double previous = 0;
    for (int64_t nodes : {2, 4, 8, 16}) {
        const Link link = group_link(dgx_a100, a100, cal, GroupPlacement{8 * nodes, 1, 8 * nodes});
        const double t = collective_time_s(Collective::all_reduce, 1024, 8 * nodes, link);
        CHECK(t > previous);
        previous = t;
    }
}

TEST_CASE("Networks: EFA and TCPXO take their own latency per inter-node step, TCPXO no LL128 across nodes", "[communication]") {
    NodeSpec node = node_preset("dgx-h100").value();
    const GpuSpec h100 = gpu_preset("h100-sxm").value();
    const Calibration cal = resolve_calibration(h100, CalibrationSpec{});
    const GroupPlacement two_nodes{16, 1, 16}, one_node{8, 1, 8};
    const Link ib = group_link(node, h100, cal, two_nodes);
    CHECK(ib.net_latency_s == Approx(node.inter_latency_us * 1e-6 * constant(Constant::nccl_net_latency_scale)));
    CHECK(ib.simple_net_factor == 2);  // NCCL's flush: latencyInter twice for Simple
    node.network = NetworkKind::tcpxo;
    const Link tcpxo = group_link(node, h100, cal, two_nodes);
    CHECK(tcpxo.net_latency_s == Approx(constant(Constant::tcpxo_net_latency_s)));
    CHECK(tcpxo.simple_net_factor == Approx(constant(Constant::tcpxo_simple_latency_factor)));
    // Over InfiniBand some mid-size all-reduce runs LL128 across the nodes; over TCPXO none does.
    bool ib_ll128 = false;
    for (double S = 1024; S <= 8e9; S *= 4) {
        INFO(S);
        ib_ll128 = ib_ll128 || nccl_time_s(Collective::all_reduce, S, 16, ib).proto == NcclProto::ll128;
        CHECK(nccl_time_s(Collective::all_reduce, S, 16, tcpxo).proto != NcclProto::ll128);
        CHECK(nccl_time_s(Collective::all_gather, S, 16, tcpxo).proto != NcclProto::ll128);
    }
    CHECK(ib_ll128);
    // Inside one node the network plays no part.
    const Link plain_node = group_link(node_preset("dgx-h100").value(), h100, cal, one_node);
    CHECK(nccl_time_s(Collective::all_reduce, 1e6, 8, group_link(node, h100, cal, one_node)).seconds ==
          nccl_time_s(Collective::all_reduce, 1e6, 8, plain_node).seconds);
    // A small call pays the network's latency: EFA's send/recv protocol (p4d) above its RDMA protocol (p5).
    node.network = NetworkKind::efa_sendrecv;
    const double sendrecv = collective_time_s(Collective::all_reduce, 1024, 16, group_link(node, h100, cal, two_nodes));
    node.network = NetworkKind::efa;
    const double rdma = collective_time_s(Collective::all_reduce, 1024, 16, group_link(node, h100, cal, two_nodes));
    CHECK(constant(Constant::efa_sendrecv_net_latency_s) > constant(Constant::efa_net_latency_s));
    CHECK(sendrecv > rdma);
}

TEST_CASE("NCCL before 2.19.1 runs NVLS-tree across NVSwitch nodes at every size, each chunk held by its flush on EFA", "[communication]") {
    NodeSpec node = node_preset("dgx-h100").value();
    node.network = NetworkKind::efa;
    const GpuSpec h100 = gpu_preset("h100-sxm").value();
    const Calibration cal = resolve_calibration(h100, CalibrationSpec{});
    const Link current = group_link(node, h100, cal, GroupPlacement{16, 1, 16});
    Link old = current;
    old.nccl_version = 21805;  // NCCL 2.18.5
    CHECK(current.flush_chunk_s == Approx(constant(Constant::efa_flush_chunk_s)));
    for (double S = 1024; S <= 8e9; S *= 8) {
        INFO(S);
        CHECK(nccl_time_s(Collective::all_reduce, S, 16, old).algo == NcclAlgo::nvls_tree);
        CHECK(nccl_time_s(Collective::all_reduce, S, 16, old).seconds >= nccl_time_s(Collective::all_reduce, S, 16, current).seconds);
    }
    // Small calls: the current release picks a ring or tree; 2.18 does not.
    CHECK(nccl_time_s(Collective::all_reduce, 1024, 16, current).algo != NcclAlgo::nvls_tree);
    // 256 MiB: 16 channels x 8 heads move 128 KiB chunks (NCCL 2.18.5 src/enqueue.cc), 16 per operation, one per flush.
    const double S = 256.0 * 1024 * 1024;
    const NcclAlgo tree = NcclAlgo::nvls_tree;
    const double unflushed = nccl_time_s(Collective::all_reduce, S, 16, current, &tree).seconds;
    const double flushed = nccl_time_s(Collective::all_reduce, S, 16, old).seconds;
    CHECK(flushed - unflushed ==
          Approx(16 * constant(Constant::efa_flush_chunk_s) - S / std::min(current.nvls_bytes_per_s, current.node_nic_bytes_per_s)));
    // A forced algorithm stays forced; releases from 2.19.1 choose as before.
    const NcclAlgo ring = NcclAlgo::ring;
    CHECK(nccl_time_s(Collective::all_reduce, S, 16, old, &ring).algo == NcclAlgo::ring);
    Link newer = current;
    newer.nccl_version = 21901;
    CHECK(nccl_time_s(Collective::all_reduce, 1024, 16, newer).seconds == nccl_time_s(Collective::all_reduce, 1024, 16, current).seconds);
    // One node: no NVLS-tree to run.
    Link one_node = group_link(node, h100, cal, GroupPlacement{8, 1, 8});
    one_node.nccl_version = 21805;
    CHECK(nccl_time_s(Collective::all_reduce, S, 8, one_node).algo != NcclAlgo::nvls_tree);
}

TEST_CASE("All-to-all across nodes: the sends to every peer are in flight together, one latency per link", "[communication]") {
    const NodeSpec node = node_preset("hgx-h800").value();
    const GpuSpec h800 = gpu_preset("h800-sxm").value();
    const Calibration cal = resolve_calibration(h800, CalibrationSpec{});
    auto link = [&](int64_t nodes) { return group_link(node, h800, cal, GroupPlacement{8 * nodes, 1, 8 * nodes}); };
    // A tiny exchange is latency only, and the same on 2 or 32 nodes (DeepEP's low-latency dispatch: 173-194 us on 8-32 nodes).
    const Link two = link(2), many = link(32);
    CHECK(collective_time_s(Collective::all_to_all, 64, 16, two) == Approx(two.intra_latency_s + two.latency_s).epsilon(0.01));
    CHECK(collective_time_s(Collective::all_to_all, 64, 256, many) == Approx(many.intra_latency_s + many.latency_s).epsilon(0.01));
    // A large one is NIC-bound: each rank's share for other nodes through its own NIC.
    const double S = 1e9;
    CHECK(collective_time_s(Collective::all_to_all, S, 256, many) ==
          Approx(31.0 / 32 * S / (many.node_nic_bytes_per_s / 8) + many.intra_latency_s + many.latency_s));
}

TEST_CASE("moe_exchange: all-to-all and DeepEP move the top_k routed copies, all-gather every token of the EP group and back") {
    const double tokens = 4096, routed = 4096 * 8, hidden = 7168, ep = 8, w = 2;
    for (const MoeDispatcher d : {MoeDispatcher::alltoall, MoeDispatcher::deepep}) {
        for (const bool combine : {false, true}) {
            const MoeExchange e = moe_exchange(d, combine, tokens, routed, hidden, ep, w);
            CHECK(e.collective == Collective::all_to_all);
            CHECK(e.bytes == Approx(routed * hidden * w));
        }
    }
    const MoeExchange gather = moe_exchange(MoeDispatcher::allgather, false, tokens, routed, hidden, ep, w);
    const MoeExchange scatter = moe_exchange(MoeDispatcher::allgather, true, tokens, routed, hidden, ep, w);
    CHECK(gather.collective == Collective::all_gather);
    CHECK(scatter.collective == Collective::reduce_scatter);
    // The gathered buffer holds the tokens of all ep ranks, whatever top_k is.
    CHECK(gather.bytes == Approx(ep * tokens * hidden * w));
    CHECK(scatter.bytes == gather.bytes);
    CHECK(moe_exchange(MoeDispatcher::allgather, false, tokens, 2 * routed, hidden, ep, w).bytes == gather.bytes);
}

TEST_CASE("NVLS all-reduce: NCCL's smaller chunks below 8 MiB x ops cost more per byte at mid sizes", "[communication]") {
    const NodeSpec dgx_h100 = node_preset("dgx-h100").value();
    const GpuSpec h100 = gpu_preset("h100-sxm").value();
    const Calibration cal = resolve_calibration(h100, CalibrationSpec{});
    const Link link = group_link(dgx_h100, h100, cal, GroupPlacement{8, 1, 8});
    const NcclAlgo nvls = NcclAlgo::nvls;
    auto extra_per_byte = [&](double bytes) {
        const double t = nccl_time_s(Collective::all_reduce, bytes, 8, link, &nvls).seconds;
        return (t - 25e-6 - bytes / link.nvls_bytes_per_s) / bytes;
    };
    // 16 channels x 8 heads = 128 ops: 16 MiB < 8 x 128 x 64 KiB runs 32 KiB chunks, 2 GiB the full 128 KiB (enqueue.cc).
    const double mid = extra_per_byte(16.0 * (1 << 20)), large = extra_per_byte(2048.0 * (1 << 20));
    CHECK(mid > 0);
    CHECK(mid == Approx(4.0 * large).epsilon(1e-6));
    CHECK(mid == Approx(constant(Constant::nvls_chunk_s) / (128.0 * 32768)).epsilon(1e-6));
}

TEST_CASE("EFA with aws-ofi-nccl's send/recv protocol: no LL128 across nodes, LL and Simple remain", "[communication]") {
    NodeSpec p4de = node_preset("dgx-a100").value();
    const GpuSpec a100 = gpu_preset("a100-sxm4-80gb").value();
    const Calibration cal = resolve_calibration(a100, CalibrationSpec{});
    const Link ib = group_link(p4de, a100, cal, GroupPlacement{16, 1, 16});
    p4de.network = NetworkKind::efa_sendrecv;
    const Link efa = group_link(p4de, a100, cal, GroupPlacement{16, 1, 16});
    CHECK(ib.ll128_across);
    CHECK_FALSE(efa.ll128_across);
    bool ll_seen = false, simple_seen = false;
    for (double bytes = 1024; bytes <= 4e9; bytes *= 2) {
        const NcclChoice choice = nccl_time_s(Collective::all_reduce, bytes, 16, efa);
        CHECK(choice.proto != NcclProto::ll128);
        ll_seen = ll_seen || choice.proto == NcclProto::ll;
        simple_seen = simple_seen || choice.proto == NcclProto::simple;
    }
    CHECK(ll_seen);
    CHECK(simple_seen);
    // Inside one node LL128 stays available.
    const Link one = group_link(p4de, a100, cal, GroupPlacement{8, 1, 8});
    bool ll128_inside = false;
    for (double bytes = 1024; bytes <= 4e9; bytes *= 2)
        ll128_inside = ll128_inside || nccl_time_s(Collective::all_reduce, bytes, 8, one).proto == NcclProto::ll128;
    CHECK(ll128_inside);
}

TEST_CASE("RCCL on AMD: RCCL's own latencies and busBw ratios, Hopper NVLink steps at their own scale", "[communication]") {
    const NodeSpec mi_node = node_preset("mi300x-8").value(), dgx_h100 = node_preset("dgx-h100").value(),
                   dgx_a100 = node_preset("dgx-a100").value();
    const GpuSpec mi300x = gpu_preset("mi300x").value(), h100 = gpu_preset("h100-sxm").value(), a100 = gpu_preset("a100-sxm4-80gb").value();
    const Link mi = group_link(mi_node, mi300x, resolve_calibration(mi300x, CalibrationSpec{}), GroupPlacement{8, 1, 8});
    const Link h = group_link(dgx_h100, h100, resolve_calibration(h100, CalibrationSpec{}), GroupPlacement{8, 1, 8});
    const Link a = group_link(dgx_a100, a100, resolve_calibration(a100, CalibrationSpec{}), GroupPlacement{8, 1, 8});
    CHECK(mi.rccl);
    CHECK_FALSE(h.rccl);
    // ROCm/rccl tuning.cc tuning_model_5: ring LL = baseLat 12 us + 14 steps x 0.8 us (x rccl_latency_scale), busBw x 0.08.
    const double scale = constant(Constant::rccl_latency_scale);
    const NcclChoice tiny = nccl_time_s(Collective::all_reduce, 64, 8, mi);
    CHECK(tiny.algo == NcclAlgo::ring);
    CHECK(tiny.proto == NcclProto::ll);
    const double ll_bw = mi.bw_bytes_per_s * 0.08;
    CHECK(tiny.seconds ==
          Approx((12.0 + 14 * 0.8 * scale) * 1e-6 + collective_wire_bytes(Collective::all_reduce, 64, 8) / ll_bw).epsilon(1e-9));
    // At 4 MiB RCCL's ring Simple: 17 us + 14 x 2.1 us (scaled) + wire bytes at the full ring busBw; no LL128, no tree Simple.
    const NcclChoice mid = nccl_time_s(Collective::all_reduce, 4 << 20, 8, mi);
    CHECK(mid.algo == NcclAlgo::ring);
    CHECK(mid.proto == NcclProto::simple);
    CHECK(mid.seconds ==
          Approx((17.0 + 14 * 2.1 * scale) * 1e-6 + collective_wire_bytes(Collective::all_reduce, 4 << 20, 8) / mi.bw_bytes_per_s)
              .epsilon(1e-9));
    // NCCL's ring LL on 8 GPUs: 6.6 us + 14 steps x 0.6 us, Hopper's steps x nccl_latency_scale_hopper, Ampere's x nccl_latency_scale.
    const NcclAlgo ring = NcclAlgo::ring;
    const double wire = collective_wire_bytes(Collective::all_reduce, 64, 8);
    const NcclChoice h_tiny = nccl_time_s(Collective::all_reduce, 64, 8, h, &ring),
                     a_tiny = nccl_time_s(Collective::all_reduce, 64, 8, a, &ring);
    CHECK(h_tiny.proto == NcclProto::ll);
    CHECK(h_tiny.seconds ==
          Approx((6.6 + 14 * 0.6 * constant(Constant::nccl_latency_scale_hopper)) * 1e-6 + wire / std::min(141e9, 0.5 * h.bw_bytes_per_s))
              .epsilon(1e-9));
    CHECK(a_tiny.seconds ==
          Approx((6.6 + 14 * 0.6 * constant(Constant::nccl_latency_scale)) * 1e-6 + wire / std::min(87.7e9, 0.5 * a.bw_bytes_per_s))
              .epsilon(1e-9));
    CHECK(h_tiny.seconds < a_tiny.seconds);
}
