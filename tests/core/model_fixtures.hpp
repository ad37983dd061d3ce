// Shared helpers for the model tests (test_model/operators/communication/pipeline/memory/prediction).
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock::fixtures {

// A validated config from a config/v1 body (the text between the outer braces, schema added).
inline Config config(const std::string& body) {
    const std::string json = R"({"schema": "trainclock/config/v1", )" + body + "}";
    Result<Config> c = load_config(json);
    INFO(json);
    if (!c.ok()) FAIL(c.error().to_string());
    return c.value();
}

// A validated config from a whole config/v1 document.
inline Config load(const std::string& json) {
    auto config = load_config(json);
    INFO(json);
    REQUIRE(config.ok());
    return config.value();
}

inline GpuSpec gpu(const char* name) {
    Result<GpuSpec> g = gpu_preset(name);
    if (!g.ok()) FAIL(g.error().to_string());
    return g.value();
}

inline ModelSpec model(const char* name) {
    Result<ModelSpec> m = model_preset(name);
    if (!m.ok()) FAIL(m.error().to_string());
    return m.value();
}

// GPT-3-style dense decoder with MHA, 4h GeLU MLP, LayerNorm, tied embeddings (Brown et al. 2020).
inline std::string gpt_model(int layers, int hidden, int heads, int vocab = 51200) {
    return R"({"architecture": "decoder", "layers": )" + std::to_string(layers) + R"(, "hidden": )" + std::to_string(hidden) +
           R"(, "heads": )" + std::to_string(heads) + R"(, "kv_heads": )" + std::to_string(heads) + R"(, "ffn_hidden": )" +
           std::to_string(4 * hidden) + R"(, "vocab": )" + std::to_string(vocab) +
           R"(, "activation": "gelu", "norm": "layernorm", "tied_embeddings": true})";
}

// Every preset of each kind, and no framework: the grid of the whole-catalogue property tests.
struct PresetGrid {
    std::vector<ModelSpec> models;
    std::vector<GpuSpec> gpus;
    std::vector<PrecisionSpec> precisions;
    std::vector<FrameworkSpec> frameworks{FrameworkSpec{}};
};
inline PresetGrid every_preset() {
    PresetGrid grid;
    for (const auto& name : preset_names(PresetKind::model)) grid.models.push_back(model_preset(name).value());
    for (const auto& name : preset_names(PresetKind::gpu)) grid.gpus.push_back(gpu_preset(name).value());
    for (const auto& name : preset_names(PresetKind::precision)) grid.precisions.push_back(precision_preset(name).value());
    for (const auto& name : preset_names(PresetKind::framework)) grid.frameworks.push_back(framework_preset(name).value());
    return grid;
}

}  // namespace trainclock::fixtures
