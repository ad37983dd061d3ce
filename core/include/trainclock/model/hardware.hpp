// trainclock: accelerators and the nodes that hold them (the "system" of Calculon's split).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainclock/model/precision.hpp"

namespace trainclock {

// One accelerator (a preset in presets/gpus/ or an inline object in the config).
struct GpuSpec {
    std::string name;                     // preset id ("h100-sxm")
    std::string display_name;             // "NVIDIA H100 SXM5 80GB"
    std::string vendor;                   // "NVIDIA", "AMD", "Intel", "Google"
    double memory_gib = 0;                // usable device memory, GiB
    double memory_bw_gbps = 0;            // HBM/GDDR bandwidth, GB/s (1e9 B/s)
    std::array<double, 7> peak_tflops{};  // dense peak per DType index (0 = not supported); fp32 = vector units
    int64_t sm_count = 0;                 // SMs / CUs / cores: sets GEMM wave quantisation
    double l2_cache_mb = 0;
    double tdp_w = 0;                                  // board power used for energy
    double price_per_gpu_hour_usd = 0;                 // indicative on-demand price (0 = unknown)
    double host_link_gbps = 0;                         // GPU <-> CPU memory (PCIe / NVLink-C2C), one direction, GB/s (0 = unknown)
    std::string default_node;                          // node preset used when the config names none
    std::array<double, 7> measured_gemm_efficiency{};  // preset "measured.gemm_efficiency" per DType (0 = no published figure)
    double measured_memory_efficiency = 0;             // preset "measured.memory_efficiency" (0 = no published figure)
    double measured_sustained_clock = 0;  // preset "measured.sustained_clock_ratio": SM clock under sustained load / boost (0 = none)
    std::string source;                   // citation of the datasheet figures

    double peak_flops(DType dtype) const { return peak_tflops[static_cast<int>(dtype)] * 1e12; }
    bool supports(DType dtype) const { return peak_tflops[static_cast<int>(dtype)] > 0; }
};

// One server: how many GPUs share the fast intra-node link and what leaves the box.
// The inter-node network as NCCL's net plugin drives it: NCCL's own InfiniBand verbs / RoCE transport
// (net_ib), AWS EFA through aws-ofi-nccl (its RDMA protocol on p5 and later, send/recv on p3dn and
// p4d: aws/aws-ofi-nccl src/platform-aws.cpp platform_data_map), GCP A3 Mega's GPUDirect-TCPXO.
enum class NetworkKind { infiniband, roce, efa, efa_sendrecv, tcpxo };

struct NodeSpec {
    std::string name;             // preset id ("dgx-h100")
    std::string display_name;     // "NVIDIA DGX H100"
    int64_t gpus_per_node = 8;    // GPUs of one NVLink domain (72 for an NVL72 rack): collectives inside it use the intra link
    int64_t gpus_per_host = 0;    // allocation unit, GPUs per host or compute tray (4 in a GB200 tray); 0 = gpus_per_node
    std::string intra_link;       // "NVLink 4 via NVSwitch"
    double intra_bw_gbps = 0;     // per GPU, one direction, GB/s
    double intra_latency_us = 0;  // per collective step
    std::vector<std::pair<int64_t, double>>
        intra_group_bw_gbps;  // (k, GB/s): per GPU, one direction, for a group of <= k GPUs inside a node whose links are not switched (cube-mesh, xGMI mesh); ascending k; none = intra_bw_gbps for any group
    std::string inter_link;   // "8x 400 Gb/s NDR InfiniBand"
    double inter_bw_gbps = 0;  // per GPU, one direction, GB/s (node NIC total / gpus_per_node)
    double inter_latency_us = 0;
    NetworkKind network = NetworkKind::infiniband;  // node key "network": per-step latency and protocols across nodes (communication.cpp)
    double power_overhead = 1.0;                    // node power / sum of GPU TDPs (CPUs, NICs, fans), for energy
    // false: the GPUs cannot reach each other's memory (GeForce cards: the driver disables PCIe P2P),
    // so NCCL's intra-node traffic goes through host memory (SHM transport) at intra_bw_gbps / 2.
    bool peer_to_peer = true;
    // DRAM bandwidth of one host's CPUs, all sockets, GB/s (memory channels x transfer rate x 8 B; 0 =
    // unknown): what an offloaded optimizer step on the CPU streams its states through.
    double host_memory_bw_gbps = 0;
    // Host dispatch time per op of this node's CPU relative to an x86 DGX host's (Xeon Platinum 8480C),
    // the host the framework presets' host_op_s figures are stated for: 1 = x86; Grace (GB200/GH200)
    // 2.75 (NVIDIA/TransformerEngine issue 2053: torch.nn.Linear forward 37.08 us CPU on GB200 vs 13.48
    // on the DGX H100's Xeon 8480C). Scales every host cost per op (predict.cpp on_this_host).
    double host_op_scale = 1.0;
    std::string source;

    int64_t host_gpus() const { return gpus_per_host > 0 ? gpus_per_host : gpus_per_node; }
};

}  // namespace trainclock
