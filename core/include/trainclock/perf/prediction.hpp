// trainclock: the result of one prediction (DESIGN.md 3, schema "trainclock/result/v1").
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/pipeline.hpp"
#include "trainclock/perf/run.hpp"

namespace trainclock {

inline constexpr std::string_view kResultSchema = "trainclock/result/v1";

// The causes of the step time, in the order of the result's "breakdown_s" (DESIGN.md 3).
enum class StepPart {
    gemm,                // linear layers (QKV, projections, MLP, LM head)
    attention,           // score/softmax/context (flash or materialised)
    elementwise,         // norms, activations, dropout, residuals, embeddings, loss
    precision_overhead,  // casts, weight recasts, loss-scale unscale/checks, FP8 amax/quantise/transpose
    optimizer,           // optimizer step and master-weight copy
    tp_comm,             // exposed (non-overlapped) communication, per kind
    pp_comm,
    dp_comm,
    cp_comm,
    ep_comm,
    pipeline_bubble,
    overhead,  // kernel launches and per-step framework cost
};
inline constexpr size_t kStepPartCount = size_t(StepPart::overhead) + 1;
// The result JSON keys of the parts, in StepPart order.
inline constexpr std::string_view kStepPartKeys[] = {"gemm",      "attention", "elementwise",     "precision_overhead",
                                                     "optimizer", "tp_comm",   "pp_comm",         "dp_comm",
                                                     "cp_comm",   "ep_comm",   "pipeline_bubble", "overhead"};
static_assert(std::size(kStepPartKeys) == kStepPartCount, "one key per part");

// Seconds of one iteration on the critical path, by cause; the parts add up to iteration_time_s.
struct StepBreakdown {
    std::array<double, kStepPartCount> seconds{};
    double& operator[](StepPart part) { return seconds[size_t(part)]; }
    double operator[](StepPart part) const { return seconds[size_t(part)]; }
    double exposed_comm_s() const {  // tp + pp + dp + cp + ep
        double sum = 0;
        for (size_t part = size_t(StepPart::tp_comm); part <= size_t(StepPart::ep_comm); ++part) sum += seconds[part];
        return sum;
    }
};

struct Prediction {
    double iteration_time_s = 0;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double samples_per_s = 0;
    double model_tflops_per_gpu = 0;     // 6N + attention per token, no recompute (PaLM appendix B convention)
    double hardware_tflops_per_gpu = 0;  // FLOPs actually executed incl. recompute
    double mfu = 0;                      // model FLOP/s over the dense 16-bit (BF16, else FP16) peak: Llama 3 / PaLM convention
    double mfu_precision_peak = 0;       // model FLOP/s over the peak of the dtype the GEMMs run in
    double steps = 0;                    // optimizer steps for training.tokens
    double total_time_s = 0;
    double gpu_hours = 0;
    double params_total = 0;          // every weight incl. embeddings, all experts and MTP modules (parameter_count)
    double params_active = 0;         // weights a token passes through: top_k experts (active_parameter_count)
    double cost_usd = 0;              // 0 with cost_known false when neither the config nor the GPU preset has a price
    double energy_kwh = 0;            // 0 with energy_known false when the GPU preset has no TDP
    bool cost_known = true;           // false: result JSON "cost_usd": null, and a warning
    bool energy_known = true;         // false: result JSON "energy_kwh": null, and a warning
    WholeRun run;                     // total_time_s = run.ideal_time_s / run.goodput
    double cpu_optimizer_s = 0;       // of breakdown_s optimizer: the step on the host's CPUs (training.offload_optimizer)
    double activation_offload_s = 0;  // of breakdown_s overhead: exposed activation transfers (training.offload_activations)
    MemoryBreakdown memory;
    StepBreakdown breakdown_s;
    std::vector<TimelineSpan> timeline;  // filled when requested (PredictOptions::timeline)
    std::vector<std::string> warnings;   // "does not fit: 93.1 GiB > 80 GiB"
    bool bounded = false;                // only iteration_time_s is set: a lower bound above PredictOptions::bound_above_s
};

struct PredictOptions {
    bool timeline = false;  // record the per-stage spans (costs time; off for search)
    double bound_above_s =
        std::numeric_limits<double>::infinity();  // search: skip the pipeline simulation when a lower bound of the step time exceeds this
};

// Model FLOPs per token (6N + attention, causal halved, no recompute): what MFU counts.
double model_flops_per_token(const Config& config);

// Predict one validated config (see load_config). Never fails on a validated config.
Prediction predict(const Config& config, const PredictOptions& options = {});

}  // namespace trainclock
