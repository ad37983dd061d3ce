// `trainclock validate`: accuracy against the published measurements in presets/validation
// (issue 3): error per case, MAPE per set, source, precision and GPU generation, and the error of
// predicted precision speed-ups; --precision-blind gives the static-graph baseline.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>

#include "cli_common.hpp"
#include "trainclock/validation/components.hpp"
#include "trainclock/validation/fit.hpp"
#include "trainclock/validation/validation.hpp"

namespace trainclock::cli {
namespace {

// A time error as "+3.1 % slow" / "-2.0 % fast" (predicted step time vs measured), whatever the metric.
std::string time_bias(double time_error) {
    return format_signed_percent(time_error) + (time_error > 0 ? " slow" : time_error < 0 ? " fast" : "");
}

std::string group_table(const ValidationReport& report, std::string_view kind, std::string_view unit) {
    const bool pairs = kind == "pairs";  // a speed-up's error: > 0 predicted too large a speed-up
    TextTable table({std::string(kind), std::string(unit), "MAPE", pairs ? "bias (speed-up)" : "bias (time)", "max"});
    for (const auto& g : report.groups) {
        if (g.kind != kind) continue;
        table.add({g.name, std::to_string(g.count), format_percent(g.mape),
                   pairs ? format_signed_percent(g.bias) + (g.bias > 0   ? " high"
                                                            : g.bias < 0 ? " low"
                                                                         : "")
                         : time_bias(g.bias),
                   format_percent(g.max_ape)});
    }
    return table.render("  ");
}

std::string value_text(MeasuredMetric metric, double value) {
    switch (metric) {
    case MeasuredMetric::iteration_time_s: return format_seconds(value);
    case MeasuredMetric::tokens_per_s: return format_si(value, "tok/s");
    case MeasuredMetric::tokens_per_s_per_gpu: return format_si(value, "tok/s/GPU");
    case MeasuredMetric::samples_per_s: return format_si(value, "seq/s");
    case MeasuredMetric::peak_memory_gib: return format_fixed(value, 2) + " GiB";
    }
    return format_fixed(value, 3);
}

// The cases of a report, worst first (`worst` of them; 0 = all).
void print_cases(const ValidationSuite& suite, const ValidationReport& report, int64_t worst, std::string_view title) {
    std::vector<CaseResult> sorted = report.cases;
    std::stable_sort(sorted.begin(), sorted.end(), [](const CaseResult& a, const CaseResult& b) { return a.ape > b.ape; });
    if (worst > 0 && int64_t(sorted.size()) > worst) sorted.resize(size_t(worst));
    TextTable table({"case", "source", "gpu", "GPUs", "precision", "measured", "predicted", "time error", "fits"});
    for (const CaseResult& r : sorted) {
        const ValidationCase& c = suite.cases[r.case_index];
        table.add({c.id, c.file, c.config.gpu.name, std::to_string(c.config.num_gpus), c.config.precision.name,
                   value_text(c.metric, c.measured), value_text(c.metric, r.predicted), time_bias(r.time_error), r.fits ? "yes" : "no"});
    }
    std::cout << title << (worst > 0 ? " (top " + std::to_string(sorted.size()) + "; --worst 0 for all)" : "") << "\n"
              << table.render("  ");
}

void print_report(const ValidationSuite& suite, const ValidationReport& report, int64_t worst) {
    const GroupError* all = report.find("set", "all");
    std::cout << "trainclock validate: " << (all ? all->count : 0) << " published measurements, " << report.pairs.size()
              << " precision pairs" << (report.precision_blind ? "  [precision-blind baseline]" : "  [precision-aware]") << "\n\n";
    std::cout << "bias (time): mean error of the predicted step time, '+ slow' = predicted slower than measured,\n"
                 "'- fast' = faster, also for cases measured as throughput\n\n";
    std::cout << "MAPE by set (public = llm_public + precision_public rows; public-2 = the second batch; in_pairs = cases\n"
                 "of a precision pair; memory = peak-memory cases, not in the other sets)\n"
              << group_table(report, "set", "cases") << "\n";
    std::cout << "MAPE by source\n" << group_table(report, "source", "cases") << "\n";
    std::cout << "MAPE by precision\n" << group_table(report, "precision", "cases") << "\n";
    std::cout << "MAPE by GPU generation\n" << group_table(report, "gpu_generation", "cases") << "\n";
    std::cout << "Precision speed-ups (iteration time of the wider / the narrower precision, same config)\n"
              << group_table(report, "pairs", "pairs") << "\n";
    if (report.find("set", "memory"))
        std::cout << "Peak memory per GPU (memory cases, by source; not in the time MAPE above)\n"
                  << group_table(report, "memory", "cases") << "\n";

    print_cases(suite, report, worst, "Cases, worst first");
}

// In-sample (shipped constants), refitted on every family, and cross-source MAPE side by side.
std::string comparison_table(const CrossSourceReport& r, std::string_view kind, std::string_view unit) {
    TextTable table({std::string(kind), std::string(unit), "in-sample", "refit (all)", "cross-source", "bias (cross)"});
    for (const auto& g : r.cross_source.groups) {
        if (g.kind != kind) continue;
        const GroupError* in = r.in_sample.find(kind, g.name);
        const GroupError* refit = r.refit.find(kind, g.name);
        table.add({g.name, std::to_string(g.count), in ? format_percent(in->mape) : "-", refit ? format_percent(refit->mape) : "-",
                   format_percent(g.mape), format_signed_percent(g.bias)});
    }
    return table.render("  ");
}

void print_cross_source(const CrossSourceReport& r) {
    std::cout << "trainclock validate --cross-source: every fitted constant (validate --refit) refitted " << r.families.size()
              << " times,\neach time without one source family, which is then scored "
                 "(leave-one-source-out)\n\n";
    std::cout << "MAPE by set\n" << comparison_table(r, "set", "cases") << "\n";
    std::cout << "MAPE by source (cross-source: the family of the file was left out of the fit)\n"
              << comparison_table(r, "source", "cases") << "\n";
    std::cout << "MAPE by precision\n" << comparison_table(r, "precision", "cases") << "\n";
    std::cout << "MAPE by GPU generation\n" << comparison_table(r, "gpu_generation", "cases") << "\n";
    std::cout << "Precision speed-ups\n" << comparison_table(r, "pairs", "pairs") << "\n";
}

// Coverage of the 80 % likely range (intervals.hpp): each case against the table of every family
// (cross-source) and against the table built without its own family, widened (held-out family).
void print_coverage(const IntervalCoverage& coverage) {
    const CoverageGroup* all = coverage.find(coverage.cross_source, "all", "all");
    const CoverageGroup* held = coverage.find(coverage.held_out, "all", "all");
    if (!all) return;
    std::cout << "Likely range (80 %): cross-source coverage " << format_percent(all->coverage) << " of " << all->cases << " cases ("
              << format_percent(all->by_family) << " with each source family one witness), median width "
              << format_percent(all->median_width) << " of the estimate\n";
    if (held)
        std::cout << "held-out family (the table rebuilt without the case's family, widened by the distance to its evidence): "
                  << format_percent(held->coverage) << " of the cases, " << format_percent(held->by_family)
                  << " with each family one witness, median width " << format_percent(held->median_width) << "\n";
    std::cout << "(cross-source: each case predicted at the constants fitted without its family, against the shipped\n"
                 "table; the point estimate is always inside its range, which is built around it: low <= 1 <= high)\n\n";
    for (const char* kind : {"group", "family"}) {
        TextTable table({kind, "cases", "bias (median)", "coverage", "median width", "held-out coverage", "held-out width"});
        for (const CoverageGroup& g : coverage.cross_source) {
            if (g.kind != kind) continue;
            const CoverageGroup* h = coverage.find(coverage.held_out, kind, g.name);
            table.add({g.name, std::to_string(g.cases), time_bias(-g.bias / (1.0 + g.bias)), format_percent(g.coverage),
                       format_percent(g.median_width), h ? format_percent(h->coverage) : "-", h ? format_percent(h->median_width) : "-"});
        }
        std::cout << "Coverage by " << (std::string_view(kind) == "group" ? "interval group (the row that answers)" : "source family")
                  << "\n"
                  << table.render("  ") << "\n";
    }
}

void print_refit_table(const CrossSourceReport& r) {
    const std::vector<FittedConstant> table = fitted_constants();
    TextTable out({"constant", "shipped", "bounds", "refit (all)", "sensitivity", "unit", "source"});
    for (size_t j = 0; j < table.size(); ++j) {
        const FittedConstant& c = table[j];
        const double m = r.all_fit.multipliers[j];
        auto value = [](double v) { return v < 1e-2 ? format_seconds(v) : format_fixed(v, 3); };
        out.add({c.parameter.name, value(c.shipped), value(c.shipped * c.parameter.lo) + " .. " + value(c.shipped * c.parameter.hi),
                 r.all_fit.fitted[j] ? value(c.shipped * m) : "(not constrained)", format_fixed(r.all_fit.sensitivity[j], 3), c.unit,
                 c.source});
    }
    std::cout << "Fitted constants (table: presets/tables/constants.json; data set: " << table.front().data_set
              << "; refit: " << table.front().refit_command << ")\n"
              << out.render("  ") << "\n"
              << "Fit objective (weighted mean |log(predicted / measured)|, a file of n cases weighs sqrt(n)): "
              << format_percent(r.all_fit.error_before) << " shipped -> " << format_percent(r.all_fit.error_after) << " refit ("
              << r.all_fit.predictions << " predictions)\n"
              << "The shipped values stay in the table until a physics change moves them; this refit is what\n"
              << "--cross-source does with one family left out.\n\n";
    // Each fold's refit: a constant that moves (or hits a bound) when one family is left out is one
    // that family pulls away from the rest, the sign of a physics term missing for it or for them.
    std::vector<std::string> header{"refit without"};
    for (const FittedConstant& c : table) header.push_back(c.parameter.name);
    TextTable folds(header);
    for (size_t f = 0; f < r.families.size(); ++f) {
        std::vector<std::string> cells{r.families[f]};
        for (size_t j = 0; j < table.size(); ++j) {
            const FitParameter& p = table[j].parameter;
            const double m = r.fold_fits[f].multipliers[j];
            const char* bound = m <= p.lo * (1 + 1e-6) ? " (lo)" : m >= p.hi * (1 - 1e-6) ? " (hi)" : "";
            cells.push_back(r.fold_fits[f].fitted[j] ? format_fixed(m, 3) + bound : "-");
        }
        folds.add(cells);
    }
    std::cout << "Refit multipliers (x shipped) with one source family left out (- = not constrained; lo/hi = at a bound)\n"
              << folds.render("  ");
}

// validate --components: MAPE per component and per source file of the microbenchmark rows.
int run_components_command(const Args& args) {
    for (const char* other : {"--cross-source", "--refit", "--write-intervals", "--calibration", "--precision-blind", "--source"})
        if (args.has(other))
            return report_error({"--components", std::string("scores the component microbenchmarks alone: not with ") + other});
    int64_t worst = 20;
    if (const auto n = args.value("--worst")) {
        char* end = nullptr;
        worst = std::strtoll(n->c_str(), &end, 10);
        if (n->empty() || *end != '\0' || worst < 0) return report_error({"--worst", "expected a count >= 0, got '" + *n + "'"});
    }
    const ComponentSuite suite = load_component_suite();
    const ComponentsReport report = run_components(suite);
    if (args.has("--json")) {
        std::cout << components_report_json(suite, report) << "\n";
    } else {
        std::cout << "trainclock validate --components: " << report.cases.size() << " published microbenchmarks predicted with the\n"
                  << "cost model's own component functions (presets/validation/components; " << report.skipped.size()
                  << " rows not predictable, " << report.unrepresentable << " unrepresentable)\n\n"
                  << "bias: mean signed error of the predicted value in the row's metric (time or throughput)\n\n";
        TextTable components({"component", "cases", "MAPE", "bias"});
        for (const ComponentGroup& g : report.components)
            components.add(
                {g.component, std::to_string(g.cases), format_percent(g.mape_pct / 100), format_signed_percent(g.bias_pct / 100)});
        std::cout << "MAPE by component\n" << components.render("  ") << "\n";
        TextTable sources({"source", "component", "cases", "MAPE", "bias"});
        for (const ComponentGroup& g : report.sources)
            sources.add({g.source, g.component, std::to_string(g.cases), format_percent(g.mape_pct / 100),
                         format_signed_percent(g.bias_pct / 100)});
        std::cout << "MAPE by source\n" << sources.render("  ");
        std::vector<ComponentCase> sorted = report.cases;
        std::stable_sort(sorted.begin(), sorted.end(), [](const ComponentCase& a, const ComponentCase& b) { return a.ape > b.ape; });
        if (worst > 0 && int64_t(sorted.size()) > worst) sorted.resize(size_t(worst));
        TextTable cases({"row", "component", "gpu", "metric", "measured", "predicted", "error"});
        for (const ComponentCase& c : sorted) {
            const ComponentRow& row = suite.rows[c.row];
            cases.add({row.id, row.component, row.gpu, row.metric, format_fixed(row.value, 3), format_fixed(c.predicted, 3),
                       format_signed_percent((c.predicted - row.value) / row.value)});
        }
        std::cout << "\nRows, worst first" << (worst > 0 ? " (top " + std::to_string(sorted.size()) + "; --worst 0 for all)" : "") << "\n"
                  << cases.render("  ");
    }
    for (const std::string& issue : suite.issues) std::cerr << "trainclock: component row skipped: " << issue << "\n";
    return suite.issues.empty() ? kExitOk : kExitInternal;
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    if (args.has("--components")) return run_components_command(args);
    ValidationOptions options;
    options.precision_blind = args.has("--precision-blind");
    if (const auto prefix = args.value("--source")) options.source_prefix = *prefix;
    if (const auto path = args.value("--calibration")) {
        const bool inline_json = path->rfind('{', 0) == 0;  // like predict: a file or inline JSON
        auto text = inline_json ? Result<std::string>(*path) : read_text_file(*path);
        if (!text) return report_error(text.error());
        auto calibration = parse_calibration_json(text.value());
        if (!calibration) {
            const Error& e = calibration.error();
            const std::string where = inline_json ? "--calibration" : *path;
            return report_error({where + (e.key.empty() ? "" : ": " + e.key), e.message});
        }
        options.calibration = calibration.value();
    }
    int64_t worst = 20;
    if (const auto n = args.value("--worst")) {
        char* end = nullptr;
        const long long parsed = std::strtoll(n->c_str(), &end, 10);
        if (n->empty() || *end != '\0' || parsed < 0) return report_error({"--worst", "expected a count >= 0, got '" + *n + "'"});
        worst = parsed;
    }

    const ValidationSuite suite = load_validation_suite();
    if (args.has("--write-intervals") && !args.has("--cross-source"))
        return report_error({"--write-intervals", "needs --cross-source (the intervals come from its residuals)"});
    if (args.has("--cross-source") || args.has("--refit")) {
        if (options.calibration || options.precision_blind || !options.source_prefix.empty())
            return report_error(
                {"--cross-source", "refits the shipped constants on every source: not with --calibration, --precision-blind or --source"});
        const CrossSourceReport cross = run_cross_source(suite);
        // The interval table of this refit and the coverage of its 80 % range (intervals.hpp).
        const std::vector<IntervalResidual> residuals = cross_source_residuals(suite, cross);
        const IntervalTable intervals = interval_table(residuals);
        const std::optional<IntervalCoverage> coverage =
            args.has("--cross-source") ? std::optional(interval_coverage(residuals, intervals)) : std::nullopt;
        if (args.has("--json")) {
            std::cout << cross_source_report_json(cross, coverage ? &*coverage : nullptr) << "\n";
        } else {
            if (args.has("--refit")) print_refit_table(cross);
            if (args.has("--cross-source")) {
                print_cross_source(cross);
                print_coverage(*coverage);
            }
            // --worst N: the cases at the constants fitted without their own family, worst first.
            if (args.has("--cross-source") && args.has("--worst"))
                print_cases(suite, cross.cross_source, worst,
                            "\nCases cross-source (constants fitted without the case's family), worst first");
        }
        if (const auto out = args.value("--write-intervals")) {
            const std::string json = interval_table_json(intervals);
            std::ofstream file(*out);
            if (!(file << json)) return report_error({"--write-intervals", "cannot write '" + *out + "'"});
            std::cout << "Prediction intervals written to " << *out << "\n";
        }
        for (const auto& issue : suite.issues) std::cerr << "trainclock: validation case skipped: " << issue.to_string() << "\n";
        return suite.issues.empty() ? kExitOk : kExitInternal;
    }
    const ValidationReport report = run_validation(suite, options);
    if (report.cases.empty()) { return report_error({"--source", "no validation case matches '" + options.source_prefix + "'"}); }
    if (args.has("--json")) {
        std::cout << validation_report_json(suite, report) << "\n";
    } else {
        print_report(suite, report, worst);
    }
    // Unusable cases never stop the run; they are listed and make the exit status 1.
    for (const auto& issue : suite.issues) std::cerr << "trainclock: validation case skipped: " << issue.to_string() << "\n";
    return suite.issues.empty() ? kExitOk : kExitInternal;
}

const CommandRegistrar registrar({
    "validate",
    "accuracy against published measurements (MAPE per source, precision, GPU)",
    "trainclock validate [--json] [--precision-blind] [--source PREFIX] [--calibration FILE|JSON] [--worst N]\n"
    "       trainclock validate [--cross-source [--write-intervals FILE] [--worst N]] [--refit]\n"
    "       trainclock validate --components [--json] [--worst N]",
    "Predicts every published measurement embedded from presets/validation (each a full config plus the\n"
    "measured iteration time or throughput, with its citation) and prints the absolute percentage error\n"
    "per case and the MAPE over the public set (llm_public + precision_public rows), the second batch\n"
    "(public-2: llm_public_2 + precision_public_2), peak-memory cases apart, vTrain's ground truth\n"
    "and all cases, per source, per precision, per GPU generation, and for precision speed-ups (pairs of\n"
    "cases identical except for the precision). --precision-blind costs every op at one reference dtype\n"
    "(the static-graph baseline). Cases that cannot be used are listed on stderr (exit status 1).",
    {{"--json", "", "print the report as JSON (schema trainclock/validation/v1)"},
     {"--precision-blind", "", "the static-graph baseline: every op at one reference dtype"},
     {"--source", "PREFIX", "only cases whose id or source file starts with PREFIX (MEG21, PT-BERT, vtrain, ...)"},
     {"--calibration", "FILE|JSON",
      "calibration overrides (the config's \"calibration\" keys; \"gpus\": {GPU: {...}} per GPU) for every case"},
     {"--worst", "N", "how many cases to list, worst first (default 20, 0 = all; with --cross-source: its cases, listed only when given)"},
     {"--cross-source", "",
      "refit every fitted constant without each source family and score that family (leave-one-source-out), beside the in-sample MAPE"},
     {"--write-intervals", "FILE", "with --cross-source: write the prediction-interval table (presets/intervals/cross-source.json)"},
     {"--components", "",
      "score the cost model's component functions (collective, GEMM, grouped GEMM, attention, memory) on the published microbenchmarks of "
      "presets/validation/components"},
     {"--refit", "", "print the table of fitted constants (shipped value, bounds, data set) and their refit on every source"}},
    false,
    run,
});

}  // namespace
}  // namespace trainclock::cli
