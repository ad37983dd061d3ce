// trainclock: one config across every precision preset its GPU runs (`trainclock compare`,
// api compare_json, the web app's precision chart).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {

struct PrecisionRow {
    Config config;               // the input config with this precision (validated when !error)
    Prediction prediction;       // empty when error
    std::optional<Error> error;  // the config breaks a rule with this precision (e.g. fp8 needs dims % 16)
    double speedup = 0;          // baseline iteration time / this one (0 when error)
};

struct PrecisionComparison {
    std::vector<PrecisionRow> rows;        // precisions the GPU runs, fp32 ... nvfp4-mixed order
    std::vector<std::string> unsupported;  // precision presets the GPU cannot run
    std::string baseline;                  // "fp32" when it runs, else the slowest valid row
};

// `config` need not be validated; its precision is replaced row by row.
PrecisionComparison compare_precisions(const Config& config, const PredictOptions& options = {});

// compare_precisions a row at a time (the web app spreads one over frames): plan lists the rows
// (none predicted), predict_precision_row validates and predicts one, finish sets the baseline and
// speedups. compare_precisions is the three in turn.
PrecisionComparison plan_precision_comparison(const Config& config);
void predict_precision_row(PrecisionRow& row, const PredictOptions& options = {});
void finish_precision_comparison(PrecisionComparison& comparison);

}  // namespace trainclock
