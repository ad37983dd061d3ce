// trainclock: the preset catalogue (presets/*/NAME.json, embedded into every binary at build time).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/embedded.hpp"
#include "trainclock/base/names.hpp"
#include "trainclock/base/status.hpp"
#include "trainclock/model/framework.hpp"
#include "trainclock/model/hardware.hpp"
#include "trainclock/model/model.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

std::string_view preset_kind_name(PresetKind kind);      // "model", "gpu", ...
std::vector<std::string> preset_names(PresetKind kind);  // sorted ids
Result<ModelSpec> model_preset(std::string_view name);   // unknown: error with a did-you-mean
Result<GpuSpec> gpu_preset(std::string_view name);
Result<NodeSpec> node_preset(std::string_view name);
Result<PrecisionSpec> precision_preset(std::string_view name);
Result<FrameworkSpec> framework_preset(std::string_view name);  // every value key has a source

}  // namespace trainclock
