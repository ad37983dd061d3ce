// trainclock (internal): JSON objects of models, GPUs, nodes, precisions and calibrations.
//
// Index
//   [SECTION] Helpers
//   [SECTION] Reading (keys of presets/README.md)
//   [SECTION] Writing (canonical order)
#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "trainclock/base/names.hpp"
#include "trainclock/catalogue/presets.hpp"

namespace trainclock {

// [SECTION] Helpers ------------------------------------------------------------------------------

namespace {

// reader.read(key, out) for each (key, out) pair in turn, an enum by its spellings (kSpellings):
// one rule for the plain keys of a spec, in the order they are checked.
template <class T, class... Rest>
void read_keys(ObjectReader& reader, std::string_view key, T& out, Rest&&... rest) {
    if constexpr (std::is_enum_v<T>) {
        const Spellings<T>& spellings = std::get<Spellings<T>>(kSpellings);
        reader.read_enum(key, spellings.names, spellings.count, out);
    } else {
        reader.read(key, out);
    }
    if constexpr (sizeof...(rest) > 0) read_keys(reader, std::forward<Rest>(rest)...);
}

// Reads {"fp32": x, "bf16": y, ...}; `store(dtype, value)` is called for each dtype present.
template <class Store>
void read_per_dtype(ObjectReader& parent, std::string_view key, Store store) {
    const auto object = parent.read_object(key);
    if (!object) return;
    ObjectReader reader(*object, join_key(parent.path(), key));
    for (const auto& entry : kDTypeNames) {
        if (!reader.find(entry.name)) continue;
        double value = 0;
        reader.read(entry.name, value);
        store(entry.value, value);
    }
    parent.adopt(reader.finish());
}

// Writes {"fp32": x, "bf16": y, ...} of the dtypes present (a value != 0, or set): read_per_dtype's inverse.
std::optional<double> present(double value) { return value != 0 ? std::optional<double>(value) : std::nullopt; }
std::optional<double> present(const std::optional<double>& value) { return value; }
template <class Values>
void write_per_dtype(JsonWriter& out, std::string_view key, const Values& values) {
    out.key(key).begin_object();
    for (const auto& entry : kDTypeNames)
        if (const std::optional<double> value = present(values[static_cast<int>(entry.value)])) out.field(entry.name, *value);
    out.end_object();
}

void require_all(ObjectReader& reader, std::initializer_list<std::string_view> keys) {
    for (const auto key : keys) reader.require(key);
}

void write_if(JsonWriter& out, std::string_view key, const std::string& text) {
    if (!text.empty()) out.field(key, text);
}

// Every preset object opens with its name and display name and closes with its source (presets/README.md).
template <class Spec>
void begin_spec(JsonWriter& out, const Spec& spec) {
    out.begin_object();
    out.field("name", spec.name);
    write_if(out, "display_name", spec.display_name);
}
template <class Spec>
void end_spec(JsonWriter& out, const Spec& spec) {
    write_if(out, "source", spec.source);
    out.end_object();
}

}  // namespace

Error unknown_preset_error(std::string_view key, std::string_view kind, std::string_view name, const std::vector<std::string>& names) {
    std::string message = "unknown " + std::string(kind) + " preset '" + std::string(name) + "'";
    const std::string guess = did_you_mean(name, names);
    if (!guess.empty())
        message += "; did you mean " + guess + "?";
    else
        message += " (list them with `trainclock presets " + std::string(kind) + "s`)";
    return Error{std::string(key), message};
}

// [SECTION] Reading (keys of presets/README.md) ---------------------------------------------------

void read_model(ObjectReader& reader, ModelSpec& spec, bool required) {
    if (required) { require_all(reader, {"architecture", "layers", "hidden", "heads", "ffn_hidden", "vocab", "activation", "norm"}); }
    read_keys(reader, "display_name", spec.display_name, "architecture", spec.architecture, "layers", spec.layers, "decoder_layers",
              spec.decoder_layers, "hidden", spec.hidden, "heads", spec.heads, "kv_heads", spec.kv_heads, "head_dim", spec.head_dim,
              "ffn_hidden", spec.ffn_hidden, "vocab", spec.vocab, "max_seq_len", spec.max_seq_len, "activation", spec.activation, "norm",
              spec.norm, "tied_embeddings", spec.tied_embeddings, "memory_len", spec.memory_len, "relative_position",
              spec.relative_position, "softmax_head", spec.softmax_head);
    if (required && !reader.has("kv_heads")) spec.kv_heads = spec.heads;  // plain multi-head attention
    if (const auto moe = reader.read_object("moe")) {
        ObjectReader moe_reader(*moe, join_key(reader.path(), "moe"));
        if (required || spec.moe.experts == 0) require_all(moe_reader, {"experts", "top_k", "expert_ffn_hidden"});
        MoeSpec& e = spec.moe;
        moe_reader.read_fields("experts", e.experts, "top_k", e.top_k, "expert_ffn_hidden", e.expert_ffn_hidden, "shared_experts",
                               e.shared_experts, "dense_layers", e.dense_layers, "every", e.every, "capacity_factor", e.capacity_factor,
                               "imbalance", e.imbalance);
        reader.adopt(moe_reader.finish());
    }
    if (const auto mla = reader.read_object("mla")) {
        ObjectReader a(*mla, join_key(reader.path(), "mla"));
        if (required || !spec.mla.enabled()) require_all(a, {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
        MlaSpec& l = spec.mla;
        a.read_fields("q_lora_rank", l.q_lora_rank, "kv_lora_rank", l.kv_lora_rank, "qk_nope_head_dim", l.qk_nope_head_dim,
                      "qk_rope_head_dim", l.qk_rope_head_dim, "v_head_dim", l.v_head_dim);
        reader.adopt(a.finish());
    }
    if (const auto local = reader.read_object("local_attention")) {
        ObjectReader a(*local, join_key(reader.path(), "local_attention"));
        if (required || !spec.local_attention.enabled()) require_all(a, {"kind", "window"});
        a.read_enum("kind", kLocalAttentionKinds, spec.local_attention.kind);
        a.read("window", spec.local_attention.window);
        a.read("full_every", spec.local_attention.full_every);
        reader.adopt(a.finish());
    }
    reader.read("mtp_layers", spec.mtp_layers);
    read_keys(reader, "position_embeddings", spec.position_embeddings, "token_types", spec.token_types, "pooler", spec.pooler,
              "linear_bias", spec.linear_bias);
    double published_b = 0;  // metadata for cross-checks, not part of the spec
    reader.read("params_b_published", published_b);
    std::string notes;
    reader.read("notes", notes);
    reader.read("source", spec.source);
}

void read_gpu(ObjectReader& reader, GpuSpec& spec, bool required) {
    if (required) require_all(reader, {"memory_gib", "memory_bw_gbps", "peak_tflops", "sm_count", "tdp_w"});
    read_keys(reader, "display_name", spec.display_name, "vendor", spec.vendor, "memory_gib", spec.memory_gib, "memory_bw_gbps",
              spec.memory_bw_gbps);
    read_per_dtype(reader, "peak_tflops", [&](DType dtype, double tflops) { spec.peak_tflops[static_cast<int>(dtype)] = tflops; });
    read_keys(reader, "sm_count", spec.sm_count, "l2_cache_mb", spec.l2_cache_mb, "tdp_w", spec.tdp_w, "price_per_gpu_hour_usd",
              spec.price_per_gpu_hour_usd, "host_link_gbps", spec.host_link_gbps, "default_node", spec.default_node);
    if (const auto measured = reader.read_object("measured")) {  // published achievable fractions
        ObjectReader m(*measured, join_key(reader.path(), "measured"));
        read_per_dtype(m, "gemm_efficiency",
                       [&](DType dtype, double fraction) { spec.measured_gemm_efficiency[static_cast<int>(dtype)] = fraction; });
        m.read("memory_efficiency", spec.measured_memory_efficiency);
        m.read("sustained_clock_ratio", spec.measured_sustained_clock);
        std::string measured_source;
        m.read("source", measured_source);
        reader.adopt(m.finish());
    }
    std::string notes;
    reader.read("notes", notes);
    reader.read("source", spec.source);
}

void read_node(ObjectReader& reader, NodeSpec& spec, bool required) {
    if (required) require_all(reader, {"gpus_per_node", "intra_bw_gbps", "inter_bw_gbps"});
    read_keys(reader, "display_name", spec.display_name, "gpus_per_node", spec.gpus_per_node, "gpus_per_host", spec.gpus_per_host,
              "intra_link", spec.intra_link, "intra_bw_gbps", spec.intra_bw_gbps, "intra_latency_us", spec.intra_latency_us, "peer_to_peer",
              spec.peer_to_peer, "host_memory_bw_gbps", spec.host_memory_bw_gbps, "host_op_scale", spec.host_op_scale);
    if (const auto groups = reader.read_object("intra_group_bw_gbps")) {  // {"2": GB/s, "4": GB/s, ...}
        ObjectReader g(*groups, join_key(reader.path(), "intra_group_bw_gbps"));
        spec.intra_group_bw_gbps.clear();
        // The keys are group sizes "2" .. "1024": the object's own keys are looked up (a loop over
        // all 1023 names cost ~1000 lookups per node), read in ascending size, the first other key
        // an "unknown key" with a guess among the 1023.
        std::vector<std::pair<int64_t, std::string_view>> sizes;
        std::optional<std::string_view> unknown;
        for (const auto field : *groups) {
            int64_t k = 0;
            const std::string_view key = field.key;
            const auto [end, code] = std::from_chars(key.data(), key.data() + key.size(), k);
            if (code == std::errc() && end == key.data() + key.size() && k >= 2 && k <= 1024 && std::to_string(k) == key) {
                sizes.emplace_back(k, key);
            } else if (!unknown) {
                unknown = key;
            }
        }
        std::sort(sizes.begin(), sizes.end());
        for (const auto& [k, key] : sizes) {
            double bw_gbps = 0;
            g.read(key, bw_gbps);
            spec.intra_group_bw_gbps.emplace_back(k, bw_gbps);
        }
        if (unknown) {
            static const std::vector<std::string> kGroupSizes = [] {
                std::vector<std::string> names;
                for (int64_t k = 2; k <= 1024; ++k) names.push_back(std::to_string(k));
                return names;
            }();
            std::string message = "unknown key";
            const std::string guess = did_you_mean(*unknown, kGroupSizes);
            if (!guess.empty()) message += "; did you mean " + guess + "?";
            reader.adopt(Error{join_key(g.path(), *unknown), message});
        } else {
            reader.adopt(g.finish());
        }
    }
    read_keys(reader, "inter_link", spec.inter_link, "inter_bw_gbps", spec.inter_bw_gbps, "inter_latency_us", spec.inter_latency_us,
              "power_overhead", spec.power_overhead);
    reader.read_enum("network", kNetworkNames, spec.network);
    std::string notes;
    reader.read("notes", notes);
    reader.read("source", spec.source);
}

void read_precision(ObjectReader& reader, PrecisionSpec& spec, bool required) {
    if (required) {
        require_all(reader, {"gemm", "activations", "params", "master_weights", "grads", "grad_reduce", "optimizer_states", "loss_scaling",
                             "autocast"});
    }
    read_keys(reader, "description", spec.description, "gemm", spec.gemm, "activations", spec.activations, "params", spec.params,
              "master_weights", spec.master_weights, "grads", spec.grads, "grad_reduce", spec.grad_reduce, "optimizer_states",
              spec.optimizer_states, "loss_scaling", spec.loss_scaling, "autocast", spec.autocast);
    if (reader.has("fp8_recipe")) {
        Fp8Recipe recipe = Fp8Recipe::delayed;
        reader.read_enum("fp8_recipe", kFp8RecipeNames, recipe);
        spec.fp8_recipe = recipe;
    }
    std::string source;  // the framework behaviour the record follows; documentation only
    reader.read("source", source);
    std::string notes;
    reader.read("notes", notes);
}

void read_framework(ObjectReader& reader, FrameworkSpec& spec, bool required) {
    if (required) {
        require_all(reader,
                    {"attention_kernel", "overlap_tp_comm", "overlap_dp_comm", "overlap_pp_comm", "overlap_cp_comm", "overlap_ep_comm",
                     "fp8_recipe", "fused_optimizer", "fused_norms", "fused_elementwise", "host_op_s", "gather_prefetch", "cuda_graphs",
                     "compile", "step_host_syncs", "step_host_ops_per_tensor", "step_overhead_fitted"});
    }
    reader.read("display_name", spec.display_name);
    if (const auto kernels = reader.read_object("attention_kernel")) {
        ObjectReader k(*kernels, join_key(reader.path(), "attention_kernel"));
        for (const auto& generation : kGpuGenerationNames) {
            if (required) k.require(generation.name);
            k.read_enum(generation.name, kAttentionKernelNames, spec.attention_kernel[static_cast<int>(generation.value)]);
        }
        reader.adopt(k.finish());
    }
    read_keys(reader, "overlap_tp_comm", spec.overlap_tp_comm, "overlap_dp_comm", spec.overlap_dp_comm, "overlap_pp_comm",
              spec.overlap_pp_comm, "overlap_cp_comm", spec.overlap_cp_comm, "overlap_ep_comm", spec.overlap_ep_comm, "fp8_recipe",
              spec.fp8_recipe, "fused_optimizer", spec.fused_optimizer, "fused_norms", spec.fused_norms, "op_level_sac", spec.op_level_sac,
              "selective_saves_matmuls", spec.selective_saves_matmuls, "quantize_layouts_one_pass", spec.quantize_layouts_one_pass,
              "quantize_lm_head", spec.quantize_lm_head, "fused_elementwise", spec.fused_elementwise, "compile", spec.compile,
              "torch_grouped_mm", spec.torch_grouped_mm, "flash_attention", spec.flash_attention, "amp_master_grads_per_tensor",
              spec.amp_master_grads_per_tensor, "vocab_parallel_cross_entropy", spec.vocab_parallel_cross_entropy,
              "async_tp_grad_all_reduce", spec.async_tp_grad_all_reduce, "fp32_master_grads", spec.fp32_master_grads,
              "step_overhead_fitted", spec.step_overhead_fitted);
    for (const auto& [key, value] :
         {std::pair{"step_host_syncs", &spec.step_host_syncs}, std::pair{"step_host_ops_per_tensor", &spec.step_host_ops_per_tensor}}) {
        if (!reader.has(key)) continue;
        reader.read(key, *value);
        if (!(*value >= 0 && *value <= 1000)) reader.fail(key, "must be between 0 and 1000, got " + json_number(*value));
    }
    if (reader.has("fused_causal_softmax_max_keys")) {
        reader.read("fused_causal_softmax_max_keys", spec.fused_causal_softmax_max_keys);
        const double keys = spec.fused_causal_softmax_max_keys;
        if (!(keys >= 0 && keys <= 1048576 && keys == std::floor(keys)))
            reader.fail("fused_causal_softmax_max_keys", "must be a whole number of tokens from 0 to 1048576, got " + json_number(keys));
    }
    if (spec.op_level_sac && spec.selective_saves_matmuls) {
        const char* key = reader.has("selective_saves_matmuls") ? "selective_saves_matmuls" : "op_level_sac";
        reader.fail(key, "op_level_sac and selective_saves_matmuls are two selective-recompute policies: set one of them to false");
    }
    if (reader.has("host_op_s")) {
        reader.read("host_op_s", spec.host_op_s);
        if (!(spec.host_op_s >= 0 && spec.host_op_s <= 1)) {
            reader.fail("host_op_s", "must be between 0 and 1 s, got " + json_number(spec.host_op_s));
        }
    }
    reader.read_enum("gather_prefetch", kGatherPrefetchNames, spec.gather_prefetch);
    reader.read_enum("cuda_graphs", kCudaGraphsNames, spec.cuda_graphs);
    reader.read_enum("moe_dispatcher", kMoeDispatcherNames, spec.moe_dispatcher);
    if (const auto sources = reader.read_object("sources")) {
        spec.sources.clear();
        for (const auto field : *sources) {
            std::string_view text;
            if (field.value.get_string().get(text) != simdjson::SUCCESS) {
                reader.fail(join_key("sources", field.key), "expected a citation string");
                continue;
            }
            spec.sources.emplace_back(std::string(field.key), std::string(text));
        }
    }
}

namespace {

void read_overrides(ObjectReader& reader, CalibrationOverrides& spec) {
    read_per_dtype(reader, "gemm_efficiency",
                   [&](DType dtype, double fraction) { spec.gemm_efficiency[static_cast<int>(dtype)] = fraction; });
    for (const auto& scalar : calibration_scalars(spec)) {
        if (!reader.find(scalar.key)) continue;
        double value = 0;
        reader.read(scalar.key, value);
        *scalar.value = value;
    }
}

}  // namespace

namespace {

// An array of strings (fitted_on's lists).
void read_strings(ObjectReader& reader, std::string_view key, std::vector<std::string>& out) {
    const auto value = reader.find(key);
    if (!value) return;
    simdjson::dom::array array;
    if (value->get_array().get(array) != simdjson::SUCCESS)
        return reader.fail(key, "expected an array of strings, got " + json_type_phrase(*value));
    out.clear();
    for (const auto item : array) {
        std::string_view text;
        if (item.get_string().get(text) != simdjson::SUCCESS)
            return reader.fail(key, "expected an array of strings, got an item that is " + json_type_phrase(item));
        out.emplace_back(text);
    }
}

void read_scope(ObjectReader& reader, CalibrationScope& scope) {
    read_strings(reader, "frameworks", scope.frameworks);
    read_strings(reader, "gpus", scope.gpus);
    read_strings(reader, "precisions", scope.precisions);
    reader.read("cases", scope.cases);
    if (scope.cases < 0) reader.fail("cases", "must be >= 0, got " + std::to_string(scope.cases));
    read_strings(reader, "factors", scope.factors);
}

}  // namespace

void read_calibration(ObjectReader& reader, CalibrationSpec& spec) {
    reader.read("name", spec.name);
    if (const auto fitted_on = reader.read_object("fitted_on")) {
        ObjectReader scope(*fitted_on, join_key(reader.path(), "fitted_on"));
        CalibrationScope read;
        read_scope(scope, read);
        reader.adopt(scope.finish());
        spec.fitted_on = std::move(read);
    }
    reader.read("precision_blind", spec.precision_blind);
    read_overrides(reader, spec);
    // "gpus": {"<GPU preset>": {overrides}}: a misspelt GPU would silently calibrate nothing, so
    // every name must be a preset.
    const auto gpus = reader.read_object("gpus");
    if (!gpus) return;
    ObjectReader sections(*gpus, join_key(reader.path(), "gpus"));
    const std::vector<std::string> names = preset_names(PresetKind::gpu);
    for (const auto field : *gpus) {
        const std::string name(field.key);
        const auto section = sections.read_object(name);
        if (!section) continue;
        if (std::find(names.begin(), names.end(), name) == names.end()) {
            sections.adopt(unknown_preset_error(join_key(sections.path(), name), "gpu", name, names));
            continue;
        }
        ObjectReader one(*section, join_key(sections.path(), name));
        CalibrationOverrides overrides;
        read_overrides(one, overrides);
        sections.adopt(one.finish());
        spec.per_gpu.emplace_back(name, overrides);
    }
    reader.adopt(sections.finish());
}

// [SECTION] Writing (canonical order) -------------------------------------------------------------

void write_model(JsonWriter& out, const ModelSpec& spec) {
    begin_spec(out, spec);
    out.field("architecture", enum_name(spec.architecture));
    out.field("layers", spec.layers);
    if (spec.decoder_layers != 0) out.field("decoder_layers", spec.decoder_layers);
    out.field("hidden", spec.hidden);
    out.field("heads", spec.heads);
    out.field("kv_heads", spec.kv_heads);
    if (spec.head_dim != 0) out.field("head_dim", spec.head_dim);
    out.field("ffn_hidden", spec.ffn_hidden);
    out.field("vocab", spec.vocab);
    if (spec.max_seq_len != 0) out.field("max_seq_len", spec.max_seq_len);
    out.field("activation", enum_name(spec.activation));
    out.field("norm", enum_name(spec.norm));
    out.field("tied_embeddings", spec.tied_embeddings);
    if (spec.memory_len != 0) out.field("memory_len", spec.memory_len);
    if (spec.relative_position) out.field("relative_position", spec.relative_position);
    if (spec.softmax_head != 0) out.field("softmax_head", spec.softmax_head);
    const MoeSpec& moe = spec.moe;
    if (moe.experts || moe.top_k || moe.expert_ffn_hidden || moe.shared_experts || moe.dense_layers) {
        out.key("moe").begin_object();
        out.field("experts", moe.experts).field("top_k", moe.top_k).field("expert_ffn_hidden", moe.expert_ffn_hidden);
        out.field("shared_experts", moe.shared_experts).field("dense_layers", moe.dense_layers);
        if (moe.every != 1) out.field("every", moe.every);
        if (moe.capacity_factor != 0) out.field("capacity_factor", moe.capacity_factor);
        if (moe.imbalance != 1) out.field("imbalance", moe.imbalance);
        out.end_object();
    }
    const MlaSpec& mla = spec.mla;
    if (mla.q_lora_rank || mla.kv_lora_rank || mla.qk_nope_head_dim || mla.qk_rope_head_dim || mla.v_head_dim) {
        out.key("mla").begin_object();
        out.field("q_lora_rank", mla.q_lora_rank).field("kv_lora_rank", mla.kv_lora_rank);
        out.field("qk_nope_head_dim", mla.qk_nope_head_dim).field("qk_rope_head_dim", mla.qk_rope_head_dim);
        out.field("v_head_dim", mla.v_head_dim);
        out.end_object();
    }
    const LocalAttentionSpec& local = spec.local_attention;
    if (local.kind != LocalAttentionKind::none || local.window || local.full_every) {
        out.key("local_attention").begin_object();
        out.field("kind", enum_name(local.kind)).field("window", local.window).field("full_every", local.full_every);
        out.end_object();
    }
    if (spec.mtp_layers != 0) out.field("mtp_layers", spec.mtp_layers);
    if (spec.position_embeddings != 0) out.field("position_embeddings", spec.position_embeddings);
    if (spec.token_types != 0) out.field("token_types", spec.token_types);
    if (spec.pooler) out.field("pooler", true);
    if (spec.linear_bias) out.field("linear_bias", true);
    end_spec(out, spec);
}

void write_gpu(JsonWriter& out, const GpuSpec& spec) {
    begin_spec(out, spec);
    write_if(out, "vendor", spec.vendor);
    out.field("memory_gib", spec.memory_gib);
    out.field("memory_bw_gbps", spec.memory_bw_gbps);
    write_per_dtype(out, "peak_tflops", spec.peak_tflops);
    out.field("sm_count", spec.sm_count);
    if (spec.l2_cache_mb != 0) out.field("l2_cache_mb", spec.l2_cache_mb);
    out.field("tdp_w", spec.tdp_w);
    if (spec.price_per_gpu_hour_usd != 0) out.field("price_per_gpu_hour_usd", spec.price_per_gpu_hour_usd);
    if (spec.host_link_gbps != 0) out.field("host_link_gbps", spec.host_link_gbps);
    write_if(out, "default_node", spec.default_node);
    bool any_measured = spec.measured_memory_efficiency != 0 || spec.measured_sustained_clock != 0;
    for (const double fraction : spec.measured_gemm_efficiency) any_measured = any_measured || fraction != 0;
    if (any_measured) {
        out.key("measured").begin_object();
        write_per_dtype(out, "gemm_efficiency", spec.measured_gemm_efficiency);
        if (spec.measured_memory_efficiency != 0) out.field("memory_efficiency", spec.measured_memory_efficiency);
        if (spec.measured_sustained_clock != 0) out.field("sustained_clock_ratio", spec.measured_sustained_clock);
        out.end_object();
    }
    end_spec(out, spec);
}

void write_node(JsonWriter& out, const NodeSpec& spec) {
    begin_spec(out, spec);
    out.field("gpus_per_node", spec.gpus_per_node);
    if (spec.gpus_per_host > 0) out.field("gpus_per_host", spec.gpus_per_host);
    write_if(out, "intra_link", spec.intra_link);
    out.field("intra_bw_gbps", spec.intra_bw_gbps);
    out.field("intra_latency_us", spec.intra_latency_us);
    if (!spec.intra_group_bw_gbps.empty()) {
        out.key("intra_group_bw_gbps");
        out.begin_object();
        for (const auto& [k, bw_gbps] : spec.intra_group_bw_gbps) out.field(std::to_string(k), bw_gbps);
        out.end_object();
    }
    write_if(out, "inter_link", spec.inter_link);
    out.field("inter_bw_gbps", spec.inter_bw_gbps);
    out.field("inter_latency_us", spec.inter_latency_us);
    if (spec.network != NetworkKind::infiniband) out.field("network", enum_name(spec.network));
    out.field("power_overhead", spec.power_overhead);
    if (!spec.peer_to_peer) out.field("peer_to_peer", false);
    if (spec.host_memory_bw_gbps > 0) out.field("host_memory_bw_gbps", spec.host_memory_bw_gbps);
    if (spec.host_op_scale != 1.0) out.field("host_op_scale", spec.host_op_scale);
    end_spec(out, spec);
}

void write_precision(JsonWriter& out, const PrecisionSpec& spec) {
    out.begin_object();
    out.field("name", spec.name);
    write_if(out, "description", spec.description);
    out.field("gemm", dtype_name(spec.gemm));
    out.field("activations", dtype_name(spec.activations));
    out.field("params", dtype_name(spec.params));
    out.field("master_weights", enum_name(spec.master_weights));
    out.field("grads", dtype_name(spec.grads));
    out.field("grad_reduce", dtype_name(spec.grad_reduce));
    out.field("optimizer_states", dtype_name(spec.optimizer_states));
    out.field("loss_scaling", enum_name(spec.loss_scaling));
    out.field("autocast", spec.autocast);
    if (spec.fp8_recipe) out.field("fp8_recipe", fp8_recipe_name(*spec.fp8_recipe));
    out.end_object();
}

void write_framework(JsonWriter& out, const FrameworkSpec& spec, bool with_sources) {
    begin_spec(out, spec);
    out.key("attention_kernel").begin_object();
    for (const auto& generation : kGpuGenerationNames)
        out.field(generation.name, enum_name(spec.attention_kernel[static_cast<int>(generation.value)]));
    out.end_object();
    out.field("overlap_tp_comm", spec.overlap_tp_comm).field("overlap_dp_comm", spec.overlap_dp_comm);
    out.field("overlap_pp_comm", spec.overlap_pp_comm).field("overlap_cp_comm", spec.overlap_cp_comm);
    out.field("overlap_ep_comm", spec.overlap_ep_comm);
    out.field("fp8_recipe", fp8_recipe_name(spec.fp8_recipe));
    out.field("fused_optimizer", spec.fused_optimizer).field("fused_norms", spec.fused_norms);
    out.field("fused_elementwise", spec.fused_elementwise);
    out.field("host_op_s", spec.host_op_s);
    out.field("step_host_syncs", spec.step_host_syncs).field("step_host_ops_per_tensor", spec.step_host_ops_per_tensor);
    out.field("step_overhead_fitted", spec.step_overhead_fitted);
    out.field("gather_prefetch", enum_name(spec.gather_prefetch));
    out.field("cuda_graphs", enum_name(spec.cuda_graphs)).field("compile", spec.compile);
    if (spec.moe_dispatcher != MoeDispatcher::alltoall) out.field("moe_dispatcher", enum_name(spec.moe_dispatcher));
    if (spec.op_level_sac) out.field("op_level_sac", true);
    if (spec.selective_saves_matmuls) out.field("selective_saves_matmuls", true);
    if (!spec.quantize_layouts_one_pass) out.field("quantize_layouts_one_pass", false);
    if (!spec.quantize_lm_head) out.field("quantize_lm_head", false);
    if (spec.fused_causal_softmax_max_keys > 0) out.field("fused_causal_softmax_max_keys", spec.fused_causal_softmax_max_keys);
    if (spec.torch_grouped_mm) out.field("torch_grouped_mm", true);
    if (spec.amp_master_grads_per_tensor) out.field("amp_master_grads_per_tensor", true);
    if (spec.vocab_parallel_cross_entropy) out.field("vocab_parallel_cross_entropy", true);
    if (spec.async_tp_grad_all_reduce) out.field("async_tp_grad_all_reduce", true);
    if (spec.fp32_master_grads) out.field("fp32_master_grads", true);
    if (!spec.flash_attention) out.field("flash_attention", false);
    if (with_sources && !spec.sources.empty()) {
        out.key("sources").begin_object();
        for (const auto& [key, citation] : spec.sources) out.field(key, citation);
        out.end_object();
    }
    out.end_object();
}

bool calibration_is_default(const CalibrationSpec& spec) {
    bool any = spec.precision_blind || !spec.per_gpu.empty() || !spec.name.empty() || spec.fitted_on.has_value();
    for (const auto& scalar : calibration_scalars(spec)) any = any || scalar.value->has_value();
    for (const auto& efficiency : spec.gemm_efficiency) any = any || efficiency.has_value();
    return !any;
}

namespace {

// The override keys of one object (the caller opens and closes it).
void write_overrides(JsonWriter& out, const CalibrationOverrides& spec) {
    bool any_gemm = false;
    for (const auto& efficiency : spec.gemm_efficiency) any_gemm = any_gemm || efficiency.has_value();
    if (any_gemm) write_per_dtype(out, "gemm_efficiency", spec.gemm_efficiency);
    for (const auto& scalar : calibration_scalars(spec)) {
        if (*scalar.value) out.field(scalar.key, **scalar.value);
    }
}

}  // namespace

void write_calibration(JsonWriter& out, const CalibrationSpec& spec) {
    out.begin_object();
    if (!spec.name.empty()) out.field("name", spec.name);
    if (spec.fitted_on) {
        const CalibrationScope& f = *spec.fitted_on;
        out.key("fitted_on").begin_object();
        for (const auto& [key, list] : {std::pair<const char*, const std::vector<std::string>*>{"frameworks", &f.frameworks},
                                        {"gpus", &f.gpus},
                                        {"precisions", &f.precisions}}) {
            out.key(key).begin_array();
            for (const std::string& item : *list) out.value(item);
            out.end_array();
        }
        out.field("cases", f.cases);
        out.key("factors").begin_array();
        for (const std::string& item : f.factors) out.value(item);
        out.end_array();
        out.end_object();
    }
    if (spec.precision_blind) out.field("precision_blind", true);
    write_overrides(out, spec);
    if (!spec.per_gpu.empty()) {
        out.key("gpus").begin_object();
        for (const auto& [gpu, overrides] : spec.per_gpu) {
            out.key(gpu).begin_object();
            write_overrides(out, overrides);
            out.end_object();
        }
        out.end_object();
    }
    out.end_object();
}

}  // namespace trainclock
