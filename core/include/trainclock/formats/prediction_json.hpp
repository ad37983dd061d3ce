// trainclock: the result JSON of DESIGN.md 3 (schema "trainclock/result/v1") and its CSV form
// (core/src/formats/prediction_json.cpp).
#pragma once

#include <string>

#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {

// Result JSON (stable key names; "config" echoes config_to_json when given).
std::string prediction_to_json(const Prediction& prediction, const Config* config = nullptr);
std::string prediction_csv_header();
std::string prediction_to_csv_row(const Prediction& prediction, const Config& config);

}  // namespace trainclock
