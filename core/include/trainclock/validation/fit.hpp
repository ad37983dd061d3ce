// trainclock: bounded fits of the cost model's calibration factors to measured runs (issue 9 items
// 5-6, issue 11 item 3). The refit rows of the constants table (fitted_constants), a deterministic
// fitter (Gauss-Newton on log errors, robust Huber loss by reweighted least squares, box bounds), the
// leave-one-source-out refit that `trainclock validate --cross-source` reports, prediction
// intervals from its residuals, and `trainclock calibrate` (per-GPU factors from a user's runs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/catalogue/intervals.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/validation/validation.hpp"

namespace trainclock {

// One fitted factor: a multiplier on the shipped value (1 = as shipped), within [lo, hi]; the
// scaled value is the case's override (fractions capped at 1).
struct FitParameter {
    std::string name;  // "gemm_sustained", "gemm_efficiency.bf16", ...
    FitKnob knob = FitKnob::gemm;
    int dtype = -1;             // gemm: one DType, -1 = every tensor-core dtype (gemm_sustained: not fp32)
    int attention_kernel = -1;  // attention: only cases with this AttentionKernel (-1 = every case)
    std::string gpu;            // only cases on this GPU preset ("" = every GPU)
    int fp8_gpus = -1;          // 1: only GPUs with FP8 units, 0: only GPUs without (-1 = every GPU)
    double lo = 0.5, hi = 2.0;  // bounds of the multiplier
};

// A refit constant: a row of presets/tables/constants.json with a refit knob (its own multiplier).
struct FittedConstant {
    FitParameter parameter;     // its multiplier (FitKnob in calibration.hpp), bounds relative to `shipped`
    double shipped = 0;         // the table's value
    std::string unit;           // "fraction of ...", "s"
    std::string source;         // the table's source: the citation, or the data set it was fitted on
    std::string data_set;       // the measurements the refit fits it on
    std::string refit_command;  // the command that refits it
};
// The refit rows of the constants table, in its order (rows refit with another's multiplier are
// named in that one's unit).
std::vector<FittedConstant> fitted_constants();

struct FitOptions {
    int iterations = 4;               // Gauss-Newton steps (each: 1 + parameters evaluations of every case)
    double prior = 0.0;               // ridge pulling each log-multiplier toward 0 (shipped), per unit of total case weight
    double min_sensitivity = 0.01;    // mean |d log prediction / d log multiplier| below this: not constrained, not fitted
    bool equal_source_weight = true;  // a file of n cases weighs sqrt(n) in total (else each case 1)
    int64_t max_fitted = 0;           // fit at most this many factors, the most sensitive first (0 = no limit)
    std::vector<double> start;        // initial multipliers (empty = shipped): a warm start for refits
    std::vector<bool> candidates;     // factors that may be fitted (empty = all)
};

struct FitResult {
    std::vector<double> multipliers;  // per parameter (1 = shipped)
    std::vector<double> sensitivity;  // mean |d log prediction / d log multiplier| over the training cases
    std::vector<bool> fitted;         // false: the cases do not constrain it (kept at 1)
    double error_before = 0;          // weighted mean |log(predicted / measured)| at the shipped values
    double error_after = 0;           // the same at the fitted multipliers
    int64_t predictions = 0;          // predictions the fit ran
};

// The cases of a suite prepared for fitting: configs and the shipped calibration of each.
class FitProblem {
public:
    FitProblem(const ValidationSuite& suite, std::vector<FitParameter> parameters);
    const std::vector<FitParameter>& parameters() const { return parameters_; }
    // Fit the multipliers on the suite cases `train` (indices into the suite; time metrics only).
    FitResult fit(const std::vector<size_t>& train, const FitOptions& options = {}) const;
    // log(predicted / measured) of case `index` at the multipliers (one prediction).
    double log_error(size_t index, const std::vector<double>& multipliers) const;
    // Apply multipliers to case `index`'s config (the configure hook of ValidationOptions).
    void apply(size_t index, const std::vector<double>& multipliers, Config& config) const;
    // The multipliers as a calibration: a section per GPU of the cases, absolute values resolved on
    // that GPU (only the fields a multiplier != 1 changes).
    CalibrationSpec calibration(const std::vector<double>& multipliers) const;
    // Remember every log_error from now on (refits from one start repeat most predictions, as the
    // leave-one-out refits of calibrate do); the problem is then not for concurrent use.
    void memoize() { memoize_ = true; }

private:
    const ValidationSuite& suite_;
    std::vector<FitParameter> parameters_;
    std::vector<Calibration> base_;        // per case: the calibration it predicts with today
    mutable std::vector<Config> scratch_;  // per case: its config, which log_error extends and restores (not for concurrent use)
    bool memoize_ = false;
    mutable std::map<std::pair<size_t, std::vector<double>>, double> memo_;  // (case, multipliers) -> log error
};

// Source family of a validation file (the unit left out by the cross-source refit): files of one
// cluster, stack and team form one family ("vtrain-single" and "vtrain-multi" -> "vtrain").
std::string source_family(std::string_view file);

// The cases the fits use: the time metrics of the sets constants.hpp kFitSets names.
std::vector<size_t> fit_cases(const ValidationSuite& suite);

struct CrossSourceReport {
    std::vector<std::string> families;  // folds, in order
    std::vector<FitResult> fold_fits;   // per family: fitted on every other family
    FitResult all_fit;                  // fitted on every family (the refit table)
    ValidationReport in_sample;         // shipped constants
    ValidationReport refit;             // constants fitted on all families, scored in-sample
    ValidationReport cross_source;      // each case at the constants fitted without its family
};
// Leave-one-source-family-out over fitted_constants() (validate --cross-source).
CrossSourceReport run_cross_source(const ValidationSuite& suite, const FitOptions& options = {});
// {"schema": "trainclock/cross-source/v1", "families", "constants": [{name, shipped, refit, fitted,
//  sensitivity}], "groups": [{kind, name, count, in_sample, refit, cross_source, bias}]}, and with a
// coverage "interval_coverage": {"cross_source"|"held_out": [{kind, name, cases, coverage, by_family, median_width, bias}]}
std::string cross_source_report_json(const CrossSourceReport& report, const IntervalCoverage* coverage = nullptr);

// [SECTION] Prediction intervals -----------------------------------------------------------------

// The residuals of a cross-source report (intervals.hpp): per case of the fits, measured /
// predicted time at the constants fitted without its family, with its groups, axes and family.
std::vector<IntervalResidual> cross_source_residuals(const ValidationSuite& suite, const CrossSourceReport& report);
// The interval table of those residuals (rows, widening calibrated on the folds, evidence).
IntervalTable cross_source_intervals(const ValidationSuite& suite, const CrossSourceReport& report);

// [SECTION] calibrate ----------------------------------------------------------------------------

struct CalibrateCase {
    size_t index = 0;          // into the measurements suite
    double before = 0;         // signed relative error at the shipped calibration
    double after = 0;          // at the fitted calibration (in-sample)
    double leave_one_out = 0;  // fitted without this case
};
struct CalibrateReport {
    std::vector<FitParameter> parameters;  // candidates
    FitResult fit;
    std::vector<std::string> refused;  // "gpu h100-sxm attention_efficiency: sensitivity 0.002 (not constrained)"
    std::vector<CalibrateCase> cases;
    double mape_before = 0, mape_after = 0, mape_leave_one_out = 0;
    CalibrationSpec calibration;  // per-GPU sections (calibration JSON)
};
// A user's measurements file (the presets/validation file format; its "name" need not match a file
// name): the cases, or the first unusable case or header as the error.
// `file` names the file in messages. Also a user's runs: a plain JSON array of {"config", "measured"}
// (or {"cases": [...]} without the validation header); id and citation are optional there.
Result<ValidationSuite> parse_measurements(std::string_view json, std::string_view file = "measurements.json");
// Fit the per-GPU factors the measured cases constrain (trainclock calibrate).
Result<CalibrateReport> calibrate(const ValidationSuite& measurements, const FitOptions& options = {});
std::string calibration_json(const CalibrationSpec& calibration);  // the JSON predict/validate read
std::string calibrate_report_json(const ValidationSuite& measurements, const CalibrateReport& report);

}  // namespace trainclock
