// trainclock: one config across every precision preset its GPU runs (compare.hpp).
#include "trainclock/perf/compare.hpp"

#include <algorithm>

#include "catalogue/spec_json.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"

namespace trainclock {
namespace {

// Display order: DESIGN.md 2.1's list, roughly slowest to fastest; other presets follow by name.
int precision_rank(const std::string& name) {
    static const char* const kOrder[] = {"fp32", "tf32", "fp16-amp",  "bf16-amp",    "fp16-mixed", "bf16-mixed",
                                         "fp16", "bf16", "fp8-mixed", "mxfp8-mixed", "nvfp4-mixed"};
    for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
        if (name == kOrder[i]) return i;
    }
    return static_cast<int>(std::size(kOrder));
}

}  // namespace

PrecisionComparison plan_precision_comparison(const Config& config) {
    PrecisionComparison result;
    std::vector<std::string> names = preset_names(PresetKind::precision);
    std::stable_sort(names.begin(), names.end(),
                     [](const std::string& a, const std::string& b) { return precision_rank(a) < precision_rank(b); });
    for (const std::string& name : names) {
        auto precision = precision_preset(name);
        if (!precision) continue;
        if (precision_support_error(precision.value(), config.gpu)) {
            result.unsupported.push_back(name);
            continue;
        }
        PrecisionRow row;
        row.config = config;
        row.config.precision = std::move(precision).value();
        result.rows.push_back(std::move(row));
    }
    return result;
}

void predict_precision_row(PrecisionRow& row, const PredictOptions& options) {
    auto validated = validate_config(row.config);
    if (validated) {
        row.config = std::move(validated).value();
        row.prediction = predict(row.config, options);
    } else {
        row.error = validated.error();
    }
}

void finish_precision_comparison(PrecisionComparison& result) {
    const PrecisionRow* baseline = nullptr;
    for (const PrecisionRow& row : result.rows) {
        if (row.error) continue;
        if (row.config.precision.name == "fp32") {
            baseline = &row;
            break;
        }
        if (!baseline || row.prediction.iteration_time_s > baseline->prediction.iteration_time_s) baseline = &row;
    }
    if (baseline) {
        result.baseline = baseline->config.precision.name;
        const double reference_s = baseline->prediction.iteration_time_s;
        for (PrecisionRow& row : result.rows) {
            if (!row.error && row.prediction.iteration_time_s > 0) row.speedup = reference_s / row.prediction.iteration_time_s;
        }
    }
}

PrecisionComparison compare_precisions(const Config& config, const PredictOptions& options) {
    PrecisionComparison result = plan_precision_comparison(config);
    for (PrecisionRow& row : result.rows) predict_precision_row(row, options);
    finish_precision_comparison(result);
    return result;
}

}  // namespace trainclock
