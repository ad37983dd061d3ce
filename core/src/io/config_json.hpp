// trainclock (internal): a config's canonical JSON object, into a writer (embedded in result JSON
// and API replies); config_to_json (config.hpp) wraps it.
#pragma once

#include "io/json_writer.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

void write_config(JsonWriter& out, const Config& config);

}  // namespace trainclock
