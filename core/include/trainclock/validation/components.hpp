// trainclock: accuracy of the cost model's component functions against published microbenchmarks
// (issue 21 item 1). The rows live in presets/validation/components/*.json (embedded as
// PresetKind::component; fields in presets/validation/README.md "Component microbenchmarks"). Each
// row is predicted with the perf layer's own functions, the ones predict uses: collective_time_s on
// group_link (collectives), op_time_s on linear_fprop_op / _dgrad_op / _wgrad_op (GEMMs and grouped
// GEMMs with expert_group_rows), flash_attention_op (attention), an elementwise op's HBM time and
// the host / NVLink figures of the presets (memory).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/status.hpp"

namespace trainclock {

// One measured row, the fields the predictions read (absent numbers are 0, absent strings "").
struct ComponentRow {
    std::string file;       // preset file stem ("aws-nccl-tests"): the source
    std::string id;         // "AWS-001"
    std::string component;  // collective, gemm, grouped_gemm, attention, memory
    std::string op;         // all_reduce, all_gather, reduce_scatter, alltoall_dispatch/_combine, gemm, grouped_gemm, moe_ffn, ...
    std::string metric;     // time_us, algbw_GBps, busbw_GBps, bottleneck_GBps, rdma_GBps, tflops, GBps
    double value = 0;       // as published, in the metric's unit
    std::string gpu, node, algorithm, library, dtype, fp8_recipe, kernel, kind, layout, pass, grouped_dim;
    std::string copy_test;  // memory rows: the tool's test case (nvbandwidth device_to_host_memcpy_sm, ...)
    std::string timing;     // "kernel_profiler": the row times the kernel's own duration (DeepGEMM bench_kineto)
    std::string host_cpu;   // memory rows: the host CPU of the measured system, as its results file states it
    int64_t num_gpus = 0, nodes = 0, gpus_per_node = 0;
    double inter_bw_gbps = 0;  // NIC line rate per GPU of the measured system (0: the node preset's)
    std::string network;       // the measured system's inter-node network (node key "network"; empty: the node preset's)
    std::string nccl_version;  // the NCCL release the row states ("2.18.5"; empty: not stated, the current release)
    std::string
        harness;  // how the time was taken: "nccl-tests" = back-to-back calls (no launch); empty = kernel timing; "torch-dist-call" = one torch.distributed call after a barrier
    double size_bytes = 0;
    double m = 0, n = 0, k = 0, groups = 0, m_per_group = 0;
    double tokens = 0, hidden = 0, top_k = 0, expert_ffn_hidden = 0, experts = 0, expert_matrices = 0;
    double batch = 0, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
    bool causal = false;
};

// Every row of every embedded component file (the files' "unrepresentable" lists are counted, not read).
struct ComponentSuite {
    std::vector<ComponentRow> rows;
    int64_t unrepresentable = 0;
    std::vector<std::string> issues;  // "file: row N: key: reason" for rows that could not be read
};
ComponentSuite load_component_suite();
// Parse one file's bytes (stem = file name without .json) into `suite`.
void parse_component_file(std::string_view stem, std::string_view json, ComponentSuite& suite);

// The cost model's prediction of a row, in the row's metric; an Error names the field that stops it
// (no GPU or node preset, an unknown dtype or op).
Result<double> predict_component(const ComponentRow& row);

struct ComponentCase {
    size_t row = 0;  // into ComponentSuite::rows
    double predicted = 0;
    double ape = 0;  // |predicted - measured| / measured
};
struct ComponentGroup {
    std::string component;
    std::string source;  // "" for the whole component
    int64_t cases = 0;
    double mape_pct = 0;
    double bias_pct = 0;  // mean signed error (predicted - measured) / measured
};
struct ComponentsReport {
    std::vector<ComponentCase> cases;
    std::vector<ComponentGroup> components;  // collective, gemm, grouped_gemm, attention, memory (in that order)
    std::vector<ComponentGroup> sources;     // per source file x component
    std::vector<std::string> skipped;        // "ID: key: reason" for rows that could not be predicted
    int64_t unrepresentable = 0;
};
ComponentsReport run_components(const ComponentSuite& suite);
// trainclock/components/v1: {"schema", "components": [{"component", "cases", "mape_pct", "bias_pct"}],
// "sources": [{"source", "component", ...}], "cases": [{"id", "source", "component", "metric",
// "measured", "predicted", "ape_pct"}], "skipped": [...], "unrepresentable": N}.
std::string components_report_json(const ComponentSuite& suite, const ComponentsReport& report);

}  // namespace trainclock
