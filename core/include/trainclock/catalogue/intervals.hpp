// trainclock: prediction intervals (issue 9 item 6). How far off a prediction is likely to be, from
// the cross-source residuals of the validation cases of its group (framework x GPU generation x
// precision family): `trainclock validate --cross-source --write-intervals` writes the table
// (presets/intervals/cross-source.json), every binary embeds it, and a lookup costs no prediction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainclock/model/config.hpp"

namespace trainclock {

struct IntervalRow {
    std::string group;         // "megatron-lm|hopper|16-bit", or a coarser one ("*|hopper|16-bit", "*|*|16-bit", "*|*|*")
    int64_t cases = 0;         // cross-source residuals behind it
    double low = 1, high = 1;  // the 10th and 90th percentile of measured / predicted time
};

// The likely range of a predicted time or cost: the value scaled by the row's percentiles.
struct LikelyRange {
    double low = 0, high = 0;
};
inline LikelyRange likely_range(const IntervalRow& row, double value) { return {value * row.low, value * row.high}; }

inline constexpr int64_t kMinIntervalCases = 5;  // fewer residuals: the next coarser group answers

// The groups of a config, most specific first: framework|generation|family, then "*" for framework,
// generation, family in turn. Framework "" counts as the preset it equals (megatron-lm).
std::vector<std::string> interval_groups(const Config& config);

// The embedded table's row for a config (its most specific group with a row); nullptr if none.
const IntervalRow* find_interval(const Config& config);

// Rows from residuals (group -> measured/predicted time ratios), groups with >= kMinIntervalCases;
// and the presets/intervals file that holds them.
std::vector<IntervalRow> interval_rows(const std::vector<std::pair<std::vector<std::string>, double>>& residuals);
std::string interval_table_json(const std::vector<IntervalRow>& rows);

}  // namespace trainclock
