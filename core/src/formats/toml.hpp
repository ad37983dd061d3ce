// trainclock: TOML documents (torchtitan job configs) read with toml++ (TOML 1.0, header-only,
// TOML_EXCEPTIONS=0) and flattened to "table.key" values for the importers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "trainclock/base/status.hpp"

namespace trainclock {

struct TomlValue {
    enum Kind { string, number, boolean, array, other } kind = other;
    std::string text;   // string contents, or the TOML text of an array / other value
    double value = 0;   // number (integer or float)
    bool flag = false;  // boolean
    int64_t line = 0;
};

// Every leaf of the document under its dotted path ([table] headers, dotted keys and inline tables
// alike: `model = { name = "llama3" }` and `model.name = "llama3"` give "model.name"). A syntax
// error is Error{"line N", toml++'s description}.
Result<std::map<std::string, TomlValue>> parse_toml(std::string_view toml);

}  // namespace trainclock
