// trainclock: prediction intervals (issue 9 item 6, issue 23). How far off a prediction is likely to
// be, from the cross-source residuals of the validation cases (each case predicted at the constants
// refitted without its source family): per group (framework x GPU generation x precision family,
// with coarser fallbacks), each source family weighing as one witness, widened by how far the
// config is from every validated case (the axes below). `trainclock validate --cross-source
// --write-intervals` writes the table (presets/intervals/cross-source.json), every binary embeds
// it, and a lookup costs no prediction. The range is built around the point estimate: low <= 1 <= high.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/model/config.hpp"

namespace trainclock {

// The axes of "distance to the evidence": a config far from the validated cases on one of them gets
// a wider range (the factor calibrated on the cross-source folds).
enum class IntervalAxis { gpu_generation, framework, scale_gpus, moe, finetune, precision_family };
inline constexpr size_t kIntervalAxisCount = 6;
using IntervalAxes = std::array<std::string, kIntervalAxisCount>;  // a config's value on each axis
std::string_view interval_axis_name(IntervalAxis axis);            // "gpu_generation", ..., the table's keys
// The values of a config: "hopper" (AMD and other vendors: "amd", ...), "megatron-lm", "9-64"
// (GPUs: 1, 2-8, 9-64, 65-512, 513-4096, 4097+), "moe"/"dense", "lora"/"qlora"/"full", "16-bit".
IntervalAxes interval_axes(const Config& config);

struct IntervalRow {
    std::string group;         // "megatron-lm|hopper|16-bit", or a coarser one ("*|hopper|16-bit", "*|*|16-bit", "*|*|*")
    int64_t cases = 0;         // cross-source residuals behind it
    int64_t families = 0;      // source families among them (each weighs as one witness)
    double low = 1, high = 1;  // measured / predicted time: the range's ends as multiples of the estimate (low <= 1 <= high)
};

// An axis's widening: the factor that brought the cross-source folds' cases that had no validation
// case on that axis's value (in the other families) to 80 % coverage.
struct IntervalWidening {
    std::string axis;   // interval_axis_name
    double factor = 1;  // low / factor, high * factor
    int64_t cases = 0;  // fold cases it was calibrated on (0: never missing in a fold; the largest factor)
    int64_t families = 0;
};

// The validated cases with one combination of axis values.
struct IntervalEvidence {
    IntervalAxes axes;
    int64_t cases = 0;
    std::vector<std::string> families;
};

struct IntervalTable {
    std::vector<IntervalRow> rows;
    std::vector<IntervalWidening> widening;  // one per axis, in IntervalAxis order (empty: no widening)
    std::vector<IntervalEvidence> evidence;
};

// The range of one config: its group's row, widened by the distance to the nearest evidence.
struct LikelyInterval {
    IntervalRow row;
    double low = 1, high = 1;             // row.low / widening, row.high * widening
    double widening = 1;                  // the largest factor of the axes the nearest evidence differs in
    std::vector<std::string> widened_by;  // those axes (interval_axis_name), "" none
    int64_t nearest_cases = 0;            // validation cases of the nearest combination of axis values
    std::vector<std::string> nearest_families;
    std::string reason;  // one line: the evidence and what widened the range
};

// The likely range of a predicted time or cost: the value scaled by the interval's ends.
struct LikelyRange {
    double low = 0, high = 0;
};
inline LikelyRange likely_range(const IntervalRow& row, double value) { return {value * row.low, value * row.high}; }
inline LikelyRange likely_range(const LikelyInterval& interval, double value) { return {value * interval.low, value * interval.high}; }

inline constexpr int64_t kMinIntervalCases = 5;       // fewer residuals: the next coarser group answers
inline constexpr double kIntervalCoverage = 0.8;      // the range's target: 10th-90th percentile
inline constexpr double kIntervalCoverageCap = 0.85;  // of a group's cases: per-family coverage stretches a row no further

// The groups of a config, most specific first: framework|generation|family, then "*" for framework,
// generation, family in turn. Framework "" counts as the preset it equals (megatron-lm).
std::vector<std::string> interval_groups(const Config& config);

// The embedded table (presets/intervals/cross-source.json).
const IntervalTable& embedded_interval_table();
// The embedded table's row for a config (its most specific group with a row); nullptr if none.
const IntervalRow* find_interval(const Config& config);
// The range of a config from a table (nullopt: no row answers); from the embedded table.
std::optional<LikelyInterval> likely_interval(const IntervalTable& table, const std::vector<std::string>& groups, const IntervalAxes& axes,
                                              std::string_view gpu_name = "");
std::optional<LikelyInterval> likely_interval(const Config& config);

// One cross-source residual: measured / predicted time of a validation case at the constants
// fitted without its family.
struct IntervalResidual {
    std::vector<std::string> groups;  // interval_groups of its config
    IntervalAxes axes;
    std::string family;
    double ratio = 1;
};

// The rows of residuals (groups with >= kMinIntervalCases): per group, the shortest range around 1
// that holds kIntervalCoverage of the cases both weighted per case and weighted per family (each
// family's cases weigh 1 / its cases in the group), at most kIntervalCoverageCap of the cases (then
// the one holding the most per family). The evidence: residuals per axis values.
IntervalTable interval_table_base(const std::vector<IntervalResidual>& residuals);
// The whole table: the base table, and widening factors calibrated on the folds (each family
// scored against the base table of the other families).
IntervalTable interval_table(const std::vector<IntervalResidual>& residuals);
std::string interval_table_json(const IntervalTable& table);
Result<IntervalTable> parse_interval_table(std::string_view json);

// Coverage of the range over the residuals: "cross-source" (each case against the table of all
// families: the constants out of sample, the quantiles in), "held-out" (each case against the table
// built without its family, widened: what a new source sees).
struct CoverageGroup {
    std::string kind;  // "all", "group" (the row that answered), "family"
    std::string name;
    int64_t cases = 0;
    double coverage = 0;      // fraction of cases whose ratio is inside the range
    double by_family = 0;     // the same with each source family weighing as one witness (mean of its families' coverage)
    double median_width = 0;  // median of high - low (fraction of the estimate)
    double bias = 0;          // median measured / predicted - 1 (> 0: predicted too fast), what the range is built around
};
struct IntervalCoverage {
    std::vector<CoverageGroup> cross_source;
    std::vector<CoverageGroup> held_out;
    const CoverageGroup* find(const std::vector<CoverageGroup>& groups, std::string_view kind, std::string_view name) const;
};
IntervalCoverage interval_coverage(const std::vector<IntervalResidual>& residuals, const IntervalTable& table);

}  // namespace trainclock
