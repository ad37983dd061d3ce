// trainclock: the spellings of enum values in JSON, links and flags, for front ends' labels and
// choice lists (the tables are core/src/catalogue/spec_json.cpp's, which reads and writes them).
#pragma once

#include <string_view>
#include <vector>

#include "trainclock/model/framework.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

// The spellings of an enum-valued config key in enum order (value i is names[i]): "training.recompute"
// -> {"none", "selective", "full"}; "dtype" for the precision's dtypes; empty for any other key.
std::vector<std::string_view> enum_names(std::string_view path);

std::string_view fp8_recipe_name(Fp8Recipe recipe);              // "delayed", "tensorwise", ...
std::string_view gpu_generation_name(GpuGeneration generation);  // "pre_hopper", "hopper", "blackwell"

}  // namespace trainclock
