// trainclock (internal): JSON objects of the preset kinds (presets/README.md) and calibrations
// (enum values by model/spellings.hpp's tables); read by the preset catalogue (presets.cpp), configs
// (config_json.cpp), links (link.cpp), results (prediction_json.cpp) and the API (api.cpp).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/json_writer.hpp"
#include "trainclock/base/enum_name.hpp"
#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/model/spellings.hpp"

namespace trainclock {

// The readers take base/json_reader.hpp's ObjectReader by reference: a forward declaration keeps
// simdjson.h (~1.7 s of parsing per translation unit) out of the files that only write or name specs.
class ObjectReader;

// Fill `spec` (pre-set to the base when there is one) from an object; `required` = no base, so every
// mandatory key must be present. Errors accumulate in the reader.
void read_model(ObjectReader& reader, ModelSpec& spec, bool required);
void read_gpu(ObjectReader& reader, GpuSpec& spec, bool required);
void read_node(ObjectReader& reader, NodeSpec& spec, bool required);
void read_precision(ObjectReader& reader, PrecisionSpec& spec, bool required);
void read_framework(ObjectReader& reader, FrameworkSpec& spec, bool required);
void read_calibration(ObjectReader& reader, CalibrationSpec& spec);

// Canonical objects: every field, fixed key order, optional ones only when set.
void write_model(JsonWriter& out, const ModelSpec& spec);
void write_gpu(JsonWriter& out, const GpuSpec& spec);
void write_node(JsonWriter& out, const NodeSpec& spec);
void write_precision(JsonWriter& out, const PrecisionSpec& spec);
void write_framework(JsonWriter& out, const FrameworkSpec& spec, bool with_sources = false);  // sources: only for listings
void write_calibration(JsonWriter& out, const CalibrationSpec& spec);
bool calibration_is_default(const CalibrationSpec& spec);

// Compact canonical text of one spec (for "unchanged preset" checks).
template <class Spec, class Writer>
std::string spec_text(const Spec& spec, Writer write) {
    JsonWriter out;
    write(out, spec);
    return out.take();
}

// Names a preset by its id, with a did-you-mean on failure (key = `key`).
Error unknown_preset_error(std::string_view key, std::string_view kind, std::string_view name, const std::vector<std::string>& names);

}  // namespace trainclock
