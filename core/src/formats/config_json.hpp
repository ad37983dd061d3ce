// trainclock (internal): a config's canonical JSON object, into a writer (embedded in result JSON
// and API replies); config_to_json (trainclock/formats/config_json.hpp) wraps it.
#pragma once

#include "base/json_writer.hpp"
#include "trainclock/formats/config_json.hpp"

namespace trainclock {

void write_config(JsonWriter& out, const Config& config);

}  // namespace trainclock
