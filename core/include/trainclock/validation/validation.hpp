// trainclock: accuracy against published measurements of real training runs (issue 3).
// The cases live in presets/validation/*.json (embedded; format in presets/validation/README.md):
// each is a config/v1 object plus the measured metric. run_validation() predicts every case and
// reports absolute percentage errors, MAPE per group, and the error of predicted precision speed-ups.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {

// peak_memory_gib: per-GPU memory (what the source measured, its notes say: allocated or reserved);
// memory cases are scored apart (set and kind "memory"), never in the time MAPE.
enum class MeasuredMetric { iteration_time_s, tokens_per_s, tokens_per_s_per_gpu, samples_per_s, peak_memory_gib };
std::string_view measured_metric_name(MeasuredMetric metric);  // "iteration_time_s", ...

// One published measurement with the config that produced it.
struct ValidationCase {
    std::string file;  // preset file stem ("megatron-sc21"): the source family
    std::string
        set;  // "public" (headline set), "public-2" (second batch, own headline), "vtrain", or "unrepresentable" (runs the config cannot describe; reported apart)
    std::string id;    // row id of the source table ("MEG21-T1-001")
    int64_t line = 0;  // 1-based line of the case in its file
    Config config;     // loaded and validated (load_config)
    MeasuredMetric metric = MeasuredMetric::iteration_time_s;
    double measured = 0;  // value in the metric's unit
    std::string citation;
    std::string pair_key;  // source table + config JSON without "precision": equal keys = a precision pair
};

// A case or file that could not be used; reported, never fatal.
struct ValidationIssue {
    std::string file;               // "mosaic-llm-foundry.json"
    int64_t line = 0;               // 0 = the whole file
    int64_t case_index = -1;        // position in "cases" (-1 = the file itself)
    std::string id;                 // the case id when it could be read
    std::string message;            // one line naming the key at fault
    std::string to_string() const;  // "te-llama.json:9: case 3 (TE-LLAMA-002): config.parallel.tp: ..."
};

struct ValidationSuite {
    std::vector<ValidationCase> cases;
    std::vector<ValidationIssue> issues;
};

// Parse one validation file (file = its name for messages, json = its bytes) and append its cases
// and issues to `suite`. A bad case is reported by file, line, index and id; the others still load.
void parse_validation_file(std::string_view file, std::string_view json, ValidationSuite& suite);
// Every embedded presets/validation file.
ValidationSuite load_validation_suite();

// A calibration object (the keys of config "calibration", DESIGN.md 3) from a user file.
Result<CalibrationSpec> parse_calibration_json(std::string_view json);

struct ValidationOptions {
    std::string source_prefix;                   // keep cases whose id or file stem starts with this ("" = all)
    std::optional<CalibrationSpec> calibration;  // replaces every case's calibration (--calibration FILE)
    bool precision_blind = false;                // the static-graph baseline (calibration.precision_blind)
    // Applied to each case's config last (case index into the suite): fit.hpp's refitted factors.
    std::function<void(size_t case_index, Config& config)> configure;
};

struct CaseResult {
    size_t case_index = 0;    // into ValidationSuite::cases
    double predicted = 0;     // predicted value of the case's metric
    double ape = 0;           // |predicted - measured| / measured
    double signed_error = 0;  // (predicted - measured) / measured, in the case's metric
    double time_error = 0;    // the same error signed as time: > 0 predicted too slow, < 0 too fast
    bool fits = true;         // the prediction's memory verdict (a hint when a case is far off)
};

// Two cases whose configs differ only in precision; `wide` has the wider gemm dtype.
struct PairResult {
    size_t wide = 0, narrow = 0;  // into ValidationSuite::cases
    double measured_speedup = 0;  // iteration time of wide / iteration time of narrow, measured
    double predicted_speedup = 0;
    double ape = 0;  // |predicted - measured| / measured speed-up
};

// MAPE of one group of cases (or of pairs, for kind "pairs").
struct GroupError {
    std::string kind;  // "set", "source", "precision", "gpu_generation", "pairs", "memory" (memory cases per source)
    std::string name;  // "public", "megatron-sc21", "fp16-mixed", "Volta", "all", "tf32->fp16-amp"
    int64_t count = 0;
    double mape = 0;  // mean absolute percentage error, as a fraction
    double bias = 0;  // mean time_error (> 0: predicted too slow); pairs: mean speed-up error (> 0: too high)
    double max_ape = 0;
};

struct ValidationReport {
    bool precision_blind = false;
    std::vector<CaseResult> cases;  // in suite order
    std::vector<PairResult> pairs;
    std::vector<GroupError> groups;                                              // sets, sources, precisions, GPU generations, pair kinds
    const GroupError* find(std::string_view kind, std::string_view name) const;  // nullptr when absent
};

// Predict every selected case of `suite`. Sets: "public", "vtrain", "unrepresentable" (own set and source
// rows only: not in "all", pairs, precisions or GPU generations), "all"; also set "in_pairs"
// (the cases that belong to a precision pair, the paper's precision-blind contrast). Memory cases
// (is_memory_case) form set "memory" and kind "memory" per source, outside every time group.
ValidationReport run_validation(const ValidationSuite& suite, const ValidationOptions& options = {});

// GPU generation of a GPU preset id ("a100-sxm4-80gb" -> "Ampere"; unknown -> "other").
std::string_view gpu_generation(std::string_view gpu_name);

// The predicted value of a metric (tokens/s, per-GPU memory, ...) from a prediction.
double predicted_metric(MeasuredMetric metric, const Prediction& prediction);

// A case measuring memory rather than time (scored as set/kind "memory").
bool is_memory_case(const ValidationCase& c);

// Iteration time implied by a case's measured value (tokens/s etc. converted with the batch).
double measured_iteration_time_s(const ValidationCase& c);

// {"schema": "trainclock/validation/v1", "precision_blind", "groups": [...], "pairs": [...],
//  "cases": [...], "issues": [...]}
std::string validation_report_json(const ValidationSuite& suite, const ValidationReport& report);

}  // namespace trainclock
