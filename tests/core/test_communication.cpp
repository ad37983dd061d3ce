// Collectives: nccl-tests bus-bandwidth factors, latency steps, two-tier placement in Megatron order.
#include "model_fixtures.hpp"

#include <cmath>

#include "trainclock/communication.hpp"

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
    const Link tp_link = group_link(node, cal, tp);
    CHECK_FALSE(tp_link.inter_node);
    CHECK(tp_link.bw_bytes_per_s == Approx(300e9 * 0.8));
    const Link dp_link = group_link(node, cal, dp);  // one member per node: one NIC's worth
    CHECK(dp_link.inter_node);
    CHECK(dp_link.bw_bytes_per_s == Approx(25e9 * 0.8));
    CHECK(dp_link.latency_s == Approx(10e-6));
    // TP 2: a DP group has 4 members per node and drives 4 NICs at once.
    p.tp = 2;
    const Link dp4 = group_link(node, cal, group_placement(p, Group::dp));
    CHECK(dp4.bw_bytes_per_s == Approx(4 * 25e9 * 0.8));
    // Expert parallelism is carved out of DP: EP groups sit inside the DP stride, expert-DP beyond.
    p.tp = 1;
    p.ep = 4;
    CHECK(group_placement(p, Group::ep).stride == 1);
    CHECK(group_placement(p, Group::expert_dp).size == 4);
    CHECK(group_placement(p, Group::expert_dp).stride == 4);
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
    const auto link_of = [&](int64_t size) { return group_link(node, cal, GroupPlacement{size, 1}).bw_bytes_per_s; };
    CHECK(link_of(2) == Approx(25e9 * 0.8));
    CHECK(link_of(3) == Approx(50e9 * 0.8));  // the smallest listed group that holds it
    CHECK(link_of(4) == Approx(50e9 * 0.8));
    CHECK(link_of(8) == Approx(150e9 * 0.8)); // the whole node: the per-GPU line rate
    node.intra_group_bw_gbps.clear();         // switched fabric: every group gets the line rate
    CHECK(link_of(2) == Approx(150e9 * 0.8));
}
