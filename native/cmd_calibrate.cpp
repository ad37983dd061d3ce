// `trainclock calibrate`: fit the per-GPU factors a user's measured runs constrain (issue 11 item 3)
// and write the calibration JSON that predict, compare, search and validate read (--calibration).
#include <algorithm>
#include <fstream>
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/validation/fit.hpp"

namespace trainclock::cli {
namespace {

void print_report(const ValidationSuite& suite, const CalibrateReport& r, const std::string& file) {
    std::cout << "trainclock calibrate: " << r.cases.size() << " measured runs from " << file << "\n\n";
    TextTable factors({"gpu", "factor", "multiplier", "sensitivity"});
    for (size_t j = 0; j < r.parameters.size(); ++j) {
        if (!r.fit.fitted[j]) continue;
        factors.add({r.parameters[j].gpu, r.parameters[j].name, "x " + format_fixed(r.fit.multipliers[j], 3),
                     format_fixed(r.fit.sensitivity[j], 3)});
    }
    std::cout << "Fitted (multiplier on the shipped value; sensitivity = mean |d log time / d log factor|)\n"
              << factors.render("  ") << "\n";
    if (!r.refused.empty()) {
        std::cout << "Not fitted\n";
        for (const auto& line : r.refused) std::cout << "  " << line << "\n";
        std::cout << "\n";
    }
    TextTable runs({"run", "gpu", "GPUs", "precision", "shipped", "calibrated", "leave-one-out"});
    for (const auto& c : r.cases) {
        const ValidationCase& v = suite.cases[c.index];
        runs.add({v.id, v.config.gpu.name, std::to_string(v.config.num_gpus), v.config.precision.name, format_signed_percent(c.before),
                  format_signed_percent(c.after), format_signed_percent(c.leave_one_out)});
    }
    std::cout << "Error per run (predicted vs measured)\n" << runs.render("  ") << "\n";
    std::cout << "MAPE: shipped " << format_percent(r.mape_before) << ", calibrated " << format_percent(r.mape_after)
              << " (in-sample), leave-one-out " << format_percent(r.mape_leave_one_out) << "\n";
}

int write_out(const Args& args, const std::string& json) {
    const auto out = args.value("--out");
    if (!out) return kExitOk;
    std::ofstream file(*out);
    if (!(file << json)) return report_error({"--out", "cannot write '" + *out + "'"});
    return kExitOk;
}

void print_written(const Args& args, const std::string& json) {
    if (const auto out = args.value("--out")) {
        std::cout << "Calibration written to " << *out << " (trainclock predict|compare|search|validate --calibration " << *out << ")\n";
    } else {
        std::cout << "Calibration (--out FILE writes it):\n" << json;
    }
}

// tools/measure_gpu.py's micro-benchmarks: efficiencies against the GPU and node presets' peaks.
int run_microbenchmarks(const Args& args, const std::string& text, const std::string& file) {
    if (args.has("--framework")) return report_error({"--framework", "micro-benchmarks are framework-independent: drop it"});
    auto measured = calibration_from_microbenchmarks(text, args.value("--gpu").value_or(""), args.value("--node").value_or(""));
    if (!measured) return report_error({file + ": " + measured.error().key, measured.error().message});
    const MeasuredCalibration& m = measured.value();
    for (const auto& line : m.warnings) std::cerr << "trainclock: warning: " << line << "\n";
    if (const int rc = write_out(args, m.json); rc != kExitOk) return rc;
    if (args.has("--json")) {
        std::cout << m.report_json;
        return kExitOk;
    }
    std::cout << "trainclock calibrate: micro-benchmarks from " << file << " (" << m.gpu << " on " << m.node << "; applies to every run on "
              << m.gpu << ")\n\n";
    for (const auto& line : m.derivation) std::cout << "  " << line << "\n";
    std::cout << "\n";
    print_written(args, m.json);
    return kExitOk;
}

// Only the runs of one framework (calibrate --framework ID; "none": runs of framework none).
ValidationSuite runs_of_framework(const ValidationSuite& suite, const std::string& framework) {
    ValidationSuite out;
    for (const ValidationCase& c : suite.cases)
        if (c.config.framework.name == (framework == "none" ? "" : framework)) out.cases.push_back(c);
    return out;
}

// Which (GPU, framework) stacks the calibration is fitted on, for the report's first line.
std::string scope(const ValidationSuite& suite) {
    std::vector<std::string> stacks;
    for (const ValidationCase& c : suite.cases) {
        const std::string s = c.config.gpu.name + " / " + (c.config.framework.name.empty() ? "none" : c.config.framework.name);
        if (std::find(stacks.begin(), stacks.end(), s) == stacks.end()) stacks.push_back(s);
    }
    std::string text;
    for (const auto& s : stacks) text += (text.empty() ? "" : ", ") + s;
    return text;
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    const auto path = args.value("--measurements");
    if (!path) return report_error({"--measurements", "missing: a file of measured runs in the presets/validation case format"});
    auto text = read_text_file(*path);
    if (!text) return report_error(text.error());
    if (is_microbenchmark_file(text.value())) return run_microbenchmarks(args, text.value(), *path);
    if (args.has("--gpu") || args.has("--node"))
        return report_error({"--gpu", "only for micro-benchmark files (measure_gpu.py): runs name their GPU"});
    const std::string& file = *path;  // "-" stays "-" in messages (the spelling the user gave)
    auto parsed = parse_measurements(text.value(), file);
    if (!parsed) return report_error(parsed.error());
    const auto framework = args.value("--framework");
    const ValidationSuite suite = framework ? runs_of_framework(parsed.value(), *framework) : parsed.value();
    if (framework && suite.cases.empty())
        return report_error({"--framework", "no run in " + *path + " uses framework '" + *framework + "'"});
    auto report = calibrate(suite);
    if (!report) return report_error({file + ": " + report.error().key, report.error().message});
    const std::string json = calibration_json(report.value().calibration) + "\n";
    if (const int rc = write_out(args, json); rc != kExitOk) return rc;
    if (args.has("--json")) {
        std::cout << calibrate_report_json(suite, report.value()) << "\n";
        return kExitOk;
    }
    print_report(suite, report.value(), *path);
    std::cout << "Fitted on (GPU / framework): " << scope(suite) << "; pass the calibration with runs of these stacks only.\n";
    print_written(args, json);
    return kExitOk;
}

const CommandRegistrar registrar({
    "calibrate",
    "fit the per-GPU factors your measured runs constrain; write a calibration",
    "trainclock calibrate --measurements FILE [--framework ID] [--gpu ID] [--node ID] [--out CALIBRATION.json] [--json]",
    "Reads measured runs in the presets/validation case format (a file with \"cases\": each a config/v1\n"
    "object, the measured iteration time or throughput, a citation) and fits, per GPU, the bounded factors\n"
    "they constrain: GEMM efficiency of each dtype run, fused attention, memory-bound kernels, the intra-\n"
    "and inter-node links used, and the fixed costs per kernel, dispatch and step. A factor whose effect\n"
    "on the runs is negligible is not fitted (listed with its sensitivity), nor more factors than runs.\n"
    "Prints the error per run before and after, and leave-one-out (each run predicted by a fit without it).\n"
    "The calibration holds a section per GPU (\"gpus\": {GPU: {...}}) and is read by --calibration; the runs\n"
    "of one GPU must share a framework (--framework ID picks one stack), and the calibration is meant for runs\n"
    "of the stacks it was fitted on (named in the report).\n"
    "A micro-benchmark file of tools/measure_gpu.py (schema trainclock/measurements/v1) is read instead as\n"
    "measured efficiencies: best GEMM TFLOP/s per dtype, copy bandwidth, SDPA attention and NCCL bus\n"
    "bandwidth intra/inter node, each over the GPU (--gpu, else the file's) and node (--node, else the GPU's\n"
    "default node) presets' peaks; it applies to every run on that GPU.",
    {{"--measurements", "FILE", "measured runs (presets/validation case format; - = stdin)"},
     {"--framework", "ID", "fit only the runs of this framework (one stack per GPU; a run that names no framework runs megatron-core)"},
     {"--gpu", "ID", "micro-benchmarks: the GPU preset measured (default: the file's \"gpu\")"},
     {"--node", "ID", "micro-benchmarks: the node preset (default: the GPU's default node)"},
     {"--out", "FILE", "write the calibration JSON there"},
     {"--json", "", "print the report as JSON (schema trainclock/calibrate/v1)"}},
    false,
    run,
});

}  // namespace
}  // namespace trainclock::cli
