// trainclock: a config made whole before its rules run: the node its GPU names, the default
// precision and the framework's defaults are filled in from the presets here, so the rules of
// model/config.hpp read nothing but the config.
#pragma once

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

// The defaults validate_config fills in: the GPU's default node, and the first of bf16-mixed,
// fp16-mixed, fp32 the GPU runs (nothing when already set or unavailable).
void fill_node_default(Config& config);
void fill_precision_default(Config& config);

// Apply the cross-field rules of DESIGN.md 2 (TP divides heads and kv_heads, PP <= layers,
// TP*PP*CP*DP == num_gpus, micro_batch*DP divides global_batch, the GPU runs the gemm dtype, ...)
// after filling the defaults above and the framework's. Returns the first violation; derives dp
// when it was given as 0.
Result<Config> validate_config(Config config);

// validate_config in place, without copying the config (search checks millions of layouts):
// fills the same defaults into config and returns the first violation, if any.
std::optional<Error> check_config(Config& config);

}  // namespace trainclock
