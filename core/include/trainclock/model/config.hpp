// trainclock: the full input of one prediction (DESIGN.md 3, schema "trainclock/config/v1").
// Model, system, precision and execution strategy stay separate types; Config bundles them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/framework.hpp"
#include "trainclock/model/hardware.hpp"
#include "trainclock/model/model.hpp"
#include "trainclock/model/precision.hpp"
#include "trainclock/model/stage_split.hpp"

namespace trainclock {

inline constexpr std::string_view kConfigSchema = "trainclock/config/v1";

enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };  // JSON: "gpipe", "1f1b", "interleaved"
enum class Recompute { none, selective, full };
// JSON: "adamw", "adamw8bit" (bitsandbytes 8-bit states), "adam", "lamb", "lamb-per-tensor" (a Python loop over tensors, not multi-tensor
// fused), "sgd" (with momentum), "adamw-per-tensor" (Adam with decoupled weight decay as a Python loop of eager in-place ops per tensor).
enum class Optimizer { adamw, adamw8bit, adam, lamb, lamb_per_tensor, sgd, adamw_per_tensor };
// State buffers per weight: SGD's momentum 1, Adam(W)'s (also 8-bit) and LAMB's m and v 2.
inline int optimizer_state_count(Optimizer o) { return o == Optimizer::sgd ? 1 : 2; }
// LAMB reads gradient and weight once more for its trust ratio (You et al. 2019).
inline bool optimizer_trust_ratio(Optimizer o) { return o == Optimizer::lamb || o == Optimizer::lamb_per_tensor; }

// How the work is split over GPUs (the execution strategy).
struct ParallelSpec {
    int64_t tp = 1;                  // tensor parallel
    int64_t pp = 1;                  // pipeline stages
    int64_t dp = 1;                  // data parallel replicas (0 in JSON/flags = derive from num_gpus)
    int64_t cp = 1;                  // context parallel (sequence split for attention)
    int64_t ep = 1;                  // expert parallel (MoE), over the folded tp x cp x dp ranks
    int64_t expert_tp = 0;           // expert tensor parallel (MoE); 0 = tp, as Megatron-Core's default
    bool sequence_parallel = false;  // Megatron SP: norms/dropout split over TP, RS+AG instead of AR
    int64_t zero = 0;                // 0..3 (3 = FSDP full sharding)
    int64_t virtual_stages = 1;      // interleaved schedule: model chunks per stage
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    bool overlap_dp_comm = true;   // DP gradient reduction overlapped with backward
    bool overlap_tp_comm = false;  // TP collectives overlapped with GEMMs (userbuffers/TE comm overlap)
    StageSplit stage_split;        // uneven pipeline stages (JSON: parallel.first_stage_layers, ...; stage_split.hpp)

    // Ranks holding the same weights: the DP replicas and, as CP splits only the sequence, the CP
    // ranks. Gradients are reduced and ZeRO shards over them (Megatron-Core's data-parallel group
    // "with context parallel"). Expert layers fold the same tp x cp x dp ranks into etp x ep x
    // expert-dp (Megatron-Core MoE parallel folding, Liu et al. 2025, arXiv 2504.14960; parallel_state.py
    // expert_data_parallel_size = world / (etp x ep x pp)): expert weights are replicated over
    // tp cp dp / (etp ep) of them (dp cp / ep when etp = tp).
    int64_t weight_replicas() const { return std::max<int64_t>(dp, 1) * std::max<int64_t>(cp, 1); }
    int64_t etp() const { return expert_tp > 0 ? expert_tp : std::max<int64_t>(tp, 1); }
    int64_t expert_weight_replicas() const {
        const int64_t folded = std::max<int64_t>(tp, 1) * weight_replicas();
        return std::max<int64_t>(folded / (etp() * std::max<int64_t>(ep, 1)), 1);
    }
    // EP inside DP with etp = tp: Megatron's classic tp-cp-ep-dp-pp rank order; otherwise the expert
    // layers' own tp-ep-dp-pp order (parallel_state.py expert RankGenerator).
    bool ep_folded() const { return etp() != std::max<int64_t>(tp, 1) || std::max<int64_t>(dp, 1) % std::max<int64_t>(ep, 1) != 0; }
};

// Fine-tuning (training.finetune). Frozen weights keep no gradients, master copy or optimizer states
// and skip their weight-gradient GEMMs; LoRA (Hu et al. 2021, arXiv 2106.09685) trains rank-r
// adapters beside frozen linear layers; QLoRA (Dettmers et al. 2023, arXiv 2305.14314) stores the
// frozen linear weights in 4-bit NormalFloat and dequantises them to the compute dtype per GEMM.
enum class FinetuneMethod { full, lora, qlora };
enum class LoraTargets { attention, all_linear };  // JSON "attention" (q, k, v, o) | "all-linear" (+ MLP; PEFT's all-linear, no LM head)
struct FinetuneSpec {
    FinetuneMethod method = FinetuneMethod::full;
    int64_t lora_rank = 0;  // adapter rank r (required for lora and qlora)
    LoraTargets lora_targets = LoraTargets::all_linear;
    int64_t frozen_layers = 0;  // the input embedding and the first N layers stay frozen (no adapters, no backward)
    bool adapters() const { return method != FinetuneMethod::full; }
    bool is_default() const {
        return method == FinetuneMethod::full && lora_rank == 0 && lora_targets == LoraTargets::all_linear && frozen_layers == 0;
    }
};

struct TrainingSpec {
    int64_t seq_len = 2048;      // tokens per sample
    int64_t global_batch = 512;  // samples per optimizer step
    int64_t micro_batch = 1;     // samples per micro-batch per model replica
    Recompute recompute = Recompute::none;
    bool flash_attention = true;                                 // fused attention (only taken when the gemm dtype has a kernel)
    AttentionKernel attention_kernel = AttentionKernel::flash2;  // which fused kernel (flash3 needs Hopper or newer)
    CudaGraphs cuda_graphs = CudaGraphs::none;                   // what runs as CUDA graph replays (no per-op host dispatch)
    MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;      // how routed tokens reach other EP ranks' experts
    bool compile = false;                    // torch.compile: Inductor fuses norms, elementwise chains and fp8 casts into fewer kernels
    Optimizer optimizer = Optimizer::adamw;  // adamw | adamw8bit (bitsandbytes, 1-byte states) | adam | lamb | lamb-per-tensor | sgd
    double tokens = 0;                       // training tokens of the whole run (0 = report one step only)
    double price_per_gpu_hour_usd = -1;      // < 0: use the GPU preset's price
    FinetuneSpec finetune;                   // method full and nothing frozen = pre-training
    bool offload_optimizer = false;          // master weights, optimizer states and gradients in CPU memory; CPU step (ZeRO-Offload)
    bool offload_params = false;  // weights in CPU memory, streamed to the GPU per layer each forward and backward (ZeRO-Infinity)
    // bitsandbytes paged optimizer (PagedAdamW, PagedAdamW8bit): states in CUDA unified memory, paged to
    // CPU memory when the GPU runs out (QLoRA, Dettmers et al. 2023 arXiv 2305.14314 sec. 3 "Paged Optimizers")
    bool paged_optimizer = false;
    // The step of each parameter runs in backward as soon as its gradient is ready and frees it (torchtune
    // optimizer_in_bwd, PyTorch register_post_accumulate_grad_hook): one parameter's gradient at a time.
    bool optimizer_in_backward = false;
    // Saved activations go to CPU memory in forward and come back for backward on a side stream (torchtune
    // enable_activation_offloading, training/_activation_offloading.py OffloadActivations).
    bool offload_activations = false;
    // The whole run around the steps (run.hpp): checkpoints, interruptions, restarts. Unset = default.
    double checkpoint_interval_s = 0;       // training seconds between checkpoints (0 = Young's optimum, unless _steps)
    int64_t checkpoint_interval_steps = 0;  // optimizer steps between checkpoints (0 = unset)
    double storage_bw_gbps = 0;             // checkpoint storage write/read bandwidth of the job, GB/s (0 = default per GPU)
    double restart_s = -1;                  // interruption -> training again, before the checkpoint load, s (< 0 = default)
    double failure_rate_per_gpu_hour = -1;  // unexpected interruptions per GPU-hour (< 0 = Llama 3's rate)
    bool ideal = false;                     // no checkpoints, interruptions or restarts: total_time_s = steps x step time
    // Memory a layout must leave free to fit (issue 25 item 9): GiB, or percent of the GPU's memory (one of the two; 0 = none).
    double memory_headroom_gib = 0;
    double memory_headroom_pct = 0;
};

// The scalar parameters of the cost model, one list for the overrides (T = std::optional<double>)
// and the resolved record (T = double, calibration.hpp Calibration); calibration_scalars names them.
template <class T>
struct CalibrationScalars {
    T attention_efficiency{};   // fused attention fraction of the gemm peak
    T memory_efficiency{};      // achievable fraction of HBM bandwidth for memory-bound kernels
    T intra_node_efficiency{};  // achievable fraction (NCCL busbw / line rate) of the intra-node link
    T inter_node_efficiency{};  // achievable fraction of the NICs
    T kernel_launch_s{};        // fixed GPU-side cost per kernel (launch latency + inter-kernel gap)
    T step_overhead_s{};        // fixed cost per optimizer step (framework, data loader, logging)
    T host_op_s{};              // CPU time to dispatch one op (framework + launch); default: the framework's
    T gemm_sustained{};         // training-time fraction of the large-GEMM figure (real shapes, sustained clocks, SMs shared with NCCL)
    T comm_sms{};               // SMs a running NCCL collective occupies: compute overlapped with it slows by comm_sms / sm_count
    T fp8_rowwise_gemm{};       // rate of rowwise-scaled FP8 GEMMs relative to the fp8 figure (PyTorch's CUTLASS kernel on NVIDIA)
};

// One scalar of a calibration: its JSON key, the field and the range check_calibration accepts.
template <class Field>
struct CalibrationScalar {
    std::string_view key;
    Field* value;
    double low, high;
};

// Every scalar of a calibration (overrides or resolved record, const or mutable), in JSON key order.
template <class Scalars>
auto calibration_scalars(Scalars& s) {
    using Field = std::remove_reference_t<decltype((s.host_op_s))>;
    return std::array<CalibrationScalar<Field>, 10>{{
        {"attention_efficiency", &s.attention_efficiency, 1e-3, 1.0},
        {"memory_efficiency", &s.memory_efficiency, 1e-3, 1.0},
        {"intra_node_efficiency", &s.intra_node_efficiency, 1e-3, 1.0},
        {"inter_node_efficiency", &s.inter_node_efficiency, 1e-3, 1.0},
        {"kernel_launch_s", &s.kernel_launch_s, 0.0, 1.0},
        {"step_overhead_s", &s.step_overhead_s, 0.0, 3600.0},
        {"host_op_s", &s.host_op_s, 0.0, 1.0},
        {"gemm_sustained", &s.gemm_sustained, 1e-3, 1.0},
        {"comm_sms", &s.comm_sms, 0.0, 1024.0},
        {"fp8_rowwise_gemm", &s.fp8_rowwise_gemm, 1e-3, 1.0},
    }};
}

// Efficiency overrides. Every field is optional: unset ones take the documented defaults
// (core/src/perf/calibration.cpp) for the GPU and dtype.
struct CalibrationOverrides : CalibrationScalars<std::optional<double>> {
    std::array<std::optional<double>, 7> gemm_efficiency{};  // large-GEMM fraction of peak, per DType
};

// What a calibration was fitted on ("fitted_on", written by calibrate): every prediction that uses it
// states it, and warns where the config is outside it (issue 25 item 4).
struct CalibrationScope {
    std::vector<std::string> frameworks;  // framework presets of the runs ("none" = runs naming none)
    std::vector<std::string> gpus;        // GPU presets
    std::vector<std::string> precisions;  // precision presets
    int64_t cases = 0;                    // runs fitted on
    std::vector<std::string> factors;     // factors fitted, "GPU key" ("h100-sxm gemm_efficiency.bf16")
};

// A calibration: overrides for every GPU, then per GPU preset ("gpus": {"h100-sxm": {...}}) on top.
struct CalibrationSpec : CalibrationOverrides {
    bool precision_blind = false;                                       // cost every op at one reference dtype (static-graph baseline)
    std::vector<std::pair<std::string, CalibrationOverrides>> per_gpu;  // GPU preset name -> its overrides (last wins)
    std::string name;                           // "name": where it came from (the CLI: the --calibration file); "" = unnamed
    std::optional<CalibrationScope> fitted_on;  // "fitted_on": the runs it was fitted on (none: not stated)
};

// Which framework-defaulted knobs the config set itself (explicit key > framework preset > default).
struct ExplicitKnobs {
    bool overlap_tp_comm = false;   // parallel.overlap_tp_comm given
    bool overlap_dp_comm = false;   // parallel.overlap_dp_comm given
    bool attention_kernel = false;  // training.attention_kernel given
    bool cuda_graphs = false;       // training.cuda_graphs given
    bool compile = false;           // training.compile given
    bool flash_attention = false;   // training.flash_attention given
    bool moe_dispatcher = false;    // training.moe_dispatcher given
    bool fp8_recipe = false;        // precision.fp8_recipe given (inline precision object)
};

struct Config {
    ModelSpec model;
    GpuSpec gpu;
    NodeSpec node;
    int64_t num_gpus = 1;
    PrecisionSpec precision;
    FrameworkSpec framework;  // name "" = "none": the knobs' own defaults (kDefaultFrameworkEquivalent's); config_draft: kDefaultFramework
    ParallelSpec parallel;
    TrainingSpec training;
    CalibrationSpec calibration;
    ExplicitKnobs explicit_knobs;                 // set by the parser and by front ends that edit a knob
    std::vector<std::string> framework_defaults;  // "key = value" the framework set (filled by check_config)
    std::string precision_default_note;           // why the default precision is not bf16-mixed ("" = it is, or one was given)
};

// Micro-batches x pipeline chunks per step the schedule simulates: 2^18 covers 32768 micro-batches
// on 8 stages (Megatron runs use tens to a few thousand) and keeps a requested timeline (2 spans per
// slot) to tens of MB.
inline constexpr int64_t kMaxSimulatedSlots = int64_t(1) << 18;

// The layout and training rules of validate_config one by one, each with its message (the search
// checks them per group of layouts and counts which one a group breaks).
std::optional<Error> tp_rule(const ModelSpec& model, int64_t tp, int64_t etp);              // heads, KV heads, MLP and (etp) expert widths
std::optional<Error> pp_rule(const ModelSpec& model, int64_t pp, const StageSplit& split);  // a layer (or embedding/loss slot) per stage
std::optional<Error> virtual_stages_rule(const ModelSpec& model, int64_t pp, int64_t virtual_stages, PipelineSchedule schedule,
                                         const StageSplit& split);            // interleaved only; a split Megatron-Core can make
std::optional<Error> node_fill_rule(int64_t num_gpus, const NodeSpec& node);  // whole hosts beyond one
// EP divides the experts; etp x ep divides tp x cp x dp (Megatron-Core folding); etp the expert width.
std::optional<Error> ep_rule(const ModelSpec& model, int64_t tp, int64_t cp, int64_t dp, int64_t ep, int64_t etp);
std::optional<Error> micro_batch_rule(int64_t micro_batches, int64_t pp, int64_t virtual_stages, PipelineSchedule schedule);
bool micro_batch_rule_passes(int64_t micro_batches, int64_t pp, int64_t virtual_stages,
                             PipelineSchedule schedule);                               // no message (the search)
std::optional<Error> cp_rule(int64_t seq_len, int64_t cp);                             // 2*cp load-balanced chunks
std::optional<Error> sp_rule(int64_t seq_len, int64_t tp, int64_t cp);                 // each CP rank's tokens over TP
std::optional<Error> gemm_shape_rule(const ModelSpec& model, DType gemm, int64_t tp);  // FP8/FP4: multiples of 16
// The rules of one spec on its own: ranges, required keys, what its architecture allows.
std::optional<Error> check_model(const ModelSpec& model);
std::optional<Error> check_gpu(const GpuSpec& gpu);
std::optional<Error> check_node(const NodeSpec& node);
std::optional<Error> check_precision(const PrecisionSpec& precision);

// The layout and training rules (derives dp when it was given as 0). check_config (catalogue/
// resolve.hpp) runs them after the spec rules; alone, for a config that passed check_config with the
// same model, GPU, node, precision and calibration (a search changes only the layout, micro-batch
// and recompute between layouts, so it checks the rest once per precision).
std::optional<Error> check_layout_rules(Config& config);

// Why `gpu` cannot run `precision` (a dtype without a peak), or nullopt when it can.
std::optional<Error> precision_support_error(const PrecisionSpec& precision, const GpuSpec& gpu);

// The range rules of a calibration on their own (fractions in (0, 1], times >= 0), also of its
// per-GPU sections; check_config applies them too.
std::optional<Error> check_calibration(const CalibrationSpec& calibration);

}  // namespace trainclock
