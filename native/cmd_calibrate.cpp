// `trainclock calibrate`: fit the per-GPU factors a user's measured runs constrain (issue 11 item 3)
// and write the calibration JSON that predict, compare, search and validate read (--calibration).
#include <fstream>
#include <iostream>

#include "cli_common.hpp"
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

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    const auto path = args.value("--measurements");
    if (!path) return report_error({"--measurements", "missing: a file of measured runs in the presets/validation case format"});
    auto text = read_text_file(*path);
    if (!text) return report_error(text.error());
    auto parsed = parse_measurements(text.value());
    if (!parsed) return report_error({*path, parsed.error().message});
    const ValidationSuite& suite = parsed.value();
    auto report = calibrate(suite);
    if (!report) return report_error({*path + ": " + report.error().key, report.error().message});
    const std::string json = calibration_json(report.value().calibration);
    if (const auto out = args.value("--out")) {
        std::ofstream file(*out);
        if (!(file << json << "\n")) return report_error({"--out", "cannot write '" + *out + "'"});
    }
    if (args.has("--json")) {
        std::cout << calibrate_report_json(suite, report.value()) << "\n";
    } else {
        print_report(suite, report.value(), *path);
        if (const auto out = args.value("--out")) {
            std::cout << "Calibration written to " << *out << " (trainclock predict|compare|search|validate --calibration " << *out
                      << ")\n";
        } else {
            std::cout << "Calibration (--out FILE writes it):\n" << json << "\n";
        }
    }
    return kExitOk;
}

const CommandRegistrar registrar({
    "calibrate",
    "fit the per-GPU factors your measured runs constrain; write a calibration",
    "trainclock calibrate --measurements FILE [--out CALIBRATION.json] [--json]",
    "Reads measured runs in the presets/validation case format (a file with \"cases\": each a config/v1\n"
    "object, the measured iteration time or throughput, a citation) and fits, per GPU, the bounded factors\n"
    "they constrain: GEMM efficiency of each dtype run, fused attention, memory-bound kernels, the intra-\n"
    "and inter-node links used, and the fixed costs per kernel, dispatch and step. A factor whose effect\n"
    "on the runs is negligible is not fitted (listed with its sensitivity), nor more factors than runs.\n"
    "Prints the error per run before and after, and leave-one-out (each run predicted by a fit without it).\n"
    "The calibration holds a section per GPU (\"gpus\": {GPU: {...}}) and is read by --calibration.",
    {{"--measurements", "FILE", "measured runs (presets/validation case format; - = stdin)"},
     {"--out", "FILE", "write the calibration JSON there"},
     {"--json", "", "print the report as JSON (schema trainclock/calibrate/v1)"}},
    false,
    run,
});

}  // namespace
}  // namespace trainclock::cli
