// trainclock: defaults from the presets, then the config rules (resolve.hpp).
#include "trainclock/catalogue/resolve.hpp"

#include <utility>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/framework.hpp"

namespace trainclock {

void fill_node_default(Config& c) {
    if (!c.node.name.empty() || c.gpu.default_node.empty()) return;
    auto node = node_preset(c.gpu.default_node);
    if (node) c.node = std::move(node).value();
}

void fill_precision_default(Config& c) {
    if (!c.precision.name.empty()) return;
    // The fastest widely used setting the GPU runs (bf16-mixed, else fp16-mixed, else fp32).
    for (const char* name : {"bf16-mixed", "fp16-mixed", "fp32"}) {
        auto preset = precision_preset(name);
        if (preset && !precision_support_error(preset.value(), c.gpu)) {
            c.precision = std::move(preset).value();
            if (c.precision.name != "bf16-mixed")  // stated in the prediction's warnings, not silent
                c.precision_default_note = "precision " + c.precision.name + " (the default bf16-mixed does not run: gpu " + c.gpu.name +
                                           " has no bf16 peak; give --precision to choose)";
            return;
        }
    }
}

std::optional<Error> check_config(Config& c) {
    if (c.model.name.empty()) return Error{"model", "missing (a model preset id or an inline model object)"};
    if (c.gpu.name.empty()) return Error{"gpu", "missing (a gpu preset id or an inline gpu object)"};
    TRAINCLOCK_TRY(check_model(c.model));
    TRAINCLOCK_TRY(check_gpu(c.gpu));
    if (c.node.name.empty()) {
        if (c.gpu.default_node.empty()) {
            return Error{"node", "missing (gpu " + c.gpu.name + " names no default_node: give a node preset id or object)"};
        }
        auto node = node_preset(c.gpu.default_node);
        if (!node) return Error{"gpu.default_node", node.error().message};
        fill_node_default(c);
    }
    TRAINCLOCK_TRY(check_node(c.node));
    fill_precision_default(c);
    if (c.precision.name.empty()) return Error{"precision", "missing (no default precision preset runs on gpu " + c.gpu.name + ")"};
    TRAINCLOCK_TRY(check_precision(c.precision));
    TRAINCLOCK_TRY(precision_support_error(c.precision, c.gpu));
    apply_framework_defaults(c);
    TRAINCLOCK_TRY(check_layout_rules(c));
    TRAINCLOCK_TRY(check_calibration(c.calibration));
    return std::nullopt;
}

Result<Config> validate_config(Config c) {
    TRAINCLOCK_TRY(check_config(c));
    return c;
}

}  // namespace trainclock
