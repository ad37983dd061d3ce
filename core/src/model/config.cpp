// trainclock: the config rules (DESIGN.md 2): validation of the model, GPU, node, precision, layout,
// batch, training and calibration. They read the config alone: the presets it names are resolved
// before (catalogue/resolve.cpp); the JSON form is formats/config_json.cpp's.
//
// Index
//   [SECTION] Validation: model, GPU, node, precision
//   [SECTION] Validation: layout, batch, training, calibration
#include "trainclock/model/spellings.hpp"
#include "trainclock/model/config.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/json_writer.hpp"

namespace trainclock {
namespace {

std::string str(int64_t value) { return std::to_string(value); }
std::string str(double value) { return json_number(value); }

// "must be between 1 and 1048576, got 0" as an Error on `key`, or nullopt when in range.
template <class T>
std::optional<Error> out_of_range(std::string_view key, T value, T low, T high) {
    if (value >= low && value <= high) return std::nullopt;  // false for NaN
    return Error{std::string(key), "must be between " + str(low) + " and " + str(high) + ", got " + str(value)};
}

// The same on the key `prefix.name`, joined only on error (a search validates millions of layouts).
template <class T>
std::optional<Error> out_of_range(std::string_view prefix, std::string_view name, T value, T low, T high) {
    if (value >= low && value <= high) return std::nullopt;
    return out_of_range(join_key(prefix, name), value, low, high);
}

constexpr int64_t kMaxGpus = int64_t(1) << 20;       // a million GPUs: beyond any cluster built
constexpr int64_t kMaxDimension = int64_t(1) << 20;  // hidden, ffn widths
constexpr int64_t kMaxLayers = 100000;

}  // namespace

// [SECTION] Validation: model, GPU, node, precision ------------------------------------------------

namespace {

// MLA, local attention and MTP modules (model.hpp).
std::optional<Error> check_attention_features(const ModelSpec& m) {
    const MlaSpec& a = m.mla;
    if (a.kv_lora_rank == 0) {
        if (a.q_lora_rank || a.qk_nope_head_dim || a.qk_rope_head_dim || a.v_head_dim)
            return Error{"model.mla.kv_lora_rank", "must be >= 1 when other model.mla keys are set"};
    } else {
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.mla.kv_lora_rank", a.kv_lora_rank, 1, kMaxDimension));
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.mla.q_lora_rank", a.q_lora_rank, 0, kMaxDimension));
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.mla.qk_nope_head_dim", a.qk_nope_head_dim, 1, 65536));
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.mla.qk_rope_head_dim", a.qk_rope_head_dim, 0, 65536));
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.mla.v_head_dim", a.v_head_dim, 1, 65536));
        if (m.kv_heads != m.heads)
            return Error{"model.kv_heads", str(m.kv_heads) + " must equal model.heads = " + str(m.heads) +
                                               " with model.mla (every head up-projects its own keys and values)"};
    }
    const LocalAttentionSpec& l = m.local_attention;
    if (l.kind == LocalAttentionKind::none) {
        if (l.window || l.full_every)
            return Error{"model.local_attention.kind", "must be sliding or chunked when model.local_attention.window or full_every is set"};
    } else {
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.local_attention.window", l.window, 1, int64_t(1) << 30));
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.local_attention.full_every", l.full_every, 0, m.layers));
        if (m.architecture != Architecture::decoder)
            return Error{"model.local_attention",
                         "only for decoder models (model.architecture is " + std::string(enum_name(m.architecture)) + ")"};
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.mtp_layers", m.mtp_layers, 0, 64));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.position_embeddings", m.position_embeddings, 0, int64_t(1) << 24));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.token_types", m.token_types, 0, int64_t(1) << 24));
    if (m.mtp_layers > 0 && m.architecture != Architecture::decoder)
        return Error{"model.mtp_layers", "only for decoder models (model.architecture is " + std::string(enum_name(m.architecture)) + ")"};
    return std::nullopt;
}

}  // namespace

std::optional<Error> check_model(const ModelSpec& m) {
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.layers", m.layers, 1, kMaxLayers));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.hidden", m.hidden, 1, kMaxDimension));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.heads", m.heads, 1, 65536));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.kv_heads", m.kv_heads, 1, m.heads));
    if (m.heads % m.kv_heads != 0) {
        return Error{"model.kv_heads", str(m.kv_heads) + " does not divide model.heads = " + str(m.heads) +
                                           " (grouped-query attention shares each KV head among heads / kv_heads query heads)"};
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.head_dim", m.head_dim, 0, 65536));
    if (m.head_dim == 0 && m.hidden % m.heads != 0) {
        return Error{"model.hidden", str(m.hidden) + " is not divisible by model.heads = " + str(m.heads) + " (set model.head_dim)"};
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.ffn_hidden", m.ffn_hidden, m.is_moe() ? 0 : 1, kMaxDimension));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.vocab", m.vocab, 1, int64_t(1) << 24));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.max_seq_len", m.max_seq_len, 0, int64_t(1) << 30));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.memory_len", m.memory_len, 0, int64_t(1) << 24));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.softmax_head", m.softmax_head, 0, m.vocab));
    if (m.architecture == Architecture::encoder_decoder) {
        TRAINCLOCK_TRY(out_of_range<int64_t>("model.decoder_layers", m.decoder_layers, 1, kMaxLayers));
    } else if (m.decoder_layers != 0) {
        return Error{"model.decoder_layers",
                     "only for encoder-decoder models (model.architecture is " + std::string(enum_name(m.architecture)) + ")"};
    }
    TRAINCLOCK_TRY(check_attention_features(m));
    const MoeSpec& moe = m.moe;
    if (moe.experts == 0) {
        if (moe.top_k || moe.expert_ffn_hidden || moe.shared_experts || moe.dense_layers || moe.every != 1 || moe.capacity_factor != 0 ||
            moe.imbalance != 1) {
            return Error{"model.moe.experts", "must be >= 1 when other model.moe keys are set"};
        }
        return std::nullopt;
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.experts", moe.experts, 1, 65536));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.top_k", moe.top_k, 1, moe.experts));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.expert_ffn_hidden", moe.expert_ffn_hidden, 1, kMaxDimension));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.shared_experts", moe.shared_experts, 0, 1024));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.dense_layers", moe.dense_layers, 0, m.layers));
    TRAINCLOCK_TRY(out_of_range<int64_t>("model.moe.every", moe.every, 1, m.layers));
    if ((moe.dense_layers > 0 || moe.every > 1) && m.ffn_hidden == 0) {
        return Error{"model.ffn_hidden", "must be >= 1 when model.moe.dense_layers or model.moe.every keep dense MLPs"};
    }
    if (moe.capacity_factor != 0) TRAINCLOCK_TRY(out_of_range("model.moe.capacity_factor", moe.capacity_factor, 0.01, 1024.0));
    // The busiest expert takes at most every token once: T over the mean T top_k / experts.
    TRAINCLOCK_TRY(out_of_range("model.moe.imbalance", moe.imbalance, 1.0, double(moe.experts) / double(moe.top_k)));
    return std::nullopt;
}

std::optional<Error> check_gpu(const GpuSpec& g) {
    TRAINCLOCK_TRY(out_of_range("gpu.memory_gib", g.memory_gib, 1e-3, 1e5));
    TRAINCLOCK_TRY(out_of_range("gpu.memory_bw_gbps", g.memory_bw_gbps, 1e-3, 1e7));
    bool any_peak = false;
    for (const auto& entry : kDTypeNames) {
        const double tflops = g.peak_tflops[static_cast<int>(entry.value)];
        TRAINCLOCK_TRY(out_of_range("gpu.peak_tflops", entry.name, tflops, 0.0, 1e6));
        // 0 = unsupported; a positive peak below 1 GFLOP/s (1e-320) gives an infinite step time.
        if (tflops > 0) TRAINCLOCK_TRY(out_of_range("gpu.peak_tflops", entry.name, tflops, 1e-3, 1e6));
        any_peak = any_peak || tflops > 0;
        // Measured fractions of the peak (0 = none given): a fraction above 1 is not a measurement.
        TRAINCLOCK_TRY(
            out_of_range("gpu.measured.gemm_efficiency", entry.name, g.measured_gemm_efficiency[static_cast<int>(entry.value)], 0.0, 1.0));
    }
    TRAINCLOCK_TRY(out_of_range("gpu.measured.memory_efficiency", g.measured_memory_efficiency, 0.0, 1.0));
    TRAINCLOCK_TRY(out_of_range("gpu.measured.sustained_clock_ratio", g.measured_sustained_clock, 0.0, 1.0));
    if (!any_peak) return Error{"gpu.peak_tflops", "no dtype has a peak (give at least fp32)"};
    // 0 = no SM-like unit or unknown (Gaudi MMEs/TPCs, H20; presets/README.md): no wave quantisation, no SM share.
    TRAINCLOCK_TRY(out_of_range<int64_t>("gpu.sm_count", g.sm_count, 0, 1000000));
    TRAINCLOCK_TRY(out_of_range("gpu.l2_cache_mb", g.l2_cache_mb, 0.0, 1e6));
    TRAINCLOCK_TRY(out_of_range("gpu.tdp_w", g.tdp_w, 0.0, 1e5));
    TRAINCLOCK_TRY(out_of_range("gpu.price_per_gpu_hour_usd", g.price_per_gpu_hour_usd, 0.0, 1e6));
    return std::nullopt;
}

std::optional<Error> check_node(const NodeSpec& n) {
    TRAINCLOCK_TRY(out_of_range<int64_t>("node.gpus_per_node", n.gpus_per_node, 1, 100000));
    TRAINCLOCK_TRY(out_of_range<int64_t>("node.gpus_per_host", n.gpus_per_host, 0, n.gpus_per_node));
    if (n.gpus_per_host > 0 && n.gpus_per_node % n.gpus_per_host != 0) {
        return Error{"node.gpus_per_host", str(n.gpus_per_host) + " does not divide node.gpus_per_node = " + str(n.gpus_per_node) +
                                               " (an NVLink domain holds whole hosts)"};
    }
    TRAINCLOCK_TRY(out_of_range("node.intra_bw_gbps", n.intra_bw_gbps, 1e-3, 1e6));
    TRAINCLOCK_TRY(out_of_range("node.intra_latency_us", n.intra_latency_us, 0.0, 1e6));
    // Per-group figures replace intra_bw_gbps (communication.cpp): same bounds, or 1e-320 is an infinite step.
    for (const auto& [size, bw_gbps] : n.intra_group_bw_gbps)
        TRAINCLOCK_TRY(out_of_range("node.intra_group_bw_gbps", std::to_string(size), bw_gbps, 1e-3, 1e6));
    TRAINCLOCK_TRY(out_of_range("node.inter_bw_gbps", n.inter_bw_gbps, 1e-3, 1e6));
    TRAINCLOCK_TRY(out_of_range("node.inter_latency_us", n.inter_latency_us, 0.0, 1e6));
    TRAINCLOCK_TRY(out_of_range("node.power_overhead", n.power_overhead, 1.0, 10.0));
    TRAINCLOCK_TRY(out_of_range("node.host_memory_bw_gbps", n.host_memory_bw_gbps, 0.0, 1e6));
    TRAINCLOCK_TRY(out_of_range("node.host_op_scale", n.host_op_scale, 0.1, 10.0));
    return std::nullopt;
}

// Storage formats per tensor category: tf32 is a tensor-core math mode on fp32 data (NVIDIA A100
// whitepaper), and microscaled formats exist only as GEMM inputs in the frameworks we follow
// (Transformer Engine keeps activations, gradients and optimizer states in bf16/fp32).
namespace {

std::optional<Error> check_storage(std::string_view key, DType dtype, bool allow_fp8) {
    const bool ok = dtype == DType::fp32 || dtype == DType::fp16 || dtype == DType::bf16 || (allow_fp8 && dtype == DType::fp8);
    if (ok) return std::nullopt;
    if (dtype == DType::tf32) return Error{std::string(key), "tf32 is a tensor-core math mode, not a storage format (use fp32)"};
    return Error{std::string(key), std::string(dtype_name(dtype)) + " is not a supported storage format here (use fp32, bf16 or fp16" +
                                       (allow_fp8 ? std::string(" or fp8") : std::string()) + ")"};
}

}  // namespace

std::optional<Error> check_precision(const PrecisionSpec& p) {
    TRAINCLOCK_TRY(check_storage("precision.activations", p.activations, true));
    TRAINCLOCK_TRY(check_storage("precision.params", p.params, true));
    TRAINCLOCK_TRY(check_storage("precision.grads", p.grads, false));
    TRAINCLOCK_TRY(check_storage("precision.grad_reduce", p.grad_reduce, false));
    TRAINCLOCK_TRY(check_storage("precision.optimizer_states", p.optimizer_states, false));
    if (p.fp8_recipe && !fp8_recipe_fits(*p.fp8_recipe, p.gemm)) {
        const std::string recipe(fp8_recipe_name(*p.fp8_recipe));
        if (!default_fp8_recipe(p.gemm))
            return Error{"precision.fp8_recipe", recipe + " scales quantised GEMMs; precision.gemm is " + std::string(dtype_name(p.gemm))};
        return Error{"precision.fp8_recipe",
                     recipe + " does not scale " + std::string(dtype_name(p.gemm)) +
                         " GEMMs (delayed, tensorwise, rowwise and blockwise need fp8; mxfp8 and nvfp4 their own gemm dtype)"};
    }
    return std::nullopt;
}

std::optional<Error> precision_support_error(const PrecisionSpec& precision, const GpuSpec& gpu) {
    const std::pair<std::string_view, DType> uses[] = {
        {"gemm", precision.gemm}, {"activations", precision.activations}, {"params", precision.params}};
    for (const auto& [category, dtype] : uses) {
        if (gpu.supports(dtype)) continue;
        const std::string unit = dtype == DType::fp32 ? " units" : " tensor cores";
        std::string message = "gpu " + gpu.name + " has no " + std::string(dtype_name(dtype)) + unit + " (precision " + precision.name +
                              " needs " + std::string(dtype_name(dtype));
        if (category != "gemm") message += " for " + std::string(category);
        return Error{"precision", message + ")"};
    }
    return std::nullopt;
}

// [SECTION] Validation: layout, batch, training, calibration ---------------------------------------

std::optional<Error> tp_rule(const ModelSpec& m, int64_t tp, int64_t etp) {
    // Megatron-LM splits attention heads, MLP columns and experts' columns over TP (Shoeybi et al.
    // 2019, arXiv 1909.08053, section 3); with GQA it replicates KV heads when tp > kv_heads.
    if (m.heads % tp != 0) return Error{"parallel.tp", str(tp) + " does not divide model.heads = " + str(m.heads)};
    if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) {
        return Error{"parallel.tp", str(tp) + " neither divides model.kv_heads = " + str(m.kv_heads) +
                                        " nor is a multiple of it (KV heads are split or replicated over TP)"};
    }
    if (m.ffn_hidden % tp != 0) return Error{"parallel.tp", str(tp) + " does not divide model.ffn_hidden = " + str(m.ffn_hidden)};
    // Experts split their columns over the expert tensor-parallel group (Megatron-Core
    // --expert-tensor-parallel-size, default tp).
    if (m.is_moe() && m.moe.expert_ffn_hidden % etp != 0) {
        return Error{etp == tp ? "parallel.tp" : "parallel.expert_tp",
                     str(etp) + " does not divide model.moe.expert_ffn_hidden = " + str(m.moe.expert_ffn_hidden)};
    }
    return std::nullopt;
}

std::optional<Error> pp_rule(const ModelSpec& m, int64_t pp, const StageSplit& split) {
    const int64_t layers = m.layers + m.decoder_layers;
    // A pipeline layout may leave stages empty ("E||t|L", Megatron-Core's layout docs); its own rules apply.
    if (!split.pipeline_layout.empty()) return std::nullopt;
    // The embedding and loss may take a stage's place in the split (stage_split.hpp).
    const int64_t split_slots = layers + (split.embedding_in_stage_split ? 1 : 0) + (split.loss_in_stage_split ? 1 : 0);
    if (pp > split_slots) return Error{"parallel.pp", str(pp) + " exceeds the " + str(layers) + " layers of model " + m.name};
    return std::nullopt;
}

std::optional<Error> virtual_stages_rule(const ModelSpec& m, int64_t pp, int64_t v, PipelineSchedule schedule, const StageSplit& split) {
    if (v > 1 && schedule != PipelineSchedule::interleaved) {
        return Error{"parallel.virtual_stages", str(v) + " needs parallel.schedule = interleaved"};
    }
    TRAINCLOCK_TRY(stage_split_error(m.layers + m.decoder_layers, pp, v, split));
    if (split.pipeline_layout.empty()) return std::nullopt;
    // Megatron-Core's flexible layouts cover decoder stacks only (validate_layer_layout raises
    // NotImplementedError for encoder layers).
    if (m.architecture == Architecture::encoder_decoder) {
        return Error{"parallel.pipeline_layout", "is not for encoder-decoder models (Megatron-Core's layouts hold one decoder stack)"};
    }
    return pipeline_layout_error(split.pipeline_layout, pp, v, m.layers, m.mtp_layers);
}

std::optional<Error> node_fill_rule(int64_t num_gpus, const NodeSpec& node) {
    // Jobs are allocated in whole hosts (GB200/GB300 NVL72: 4-GPU compute trays inside a 72-GPU
    // NVLink domain), or less than one host.
    const int64_t host = node.host_gpus();
    if (num_gpus > host && num_gpus % host != 0) {
        return Error{"num_gpus", str(num_gpus) + " is not a multiple of the " + str(host) +
                                     (node.gpus_per_host > 0 ? " GPUs per host (node.gpus_per_host) of node " : " GPUs per node of node ") +
                                     node.name};
    }
    return std::nullopt;
}

std::optional<Error> ep_rule(const ModelSpec& m, int64_t tp, int64_t cp, int64_t dp, int64_t ep, int64_t etp) {
    // Megatron-Core MoE parallel folding (arguments.py, parallel_state.py): num_experts % ep == 0 and
    // the expert layers' etp x ep x expert-dp fill the attention layers' tp x cp x dp ranks.
    if (ep < 1) return out_of_range<int64_t>("parallel.ep", ep, 1, kMaxGpus);
    if (ep == 1 && etp == tp) return std::nullopt;
    if (!m.is_moe()) {
        if (ep > 1) return Error{"parallel.ep", str(ep) + " needs a mixture-of-experts model (model " + m.name + " is dense)"};
        return Error{"parallel.expert_tp", str(etp) + " needs a mixture-of-experts model (model " + m.name + " is dense)"};
    }
    if (m.moe.experts % ep != 0) return Error{"parallel.ep", str(ep) + " does not divide model.moe.experts = " + str(m.moe.experts)};
    const int64_t folded = tp * cp * dp;
    if (folded % (etp * ep) != 0) {
        return Error{"parallel.ep", "expert_tp x ep = " + str(etp) + " x " + str(ep) + " does not divide tp x cp x dp = " + str(tp) +
                                        " x " + str(cp) + " x " + str(dp) +
                                        " (expert layers fold the same ranks: Megatron-Core MoE parallel folding)"};
    }
    return std::nullopt;
}

bool micro_batch_rule_passes(int64_t micro_batches, int64_t pp, int64_t v, PipelineSchedule schedule) {
    return micro_batches * pp * v <= kMaxSimulatedSlots && !(schedule == PipelineSchedule::interleaved && v > 1 && micro_batches % pp != 0);
}

std::optional<Error> micro_batch_rule(int64_t micro_batches, int64_t pp, int64_t v, PipelineSchedule schedule) {
    if (micro_batch_rule_passes(micro_batches, pp, v, schedule)) return std::nullopt;
    if (micro_batches * pp * v > kMaxSimulatedSlots) {
        return Error{"training.global_batch", str(micro_batches) + " micro-batches x " + str(pp * v) +
                                                  " pipeline chunks per step exceed the " + str(kMaxSimulatedSlots) +
                                                  " the schedule simulates (raise training.micro_batch)"};
    }
    // Megatron-LM's interleaved 1F1B needs the micro-batch count to be a multiple of pp
    // (Narayanan et al. 2021, arXiv 2104.04473, section 2.2.2).
    if (schedule == PipelineSchedule::interleaved && v > 1 && micro_batches % pp != 0) {
        return Error{"training.global_batch", "gives " + str(micro_batches) + " micro-batches per step, not a multiple of parallel.pp = " +
                                                  str(pp) + " (interleaved schedule)"};
    }
    return std::nullopt;
}

std::optional<Error> cp_rule(int64_t seq_len, int64_t cp) {
    // Load-balanced context parallelism cuts the sequence into 2*cp chunks (Megatron-Core CP docs).
    if (cp > 1 && seq_len % (2 * cp) != 0) {
        return Error{"training.seq_len", str(seq_len) + " is not divisible by 2*cp = " + str(2 * cp) +
                                             " (context parallelism splits the sequence into 2*cp chunks)"};
    }
    return std::nullopt;
}

std::optional<Error> sp_rule(int64_t seq_len, int64_t tp, int64_t cp) {
    // Sequence parallelism splits each CP rank's tokens over tp (Korthikanti et al. 2022, section 4.2.2).
    if ((seq_len / cp) % tp != 0) {
        return Error{"training.seq_len",
                     str(seq_len) + " per cp rank is not divisible by tp = " + str(tp) + " (sequence parallelism splits it over tp)"};
    }
    return std::nullopt;
}

std::optional<Error> gemm_shape_rule(const ModelSpec& m, DType gemm, int64_t tp) {
    // Transformer Engine FP8 GEMMs need the inner dimension divisible by 16.
    if (!is_quantized(gemm)) return std::nullopt;
    if (m.hidden % 16 != 0) {
        return Error{"model.hidden", str(m.hidden) + " is not a multiple of 16, which " + std::string(dtype_name(gemm)) + " GEMMs need"};
    }
    if ((m.ffn_hidden / tp) % 16 != 0) {
        return Error{"model.ffn_hidden", str(m.ffn_hidden) + " / tp = " + str(m.ffn_hidden / tp) + " is not a multiple of 16, which " +
                                             std::string(dtype_name(gemm)) + " GEMMs need"};
    }
    return std::nullopt;
}

namespace {

std::optional<Error> check_layout(Config& c) {
    ParallelSpec& p = c.parallel;
    const ModelSpec& m = c.model;
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.tp", p.tp, 1, kMaxGpus));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.pp", p.pp, 1, kMaxGpus));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.cp", p.cp, 1, kMaxGpus));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.ep", p.ep, 1, kMaxGpus));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.dp", p.dp, 0, kMaxGpus));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.zero", p.zero, 0, 3));
    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.virtual_stages", p.virtual_stages, 1, 1024));
    TRAINCLOCK_TRY(out_of_range<int64_t>("num_gpus", c.num_gpus, 0, kMaxGpus));

    TRAINCLOCK_TRY(out_of_range<int64_t>("parallel.expert_tp", p.expert_tp, 0, kMaxGpus));
    TRAINCLOCK_TRY(tp_rule(m, p.tp, p.etp()));
    TRAINCLOCK_TRY(pp_rule(m, p.pp, p.stage_split));
    TRAINCLOCK_TRY(virtual_stages_rule(m, p.pp, p.virtual_stages, p.schedule, p.stage_split));
    if (p.schedule == PipelineSchedule::interleaved && p.pp < 2) {
        return Error{"parallel.schedule", "interleaved needs parallel.pp >= 2"};
    }

    // TP*PP*CP*DP == num_gpus (DESIGN.md 2); a zero dp or num_gpus is derived from the others.
    const int64_t model_parallel = p.tp * p.pp * p.cp;  // each <= 2^20 and checked below before use
    if (p.tp * p.pp > kMaxGpus || model_parallel > kMaxGpus) {
        return Error{"num_gpus", "tp*pp*cp = " + str(p.tp) + "*" + str(p.pp) + "*" + str(p.cp) + " exceeds " + str(kMaxGpus) + " GPUs"};
    }
    if (c.num_gpus == 0 && p.dp == 0) p.dp = 1;
    if (c.num_gpus == 0) c.num_gpus = model_parallel * p.dp;
    // Built only on error: a search checks millions of layouts here.
    auto product = [&p] { return str(p.tp) + "*" + str(p.pp) + "*" + str(p.cp); };
    if (p.dp == 0) {
        if (c.num_gpus % model_parallel != 0) {
            return Error{"num_gpus", str(c.num_gpus) + " is not divisible by tp*pp*cp = " + product() + " = " + str(model_parallel)};
        }
        p.dp = c.num_gpus / model_parallel;
    } else if (model_parallel * p.dp != c.num_gpus) {
        return Error{"num_gpus",
                     str(c.num_gpus) + " differs from tp*pp*cp*dp = " + product() + "*" + str(p.dp) + " = " + str(model_parallel * p.dp)};
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("num_gpus", c.num_gpus, 1, kMaxGpus));
    TRAINCLOCK_TRY(node_fill_rule(c.num_gpus, c.node));
    TRAINCLOCK_TRY(ep_rule(m, p.tp, p.cp, p.dp, p.ep, p.etp()));
    return std::nullopt;
}

// training.finetune and the offload switches.
std::optional<Error> check_finetune(const Config& c) {
    const FinetuneSpec& f = c.training.finetune;
    const ModelSpec& m = c.model;
    TRAINCLOCK_TRY(out_of_range<int64_t>("training.finetune.frozen_layers", f.frozen_layers, 0, total_layers(m)));
    if (f.adapters()) {
        if (f.lora_rank == 0)
            return Error{"training.finetune.lora_rank", "required with method " + std::string(enum_name(f.method)) +
                                                            " (the adapter rank r, e.g. 16; PEFT's default is 8)"};
        TRAINCLOCK_TRY(out_of_range<int64_t>("training.finetune.lora_rank", f.lora_rank, 1, std::min<int64_t>(m.hidden, 65536)));
        if (f.frozen_layers == total_layers(m))
            return Error{"training.finetune.frozen_layers", "freezes every layer, leaving no adapter to train"};
    } else if (f.lora_rank != 0) {
        return Error{"training.finetune.lora_rank", "only with method lora or qlora (method is full)"};
    }
    const TrainingSpec& t = c.training;
    if ((t.offload_optimizer || t.offload_params || t.offload_activations) && c.gpu.host_link_gbps <= 0)
        return Error{"gpu.host_link_gbps", "unknown for " + c.gpu.name +
                                               ", which offloading to CPU memory needs (the GPU's PCIe / NVLink-C2C "
                                               "bandwidth per direction, GB/s: PCIe Gen4 x16 32, Gen5 x16 64)"};
    if (c.training.offload_params && c.parallel.zero < 3 && c.parallel.weight_replicas() > 1)
        return Error{"training.offload_params",
                     "needs parallel.zero 3 with data parallelism (ZeRO-Infinity / FSDP offload the sharded weights)"};
    // bitsandbytes pages Adam-family states (bnb.optim PagedAdam, PagedAdamW, PagedAdamW8bit, PagedAdamW32bit).
    if (t.paged_optimizer && t.optimizer != Optimizer::adamw && t.optimizer != Optimizer::adamw8bit && t.optimizer != Optimizer::adam)
        return Error{"training.paged_optimizer", "needs optimizer adamw, adamw8bit or adam (bitsandbytes' paged optimizers), not " +
                                                     std::string(enum_name(t.optimizer))};
    if (t.paged_optimizer && t.offload_optimizer)
        return Error{"training.paged_optimizer", "and training.offload_optimizer both move the optimizer states to CPU memory: choose one"};
    // torchtune refuses it with gradient accumulation: the hooks step each parameter after every backward
    // (recipes/full_finetune_single_device.py: "Gradient accumulation is not supported with optimizer in bwd").
    const int64_t per_step = std::max<int64_t>(t.micro_batch, 1) * std::max<int64_t>(c.parallel.dp, 1);
    if (t.optimizer_in_backward && t.global_batch / per_step > 1)
        return Error{"training.optimizer_in_backward",
                     "needs one micro-batch per step (global_batch = micro_batch x dp): gradient accumulation is not possible when each "
                     "parameter steps as soon as its gradient is ready (torchtune optimizer_in_bwd)"};
    if (t.optimizer_in_backward && t.offload_optimizer)
        return Error{"training.optimizer_in_backward",
                     "with training.offload_optimizer: the step runs on the CPU after backward, not in it"};
    return std::nullopt;
}

std::optional<Error> check_training(const Config& c) {
    const TrainingSpec& t = c.training;
    const ParallelSpec& p = c.parallel;
    TRAINCLOCK_TRY(out_of_range<int64_t>("training.seq_len", t.seq_len, 1, int64_t(1) << 24));
    // FlashAttention-3 and cuDNN's Hopper kernels use wgmma/TMA (Shah et al. 2024, arXiv 2407.08608):
    // NVIDIA parts with FP8 tensor cores (Hopper, Blackwell; Ada's run cuDNN's generic path).
    if (t.attention_kernel == AttentionKernel::flash3 && (c.gpu.vendor != "NVIDIA" || !c.gpu.supports(DType::fp8))) {
        return Error{"training.attention_kernel",
                     "flash3 needs an NVIDIA GPU with FP8 tensor cores (Hopper or newer); " + c.gpu.name + " has none (use flash2)"};
    }
    TRAINCLOCK_TRY(out_of_range<int64_t>("training.global_batch", t.global_batch, 1, int64_t(1) << 26));
    TRAINCLOCK_TRY(out_of_range<int64_t>("training.micro_batch", t.micro_batch, 1, int64_t(1) << 20));
    if (t.global_batch % (t.micro_batch * p.dp) != 0) {
        return Error{"training.global_batch", str(t.global_batch) + " is not a multiple of micro_batch*dp = " + str(t.micro_batch) + "*" +
                                                  str(p.dp) + " = " + str(t.micro_batch * p.dp)};
    }
    TRAINCLOCK_TRY(micro_batch_rule(t.global_batch / (t.micro_batch * p.dp), p.pp, p.virtual_stages, p.schedule));
    TRAINCLOCK_TRY(cp_rule(t.seq_len, p.cp));
    if (p.sequence_parallel && p.tp > 1) TRAINCLOCK_TRY(sp_rule(t.seq_len, p.tp, p.cp));
    TRAINCLOCK_TRY(gemm_shape_rule(c.model, c.precision.gemm, p.tp));
    TRAINCLOCK_TRY(check_finetune(c));
    TRAINCLOCK_TRY(out_of_range("training.tokens", t.tokens, 0.0, 1e18));
    if (t.price_per_gpu_hour_usd >= 0) TRAINCLOCK_TRY(out_of_range("training.price_per_gpu_hour", t.price_per_gpu_hour_usd, 0.0, 1e6));
    // The whole run (run.hpp): 0 = default for the interval and the storage; < 0 = default for the rest.
    TRAINCLOCK_TRY(out_of_range("training.checkpoint_interval_s", t.checkpoint_interval_s, 0.0, 1e10));
    TRAINCLOCK_TRY(out_of_range<int64_t>("training.checkpoint_interval_steps", t.checkpoint_interval_steps, 0, int64_t(1) << 40));
    if (t.checkpoint_interval_s > 0 && t.checkpoint_interval_steps > 0) {
        return Error{"training.checkpoint_interval_steps", "give training.checkpoint_interval_s or checkpoint_interval_steps, not both"};
    }
    TRAINCLOCK_TRY(out_of_range("training.storage_bw_gbps", t.storage_bw_gbps, 0.0, 1e9));
    TRAINCLOCK_TRY(out_of_range("training.memory_headroom_gib", t.memory_headroom_gib, 0.0, 1e6));
    TRAINCLOCK_TRY(out_of_range("training.memory_headroom_pct", t.memory_headroom_pct, 0.0, 99.0));
    if (t.memory_headroom_gib > 0 && t.memory_headroom_pct > 0)
        return Error{"training.memory_headroom_pct", "give training.memory_headroom_gib or memory_headroom_pct, not both"};
    if (t.restart_s >= 0) TRAINCLOCK_TRY(out_of_range("training.restart_s", t.restart_s, 0.0, 1e8));
    if (t.failure_rate_per_gpu_hour >= 0)
        TRAINCLOCK_TRY(out_of_range("training.failure_rate_per_gpu_hour", t.failure_rate_per_gpu_hour, 0.0, 1.0));
    return std::nullopt;
}

std::optional<Error> check_overrides(std::string_view prefix, const CalibrationOverrides& k) {
    for (const auto& entry : kDTypeNames) {
        const auto& efficiency = k.gemm_efficiency[static_cast<int>(entry.value)];
        if (efficiency) TRAINCLOCK_TRY(out_of_range(join_key(prefix, "gemm_efficiency"), entry.name, *efficiency, 1e-3, 1.0));
    }
    for (const auto& scalar : calibration_scalars(k))
        if (*scalar.value) TRAINCLOCK_TRY(out_of_range(prefix, scalar.key, **scalar.value, scalar.low, scalar.high));
    return std::nullopt;
}

}  // namespace

std::optional<Error> check_calibration(const CalibrationSpec& calibration) {
    TRAINCLOCK_TRY(check_overrides("calibration", calibration));
    for (const auto& [gpu, overrides] : calibration.per_gpu) TRAINCLOCK_TRY(check_overrides("calibration.gpus." + gpu, overrides));
    return std::nullopt;
}

std::optional<Error> check_layout_rules(Config& c) {
    TRAINCLOCK_TRY(check_layout(c));
    TRAINCLOCK_TRY(check_training(c));
    return std::nullopt;
}

}  // namespace trainclock
