// trainclock: tools/measure_gpu.py's micro-benchmarks (trainclock/measurements/v1) -> a calibration
// (import.hpp). Each efficiency is the measured figure over the GPU or node preset's datasheet peak,
// the definition of the presets' "measured" block; the shipped rules of calibration.cpp then act on
// it as on a preset's published figure (the training-kernel share of a copy's bandwidth, a measured
// bf16 GEMM carried to the dtypes on its datapath), so no rule is restated here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "catalogue/spec_json.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/perf/calibration.hpp"

namespace trainclock {
namespace {

constexpr std::string_view kSchema = "trainclock/measurements/v1";
constexpr double kLowestFraction = 1e-3;  // the smallest efficiency a calibration accepts (config.cpp)

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string general(double value) {  // a measured figure: 4 significant digits at any scale (GPU or CPU)
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

std::optional<double> number(simdjson::dom::element element, std::string_view key) {
    double value = 0;
    if (element[key].get_double().get(value) != simdjson::SUCCESS || !std::isfinite(value) || value <= 0) return std::nullopt;
    return value;
}

std::string text(simdjson::dom::element element, std::string_view key) {
    std::string_view value;
    return element[key].get_string().get(value) == simdjson::SUCCESS ? std::string(value) : std::string();
}

// The rows of an array key; none where the key is missing or not an array.
std::vector<simdjson::dom::element> rows(simdjson::dom::object object, std::string_view key) {
    std::vector<simdjson::dom::element> out;
    simdjson::dom::array array;
    if (object[key].get_array().get(array) == simdjson::SUCCESS)
        for (const auto row : array) out.push_back(row);
    return out;
}

// measured / peak, kept inside what a calibration accepts; leaving the range is said, never silent.
double fraction(double measured, double peak, const std::string& what, std::vector<std::string>& warnings) {
    const double f = measured / peak;
    if (f > 1.0) {
        warnings.push_back(what + ": measured " + fixed(measured, 1) + " is above the preset's " + fixed(peak, 1) +
                           " (wrong --gpu/--node preset, or a sparse/boosted figure): capped at 1");
        return 1.0;
    }
    if (f < kLowestFraction) {
        warnings.push_back(what + ": " + fixed(f, 6) + " of the preset's peak is below " + fixed(kLowestFraction, 3) +
                           ", the smallest calibration value (these numbers do not describe this GPU): raised to it");
        return kLowestFraction;
    }
    return f;
}

struct Derivation {
    std::vector<std::string> lines, warnings;
};

// GEMM: the best TFLOP/s of each dtype over the transformer shapes, as the preset's measured figure.
std::optional<Error> read_gemm(simdjson::dom::object object, GpuSpec& gpu, Derivation& d) {
    std::array<double, kDTypeCount> best{};
    size_t index = 0;
    for (const auto row : rows(object, "gemm")) {
        const std::string key = "gemm[" + std::to_string(index++) + "]";
        const std::string name = text(row, "dtype");
        const auto dtype = dtype_from_name(name);
        if (!dtype) return Error{key + ".dtype", "'" + name + "' is not a dtype (fp32, tf32, fp16, bf16, fp8)"};
        const auto tflops = number(row, "tflops");
        if (!tflops) return Error{key + ".tflops", "missing or not a positive number"};
        double& b = best[static_cast<int>(*dtype)];
        b = std::max(b, *tflops);
    }
    for (int i = 0; i < kDTypeCount; ++i) {
        if (best[i] <= 0) continue;
        const std::string name(dtype_name(DType(i)));
        if (gpu.peak_tflops[i] <= 0) {
            d.warnings.push_back("gemm " + name + ": the " + gpu.name + " preset has no " + name + " peak: not used");
            continue;
        }
        gpu.measured_gemm_efficiency[i] = fraction(best[i], gpu.peak_tflops[i], "gemm " + name, d.warnings);
        d.lines.push_back("gemm_efficiency." + name + " = " + general(best[i]) + " TFLOP/s (best shape) / " + fixed(gpu.peak_tflops[i], 1) +
                          " peak = " + fixed(gpu.measured_gemm_efficiency[i], 4));
    }
    return std::nullopt;
}

// HBM: a device copy's bandwidth (read + write) over the datasheet's.
void read_memory(simdjson::dom::object object, GpuSpec& gpu, Derivation& d) {
    simdjson::dom::element memory;
    if (object["memory"].get(memory) != simdjson::SUCCESS) return;
    const auto gbps = number(memory, "bandwidth_gbps");
    if (!gbps) return;
    if (gpu.memory_bw_gbps <= 0) {
        d.warnings.push_back("memory: the " + gpu.name + " preset has no memory bandwidth: not used");
        return;
    }
    gpu.measured_memory_efficiency = fraction(*gbps, gpu.memory_bw_gbps, "memory", d.warnings);
    d.lines.push_back("copy " + general(*gbps) + " GB/s / " + fixed(gpu.memory_bw_gbps, 1) + " = " +
                      fixed(gpu.measured_memory_efficiency, 4) + " of HBM");
}

// Fused attention (SDPA): forward+backward rows when present (what training runs), else forward.
std::optional<double> read_attention(simdjson::dom::object object, const GpuSpec& gpu, Derivation& d) {
    struct Best {
        double share = 0, tflops = 0, peak = 0;  // fraction of the row dtype's peak, and its terms
    } best[2];                                   // [forward, forward+backward]
    for (const auto row : rows(object, "attention")) {
        if (text(row, "kernel") != "sdpa") continue;  // materialised scores are not a fused-kernel figure
        const auto dtype = dtype_from_name(text(row, "dtype"));
        const auto tflops = number(row, "tflops");
        // 16-bit rows only: those run the fused (flash) kernels; fp32 SDPA falls back to the math path.
        if (!dtype || (*dtype != DType::bf16 && *dtype != DType::fp16) || !tflops || !gpu.supports(*dtype)) continue;
        Best& b = best[text(row, "pass") == "forward+backward" ? 1 : 0];
        const double peak = gpu.peak_tflops[static_cast<int>(*dtype)];
        if (*tflops / peak > b.share) b = {*tflops / peak, *tflops, peak};
    }
    const int pass = best[1].share > 0 ? 1 : 0;
    if (best[pass].share <= 0) return std::nullopt;
    if (pass == 0)
        d.warnings.push_back("attention: forward-only figures (training's backward pass is slower per FLOP): re-run measure_gpu.py");
    const double f = fraction(best[pass].tflops, best[pass].peak, "attention", d.warnings);
    d.lines.push_back("attention_efficiency = " + general(best[pass].tflops) + " TFLOP/s " + (pass ? "forward+backward" : "forward") +
                      " (SDPA) / " + fixed(best[pass].peak, 1) + " peak = " + fixed(f, 4));
    return f;
}

// NCCL bus bandwidth of a group over the node's link per GPU: all-reduce where measured, else the
// best other collective (nccl-tests' busbw is comparable across them).
std::optional<double> read_link(simdjson::dom::object object, std::string_view group, double line_rate, const std::string& node,
                                Derivation& d) {
    double all_reduce = 0, other = 0;
    for (const auto row : rows(object, "collectives")) {
        if (text(row, "group") != group) continue;
        const auto busbw = number(row, "busbw_gbps");
        if (!busbw) continue;  // one rank: no bus to measure
        double& best = text(row, "op") == "all_reduce" ? all_reduce : other;
        best = std::max(best, *busbw);
    }
    const double busbw = all_reduce > 0 ? all_reduce : other;
    if (busbw <= 0) return std::nullopt;
    const std::string key = std::string(group) + "_node_efficiency";
    if (line_rate <= 0) {
        d.warnings.push_back(key + ": the " + node + " preset has no " + std::string(group) + "-node bandwidth: not used");
        return std::nullopt;
    }
    const double f = fraction(busbw, line_rate, key, d.warnings);
    d.lines.push_back(key + " = " + general(busbw) + " GB/s " + (all_reduce > 0 ? "all-reduce" : "collective") + " busbw / " +
                      fixed(line_rate, 1) + " GB/s per GPU (" + node + ") = " + fixed(f, 4));
    return f;
}

}  // namespace

bool is_microbenchmark_file(std::string_view json) {
    simdjson::dom::parser parser;
    simdjson::dom::element document;
    std::string_view schema;
    return parser.parse(json.data(), json.size()).get(document) == simdjson::SUCCESS &&
           document["schema"].get_string().get(schema) == simdjson::SUCCESS && schema == kSchema;
}

Result<MeasuredCalibration> calibration_from_microbenchmarks(std::string_view json, std::string_view gpu_name, std::string_view node_name) {
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, json);
    if (!document) return document.error();
    const simdjson::dom::element root = document.value();
    simdjson::dom::object object;
    if (document.value().get_object().get(object) != simdjson::SUCCESS) return Error{"", "expected a measurements object"};
    if (text(root, "schema") != kSchema) return Error{"schema", "expected \"" + std::string(kSchema) + "\" (tools/measure_gpu.py --out)"};
    MeasuredCalibration out;
    out.gpu = gpu_name.empty() ? text(root, "gpu") : std::string(gpu_name);
    if (out.gpu.empty()) return Error{"gpu", "missing: name the GPU preset measured (measure_gpu.py --gpu, or calibrate --gpu)"};
    auto gpu = gpu_preset(out.gpu);
    if (!gpu) return Error{"gpu", gpu.error().message};
    out.node = !node_name.empty() ? std::string(node_name) : !text(root, "node").empty() ? text(root, "node") : gpu.value().default_node;
    auto node = node_preset(out.node);
    if (!node) return Error{"node", node.error().message};
    Derivation d;
    if (text(root, "device").rfind("cpu", 0) == 0)
        d.warnings.push_back("measured on the CPU (measure_gpu.py --cpu, the test mode): the figures describe the CPU, not " + out.gpu);

    GpuSpec measured = gpu.value();
    if (auto error = read_gemm(object, measured, d)) return *error;
    read_memory(object, measured, d);
    const auto attention = read_attention(object, measured, d);
    const auto intra = read_link(object, "intra", node.value().intra_bw_gbps, out.node, d);
    const auto inter = read_link(object, "inter", node.value().inter_bw_gbps, out.node, d);

    // The shipped rules act on the measured figures as on a preset's: write what they change.
    const Calibration shipped = resolve_calibration(gpu.value(), {});
    const Calibration now = resolve_calibration(measured, {});
    CalibrationOverrides o;
    for (int i = 0; i < kDTypeCount; ++i) {
        if (now.gemm_efficiency[i] == shipped.gemm_efficiency[i]) continue;
        o.gemm_efficiency[i] = std::max(now.gemm_efficiency[i], kLowestFraction);
        if (measured.measured_gemm_efficiency[i] <= 0)
            d.lines.push_back("gemm_efficiency." + std::string(dtype_name(DType(i))) + " = " + fixed(now.gemm_efficiency[i], 4) +
                              " carried from the measured bf16 figure (same datapath, calibration.cpp)");
    }
    if (now.memory_efficiency != shipped.memory_efficiency) {
        o.memory_efficiency = std::max(now.memory_efficiency, kLowestFraction);
        d.lines.push_back("memory_efficiency = " + fixed(*o.memory_efficiency, 4) +
                          ": the share of the copy's that training's memory-bound kernels reach (calibration.cpp)");
    }
    o.attention_efficiency = attention;
    o.intra_node_efficiency = intra;
    o.inter_node_efficiency = inter;
    CalibrationSpec spec;
    spec.per_gpu.emplace_back(out.gpu, o);
    // Its scope (issue 25 item 4): this GPU, any framework and precision (micro-benchmarks are framework-independent).
    CalibrationScope scope;
    scope.gpus = {out.gpu};
    for (int i = 0; i < kDTypeCount; ++i)
        if (o.gemm_efficiency[i]) scope.factors.push_back(out.gpu + " gemm_efficiency." + std::string(dtype_name(DType(i))));
    for (const auto& scalar : calibration_scalars(o))
        if (*scalar.value) scope.factors.push_back(out.gpu + " " + std::string(scalar.key));
    spec.fitted_on = scope;
    if (d.lines.empty()) return Error{"measurements", "no GEMM, memory, attention or collective figure to calibrate with"};

    JsonWriter calibration(2);
    write_calibration(calibration, spec);
    out.json = calibration.take() + "\n";
    JsonWriter report(2);
    report.begin_object();
    report.field("schema", "trainclock/calibrate-microbenchmarks/v1").field("gpu", out.gpu).field("node", out.node);
    report.key("derivation").begin_array();
    for (const auto& line : d.lines) report.value(line);
    report.end_array().key("warnings").begin_array();
    for (const auto& line : d.warnings) report.value(line);
    report.end_array().key("calibration");
    write_calibration(report, spec);
    report.end_object();
    out.report_json = report.take() + "\n";
    out.derivation = std::move(d.lines);
    out.warnings = std::move(d.warnings);
    return out;
}

}  // namespace trainclock
