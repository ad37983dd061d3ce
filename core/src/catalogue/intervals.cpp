// trainclock: prediction intervals from cross-source residuals (intervals.hpp).
#include "trainclock/model/spellings.hpp"
#include "trainclock/catalogue/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <simdjson.h>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "trainclock/catalogue/presets.hpp"

namespace trainclock {
namespace {

std::string_view precision_family(DType gemm) {
    switch (gemm) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16:
    case DType::bf16: return "16-bit";
    case DType::fp8:
    case DType::mxfp8: return "fp8";
    case DType::nvfp4: return "fp4";
    }
    return "other";
}

// Linear interpolation between order statistics (the "type 7" quantile of R and NumPy).
double quantile(const std::vector<double>& sorted, double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const size_t below = static_cast<size_t>(std::floor(position));
    const size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

double rounded(double value) { return std::round(value * 1000.0) / 1000.0; }  // a stable file

std::vector<IntervalRow> parse_table() {
    std::vector<IntervalRow> rows;
    for (const auto& preset : embedded_presets()) {
        if (preset.kind != PresetKind::interval) continue;
        simdjson::dom::parser parser;
        simdjson::dom::element document;
        if (parser.parse(preset.json.data(), preset.json.size()).get(document) != simdjson::SUCCESS) continue;
        simdjson::dom::array array;
        if (document["rows"].get_array().get(array) != simdjson::SUCCESS) continue;
        for (const auto element : array) {
            IntervalRow row;
            std::string_view group;
            if (element["group"].get_string().get(group) != simdjson::SUCCESS) continue;
            row.group = std::string(group);
            const bool complete = element["cases"].get_int64().get(row.cases) == simdjson::SUCCESS &&
                                  element["low"].get_double().get(row.low) == simdjson::SUCCESS &&
                                  element["high"].get_double().get(row.high) == simdjson::SUCCESS;
            if (complete) rows.push_back(std::move(row));
        }
    }
    return rows;
}

}  // namespace

std::vector<std::string> interval_groups(const Config& config) {
    const std::string framework = config.framework.name.empty() ? std::string(kDefaultFrameworkEquivalent) : config.framework.name;
    const std::string generation(gpu_generation_name(gpu_kernel_generation(config.gpu)));
    const std::string family(precision_family(config.precision.gemm));
    return {framework + "|" + generation + "|" + family, "*|" + generation + "|" + family, "*|*|" + family, "*|*|*"};
}

const IntervalRow* find_interval(const Config& config) {
    static const std::vector<IntervalRow> table = parse_table();
    for (const std::string& group : interval_groups(config)) {
        for (const IntervalRow& row : table)
            if (row.group == group) return &row;
    }
    return nullptr;
}

std::vector<IntervalRow> interval_rows(const std::vector<std::pair<std::vector<std::string>, double>>& residuals) {
    std::map<std::string, std::vector<double>> by_group;
    for (const auto& [groups, ratio] : residuals)
        for (const std::string& group : groups) by_group[group].push_back(ratio);
    std::vector<IntervalRow> rows;
    for (auto& [group, ratios] : by_group) {
        if (static_cast<int64_t>(ratios.size()) < kMinIntervalCases) continue;
        std::sort(ratios.begin(), ratios.end());
        rows.push_back({group, static_cast<int64_t>(ratios.size()), rounded(quantile(ratios, 0.1)), rounded(quantile(ratios, 0.9))});
    }
    return rows;
}

std::string interval_table_json(const std::vector<IntervalRow>& rows) {
    JsonWriter out(2);
    out.begin_object();
    out.field("schema_version", int64_t{1}).field("name", "cross-source");
    out.field("source", "trainclock validate --cross-source over presets/validation (sets public, public-2, vtrain): "
                        "each case predicted at the constants refitted without its source family");
    out.field("notes", "low/high: 10th/90th percentile of measured / predicted iteration time over the cross-source "
                       "residuals of the group (framework|GPU generation|precision family; '*' = any); groups with "
                       "fewer than 5 cases are left out. Regenerate: trainclock validate --cross-source --write-intervals "
                       "presets/intervals/cross-source.json");
    out.object_array("rows", rows, [&](const IntervalRow& row) {
        out.field("group", row.group).field("cases", row.cases).field("low", row.low).field("high", row.high);
    });
    out.end_object();
    return out.take() + "\n";
}

}  // namespace trainclock
