// trainclock: the names a user types, below the config and the links that use them: the flat
// config fields (link keys, CLI flags, config paths; DESIGN.md 3) and a did-you-mean for misspelt
// names (keys, presets, flags).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainclock {

enum class FieldType { spec, integer, number, boolean, choice, object, text };  // text: any string, checked by the config's rules

// One flat config field: its link key, its CLI flag and the config path it sets.
struct ConfigField {
    std::string_view link_key;  // "tp" (empty: CLI only)
    std::string_view flag;      // "--tp"
    std::string_view path;      // "parallel.tp"
    FieldType type;
    std::string_view help;  // one line for --help
};

const std::vector<ConfigField>& config_fields();  // in link/flag order
const ConfigField* find_field_by_link_key(std::string_view key);
const ConfigField* find_field_by_flag(std::string_view flag);

// Closest names by edit distance, for "unknown gpu 'h100'; did you mean 'h100-sxm'?".
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

}  // namespace trainclock
