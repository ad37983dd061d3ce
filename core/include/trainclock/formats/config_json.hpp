// trainclock: a config's JSON form (DESIGN.md 3, schema "trainclock/config/v1"): parsing, with
// presets by name or inline objects, and the canonical JSON (core/src/formats/config_json.cpp). The
// cross-field rules are model/config.hpp's (validate_config).
#pragma once

#include <string>
#include <string_view>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

// A config with nothing set: presets unnamed, num_gpus and dp 0 (derived by validate_config), the
// framework kDefaultFramework (model/framework.hpp; "framework": "none" for no stack's defaults).
// parse_config(json) == merge_config_json(config_draft(), json).
Config config_draft();

// Applies the keys of a config/v1 document over `base` (objects such as "parallel" merge key by
// key; "model", "gpu", "node", "precision" replace). Errors name the key.
Result<Config> merge_config_json(Config base, std::string_view json);

// Parse a config JSON document (presets by name or inline objects); unknown keys, wrong types and
// unknown preset names are errors naming the key. Does not check cross-field rules: see validate_config.
Result<Config> parse_config(std::string_view json);

// parse_config + validate_config.
Result<Config> load_config(std::string_view json);

// Canonical JSON of a config (presets referenced by name when unchanged, inline otherwise).
// load_config(config_to_json(c)) reproduces c.
std::string config_to_json(const Config& config);

}  // namespace trainclock
