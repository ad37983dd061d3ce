// Tests for trainclock/presets.hpp: every embedded preset parses, the ids of issue 2 exist, and
// unknown names get a did-you-mean.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trainclock/catalogue/presets.hpp"

using namespace trainclock;

namespace {
bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

TEST_CASE("every embedded preset parses") {
    for (const auto& name : preset_names(PresetKind::model)) {
        INFO(name);
        const auto spec = model_preset(name);
        REQUIRE(spec.ok());
        CHECK(spec.value().name == name);
        CHECK(spec.value().layers > 0);
        CHECK(spec.value().heads % spec.value().kv_heads == 0);
    }
    for (const auto& name : preset_names(PresetKind::gpu)) {
        INFO(name);
        const auto spec = gpu_preset(name);
        REQUIRE(spec.ok());
        CHECK(spec.value().memory_gib > 0);
        bool any_peak = false;
        for (int i = 0; i < kDTypeCount; ++i) any_peak = any_peak || spec.value().supports(static_cast<DType>(i));
        CHECK(any_peak);
        CHECK(node_preset(spec.value().default_node).ok());  // each GPU names an existing node
    }
    for (const auto& name : preset_names(PresetKind::node)) {
        INFO(name);
        const auto spec = node_preset(name);
        REQUIRE(spec.ok());
        CHECK(spec.value().gpus_per_node >= 1);
    }
    for (const auto& name : preset_names(PresetKind::precision)) {
        INFO(name);
        REQUIRE(precision_preset(name).ok());
    }
}

TEST_CASE("the preset ids of the product brief exist") {
    const auto models = preset_names(PresetKind::model);
    for (const char* id :
         {"gpt2",       "gpt2-medium",   "gpt2-large",     "gpt2-xl",    "gpt3-1.3b",   "gpt3-2.7b",   "gpt3-6.7b",    "gpt3-13b",
          "gpt3-175b",  "bert-base",     "bert-large",     "t5-base",    "t5-large",    "t5-3b",       "t5-11b",       "bart-large",
          "llama2-7b",  "llama2-13b",    "llama2-70b",     "llama3-8b",  "llama3-70b",  "llama3.1-8b", "llama3.1-70b", "llama3.1-405b",
          "mistral-7b", "mixtral-8x7b",  "mixtral-8x22b",  "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",  "qwen3-8b",
          "qwen3-32b",  "nemotron4-15b", "nemotron4-340b", "mpt-1b",     "mpt-3b",      "mpt-7b",      "mpt-30b",      "mpt-70b",
          "bloom-176b", "opt-175b",      "falcon-40b"}) {
        CHECK(contains(models, id));
    }
    const auto gpus = preset_names(PresetKind::gpu);
    for (const char* id : {"v100-sxm2-16gb",
                           "v100-sxm2-32gb",
                           "a100-sxm4-40gb",
                           "a100-sxm4-80gb",
                           "a100-pcie-40gb",
                           "a100-pcie-80gb",
                           "a10",
                           "a40",
                           "l4",
                           "l40s",
                           "h100-sxm",
                           "h100-pcie",
                           "h100-nvl",
                           "h200-sxm",
                           "h800-sxm",
                           "h20",
                           "b100",
                           "b200",
                           "gb200",
                           "b300",
                           "gb300",
                           "rtx-3090",
                           "rtx-4090",
                           "rtx-5090",
                           "mi250x",
                           "mi300x",
                           "mi325x",
                           "mi355x",
                           "gaudi2",
                           "gaudi3",
                           "tpu-v4",
                           "tpu-v5e",
                           "tpu-v5p"}) {
        CHECK(contains(gpus, id));
    }
    const auto nodes = preset_names(PresetKind::node);
    for (const char* id : {"dgx-1-v100", "dgx-2", "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "dgx-b300", "gb300-nvl72",
                           "mi300x-8", "pcie-8"}) {
        CHECK(contains(nodes, id));
    }
    const auto precisions = preset_names(PresetKind::precision);
    for (const char* id :
         {"fp32", "tf32", "fp16-amp", "bf16-amp", "fp16-mixed", "bf16-mixed", "fp16", "bf16", "fp8-mixed", "mxfp8-mixed", "nvfp4-mixed"}) {
        CHECK(contains(precisions, id));
    }
}

TEST_CASE("preset names are sorted and match the embedded files") {
    for (const auto kind : {PresetKind::model, PresetKind::gpu, PresetKind::node, PresetKind::precision}) {
        const auto names = preset_names(kind);
        CHECK(std::is_sorted(names.begin(), names.end()));
        size_t embedded = 0;
        for (const auto& preset : embedded_presets()) embedded += preset.kind == kind ? 1 : 0;
        CHECK(names.size() == embedded);
    }
    CHECK(preset_kind_name(PresetKind::gpu) == "gpu");
    CHECK(preset_kind_name(PresetKind::precision) == "precision");
}

TEST_CASE("precision presets carry the dtypes of DESIGN.md 2.1") {
    const PrecisionSpec bf16_mixed = precision_preset("bf16-mixed").value();
    CHECK(bf16_mixed.gemm == DType::bf16);
    CHECK(bf16_mixed.master_weights == MasterWeights::fp32);
    CHECK(bf16_mixed.optimizer_states == DType::fp32);
    const PrecisionSpec fp16_amp = precision_preset("fp16-amp").value();
    CHECK(fp16_amp.autocast);
    CHECK(fp16_amp.loss_scaling == LossScaling::dynamic);
    CHECK(precision_preset("fp8-mixed").value().gemm == DType::fp8);
    CHECK(precision_preset("fp32").value().gemm == DType::fp32);
    CHECK(precision_preset("tf32").value().gemm == DType::tf32);
}

TEST_CASE("unknown preset names fail with a did-you-mean naming the kind") {
    const auto gpu = gpu_preset("h100-sxm5");
    REQUIRE_FALSE(gpu.ok());
    CHECK(gpu.error().key == "gpu");
    CHECK_THAT(gpu.error().message, Catch::Contains("unknown gpu preset 'h100-sxm5'"));
    CHECK_THAT(gpu.error().message, Catch::Contains("did you mean h100-sxm"));

    const auto model = model_preset("lama3-70b");
    REQUIRE_FALSE(model.ok());
    CHECK(model.error().key == "model");
    CHECK_THAT(model.error().message, Catch::Contains("llama3-70b"));

    const auto nothing_close = node_preset("zzzzzzzzzz");
    REQUIRE_FALSE(nothing_close.ok());
    CHECK_THAT(nothing_close.error().message, Catch::Contains("trainclock presets nodes"));
}

TEST_CASE("did_you_mean picks the closest names by edit distance") {
    const std::vector<std::string> names = {"h100-nvl", "h100-pcie", "h100-sxm", "b100", "a100-sxm4-80gb"};
    CHECK(did_you_mean("h100-sxn", names) == "h100-sxm");                     // one substitution
    CHECK(did_you_mean("H100-SXM", names) == "h100-sxm");                     // case-insensitive
    CHECK(did_you_mean("h100", names) == "h100-nvl, h100-pcie or h100-sxm");  // contained: all listed
    CHECK(did_you_mean("completely-different", names).empty());
    CHECK(did_you_mean("", names).empty());
    CHECK(did_you_mean("--tpp", {"--tp", "--json"}) == "--tp");
    // 9 letters allow max(2, 9 / 3) = 3 edits: 3 substitutions (or 2 and an insertion) pass, 4 do not,
    // and the closer of two accepted names wins.
    CHECK(did_you_mean("abcdefghi", {"abcXefYhZ"}) == "abcXefYhZ");
    CHECK(did_you_mean("abcdefghi", {"abcXefYhi!"}) == "abcXefYhi!");
    CHECK(did_you_mean("abcdefghi", {"WbcXefYhZ"}).empty());
    CHECK(did_you_mean("abcdefghi", {"abcXefYhZ", "abcdefgXi"}) == "abcdefgXi");
    CHECK(did_you_mean("ABCDEFGHI", {"abcdefghX", "ABCDEFGXY"}) == "abcdefghX");  // case ignored in the count
}
