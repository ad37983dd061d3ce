// trainclock: component microbenchmarks predicted by the cost model's own functions (components.hpp).
#include "trainclock/validation/components.hpp"

#include "perf/constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>

#include <simdjson.h>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "trainclock/base/embedded.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/operators.hpp"

namespace trainclock {

// [SECTION] Reading the rows ----------------------------------------------------------------------

namespace {

// Lenient field reads: a row carries only the fields of its component (README "Component
// microbenchmarks"); null or absent leaves the default. A field of the wrong type is an issue.
struct RowReader {
    simdjson::dom::object object;
    std::string error;  // first failure: "key: reason"
    void str(const char* key, std::string& out) {
        simdjson::dom::element e;
        if (object.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return;
        std::string_view v;
        if (e.get_string().get(v) != simdjson::SUCCESS) {
            if (error.empty()) error = std::string(key) + ": expected a string, got " + json_type_phrase(e);
            return;
        }
        out = std::string(v);
    }
    void num(const char* key, double& out) {
        simdjson::dom::element e;
        if (object.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return;
        double v = 0;
        if (e.get_double().get(v) != simdjson::SUCCESS) {
            if (error.empty()) error = std::string(key) + ": expected a number, got " + json_type_phrase(e);
            return;
        }
        out = v;
    }
    void count(const char* key, int64_t& out) {
        double v = double(out);
        num(key, v);
        out = int64_t(v);
    }
    void flag(const char* key, bool& out) {
        simdjson::dom::element e;
        if (object.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return;
        bool v = false;
        if (e.get_bool().get(v) != simdjson::SUCCESS) {
            if (error.empty()) error = std::string(key) + ": expected true or false, got " + json_type_phrase(e);
            return;
        }
        out = v;
    }
};

}  // namespace

void parse_component_file(std::string_view stem, std::string_view json, ComponentSuite& suite) {
    const std::string file(stem);
    simdjson::dom::parser parser;
    auto root = parse_json_object(parser, json, "a component file object");
    if (!root) {
        suite.issues.push_back(file + ".json: " + root.error().to_string());
        return;
    }
    simdjson::dom::array rows;
    if (root.value().at_key("rows").get_array().get(rows) != simdjson::SUCCESS) {
        suite.issues.push_back(file + ".json: rows: expected an array of rows");
        return;
    }
    simdjson::dom::array unrepresentable;
    if (root.value().at_key("unrepresentable").get_array().get(unrepresentable) == simdjson::SUCCESS)
        suite.unrepresentable += int64_t(unrepresentable.size());
    int64_t index = 0;
    for (simdjson::dom::element element : rows) {
        ComponentRow row;
        row.file = file;
        RowReader r;
        if (element.get_object().get(r.object) != simdjson::SUCCESS) {
            suite.issues.push_back(file + ".json: row " + std::to_string(index) + ": expected an object");
            ++index;
            continue;
        }
        r.str("id", row.id);
        r.str("component", row.component);
        r.str("op", row.op);
        r.str("metric", row.metric);
        r.num("value", row.value);
        r.str("gpu", row.gpu);
        r.str("node", row.node);
        r.str("algorithm", row.algorithm);
        r.str("library", row.library);
        r.str("dtype", row.dtype);
        r.str("fp8_recipe", row.fp8_recipe);
        r.str("kernel", row.kernel);
        r.str("kind", row.kind);
        r.str("layout", row.layout);
        r.str("pass", row.pass);
        r.str("grouped_dim", row.grouped_dim);
        r.str("copy_test", row.copy_test);
        r.str("host_cpu", row.host_cpu);
        r.str("timing", row.timing);
        r.str("network", row.network);
        r.str("nccl_version", row.nccl_version);
        r.str("harness", row.harness);
        r.count("num_gpus", row.num_gpus);
        r.count("nodes", row.nodes);
        r.count("gpus_per_node", row.gpus_per_node);
        for (auto [key, out] : {std::pair{"inter_bw_gbps", &row.inter_bw_gbps},
                                {"size_bytes", &row.size_bytes},
                                {"m", &row.m},
                                {"n", &row.n},
                                {"k", &row.k},
                                {"groups", &row.groups},
                                {"m_per_group", &row.m_per_group},
                                {"tokens", &row.tokens},
                                {"hidden", &row.hidden},
                                {"top_k", &row.top_k},
                                {"expert_ffn_hidden", &row.expert_ffn_hidden},
                                {"experts", &row.experts},
                                {"expert_matrices", &row.expert_matrices},
                                {"batch", &row.batch},
                                {"seq", &row.seq},
                                {"heads", &row.heads},
                                {"kv_heads", &row.kv_heads},
                                {"head_dim", &row.head_dim}})
            r.num(key, *out);
        r.flag("causal", row.causal);
        if (r.error.empty() && (row.id.empty() || row.component.empty() || row.metric.empty()))
            r.error = "id, component and metric: required";
        if (r.error.empty() && !(row.value > 0)) r.error = "value: expected a positive measurement";
        if (!r.error.empty()) {
            suite.issues.push_back(file + ".json: row " + std::to_string(index) + (row.id.empty() ? "" : " (" + row.id + ")") + ": " +
                                   r.error);
        } else {
            suite.rows.push_back(std::move(row));
        }
        ++index;
    }
}

ComponentSuite load_component_suite() {
    ComponentSuite suite;
    for (const EmbeddedPreset& preset : embedded_presets())
        if (preset.kind == PresetKind::component) parse_component_file(preset.name, preset.json, suite);
    return suite;
}

// [SECTION] Predicting one row --------------------------------------------------------------------

namespace {

Result<DType> row_dtype(const ComponentRow& row) {
    if (row.dtype.empty()) return Error{row.id + ".dtype", "not stated"};
    if (const auto d = dtype_from_name(row.dtype)) return *d;
    return Error{row.id + ".dtype", "unknown dtype '" + row.dtype + "'"};
}

// The attention kernel's calibration: FlashAttention-2, else the Hopper/Blackwell fused kernels
// (FlashAttention-3/-4 and cuDNN's fused attention share the flash3 record).
AttentionKernel row_kernel(const ComponentRow& row) {
    return row.kernel.empty() || row.kernel == "flash2" ? AttentionKernel::flash2 : AttentionKernel::flash3;
}

// Seconds of ops as one microbenchmark times them: each kernel alone (operators.hpp KernelContext:
// boost clock, the large-GEMM and HBM-stream figures, one device latency per kernel).
double ops_seconds(const OpList& ops, const GpuSpec& gpu, const Calibration& cal, bool profiled = false) {
    double s = 0;
    for (const Op& op : ops) s += kernel_alone_s(op, gpu, cal, profiled);
    return s;
}

Result<double> predict_collective(const ComponentRow& row, const GpuSpec& gpu) {
    if (row.node.empty()) return Error{row.id + ".node", "no node preset"};
    auto node_result = node_preset(row.node);
    if (!node_result) return Error{row.id + ".node", node_result.error().message};
    NodeSpec node = node_result.value();
    // The measured system's NVLink domain and NICs where the row states them (cloud nodes differ from the preset).
    if (row.gpus_per_node > 0 && row.nodes > 1) node.gpus_per_node = row.gpus_per_node;
    if (row.inter_bw_gbps > 0) node.inter_bw_gbps = row.inter_bw_gbps;
    if (!row.network.empty()) {
        const auto* found =
            std::find_if(std::begin(kNetworkNames), std::end(kNetworkNames), [&](const auto& n) { return n.name == row.network; });
        if (found == std::end(kNetworkNames)) return Error{row.id + ".network", "unknown network '" + row.network + "'"};
        node.network = found->value;
    }
    const int64_t ranks = std::max<int64_t>(row.num_gpus, 1);
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
    Link link = group_link(node, gpu, cal, GroupPlacement{ranks, 1, ranks});
    if (!row.nccl_version.empty()) {
        // nccl.h NCCL_VERSION_CODE (2.9 and later): major x 10000 + minor x 100 + patch.
        int major = 0, minor = 0, patch = 0;
        char tail = 0;
        if (std::sscanf(row.nccl_version.c_str(), "%d.%d.%d%c", &major, &minor, &patch, &tail) != 3 || major < 2 ||
            (major == 2 && minor < 9))
            return Error{row.id + ".nccl_version", "not a release 2.9.0 or later: '" + row.nccl_version + "'"};
        link.nccl_version = major * 10000 + minor * 100 + patch;
    }
    Collective collective = Collective::all_reduce;
    double bytes = row.size_bytes;
    if (row.op == "all_gather") {
        collective = Collective::all_gather;
    } else if (row.op == "reduce_scatter") {
        collective = Collective::reduce_scatter;
    } else if (row.op == "alltoall_dispatch" || row.op == "alltoall_combine") {
        // DeepEP's benchmark: dispatch in FP8 (a scale per 128 values), combine in BF16 (DeepEP
        // README), costed as predict costs the deepep dispatcher (communication.hpp moe_exchange).
        const bool combine = row.op == "alltoall_combine";
        const MoeExchange exchange = moe_exchange(MoeDispatcher::deepep, combine, row.tokens, row.tokens * std::max(row.top_k, 1.0),
                                                  row.hidden, double(ranks), combine ? 2.0 : kDeepEpFp8DispatchBytes);
        collective = exchange.collective;
        bytes = exchange.bytes;
    } else if (row.op != "all_reduce") {
        return Error{row.id + ".op", "no collective model for '" + row.op + "'"};
    }
    if (!(bytes > 0)) return Error{row.id + ".size_bytes", "not stated"};
    // nccl-tests prints GB/s to 0.01: below 0.1 GB/s the rounding alone is 5-50 % (components README:
    // use the time_us row of the same size where there is one).
    if (row.metric != "time_us" && row.value < 0.1)
        return Error{row.id + ".value", "below the published resolution (GB/s printed to 0.01)"};
    // The algorithm the row forced (NCCL_ALGO, or NVLS named in the results); else NCCL's choice.
    NcclAlgo forced = NcclAlgo::ring;
    const bool force = row.library != "deepep" && (row.algorithm == "ring" || row.algorithm == "nvls" || row.algorithm == "nvls_tree");
    if (row.algorithm == "nvls") forced = NcclAlgo::nvls;
    if (row.algorithm == "nvls_tree") forced = NcclAlgo::nvls_tree;
    // What predict charges per call: the collective and its kernel launch (predict.cpp comm_seconds).
    double t = collective_time_s(collective, bytes, ranks, link, force ? &forced : nullptr) + cal.kernel_launch_s;
    // nccl-tests (and rccl-tests) issue `iters` calls back-to-back on one stream and divide the elapsed time
    // (NVIDIA/nccl-tests@a0b82b2 src/common.cu BenchTime): each launch is queued while the previous call runs,
    // so the per-call time is the collective alone.
    if (row.harness == "nccl-tests") t -= cal.kernel_launch_s;
    // One torch.distributed call timed after dist.barrier() on an idle device (ml-engineering's
    // all_reduce_bench.py at the cited commit): the call's host overhead is in the time (the script's
    // later docstring: "PyTorch's per-call host overhead of some 20-30us"), and across nodes the ranks
    // leave the barrier (ProcessGroupNCCL: an all-reduce of one element) up to one such call apart.
    if (row.harness == "torch-dist-call") {
        t += constant(Constant::torch_dist_call_host_s);
        if (link.inter_node) t += collective_time_s(Collective::all_reduce, 4, ranks, link) + cal.kernel_launch_s;
    } else if (!row.harness.empty() && row.harness != "nccl-tests") {
        return Error{row.id + ".harness", "unknown harness '" + row.harness + "'"};
    }
    if (!(t > 0)) return Error{row.id + ".num_gpus", "a collective over one rank takes no time"};
    const double algbw = bytes / t / 1e9;
    if (row.metric == "time_us") return t * 1e6;
    if (row.metric == "algbw_GBps") return algbw;
    // nccl-tests PERFORMANCE.md: busbw = algbw x the collective's wire factor.
    if (row.metric == "busbw_GBps") return collective_wire_bytes(collective, bytes, ranks) / t / 1e9;
    // DeepEP's bottleneck / RDMA bandwidth: the bytes one rank moves over its time.
    if (row.metric == "bottleneck_GBps" || row.metric == "rdma_GBps") return collective_wire_bytes(collective, bytes, ranks) / t / 1e9;
    return Error{row.id + ".metric", "no prediction for '" + row.metric + "'"};
}

// GEMM rows: m x k by k x n, operands and output at the dtype's storage width (bf16 output for
// 8- and 4-bit inputs, as cuBLASLt benchmarks write it).
double out_width(DType d) { return dtype_storage_bytes(d) < 2 ? 2.0 : dtype_storage_bytes(d); }

Result<double> predict_gemm(const ComponentRow& row, const GpuSpec& gpu, DType d) {
    if (!(row.m > 0 && row.n > 0 && row.k > 0)) return Error{row.id + ".m", "shape not stated"};
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
    OpList ops;
    ops.add(linear_fprop_op("gemm", d, row.m, row.k, row.n, dtype_storage_bytes(d), out_width(d), 1));
    const double t = ops_seconds(ops, gpu, cal, row.timing == "kernel_profiler");
    if (row.metric == "tflops") return 2.0 * row.m * row.n * row.k / t / 1e12;
    if (row.metric == "time_us") return t * 1e6;
    return Error{row.id + ".metric", "no prediction for '" + row.metric + "'"};
}

// A grouped GEMM as moe_mlp emits it: `groups` GEMMs of one shape in one kernel, each group's
// rows padded by expert_group_rows; fwd_bwd adds dgrad and wgrad (3 GEMMs of 2 m n k).
Result<double> predict_grouped(const ComponentRow& row, const GpuSpec& gpu, DType d) {
    // The row's library as a framework's grouped kernel (FrameworkSpec::torch_grouped_mm).
    FrameworkSpec library;
    library.name = row.library;
    library.torch_grouped_mm = row.library == "torch-grouped-mm" || row.library == "torchao-mxfp8";
    Calibration cal = resolve_calibration(gpu, CalibrationSpec{}, AttentionKernel::flash2, &library);
    // Triton's fused-MoE kernel (VeOmni): its own small-group curve at the dense rate (constants.json).
    if (row.library == "triton-fused-moe") cal.grouped_m_half_rows = constant(Constant::triton_fused_moe_m_half_rows);
    const double w = dtype_storage_bytes(d), wo = out_width(d);
    OpList ops;
    double flops = 0;
    if (row.op == "moe_ffn") {
        // Fused MoE FFN forward: tokens x top_k rows spread over the experts; gated up (2 f) and down.
        const double E = std::max(row.experts, 1.0);
        const double rows = expert_group_rows(row.tokens * std::max(row.top_k, 1.0) / E, E);
        const double up = row.expert_matrices >= 3 ? 2.0 : 1.0;
        ops.add(linear_fprop_op("mlp_up", d, rows, row.hidden, row.expert_ffn_hidden * up, w, wo, E));
        ops.add(linear_fprop_op("mlp_down", d, rows, row.expert_ffn_hidden, row.hidden, w, wo, E));
        for (int i = 0; i < ops.size; ++i) ops.items[size_t(i)].grouped = true;  // one grouped kernel each (moe_mlp)
        // The rest of the MoE forward as moe_mlp emits it: router top-k, permute, the gated
        // activation (mlp_core), weighted un-permute, memory-bound kernels.
        const double routed = row.tokens * std::max(row.top_k, 1.0), f = row.expert_ffn_hidden;
        ops.add(linear_fprop_op("router", DType::bf16, row.tokens, row.hidden, E, 2.0, 4.0, 1));
        ops.add(moe_topk_op(DType::bf16, row.tokens, E));
        ops.add(moe_permute_op(DType::bf16, routed, row.hidden, wo));
        ops.add(make_op("activation", OpKind::elementwise, DType::bf16, 0, routed * f * (up + 1) * wo));
        ops.add(moe_unpermute_op(DType::bf16, row.tokens, routed, row.hidden, wo));
        flops = 2.0 * row.tokens * std::max(row.top_k, 1.0) * row.hidden * row.expert_ffn_hidden * (up + 1);
    } else {
        const double G = std::max(row.groups, 1.0);
        if (!(row.m > 0 && row.n > 0 && row.k > 0)) return Error{row.id + ".m", "shape not stated"};
        // grouped_dim m: the groups split m (tokens); k: the groups split the reduction (wgrad).
        const bool split_k = row.grouped_dim == "k";
        const double gm = split_k ? row.m : expert_group_rows(row.m_per_group > 0 ? row.m_per_group : row.m / G, G);
        const double gk = split_k ? row.k / G : row.k;
        const bool fwd = row.pass.empty() || row.pass == "fwd" || row.pass == "fwd_bwd";
        if (fwd) ops.add(linear_fprop_op("grouped", d, gm, gk, row.n, w, wo, G));
        if (row.pass == "bwd_dgrad" || row.pass == "fwd_bwd") ops.add(linear_dgrad_op(d, gm, gk, row.n, w, wo, G));
        if (row.pass == "bwd_wgrad" || row.pass == "fwd_bwd") ops.add(linear_wgrad_op(d, gm, gk, row.n, w, 4.0, G));
        const double total_m = row.m_per_group > 0 ? row.m_per_group * G : row.m;
        flops = 2.0 * total_m * row.n * row.k * (row.pass == "fwd_bwd" ? 3.0 : 1.0);
    }
    if (row.op != "moe_ffn")
        for (int i = 0; i < ops.size; ++i) ops.items[size_t(i)].grouped = true;  // one grouped kernel per pass (moe_mlp)
    if (row.harness == "torchao-fwd-bwd") {
        if (row.op == "moe_ffn" || row.pass != "fwd_bwd" || row.grouped_dim == "k")
            return Error{row.id + ".harness", "torchao-fwd-bwd times a forward and backward grouped over m"};
        // A (tokens x k), the G weights (n x k each) and the output (tokens x n) of the op.
        const double tokens = row.m_per_group > 0 ? row.m_per_group * std::max(row.groups, 1.0) : row.m;
        const double a = tokens * row.k, b = std::max(row.groups, 1.0) * row.n * row.k, out = tokens * row.n;
        // _quantize_then_scaled_grouped_mm quantises each operand for each GEMM that reads it, as a
        // training step's MXFP8 linear does (quantize_bytes_per_element: torchao casts each layout from
        // the bf16 tensor, to_mxfp8 along dim0 and dim1): A and the weights in the forward, the output
        // gradient in the backward (torchao/prototype/moe_training/README.md, kernel breakdown by pass).
        if (library.torch_grouped_mm && (d == DType::mxfp8 || d == DType::nvfp4)) {
            OpPrecision q;
            q.gemm = d;
            q.quantized = true;
            q.recipe = d == DType::mxfp8 ? Fp8Recipe::mxfp8 : Fp8Recipe::nvfp4;
            q.w_gemm = w;
            ops.add(make_op("quantize_a", OpKind::precision_overhead, DType::bf16, 0,
                            a * quantize_bytes_per_element(q, Operand::activation, 2, false)));
            ops.add(make_op("quantize_b", OpKind::precision_overhead, DType::bf16, 0,
                            b * quantize_bytes_per_element(q, Operand::weight, 2, false)));
            ops.add(make_op("quantize_grad", OpKind::precision_overhead, DType::bf16, 0,
                            out * quantize_bytes_per_element(q, Operand::gradient, 2, false)));
        }
        // The harness (benchmarks/utils.py bench_fwd_bwd_microseconds): F.mse_loss(out, ones) reads the
        // output and the labels; its backward reads both and writes the output gradient; do_bench runs
        // without grad_to_none, so AccumulateGrad adds each gradient into .grad in place (read both, write).
        ops.add(make_op("mse_loss", OpKind::elementwise, DType::bf16, 0, 2 * out * wo));
        ops.add(make_op("mse_loss_bwd", OpKind::elementwise, DType::bf16, 0, 3 * out * wo));
        ops.add(make_op("accumulate_grad_a", OpKind::elementwise, DType::bf16, 0, 3 * a * wo));
        ops.add(make_op("accumulate_grad_b", OpKind::elementwise, DType::bf16, 0, 3 * b * wo));
    } else if (!row.harness.empty() && row.harness != "nccl-tests") {
        return Error{row.id + ".harness", "unknown harness '" + row.harness + "'"};
    }
    const double t = ops_seconds(ops, gpu, cal, row.timing == "kernel_profiler");
    if (row.metric == "tflops") return flops / t / 1e12;
    if (row.metric == "time_us") return t * 1e6;
    return Error{row.id + ".metric", "no prediction for '" + row.metric + "'"};
}

Result<double> predict_attention(const ComponentRow& row, const GpuSpec& gpu, DType d) {
    if (!(row.batch > 0 && row.seq > 0 && row.heads > 0 && row.head_dim > 0)) return Error{row.id + ".heads", "shape not stated"};
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{}, row_kernel(row));
    const double kv = row.kv_heads > 0 ? row.kv_heads : row.heads;
    const double keys = row.causal ? attended_keys(ModelSpec{}, LayerKind{}, row.seq) : row.seq;
    const double w = dtype_storage_bytes(d);
    OpList ops;
    const bool fwd = row.pass.empty() || row.pass == "fwd" || row.pass == "fwd_bwd";
    const bool bwd = row.pass == "bwd" || row.pass == "fwd_bwd";
    if (fwd) ops.add(flash_attention_op(d, row.batch, row.heads, kv, row.seq, row.seq, keys, row.head_dim, row.head_dim, w, false));
    if (bwd) ops.add(flash_attention_op(d, row.batch, row.heads, kv, row.seq, row.seq, keys, row.head_dim, row.head_dim, w, true));
    const double t = ops_seconds(ops, gpu, cal, row.timing == "kernel_profiler");
    if (row.metric == "time_us") return t * 1e6;
    // flash-attention's benchmark FLOPs: 4 b s^2 h d forward (halved when causal), backward 2.5x.
    const double f_fwd = 4.0 * row.batch * row.seq * row.seq * row.heads * row.head_dim / (row.causal ? 2.0 : 1.0);
    const double f = (fwd ? f_fwd : 0.0) + (bwd ? 2.5 * f_fwd : 0.0);
    if (row.metric == "tflops") return f / t / 1e12;
    return Error{row.id + ".metric", "no prediction for '" + row.metric + "'"};
}

// Hosts whose root complex retires a GPU's posted writes in strict order: AMD EPYC 7002 (Rome), as in
// Azure's ND A100 v4 VMs (AMD EPYC 7V12), where the guest cannot enable Relaxed Ordering (its enable bit
// is not emulated for assigned devices: Linux commit bd4ba605c4a9 "RDMA/mlx5: Allow relaxed ordering read
// in VFs and VMs"). Intel Xeon and Grace hosts of the same results files copy at the link rate both ways.
bool strict_order_host(const std::string& host_cpu) {
    // EPYC model numbers 7xx2 are Rome (7xx3 Milan, 9xx4 Genoa).
    const size_t at = host_cpu.find("AMD EPYC 7");
    return at != std::string::npos && host_cpu.size() > at + 12 && host_cpu[at + 12] == '2';
}

Result<double> predict_memory(const ComponentRow& row, const GpuSpec& gpu) {
    if (row.metric != "GBps") return Error{row.id + ".metric", "no prediction for '" + row.metric + "'"};
    if (row.kind.rfind("hbm_", 0) == 0) {
        // A STREAM-like kernel moves its bytes through HBM: an elementwise op's roofline time.
        const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
        const double bytes = 1e9;
        return bytes / op_time_s(make_op("stream", OpKind::elementwise, DType::fp32, 0, bytes), gpu, cal, kAlone) / 1e9;
    }
    if (row.kind == "h2d" || row.kind == "d2h") {
        // Offload traffic in predict moves at the same rate (predict.cpp, optimizer and parameter offload).
        if (!(gpu.host_link_gbps > 0)) return Error{row.id + ".gpu", "host_link_gbps unknown for " + gpu.name};
        HostCopy copy;
        copy.device_to_host = row.kind == "d2h";
        copy.strictly_ordered_writes = strict_order_host(row.host_cpu);
        return host_copy_bytes_per_s(gpu, copy) / 1e9;
    }
    if (row.kind.rfind("d2d_", 0) == 0) {
        // Peer copy over NVLink: the intra-node link of a 2-GPU group (group_link).
        auto node = node_preset(row.node.empty() ? gpu.default_node : row.node);
        if (!node) return Error{row.id + ".node", node.error().message};
        const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
        const Link link = group_link(node.value(), gpu, cal, GroupPlacement{2, 1, 2});
        // A bidirectional test moves data both ways at once; its figure is the sum of both directions
        // (nvbandwidth before v0.6 reported size / kernel time for its split-warp SM copies, README
        // "Bidirectional Device <-> Device"; ml-engineering states the total for the CE test).
        const bool both = row.kind == "d2d_bidirectional" || row.copy_test.find("bidirectional") != std::string::npos;
        return link.bw_bytes_per_s / 1e9 * (both ? 2.0 : 1.0);
    }
    return Error{row.id + ".kind", "no memory model for '" + row.kind + "'"};
}

}  // namespace

Result<double> predict_component(const ComponentRow& row) {
    if (row.gpu.empty()) return Error{row.id + ".gpu", "no GPU preset"};
    auto gpu_result = gpu_preset(row.gpu);
    if (!gpu_result) return Error{row.id + ".gpu", gpu_result.error().message};
    const GpuSpec& gpu = gpu_result.value();
    if (row.component == "collective") return predict_collective(row, gpu);
    if (row.component == "memory") return predict_memory(row, gpu);
    auto d = row_dtype(row);
    if (!d) return d.error();
    if (row.component == "gemm") return predict_gemm(row, gpu, d.value());
    if (row.component == "grouped_gemm") return predict_grouped(row, gpu, d.value());
    if (row.component == "attention") return predict_attention(row, gpu, d.value());
    return Error{row.id + ".component", "unknown component '" + row.component + "'"};
}

// [SECTION] The report ----------------------------------------------------------------------------

ComponentsReport run_components(const ComponentSuite& suite) {
    ComponentsReport report;
    report.unrepresentable = suite.unrepresentable;
    struct Sum {
        int64_t n = 0;
        double ape = 0, bias = 0;
    };
    static constexpr const char* kComponents[] = {"collective", "gemm", "grouped_gemm", "attention", "memory"};
    std::map<std::string, Sum> by_component;
    std::map<std::pair<std::string, std::string>, Sum> by_source;
    for (size_t i = 0; i < suite.rows.size(); ++i) {
        const ComponentRow& row = suite.rows[i];
        auto p = predict_component(row);
        if (!p || !std::isfinite(p.value()) || !(p.value() > 0)) {
            report.skipped.push_back(p ? row.id + ": prediction is not a positive number" : p.error().to_string());
            continue;
        }
        const double err = (p.value() - row.value) / row.value;
        report.cases.push_back(ComponentCase{i, p.value(), std::fabs(err)});
        for (Sum* s : {&by_component[row.component], &by_source[{row.file, row.component}]}) {
            s->n += 1;
            s->ape += std::fabs(err);
            s->bias += err;
        }
    }
    auto group = [](const std::string& component, const std::string& source, const Sum& s) {
        return ComponentGroup{component, source, s.n, 100.0 * s.ape / double(s.n), 100.0 * s.bias / double(s.n)};
    };
    for (const char* c : kComponents)
        if (auto it = by_component.find(c); it != by_component.end()) report.components.push_back(group(c, "", it->second));
    for (const auto& [key, s] : by_source) report.sources.push_back(group(key.second, key.first, s));
    return report;
}

std::string components_report_json(const ComponentSuite& suite, const ComponentsReport& report) {
    JsonWriter w;
    w.begin_object().field("schema", "trainclock/components/v1");
    auto members = [&](const ComponentGroup& g) {
        if (!g.source.empty()) w.field("source", g.source);
        w.field("component", g.component).field("cases", g.cases).field("mape_pct", g.mape_pct).field("bias_pct", g.bias_pct);
    };
    w.object_array("components", report.components, members);
    w.object_array("sources", report.sources, members);
    w.object_array("cases", report.cases, [&](const ComponentCase& c) {
        const ComponentRow& row = suite.rows[c.row];
        w.field("id", row.id)
            .field("source", row.file)
            .field("component", row.component)
            .field("metric", row.metric)
            .field("measured", row.value)
            .field("predicted", c.predicted)
            .field("ape_pct", 100.0 * c.ape);
    });
    w.key("skipped").begin_array();
    for (const std::string& s : report.skipped) w.value(s);
    w.end_array();
    w.field("unrepresentable", report.unrepresentable);
    w.end_object();
    return w.str();
}

}  // namespace trainclock
