// trainclock: the spellings of enum values in JSON, links and flags: one table per enum, beside the
// enums (the spec reader and writer, error messages and front ends' labels and choice lists read them).
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>
#include <tuple>
#include <vector>

#include "trainclock/base/enum_name.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/model/framework.hpp"
#include "trainclock/model/precision.hpp"

namespace trainclock {

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
inline constexpr EnumName<CudaGraphs> kCudaGraphsNames[] = {
    {"none", CudaGraphs::none}, {"layers", CudaGraphs::layers}, {"full", CudaGraphs::full}};
inline constexpr EnumName<MoeDispatcher> kMoeDispatcherNames[] = {
    {"alltoall", MoeDispatcher::alltoall}, {"allgather", MoeDispatcher::allgather}, {"deepep", MoeDispatcher::deepep}};
inline constexpr EnumName<NetworkKind> kNetworkNames[] = {{"infiniband", NetworkKind::infiniband},
                                                          {"roce", NetworkKind::roce},
                                                          {"efa", NetworkKind::efa},
                                                          {"efa-sendrecv", NetworkKind::efa_sendrecv},
                                                          {"tcpxo", NetworkKind::tcpxo}};
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
                                       Spellings{"training.cuda_graphs", kCudaGraphsNames},
                                       Spellings{"training.moe_dispatcher", kMoeDispatcherNames},
                                       Spellings{"training.finetune.method", kFinetuneMethodNames},
                                       Spellings{"node.network", kNetworkNames},
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

// The spellings of an enum-valued config key in enum order (value i is names[i]): "training.recompute"
// -> {"none", "selective", "full"}; "dtype" for the precision's dtypes; empty for any other key.
std::vector<std::string_view> enum_names(std::string_view path);

std::string_view fp8_recipe_name(Fp8Recipe recipe);              // "delayed", "tensorwise", ...
std::string_view gpu_generation_name(GpuGeneration generation);  // "pre_hopper", "hopper", "blackwell"

}  // namespace trainclock
