// trainclock: memory per GPU (DESIGN.md 2.5): weights, gradients, master weights and optimizer
// states by dtype and ZeRO stage; activations per Korthikanti et al. 2022 (arXiv 2205.05198)
// scaled by dtype, TP/SP, recompute and flash attention, times the micro-batches in flight.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <string_view>

#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/operators.hpp"

namespace trainclock {

// What a GPU's memory holds, in the order of the result's "memory" (DESIGN.md 3).
enum class MemoryPart {
    weights,
    grads,
    master,
    optimizer,
    activations,
    other,  // workspace, communication buffers, allocator fragmentation
};
inline constexpr size_t kMemoryPartCount = size_t(MemoryPart::other) + 1;
// The result JSON keys of the parts, in MemoryPart order.
inline constexpr std::string_view kMemoryPartKeys[] = {"weights_gib",   "grads_gib",       "master_gib",
                                                       "optimizer_gib", "activations_gib", "other_gib"};
static_assert(std::size(kMemoryPartKeys) == kMemoryPartCount, "one key per part");

// Memory per GPU by part, in GiB (result JSON "memory").
struct MemoryBreakdown {
    std::array<double, kMemoryPartCount> gib{};  // by part
    double per_gpu_gib = 0;                      // sum of the parts on the most loaded GPU (first pipeline stage)
    double capacity_gib = 0;
    bool fits = false;
    double host_gib = 0;                   // offloaded to CPU memory (training.offload_optimizer / offload_params); not in per_gpu_gib
    double paged_gib = 0;                  // of host_gib: optimizer states a paged optimizer keeps in CPU memory (training.paged_optimizer)
    double activations_offloaded_gib = 0;  // of host_gib: saved activations in CPU memory (training.offload_activations)
    double& operator[](MemoryPart part) { return gib[size_t(part)]; }
    double operator[](MemoryPart part) const { return gib[size_t(part)]; }
};

// Activation bytes one layer keeps for backward, one micro-batch, one GPU. For a GPT layer at
// 16 bits without SP or recompute this is s b h (10 + 24/t + 5 a s / (h t)) (Korthikanti eq. 2/3),
// s b h (34 + 5 a s / h) / t with SP, 34 s b h / t with selective recompute, 2 s b h (/t with SP)
// with full recompute; flash attention removes the 5 a s / h term.
double activation_bytes_per_layer(const Execution& execution, LayerKind kind);

// Per-GPU memory of the more loaded of the first and last pipeline stages (the execution's pipeline
// shape counts the in-flight micro-batches as the simulation runs them).
MemoryBreakdown memory_per_gpu(const Execution& execution);

// Bytes of one checkpoint of the whole model: every weight, the fp32 master copy and the optimizer
// states (what Megatron's distributed checkpoint saves; gradients are not saved). LoRA / QLoRA: the
// adapters with their master copy and optimizer states only; frozen layers: no optimizer states.
double checkpoint_bytes(const Config& config);

}  // namespace trainclock
