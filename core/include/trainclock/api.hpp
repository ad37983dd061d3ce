// trainclock: JSON-string facade over the core, shared by web/bindings.cpp and scripts.
// Every function takes and returns JSON text; failures come back as
// {"error": {"key": "...", "message": "..."}} and never throw.
#pragma once

#include <string>
#include <string_view>

namespace trainclock {

std::string predict_json(std::string_view config_json);  // result/v1 JSON (with "timeline")
std::string compare_json(std::string_view config_json);  // {"rows": [{precision, result...}]} across the GPU's precisions
std::string presets_json(std::string_view kind);         // kind "" = all: {"models": [...], "gpus": [...], ...}
std::string encode_link(std::string_view config_json);   // {"fragment": "v=1&m=..."}
std::string decode_link(std::string_view fragment);      // {"config": {...}} (a config/v1 object)
// A measurements file (presets/validation case format) -> the calibrate report (trainclock/calibrate/v1).
std::string calibrate_json(std::string_view measurements_json);

} // namespace trainclock
