// `trainclock compare`: one config across every precision preset its GPU runs.
#include <charconv>
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/api/api.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/compare.hpp"

namespace trainclock::cli {
namespace {

std::string shortest(double value) {  // the shortest text that reads back to the same double
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    return std::string(buffer, end);
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    auto config = config_from_args(args);
    if (args.has("--json") && args.has("--csv")) return report_error({"--csv", "choose one of --json and --csv"});
    if (!config) return report_error(config.error());
    const Config& c = config.value();
    const PrecisionComparison comparison = compare_precisions(c);
    Config compared = c;  // every precision is a row: the calibration's precision scope is said below the table
    compared.precision.name.clear();
    if (args.has("--json")) {
        std::cout << compare_json(config_to_json(c)) << "\n";
        return kExitOk;
    }
    if (args.has("--csv")) {  // predict's columns after the speed-up; a precision that is invalid here is named on stderr
        std::cout << "speedup," << prediction_csv_header() << "\n";
        for (const PrecisionRow& row : comparison.rows) {
            if (row.error) {
                std::cerr << "trainclock: compare: " << row.config.precision.name << " left out: " << row.error->to_string() << "\n";
                continue;
            }
            std::cout << shortest(row.speedup) << "," << prediction_to_csv_row(row.prediction, row.config) << "\n";
        }
        return kExitOk;
    }
    std::cout << c.model.name << " on " << c.num_gpus << " x " << c.gpu.name << " (tp " << c.parallel.tp << ", pp " << c.parallel.pp
              << ", dp " << c.parallel.dp << "), " << c.training.global_batch << " x " << c.training.seq_len
              << " tokens per step, framework " << framework_text(c) << "; speed-up vs " << comparison.baseline << "\n"
              << calibration_lines(compared) << "\n";
    // With --tokens, the whole run's time and cost after MFU (issue 25 item 13), as predict prints them.
    const bool run_length = c.training.tokens > 0;
    std::vector<std::string> header = {"precision", "gemm",      "step",        "speed-up", "tokens/s",  "MFU",  "mem/GPU", "fits",
                                       "gemm",      "attention", "elementwise", "prec.ovh", "optimizer", "comm", "bubble",  "overhead"};
    if (run_length) header.insert(header.begin() + 6, {"total", "cost"});
    TextTable table(header);
    for (const PrecisionRow& row : comparison.rows) {
        const std::string name = row.config.precision.name;
        const std::string gemm(dtype_name(row.config.precision.gemm));
        if (row.error) {
            table.add({name, gemm, "invalid: " + row.error->to_string()});
            continue;
        }
        const Prediction& r = row.prediction;
        const StepBreakdown& b = r.breakdown_s;
        std::vector<std::string> cells = {name,
                                          gemm,
                                          format_seconds(r.iteration_time_s),
                                          format_fixed(row.speedup, 2) + "x",
                                          format_count(r.tokens_per_s, ""),
                                          format_percent(r.mfu),
                                          format_fixed(r.memory.per_gpu_gib, 1) + " GiB",
                                          r.memory.fits ? "yes" : "NO",
                                          format_seconds(b[StepPart::gemm]),
                                          format_seconds(b[StepPart::attention]),
                                          format_seconds(b[StepPart::elementwise]),
                                          format_seconds(b[StepPart::precision_overhead]),
                                          format_seconds(b[StepPart::optimizer]),
                                          format_seconds(b.exposed_comm_s()),
                                          format_seconds(b[StepPart::pipeline_bubble]),
                                          format_seconds(b[StepPart::overhead])};
        if (run_length) cells.insert(cells.begin() + 6, {format_seconds(r.total_time_s), r.cost_known ? format_usd(r.cost_usd) : "n/a"});
        table.add(cells);
    }
    std::cout << table.render();
    if (const auto& scope = c.calibration.fitted_on; scope && !scope->precisions.empty()) {
        std::string fitted;
        for (const std::string& p : scope->precisions) fitted += (fitted.empty() ? "" : ", ") + p;
        std::cout << "\ncalibration fitted on precision " << fitted
                  << " only: the other rows are calibrated in part (their own GEMM efficiency as shipped), so their speed-ups mix "
                     "calibrated and shipped figures\n";
    }
    if (!comparison.unsupported.empty()) {
        std::cout << "\nnot supported by " << c.gpu.name << ":";
        for (const std::string& name : comparison.unsupported) std::cout << " " << name;
        std::cout << "\n";
    }
    std::cout << "\ncolumns after 'fits' are seconds per step by cause (comm = exposed tp+pp+dp+cp+ep)\n";
    return kExitOk;
}

const CommandRegistrar registrar({
    "compare",
    "the same config across every precision the GPU runs",
    "trainclock compare [config flags] [--json | --csv]",
    "One row per precision preset the GPU supports (fp32 ... nvfp4-mixed): step time, speed-up vs\n"
    "fp32 (or the slowest), throughput, MFU, memory and fit, and the step breakdown that explains it.\n"
    "--precision is ignored.",
    {{"--json", "", "print {baseline, rows: [{precision, gemm, speedup, result...}], unsupported}"},
     {"--csv", "", "print a CSV header and one row per precision (speedup, then predict --csv's columns)"}},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
