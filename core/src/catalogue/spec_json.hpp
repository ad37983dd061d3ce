// trainclock (internal): JSON objects of the preset kinds (presets/README.md) and calibrations, and
// the enum spellings of JSON, links and flags; read by the preset catalogue (presets.cpp), configs
// (config_json.cpp), links (link.cpp), results (prediction_json.cpp) and the API (api.cpp).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {

// Fill `spec` (pre-set to the base when there is one) from an object; `required` = no base, so every
// mandatory key must be present. Errors accumulate in the reader.
void read_model(ObjectReader& reader, ModelSpec& spec, bool required);
void read_gpu(ObjectReader& reader, GpuSpec& spec, bool required);
void read_node(ObjectReader& reader, NodeSpec& spec, bool required);
void read_precision(ObjectReader& reader, PrecisionSpec& spec, bool required);
void read_framework(ObjectReader& reader, FrameworkSpec& spec, bool required);
void read_calibration(ObjectReader& reader, CalibrationSpec& spec);

// Canonical objects: every field, fixed key order, optional ones only when set.
void write_model(JsonWriter& out, const ModelSpec& spec);
void write_gpu(JsonWriter& out, const GpuSpec& spec);
void write_node(JsonWriter& out, const NodeSpec& spec);
void write_precision(JsonWriter& out, const PrecisionSpec& spec);
void write_framework(JsonWriter& out, const FrameworkSpec& spec, bool with_sources = false);  // sources: only for listings
void write_calibration(JsonWriter& out, const CalibrationSpec& spec);
bool calibration_is_default(const CalibrationSpec& spec);

// Compact canonical text of one spec (for "unchanged preset" checks).
template <class Spec, class Writer>
std::string spec_text(const Spec& spec, Writer write) {
    JsonWriter out;
    write(out, spec);
    return out.take();
}

// Enum spellings used in JSON, links and CLI flags (read with ObjectReader::read_enum, written with enum_name).
inline constexpr EnumName<PipelineSchedule> kScheduleNames[] = {
    {"gpipe", PipelineSchedule::gpipe},
    {"1f1b", PipelineSchedule::one_f_one_b},
    {"interleaved", PipelineSchedule::interleaved},
};
inline constexpr EnumName<Recompute> kRecomputeNames[] = {
    {"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
inline constexpr EnumName<AttentionKernel> kAttentionKernelNames[] = {{"flash2", AttentionKernel::flash2},
                                                                      {"flash3", AttentionKernel::flash3}};
inline constexpr EnumName<FinetuneMethod> kFinetuneMethodNames[] = {
    {"full", FinetuneMethod::full}, {"lora", FinetuneMethod::lora}, {"qlora", FinetuneMethod::qlora}};
inline constexpr EnumName<LoraTargets> kLoraTargetsNames[] = {{"attention", LoraTargets::attention},
                                                              {"all-linear", LoraTargets::all_linear}};
inline constexpr EnumName<Optimizer> kOptimizerNames[] = {{"adamw", Optimizer::adamw},
                                                          {"adamw8bit", Optimizer::adamw8bit},
                                                          {"adam", Optimizer::adam},
                                                          {"lamb", Optimizer::lamb},
                                                          {"lamb-per-tensor", Optimizer::lamb_per_tensor},
                                                          {"sgd", Optimizer::sgd},
                                                          {"adamw-per-tensor", Optimizer::adamw_per_tensor}};
inline constexpr EnumName<Fp8Recipe> kFp8RecipeNames[] = {
    {"delayed", Fp8Recipe::delayed},     {"tensorwise", Fp8Recipe::tensorwise}, {"rowwise", Fp8Recipe::rowwise},
    {"blockwise", Fp8Recipe::blockwise}, {"mxfp8", Fp8Recipe::mxfp8},           {"nvfp4", Fp8Recipe::nvfp4},
};
inline constexpr EnumName<GpuGeneration> kGpuGenerationNames[] = {
    {"pre_hopper", GpuGeneration::pre_hopper}, {"hopper", GpuGeneration::hopper}, {"blackwell", GpuGeneration::blackwell}};
inline constexpr EnumName<GatherPrefetch> kGatherPrefetchNames[] = {
    {"none", GatherPrefetch::none}, {"layer", GatherPrefetch::layer}, {"bucket", GatherPrefetch::bucket}};
inline constexpr EnumName<DType> kDTypeNames[] = {
    {"fp32", DType::fp32}, {"tf32", DType::tf32},   {"fp16", DType::fp16},   {"bf16", DType::bf16},
    {"fp8", DType::fp8},   {"mxfp8", DType::mxfp8}, {"nvfp4", DType::nvfp4},
};

inline constexpr EnumName<Architecture> kArchitectures[] = {
    {"decoder", Architecture::decoder},
    {"encoder", Architecture::encoder},
    {"encoder-decoder", Architecture::encoder_decoder},
};
inline constexpr EnumName<Activation> kActivations[] = {
    {"gelu", Activation::gelu},     {"relu", Activation::relu},   {"squared-relu", Activation::squared_relu},
    {"swiglu", Activation::swiglu}, {"geglu", Activation::geglu},
};
inline constexpr EnumName<Norm> kNorms[] = {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}};
inline constexpr EnumName<LocalAttentionKind> kLocalAttentionKinds[] = {
    {"none", LocalAttentionKind::none}, {"sliding", LocalAttentionKind::sliding}, {"chunked", LocalAttentionKind::chunked}};
inline constexpr EnumName<LossScaling> kLossScalings[] = {{"none", LossScaling::none}, {"dynamic", LossScaling::dynamic}};
inline constexpr EnumName<MasterWeights> kMasterWeights[] = {{"none", MasterWeights::none}, {"fp32", MasterWeights::fp32}};
static_assert(std::size(kDTypeNames) == kDTypeCount && std::size(kGpuGenerationNames) == kGpuGenerationCount, "one name per value");

// A table of spellings and the dotted config key that reads it ("" for none: enum_names).
template <class E>
struct Spellings {
    std::string_view path;
    const EnumName<E>* names;
    size_t count;
    template <size_t N>
    constexpr Spellings(std::string_view path_, const EnumName<E> (&table)[N]) : path(path_), names(table), count(N) {}
};
// Every enum's table, once: enum_name and enum_names (spellings.hpp) look here.
inline constexpr std::tuple kSpellings{Spellings{"parallel.schedule", kScheduleNames},
                                       Spellings{"training.recompute", kRecomputeNames},
                                       Spellings{"training.attention_kernel", kAttentionKernelNames},
                                       Spellings{"training.finetune.method", kFinetuneMethodNames},
                                       Spellings{"training.finetune.lora_targets", kLoraTargetsNames},
                                       Spellings{"training.optimizer", kOptimizerNames},
                                       Spellings{"precision.fp8_recipe", kFp8RecipeNames},
                                       Spellings{"", kGpuGenerationNames},
                                       Spellings{"", kGatherPrefetchNames},
                                       Spellings{"dtype", kDTypeNames},
                                       Spellings{"model.architecture", kArchitectures},
                                       Spellings{"model.activation", kActivations},
                                       Spellings{"model.norm", kNorms},
                                       Spellings{"model.local_attention.kind", kLocalAttentionKinds},
                                       Spellings{"precision.loss_scaling", kLossScalings},
                                       Spellings{"precision.master_weights", kMasterWeights}};

// The spelling of an enum value ("1f1b" for PipelineSchedule::one_f_one_b).
template <class E>
std::string_view enum_name(E value) {
    const Spellings<E>& spellings = std::get<Spellings<E>>(kSpellings);
    for (size_t i = 0; i < spellings.count; ++i)
        if (spellings.names[i].value == value) return spellings.names[i].name;
    return "?";
}

// Names a preset by its id, with a did-you-mean on failure (key = `key`).
Error unknown_preset_error(std::string_view key, std::string_view kind, std::string_view name, const std::vector<std::string>& names);

}  // namespace trainclock
