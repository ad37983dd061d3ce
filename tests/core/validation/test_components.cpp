// Tests of trainclock/validation/components.hpp: the embedded microbenchmark rows of
// presets/validation/components load, each prediction is the perf layer's own function called on
// the row, and the per-component MAPE is the mean absolute relative error of the predicted rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "perf/constants.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/validation/components.hpp"

using namespace trainclock;

namespace {

const ComponentSuite& shipped() {
    static const ComponentSuite suite = load_component_suite();
    return suite;
}

const ComponentRow* find_row(const ComponentSuite& suite, const std::function<bool(const ComponentRow&)>& match) {
    for (const ComponentRow& row : suite.rows)
        if (match(row)) return &row;
    return nullptr;
}

// The GPU's calibration and the row's group link, on the row's node shape and network.
struct RowLink {
    Calibration cal;
    Link link;
};
RowLink row_link(const ComponentRow& row) {
    const GpuSpec gpu = gpu_preset(row.gpu).value();
    NodeSpec node = node_preset(row.node).value();
    node.gpus_per_node = row.gpus_per_node;
    if (row.inter_bw_gbps > 0) node.inter_bw_gbps = row.inter_bw_gbps;
    for (const auto& n : kNetworkNames)
        if (n.name == row.network) node.network = n.value;
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
    return {cal, group_link(node, gpu, cal, GroupPlacement{row.num_gpus, 1, row.num_gpus})};
}

}  // namespace

TEST_CASE("components: every embedded microbenchmark row loads") {
    const ComponentSuite& suite = shipped();
    INFO((suite.issues.empty() ? std::string() : suite.issues.front()));
    CHECK(suite.issues.empty());
    // components.csv holds 806 rows (../shared/validation/components/README.md); the transcription
    // keeps every one, as a row or in a file's unrepresentable list.
    CHECK(int64_t(suite.rows.size()) + suite.unrepresentable == 806);
    std::set<std::string> components, ids;
    for (const ComponentRow& row : suite.rows) {
        components.insert(row.component);
        CHECK(ids.insert(row.id).second);
        CHECK(row.value > 0);
    }
    CHECK(components == std::set<std::string>{"attention", "collective", "gemm", "grouped_gemm", "memory"});
}

TEST_CASE("components: a GEMM row is predicted by the linear layer's forward GEMM timed alone (kernel_alone_s)") {
    const ComponentRow* row = find_row(shipped(), [](const ComponentRow& r) { return r.component == "gemm" && r.gpu == "h100-sxm"; });
    REQUIRE(row != nullptr);
    const GpuSpec gpu = gpu_preset(row->gpu).value();
    const DType d = *dtype_from_name(row->dtype);
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
    const double w = dtype_storage_bytes(d);
    const Op gemm = linear_fprop_op("gemm", d, row->m, row->k, row->n, w, std::max(w, 2.0), 1);
    const double t = kernel_alone_s(gemm, gpu, cal);
    // Alone: the kernel's device latency beside its roofline time at boost clock and the MAMF figure.
    CHECK(t == Approx(cal.kernel_device_latency_s + op_time_s(gemm, gpu, cal, kAlone)));
    REQUIRE(row->metric == "tflops");
    const auto predicted = predict_component(*row);
    REQUIRE(predicted.ok());
    CHECK(predicted.value() == Approx(2 * row->m * row->n * row->k / t / 1e12).epsilon(1e-12));
}

TEST_CASE("components: a DeepGEMM row is the kernel's profiled duration, without the launch-to-start latency") {
    const ComponentRow* row = find_row(shipped(), [](const ComponentRow& r) { return r.component == "gemm" && r.library == "deepgemm"; });
    REQUIRE(row != nullptr);
    CHECK(row->timing == "kernel_profiler");
    const GpuSpec gpu = gpu_preset(row->gpu).value();
    const Calibration cal = resolve_calibration(gpu, CalibrationSpec{});
    const Op gemm = linear_fprop_op("gemm", DType::fp8, row->m, row->k, row->n, 1.0, 2.0, 1);
    const double profiled = kernel_alone_s(gemm, gpu, cal, true);
    CHECK(profiled < kernel_alone_s(gemm, gpu, cal));
    const auto predicted = predict_component(*row);
    REQUIRE(predicted.ok());
    CHECK(predicted.value() == Approx(2 * row->m * row->n * row->k / profiled / 1e12).epsilon(1e-12));
}

TEST_CASE("components: host copies run at the host link, device writes slower on a strict-order host") {
    const ComponentSuite& suite = shipped();
    // Azure ND A100 v4 (AMD EPYC 7V12): nvbandwidth's SM copies both ways on one host.
    const ComponentRow* h2d =
        find_row(suite, [](const ComponentRow& r) { return r.kind == "h2d" && r.host_cpu.find("AMD EPYC 7V12") == 0; });
    const ComponentRow* d2h =
        find_row(suite, [](const ComponentRow& r) { return r.kind == "d2h" && r.host_cpu.find("AMD EPYC 7V12") == 0; });
    REQUIRE((h2d != nullptr && d2h != nullptr));
    const GpuSpec gpu = gpu_preset(h2d->gpu).value();
    const auto up = predict_component(*h2d), down = predict_component(*d2h);
    REQUIRE((up.ok() && down.ok()));
    CHECK(up.value() == Approx(host_copy_bytes_per_s(gpu) / 1e9));  // what predict's offload moves at
    CHECK(down.value() < 0.5 * up.value());
    HostCopy ordered;
    ordered.device_to_host = true;
    ordered.strictly_ordered_writes = true;
    CHECK(down.value() == Approx(host_copy_bytes_per_s(gpu, ordered) / 1e9));
    // An Intel Xeon host of the same results files copies at the link rate both ways.
    const ComponentRow* xeon = find_row(suite, [](const ComponentRow& r) { return r.kind == "d2h" && r.host_cpu.find("Intel") == 0; });
    REQUIRE(xeon != nullptr);
    CHECK(predict_component(*xeon).value() == Approx(host_copy_bytes_per_s(gpu_preset(xeon->gpu).value()) / 1e9));
}

TEST_CASE("components: a bidirectional peer-copy test counts both directions of the link") {
    const ComponentSuite& suite = shipped();
    const ComponentRow* both = find_row(suite, [](const ComponentRow& r) {
        return r.component == "memory" && r.copy_test == "device_to_device_bidirectional_memcpy_read_sm" && r.gpu == "h200-sxm";
    });
    const ComponentRow* one =
        find_row(suite, [](const ComponentRow& r) { return r.component == "memory" && r.kind == "d2d_write" && r.gpu == "h200-sxm"; });
    REQUIRE((both != nullptr && one != nullptr));
    const auto b = predict_component(*both), o = predict_component(*one);
    REQUIRE((b.ok() && o.ok()));
    CHECK(b.value() == Approx(2 * o.value()));
}

TEST_CASE("components: a collective time row is collective_time_s on the group's link") {
    const ComponentRow* row = find_row(shipped(), [](const ComponentRow& r) {
        return r.component == "collective" && r.op == "all_reduce" && r.metric == "time_us" && r.nodes == 2 && r.size_bytes >= 1 << 20 &&
               r.algorithm == "default";
    });
    REQUIRE(row != nullptr);
    const auto [cal, link] = row_link(*row);
    CHECK(link.inter_node);
    // What predict charges for the call: the collective and its kernel launch; nccl-tests' back-to-back calls hide the launch.
    CHECK(row->harness == "nccl-tests");
    const double t = collective_time_s(Collective::all_reduce, row->size_bytes, row->num_gpus, link);
    const auto predicted = predict_component(*row);
    REQUIRE(predicted.ok());
    CHECK(predicted.value() == Approx(t * 1e6).epsilon(1e-12));
}

TEST_CASE("components: MAPE per component and per source is the mean of |predicted - measured| / measured") {
    const ComponentSuite& suite = shipped();
    const ComponentsReport report = run_components(suite);
    REQUIRE(report.components.size() == 5);
    std::map<std::string, std::pair<int64_t, double>> sums;
    int64_t predicted = 0;
    for (const ComponentRow& row : suite.rows) {
        const auto p = predict_component(row);
        if (!p.ok()) continue;
        ++predicted;
        sums[row.component].first += 1;
        sums[row.component].second += std::fabs(p.value() - row.value) / row.value;
    }
    CHECK(predicted == int64_t(report.cases.size()));
    CHECK(int64_t(report.cases.size() + report.skipped.size()) == int64_t(suite.rows.size()));
    for (const ComponentGroup& g : report.components) {
        INFO(g.component);
        CHECK(g.cases == sums[g.component].first);
        CHECK(g.mape_pct == Approx(100 * sums[g.component].second / double(sums[g.component].first)));
    }
    int64_t by_source = 0;
    for (const ComponentGroup& g : report.sources) by_source += g.cases;
    CHECK(by_source == int64_t(report.cases.size()));
    const std::string json = components_report_json(suite, report);
    CHECK(json.find(R"("components":[{"component":"collective","cases":)") != std::string::npos);
}

TEST_CASE("components: a bad row is reported by file, index and key, the others still load") {
    ComponentSuite suite;
    parse_component_file("bad", R"({"rows":[{"id":"X-1","component":"gemm","metric":"tflops","value":"fast"},
{"id":"X-2","component":"gemm","metric":"tflops","value":1.0,"gpu":"h100-sxm","dtype":"bf16","m":4096,"n":4096,"k":4096}]})",
                         suite);
    REQUIRE(suite.issues.size() == 1);
    CHECK(suite.issues.front().find("bad.json: row 0 (X-1): value") == 0);
    REQUIRE(suite.rows.size() == 1);
    CHECK(predict_component(suite.rows.front()).ok());
    ComponentRow unknown = suite.rows.front();
    unknown.gpu = "h1000";
    const auto error = predict_component(unknown);
    REQUIRE(!error.ok());
    CHECK(error.error().key == "X-2.gpu");
    parse_component_file("broken", "{", suite);
    CHECK(suite.issues.size() == 2);
}

TEST_CASE("components: a DeepEP time row is the deepep dispatcher's exchange (moe_exchange) on the group's link, as predict costs it") {
    const ComponentRow* row = find_row(shipped(), [](const ComponentRow& r) {
        return r.library == "deepep" && r.op == "alltoall_dispatch" && r.metric == "time_us" && r.nodes > 1;
    });
    REQUIRE(row != nullptr);
    const auto [cal, link] = row_link(*row);
    // FP8 dispatch: one byte and a scale per 128 values, every routed copy of a token (DeepEP README).
    const MoeExchange exchange = moe_exchange(MoeDispatcher::deepep, false, row->tokens, row->tokens * row->top_k, row->hidden,
                                              double(row->num_gpus), kDeepEpFp8DispatchBytes);
    CHECK(exchange.collective == Collective::all_to_all);
    CHECK(exchange.bytes == Approx(row->tokens * row->top_k * row->hidden * (1 + 4.0 / 128)));
    const double t = collective_time_s(exchange.collective, exchange.bytes, row->num_gpus, link) + cal.kernel_launch_s;
    const auto predicted = predict_component(*row);
    REQUIRE(predicted.ok());
    CHECK(predicted.value() == Approx(t * 1e6).epsilon(1e-12));
}

namespace {
// A row predicted as time_us with its harness and without it.
struct HarnessDelta {
    ComponentRow timed;
    double with_us = 0, without_us = 0;
};
HarnessDelta with_and_without_harness(const ComponentRow& row) {
    ComponentRow timed = row, bare = row;
    timed.metric = bare.metric = "time_us";
    bare.harness.clear();
    const auto with = predict_component(timed), without = predict_component(bare);
    REQUIRE(with.ok());
    REQUIRE(without.ok());
    return {timed, with.value(), without.value()};
}

// A row whose harness does not fit its other keys is refused, naming the harness.
void check_harness_refused(const ComponentRow& row) {
    const auto error = predict_component(row);
    REQUIRE(!error.ok());
    CHECK(error.error().key == row.id + ".harness");
}
}  // namespace

TEST_CASE("components: a row timed as one torch.distributed call adds the call's host overhead, and across nodes the barrier's skew") {
    for (const int64_t nodes : {1, 4}) {
        INFO(nodes);
        const ComponentRow* found = find_row(shipped(), [&](const ComponentRow& r) {
            return r.component == "collective" && r.harness == "torch-dist-call" && r.nodes == nodes && r.op == "all_reduce";
        });
        REQUIRE(found != nullptr);
        auto [timed, with_us, without_us] = with_and_without_harness(*found);
        const auto [cal, link] = row_link(timed);
        double extra = constant(Constant::torch_dist_call_host_s);
        if (nodes > 1) extra += collective_time_s(Collective::all_reduce, 4, timed.num_gpus, link) + cal.kernel_launch_s;
        CHECK(with_us - without_us == Approx(extra * 1e6).epsilon(1e-9));
        CHECK(extra > 0);
        timed.harness = "stopwatch";
        check_harness_refused(timed);
    }
}

TEST_CASE("components: a row's NCCL release reaches the group's link (NCCL_VERSION_CODE), a malformed one is the row's error") {
    const ComponentRow* found = find_row(shipped(), [](const ComponentRow& r) {
        return r.component == "collective" && r.nccl_version == "2.18.5" && r.nodes == 2 && r.metric == "time_us";
    });
    REQUIRE(found != nullptr);
    auto [cal, link] = row_link(*found);
    link.nccl_version = 21805;
    const auto predicted = predict_component(*found);
    REQUIRE(predicted.ok());
    CHECK(predicted.value() ==
          Approx(collective_time_s(Collective::all_reduce, found->size_bytes, found->num_gpus, link) * 1e6).epsilon(1e-12));
    ComponentRow unstated = *found;
    unstated.nccl_version.clear();
    CHECK(predict_component(unstated).value() < predicted.value());  // 2.18's NVLS-tree with flushed receives is slower
    for (const char* bad : {"2.18", "2.8.4", "nccl", "2.18.5-1"}) {
        ComponentRow malformed = *found;
        malformed.nccl_version = bad;
        INFO(bad);
        const auto result = predict_component(malformed);
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().key == found->id + ".nccl_version");
    }
}

TEST_CASE("components: nccl-tests rows time back-to-back calls, so the kernel launch predict charges per call is hidden") {
    const ComponentRow* found = find_row(shipped(), [](const ComponentRow& r) {
        return r.component == "collective" && r.harness == "nccl-tests" && r.op == "all_reduce" && r.nodes == 1;
    });
    REQUIRE(found != nullptr);
    const auto [timed, with_us, without_us] = with_and_without_harness(*found);
    const auto [cal, link] = row_link(timed);
    CHECK(cal.kernel_launch_s > 0);
    CHECK(without_us - with_us == Approx(cal.kernel_launch_s * 1e6).epsilon(1e-9));
}

TEST_CASE("components: torchao's fwd_bwd harness adds the MXFP8 operands' quantisation, the loss and the gradient accumulation") {
    for (const char* dtype : {"bf16", "mxfp8"}) {
        INFO(dtype);
        const ComponentRow* found = find_row(shipped(), [&](const ComponentRow& r) {
            return r.component == "grouped_gemm" && r.harness == "torchao-fwd-bwd" && r.dtype == dtype && r.groups == 8;
        });
        REQUIRE(found != nullptr);
        auto [timed, with_us, without_us] = with_and_without_harness(*found);
        // Memory-bound extras: the loss reads/writes the output 5 times, the gradients are read twice
        // and written once; MXFP8 adds 2 (bf16 read + 8-bit write with its scales) per layout per operand.
        const auto gpu = gpu_preset(timed.gpu);
        REQUIRE(gpu.ok());
        const Calibration cal = resolve_calibration(gpu.value(), CalibrationSpec{});
        const double a = timed.m * timed.k, b = timed.groups * timed.n * timed.k, out = timed.m * timed.n;
        double bytes = 2.0 * (5 * out + 3 * a + 3 * b);
        const bool mx = std::string(dtype) == "mxfp8";
        if (mx) bytes += (a + b + out) * 2 * (2 + dtype_storage_bytes(DType::mxfp8));
        const double kernels = mx ? 7 : 4;
        const double expect_us =
            (bytes / (gpu.value().memory_bw_gbps * 1e9 * cal.memory_stream_efficiency) + kernels * cal.kernel_device_latency_s) * 1e6;
        CHECK(with_us - without_us == Approx(expect_us).epsilon(1e-6));
        timed.pass = "fwd";
        check_harness_refused(timed);
    }
}

TEST_CASE("components: torchao's MXFP8 grouped kernel runs at its own rate of the dense one") {
    const ComponentRow* found = find_row(shipped(), [](const ComponentRow& r) {
        return r.component == "grouped_gemm" && r.dtype == "mxfp8" && r.pass == "fwd" && r.library == "torchao-mxfp8";
    });
    REQUIRE(found != nullptr);
    FrameworkSpec torch_mm;
    torch_mm.torch_grouped_mm = true;
    const auto gpu = gpu_preset(found->gpu);
    REQUIRE(gpu.ok());
    Calibration grouped = resolve_calibration(gpu.value(), CalibrationSpec{}, AttentionKernel::flash2, &torch_mm);
    grouped.grouped_m_half_rows = 0;  // the rate alone, without the small-group curve
    CHECK(grouped.grouped_block_scaled_rate == constant(Constant::torch_scaled_grouped_mm_of_dense));
    CHECK(grouped.grouped_gemm_rate == constant(Constant::torch_grouped_mm_of_dense));
    Op op = linear_fprop_op("grouped", DType::mxfp8, 16384, 7168, 2048, 1.0, 2.0, 8);
    op.grouped = true;
    Op bf = linear_fprop_op("grouped", DType::bf16, 16384, 7168, 2048, 2.0, 2.0, 8);
    bf.grouped = true;
    const Calibration dense = resolve_calibration(gpu.value(), CalibrationSpec{});
    CHECK(gemm_efficiency(op, gpu.value(), grouped, kAlone) / gemm_efficiency(op, gpu.value(), dense, kAlone) ==
          Approx(constant(Constant::torch_scaled_grouped_mm_of_dense)));
    CHECK(gemm_efficiency(bf, gpu.value(), grouped, kAlone) / gemm_efficiency(bf, gpu.value(), dense, kAlone) ==
          Approx(constant(Constant::torch_grouped_mm_of_dense)));
}
