// trainclock: Hugging Face config.json -> config/v1 inline model object (import.hpp).
//
// Index
//   [SECTION] Reading an HF config
//   [SECTION] Shared pieces: activation, sliding windows, MoE
//   [SECTION] Model types
//   [SECTION] Entry points
//
// Key names and defaults follow the configuration classes of Hugging Face transformers
// (src/transformers/models/<type>/configuration_<type>.py): where a config.json omits a key the
// class default applies, and that default is what we use. Only keys that change the cost (shapes,
// experts, attention windows, tied embeddings) are translated; keys that do not (token ids, dropout,
// RoPE bases, epsilons, soft-capping) are ignored; any other key that looks like a shape is refused.
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"

#include <cmath>
#include <algorithm>
#include <array>
#include <iterator>
#include <optional>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {
namespace {

// [SECTION] Reading an HF config -------------------------------------------------------------------

// Name fragments of keys that set a shape; a key containing one must be translated or listed as
// harmless below, else the import fails naming it (a silent drop would be a silently wrong cost).
constexpr std::string_view kShapeFragments[] = {"layer",  "head",    "hidden", "intermediate", "ffn",  "expert", "moe",   "vocab",
                                                "window", "rank",    "_dim",   "size",         "embd", "inner",  "chunk", "sparse",
                                                "lora",   "d_model", "d_ff",   "d_kv",         "mtp",  "nextn"};

// Keys whose names look like shapes but do not change the training cost.
constexpr std::string_view kHarmlessShapeKeys[] = {"rms_norm_eps",
                                                   "layer_norm_eps",
                                                   "layer_norm_epsilon",
                                                   "hidden_dropout",
                                                   "hidden_dropout_prob",
                                                   "ep_size",
                                                   "embd_pdrop",
                                                   "scale_attn_by_inverse_layer_idx",
                                                   "encoder_layerdrop",
                                                   "decoder_layerdrop",
                                                   "layerdrop",
                                                   "no_repeat_ngram_size",
                                                   "add_final_layer_norm",
                                                   "type_vocab_size",
                                                   "norm_topk_prob",
                                                   "attn_logit_softcapping",
                                                   "router_aux_loss_coef",
                                                   "output_router_logits",
                                                   "tie_encoder_decoder",
                                                   "chunk_size_feed_forward",
                                                   "n_ctx",
                                                   "max_position_embeddings"};

class HfReader {
public:
    HfReader(simdjson::dom::object object, std::string model_type) : object_(object), model_type_(std::move(model_type)) {}

    const std::string& model_type() const { return model_type_; }

    std::optional<simdjson::dom::element> find(std::string_view key) {
        if (std::find(used_.begin(), used_.end(), key) == used_.end()) used_.emplace_back(key);
        std::optional<simdjson::dom::element> value;
        for (const auto field : object_) {
            if (field.key == key) value = field.value;
        }
        if (value && value->is_null()) return std::nullopt;  // HF writes null for "use the default"
        return value;
    }
    void ignore(std::initializer_list<std::string_view> keys) {
        for (const std::string_view key : keys) find(key);
    }

    std::optional<int64_t> integer(std::string_view key) {
        const auto value = find(key);
        if (!value) return std::nullopt;
        int64_t number = 0;
        double real = 0;
        if (value->get_int64().get(number) == simdjson::SUCCESS) return number;
        // Whole numbers written as reals (1e3); the range check keeps the cast defined (1e300 is no int64).
        if (value->get_double().get(real) == simdjson::SUCCESS && std::fabs(real) < 9.2e18 && real == std::floor(real)) {
            return static_cast<int64_t>(real);
        }
        fail(key, "expected an integer, got " + json_type_phrase(*value));
        return std::nullopt;
    }
    int64_t integer(std::string_view key, int64_t fallback) { return integer(key).value_or(fallback); }
    int64_t required(std::string_view key) {
        const auto value = integer(key);
        if (!value && !error_) fail(key, "missing (needed for a " + model_type_ + " model)");
        return value.value_or(0);
    }
    // The first of several spellings that is present (HF renamed keys across versions).
    int64_t required_any(std::initializer_list<std::string_view> keys) {
        for (const std::string_view key : keys) {
            if (const auto value = integer(key)) return *value;
        }
        fail(*keys.begin(), "missing (needed for a " + model_type_ + " model)");
        return 0;
    }
    std::optional<bool> boolean(std::string_view key) {
        const auto value = find(key);
        if (!value) return std::nullopt;
        bool flag = false;
        if (value->get_bool().get(flag) == simdjson::SUCCESS) return flag;
        fail(key, "expected true or false, got " + json_type_phrase(*value));
        return std::nullopt;
    }
    std::optional<std::string> string(std::string_view key) {
        const auto value = find(key);
        if (!value) return std::nullopt;
        std::string_view text;
        if (value->get_string().get(text) == simdjson::SUCCESS) return std::string(text);
        fail(key, "expected a string, got " + json_type_phrase(*value));
        return std::nullopt;
    }
    std::optional<std::vector<std::string>> strings(std::string_view key) {
        return array_of<std::string, std::string_view>(key, "strings", [](simdjson::dom::element item, std::string_view& text) {
            return item.get_string().get(text) == simdjson::SUCCESS;
        });
    }
    std::optional<std::vector<int64_t>> integers(std::string_view key) {
        return array_of<int64_t, int64_t>(key, "integers", [](simdjson::dom::element item, int64_t& number) {
            return item.get_int64().get(number) == simdjson::SUCCESS;
        });
    }
    // An array whose every item `get` reads ("expected an array of <what>" otherwise).
    template <class T, class Item, class Get>
    std::optional<std::vector<T>> array_of(std::string_view key, std::string_view what, Get get) {
        const auto value = find(key);
        if (!value) return std::nullopt;
        simdjson::dom::array array;
        if (value->get_array().get(array) != simdjson::SUCCESS) {
            fail(key, "expected an array of " + std::string(what) + ", got " + json_type_phrase(*value));
            return std::nullopt;
        }
        std::vector<T> out;
        for (const auto item : array) {
            Item read{};
            if (!get(item, read)) {
                fail(key, "expected an array of " + std::string(what));
                return std::nullopt;
            }
            out.emplace_back(read);
        }
        return out;
    }

    void fail(std::string_view key, std::string message) {
        if (!error_) error_ = Error{std::string(key), std::move(message)};
    }
    bool failed() const { return error_.has_value(); }
    void warn(std::string line) { warnings_.push_back(std::move(line)); }
    std::vector<std::string> take_warnings() { return std::move(warnings_); }

    // The first shape-like key nobody translated (it may cause the other errors), else the first error.
    std::optional<Error> finish() {
        for (const auto field : object_) {
            const std::string_view key = field.key;
            if (std::find(used_.begin(), used_.end(), key) != used_.end()) continue;
            if (std::find(std::begin(kHarmlessShapeKeys), std::end(kHarmlessShapeKeys), key) != std::end(kHarmlessShapeKeys)) continue;
            const bool shape_like = std::any_of(std::begin(kShapeFragments), std::end(kShapeFragments),
                                                [&](std::string_view fragment) { return key.find(fragment) != std::string_view::npos; });
            if (shape_like && !field.value.is_null()) {
                return Error{std::string(key), "changes the model's shape but the " + model_type_ +
                                                   " importer does not understand it (remove it or write a config/v1 model object)"};
            }
        }
        return error_;
    }

private:
    simdjson::dom::object object_;
    std::string model_type_;
    std::vector<std::string> used_;
    std::optional<Error> error_;
    std::vector<std::string> warnings_;
};

// The config/v1 model keys the importer fills (names as in presets/README.md and DESIGN.md 3).
struct MlaShape {
    int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};
struct LocalAttention {
    std::string kind;  // "sliding" | "chunked"; empty = none
    int64_t window = 0;
    int64_t full_every = 0;
};
struct ImportedModel {
    std::string name, display_name, architecture = "decoder", activation, norm = "rmsnorm";
    int64_t layers = 0, decoder_layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn_hidden = 0, vocab = 0;
    int64_t max_seq_len = 0;
    bool tied_embeddings = false;
    bool moe = false;
    int64_t experts = 0, top_k = 0, expert_ffn_hidden = 0, shared_experts = 0, dense_layers = 0, moe_every = 1;
    std::optional<MlaShape> mla;
    LocalAttention local;
    int64_t mtp_layers = 0;
    int64_t position_embeddings = 0, token_types = 0;
    bool pooler = false, linear_bias = false;
};

std::string model_json(const ImportedModel& m, std::string_view model_type) {
    JsonWriter out(2);
    out.begin_object();
    out.field("name", m.name).field("display_name", m.display_name);
    out.field("architecture", m.architecture).field("layers", m.layers);
    if (m.decoder_layers > 0) out.field("decoder_layers", m.decoder_layers);
    out.field("hidden", m.hidden).field("heads", m.heads).field("kv_heads", m.kv_heads);
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden) out.field("head_dim", m.head_dim);
    out.field("ffn_hidden", m.ffn_hidden).field("vocab", m.vocab);
    if (m.max_seq_len > 0) out.field("max_seq_len", m.max_seq_len);
    out.field("activation", m.activation).field("norm", m.norm).field("tied_embeddings", m.tied_embeddings);
    if (m.moe) {
        out.key("moe").begin_object();
        out.field("experts", m.experts).field("top_k", m.top_k).field("expert_ffn_hidden", m.expert_ffn_hidden);
        out.field("shared_experts", m.shared_experts).field("dense_layers", m.dense_layers);
        if (m.moe_every != 1) out.field("every", m.moe_every);
        out.end_object();
    }
    if (m.mla) {
        out.key("mla").begin_object();
        out.field("q_lora_rank", m.mla->q_lora_rank).field("kv_lora_rank", m.mla->kv_lora_rank);
        out.field("qk_nope_head_dim", m.mla->qk_nope_head_dim).field("qk_rope_head_dim", m.mla->qk_rope_head_dim);
        out.field("v_head_dim", m.mla->v_head_dim);
        out.end_object();
    }
    if (!m.local.kind.empty()) {
        out.key("local_attention").begin_object();
        out.field("kind", m.local.kind).field("window", m.local.window).field("full_every", m.local.full_every);
        out.end_object();
    }
    if (m.mtp_layers > 0) out.field("mtp_layers", m.mtp_layers);
    if (m.position_embeddings > 0) out.field("position_embeddings", m.position_embeddings);
    if (m.token_types > 0) out.field("token_types", m.token_types);
    if (m.pooler) out.field("pooler", true);
    if (m.linear_bias) out.field("linear_bias", true);
    out.field("source", "Hugging Face config.json, model_type " + std::string(model_type) + " (trainclock import hf)");
    out.end_object();
    return out.take() + "\n";
}

// [SECTION] Shared pieces: activation, sliding windows, MoE ---------------------------------------

// HF activation names (transformers/activations.py ACT2FN). `gated`: the model's MLP multiplies an
// activated gate projection by an up projection (LlamaMLP, GemmaMLP), so it has 3 matrices.
void read_activation(HfReader& hf, ImportedModel& m, std::string_view key, std::string_view fallback, bool gated) {
    const std::string name = hf.string(key).value_or(std::string(fallback));
    static const std::array<std::string_view, 3> silu = {"silu", "swish", "swiglu"};
    static const std::array<std::string_view, 7> gelu = {"gelu",        "gelu_new",   "gelu_pytorch_tanh", "gelu_fast",
                                                         "gelu_python", "quick_gelu", "gelu_accurate"};
    const bool is_silu = std::find(silu.begin(), silu.end(), name) != silu.end();
    const bool is_gelu = std::find(gelu.begin(), gelu.end(), name) != gelu.end();
    if (is_silu)
        m.activation = gated ? "swiglu" : "gelu";  // an ungated SiLU MLP costs like GELU (2 matrices, elementwise)
    else if (is_gelu)
        m.activation = gated ? "geglu" : "gelu";
    else if (name == "relu")
        m.activation = gated ? "geglu" : "relu";
    else
        hf.fail(key, "activation '" + name + "' is not understood (silu, gelu variants or relu)");
}

// The common decoder keys of Llama-style configs (LlamaConfig and its descendants).
void read_llama_shape(HfReader& hf, ImportedModel& m, bool tied_default) {
    m.hidden = hf.required("hidden_size");
    m.layers = hf.required("num_hidden_layers");
    m.heads = hf.required("num_attention_heads");
    m.kv_heads = hf.integer("num_key_value_heads", m.heads);
    m.head_dim = hf.integer("head_dim", 0);
    m.ffn_hidden = hf.integer("intermediate_size", 0);
    m.vocab = hf.required("vocab_size");
    m.max_seq_len = hf.integer("max_position_embeddings", 0);
    m.tied_embeddings = hf.boolean("tie_word_embeddings").value_or(tied_default);
    // Biases, RoPE variants, epsilons, init and runtime switches: no effect on the cost model.
    hf.ignore({"attention_bias", "mlp_bias", "rope_theta", "rope_scaling", "rope_parameters", "pretraining_tp", "attention_dropout",
               "initializer_range", "use_cache", "rms_norm_eps"});
}

// "layer_types" (transformers >= 4.53): per layer "full_attention" | "sliding_attention" |
// "chunked_attention". Translated into every k-th layer (1-based) full, the rest local.
void read_layer_types(HfReader& hf, ImportedModel& m, const std::vector<std::string>& types, int64_t window) {
    if (static_cast<int64_t>(types.size()) != m.layers) {
        hf.fail("layer_types", "lists " + std::to_string(types.size()) + " layers, num_hidden_layers is " + std::to_string(m.layers));
        return;
    }
    std::string local_kind;
    int64_t first_full = 0;
    for (size_t i = 0; i < types.size(); ++i) {
        const std::string& t = types[i];
        if (t == "full_attention") {
            if (first_full == 0) first_full = static_cast<int64_t>(i) + 1;
        } else if (t == "sliding_attention" || t == "chunked_attention") {
            const std::string kind = t == "sliding_attention" ? "sliding" : "chunked";
            if (!local_kind.empty() && local_kind != kind) {
                hf.fail("layer_types", "mixes sliding and chunked attention, which trainclock cannot represent");
                return;
            }
            local_kind = kind;
        } else {
            hf.fail("layer_types", "layer type '" + t + "' is not understood (full_attention, sliding_attention, chunked_attention)");
            return;
        }
    }
    if (local_kind.empty()) return;    // every layer full
    const int64_t every = first_full;  // 0: no layer is full
    for (size_t i = 0; i < types.size(); ++i) {
        const bool full = every > 0 && (static_cast<int64_t>(i) + 1) % every == 0;
        if (full != (types[i] == "full_attention")) {
            hf.fail("layer_types", "the pattern of full-attention layers is not 'every k-th layer', which trainclock cannot represent");
            return;
        }
    }
    if (window <= 0) {
        hf.fail(local_kind == "sliding" ? "sliding_window" : "attention_chunk_size", "missing (layer_types has local attention layers)");
        return;
    }
    m.local = {local_kind, window, every};
}

// Sliding-window attention: "layer_types" when present, else `pattern` (every pattern-th layer
// full; 0 = every layer local), applied only when the model has a window.
void read_sliding(HfReader& hf, ImportedModel& m, int64_t pattern) {
    const int64_t window = hf.integer("sliding_window", 0);
    if (const auto types = hf.strings("layer_types")) {
        read_layer_types(hf, m, *types, window);
        return;
    }
    if (window > 0) m.local = {"sliding", window, pattern};
}

// Qwen2/Qwen3: sliding attention only with use_sliding_window, and then on layers >= max_window_layers
// (Qwen2Config: layer_types[i] = sliding iff use_sliding_window and i >= max_window_layers).
void read_qwen_sliding(HfReader& hf, ImportedModel& m) {
    const bool use = hf.boolean("use_sliding_window").value_or(false);
    const int64_t window = hf.integer("sliding_window", 0);
    const int64_t max_window_layers = hf.integer("max_window_layers", m.layers);
    if (const auto types = hf.strings("layer_types")) {
        read_layer_types(hf, m, *types, window);
        return;
    }
    if (!use || window <= 0 || max_window_layers >= m.layers) return;
    if (max_window_layers == 0)
        m.local = {"sliding", window, 0};
    else
        hf.fail("max_window_layers", "sliding attention on layers >= " + std::to_string(max_window_layers) + " only is not representable");
}

void set_moe(ImportedModel& m, int64_t experts, int64_t top_k, int64_t expert_ffn_hidden) {
    m.moe = true;
    m.experts = experts;
    m.top_k = top_k;
    m.expert_ffn_hidden = expert_ffn_hidden;
}

// [SECTION] Model types ----------------------------------------------------------------------------

void read_llama(HfReader& hf, ImportedModel& m) {  // LlamaConfig, MistralConfig
    read_llama_shape(hf, m, false);
    read_activation(hf, m, "hidden_act", "silu", true);
    read_sliding(hf, m, 0);  // Mistral: every layer slides (MistralConfig.sliding_window, 4096 in v0.1)
}

void read_mixtral(HfReader& hf, ImportedModel& m) {  // MixtralConfig: every layer routed
    read_llama_shape(hf, m, false);
    read_activation(hf, m, "hidden_act", "silu", true);
    set_moe(m, hf.integer("num_local_experts", 8), hf.integer("num_experts_per_tok", 2), m.ffn_hidden);
    m.ffn_hidden = 0;
    hf.ignore({"router_jitter_noise"});
    read_sliding(hf, m, 0);
}

void read_qwen(HfReader& hf, ImportedModel& m) {  // Qwen2Config, Qwen3Config
    read_llama_shape(hf, m, false);
    read_activation(hf, m, "hidden_act", "silu", true);
    read_qwen_sliding(hf, m);
}

void read_qwen3_moe(HfReader& hf, ImportedModel& m) {  // Qwen3MoeConfig
    read_llama_shape(hf, m, false);
    read_activation(hf, m, "hidden_act", "silu", true);
    read_qwen_sliding(hf, m);
    set_moe(m, hf.integer("num_experts", 128), hf.integer("num_experts_per_tok", 8), hf.integer("moe_intermediate_size", 768));
    // Qwen3MoeDecoderLayer: layer i is sparse iff i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
    m.moe_every = hf.integer("decoder_sparse_step", 1);
    const std::vector<int64_t> dense = hf.integers("mlp_only_layers").value_or(std::vector<int64_t>{});
    for (size_t i = 0; i < dense.size(); ++i) {
        if (dense[i] != static_cast<int64_t>(i)) {
            hf.fail("mlp_only_layers", "dense layers other than the leading ones are not representable");
            return;
        }
    }
    m.dense_layers = static_cast<int64_t>(dense.size());
    if (m.moe_every < 1) hf.fail("decoder_sparse_step", "must be at least 1");
    if (m.dense_layers == 0 && m.moe_every == 1) m.ffn_hidden = 0;  // no dense MLP anywhere
}

void read_deepseek_v3(HfReader& hf, ImportedModel& m) {  // DeepseekV3Config (DeepSeek-V3, R1)
    read_llama_shape(hf, m, false);
    read_activation(hf, m, "hidden_act", "silu", true);
    m.head_dim = 0;  // MLA sets the head widths; newer configs repeat qk_rope_head_dim as head_dim
    MlaShape mla;
    mla.q_lora_rank = hf.integer("q_lora_rank", 0);  // null: queries projected directly (DeepSeek-V2-Lite)
    mla.kv_lora_rank = hf.required("kv_lora_rank");
    mla.qk_nope_head_dim = hf.required("qk_nope_head_dim");
    mla.qk_rope_head_dim = hf.required("qk_rope_head_dim");
    mla.v_head_dim = hf.required("v_head_dim");
    m.mla = mla;
    set_moe(m, hf.integer("n_routed_experts", 256), hf.integer("num_experts_per_tok", 8), hf.integer("moe_intermediate_size", 2048));
    m.shared_experts = hf.integer("n_shared_experts", 1);
    m.dense_layers = hf.integer("first_k_dense_replace", 3);
    // DeepseekV3DecoderLayer: MoE iff layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0.
    const int64_t freq = hf.integer("moe_layer_freq", 1);
    if (freq != 1)
        hf.fail("moe_layer_freq", std::to_string(freq) + " (MoE on every k-th layer after the dense ones) is not representable; only 1 is");
    m.mtp_layers = hf.integer("num_nextn_predict_layers", 0);
    // Node-limited routing (arXiv 2412.19437 sec. 2.1.2): a token's experts come from at most
    // topk_group of n_group groups (one group per node in DeepSeek's training): it caps the
    // all-to-all's inter-node share, which the cost model does not restrict.
    const int64_t groups = hf.integer("n_group", 1), chosen = hf.integer("topk_group", groups);
    if (chosen < groups)
        hf.warn("topk_group " + std::to_string(chosen) + " of n_group " + std::to_string(groups) +
                " (node-limited routing) not modelled: the expert all-to-all is costed for unrestricted routing");
    hf.ignore({"topk_method", "routed_scaling_factor", "scoring_func", "aux_loss_alpha", "seq_aux", "rope_interleave", "head_dim"});
}

void read_gpt_oss(HfReader& hf, ImportedModel& m) {  // GptOssConfig: every layer routed, alternating sliding
    read_llama_shape(hf, m, false);
    m.activation = "swiglu";  // GptOssExperts: clamped SwiGLU, gate_up then down
    const int64_t top_k = hf.integer("num_experts_per_tok").value_or(hf.integer("experts_per_token", 4));
    hf.ignore({"experts_per_token"});
    set_moe(m, hf.integer("num_local_experts", 128), top_k, m.ffn_hidden);
    m.ffn_hidden = 0;
    read_sliding(hf, m, 2);  // GptOssConfig default layer_types: sliding, full, sliding, full, ...
    hf.ignore({"swiglu_limit", "initial_context_length", "router_aux_loss_coef", "hidden_act"});
}

void read_gemma(HfReader& hf, ImportedModel& m, int64_t default_pattern) {  // Gemma2Config, Gemma3TextConfig
    read_llama_shape(hf, m, true);
    const std::string act_key = hf.find("hidden_activation") ? "hidden_activation" : "hidden_act";
    read_activation(hf, m, act_key, "gelu_pytorch_tanh", true);
    hf.ignore({"hidden_act", "hidden_activation", "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
               "rope_local_base_freq", "cache_implementation"});
    // Gemma2: layer i slides iff i is even (Gemma2DecoderLayer); Gemma 3: every 6th layer global
    // (Gemma3TextConfig.sliding_window_pattern = 6, later layer_types).
    read_sliding(hf, m, hf.integer("sliding_window_pattern", default_pattern));
    if (const auto size = hf.integer("sliding_window_size"); size && *size != m.local.window) {  // gemma-2 configs repeat it
        hf.fail("sliding_window_size", std::to_string(*size) + " differs from sliding_window");
    }
}

// Plain multi-head LayerNorm models; the configuration classes differ only in key names and defaults.
struct MhaKeys {
    std::string_view hidden, layers, heads, ffn, vocab, positions, activation;
    int64_t positions_default;
    std::string_view activation_default;
    bool tied_default;
};

void read_mha(HfReader& hf, ImportedModel& m, const MhaKeys& k) {
    m.hidden = hf.required(k.hidden);
    m.layers = hf.required(k.layers);
    m.heads = hf.required(k.heads);
    m.kv_heads = m.heads;
    m.ffn_hidden = hf.integer(k.ffn, 4 * m.hidden);  // GPT2Config n_inner / GPTNeoXConfig: None = 4 x hidden
    m.vocab = hf.required(k.vocab);
    m.max_seq_len = hf.integer(k.positions, k.positions_default);
    m.norm = "layernorm";
    m.tied_embeddings = hf.boolean("tie_word_embeddings").value_or(k.tied_default);
    read_activation(hf, m, k.activation, k.activation_default, false);
}

void read_gpt2(HfReader& hf, ImportedModel& m) {  // GPT2Config: tied LM head, learned positions
    read_mha(hf, m, {"n_embd", "n_layer", "n_head", "n_inner", "vocab_size", "n_positions", "activation_function", 1024, "gelu_new", true});
}

void read_gpt_neox(HfReader& hf, ImportedModel& m) {  // GPTNeoXConfig (GPT-NeoX-20B, Pythia)
    read_mha(hf, m,
             {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings",
              "hidden_act", 2048, "gelu", false});
    hf.ignore({"rotary_pct", "rotary_emb_base", "use_parallel_residual", "attention_bias", "rope_scaling"});
}

void read_bert(HfReader& hf, ImportedModel& m) {  // BertConfig: encoder, MLM decoder tied to the embedding
    read_mha(hf, m,
             {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings",
              "hidden_act", 512, "gelu", true});
    m.architecture = "encoder";
    // HF BertModel (modeling_bert.py): BertEmbeddings' learned absolute positions
    // (max_position_embeddings rows, position_embedding_type "absolute") and token types
    // (type_vocab_size rows), BertPooler (dense h x h + bias), nn.Linear biases in every layer.
    const std::string positions = hf.string("position_embedding_type").value_or("absolute");
    if (positions == "absolute") m.position_embeddings = m.max_seq_len;
    m.token_types = hf.integer("type_vocab_size", 2);
    m.pooler = true;
    m.linear_bias = true;
}

void read_t5(HfReader& hf, ImportedModel& m) {  // T5Config: feed_forward_proj "relu" (v1.0) or "gated-gelu" (v1.1)
    m.architecture = "encoder-decoder";
    m.hidden = hf.integer("d_model", 512);
    m.layers = hf.integer("num_layers", 6);
    m.decoder_layers = hf.integer("num_decoder_layers", m.layers);
    m.heads = hf.integer("num_heads", 8);
    m.kv_heads = m.heads;
    m.head_dim = hf.integer("d_kv", 64);
    m.ffn_hidden = hf.integer("d_ff", 2048);
    m.vocab = hf.integer("vocab_size", 32128);
    m.norm = "rmsnorm";  // T5LayerNorm: scale only, no mean, no bias
    m.tied_embeddings = hf.boolean("tie_word_embeddings").value_or(true);
    const std::string proj = hf.string("feed_forward_proj").value_or("relu");
    const bool gated = proj.rfind("gated-", 0) == 0;
    const std::string act = gated ? proj.substr(6) : proj;
    if (act == "relu")
        m.activation = gated ? "geglu" : "relu";  // a gated ReLU costs as GeGLU (3 matrices)
    else if (act == "gelu" || act == "gelu_new")
        m.activation = gated ? "geglu" : "gelu";
    else if (act == "silu")
        m.activation = gated ? "swiglu" : "gelu";
    else
        hf.fail("feed_forward_proj", "'" + proj + "' is not understood (relu, gated-gelu, gated-silu)");
    hf.ignore({"dense_act_fn", "is_gated_act", "relative_attention_num_buckets", "relative_attention_max_distance"});
}

void read_bart(HfReader& hf, ImportedModel& m) {  // BartConfig
    m.architecture = "encoder-decoder";
    m.hidden = hf.integer("d_model", 1024);
    m.layers = hf.integer("encoder_layers", 12);
    m.decoder_layers = hf.integer("decoder_layers", 12);
    m.heads = hf.integer("encoder_attention_heads", 16);
    m.kv_heads = m.heads;
    if (hf.integer("decoder_attention_heads", m.heads) != m.heads) {
        hf.fail("decoder_attention_heads", "differs from encoder_attention_heads, which trainclock cannot represent");
    }
    m.ffn_hidden = hf.integer("encoder_ffn_dim", 4096);
    if (hf.integer("decoder_ffn_dim", m.ffn_hidden) != m.ffn_hidden) {
        hf.fail("decoder_ffn_dim", "differs from encoder_ffn_dim, which trainclock cannot represent");
    }
    m.vocab = hf.integer("vocab_size", 50265);
    m.max_seq_len = hf.integer("max_position_embeddings", 1024);
    m.norm = "layernorm";
    m.tied_embeddings = hf.boolean("tie_word_embeddings").value_or(true);
    read_activation(hf, m, "activation_function", "gelu", false);
    hf.ignore({"num_hidden_layers"});  // BartConfig aliases it to encoder_layers
}

struct ModelType {
    std::string_view name;
    void (*read)(HfReader&, ImportedModel&);
};

const ModelType kModelTypes[] = {
    {"llama", read_llama},
    {"mistral", read_llama},
    {"mixtral", read_mixtral},
    {"qwen2", read_qwen},
    {"qwen3", read_qwen},
    {"qwen3_moe", read_qwen3_moe},
    {"deepseek_v3", read_deepseek_v3},
    {"gpt_oss", read_gpt_oss},
    {"gemma2", [](HfReader& hf, ImportedModel& m) { read_gemma(hf, m, 2); }},
    {"gemma3_text", [](HfReader& hf, ImportedModel& m) { read_gemma(hf, m, 6); }},
    {"gpt2", read_gpt2},
    {"gpt_neox", read_gpt_neox},
    {"bert", read_bert},
    {"t5", read_t5},
    {"bart", read_bart},
};

}  // namespace

// [SECTION] Entry points ---------------------------------------------------------------------------

Result<Imported> import_hf_config(std::string_view hf_json) {
    simdjson::dom::parser parser;
    auto parsed = parse_json_object(parser, hf_json, "a Hugging Face config.json object");
    if (!parsed) return parsed.error();
    const simdjson::dom::object object = parsed.value();
    std::string_view type;
    if (object["model_type"].get_string().get(type) != simdjson::SUCCESS) {
        return Error{"model_type", "missing (a Hugging Face config.json names its model_type)"};
    }
    const ModelType* found = nullptr;
    std::vector<std::string> names;
    for (const ModelType& entry : kModelTypes) {
        names.emplace_back(entry.name);
        if (entry.name == type) found = &entry;
    }
    if (!found) {
        std::string hint;
        simdjson::dom::object text_config;
        if (object["text_config"].get_object().get(text_config) == simdjson::SUCCESS) {
            hint = " (a multimodal wrapper: import its text_config object instead)";
        } else {
            const std::string guess = did_you_mean(type, names);
            hint = guess.empty() ? "" : "; did you mean " + guess + "?";
        }
        std::string list;
        for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
        return Error{"model_type", "'" + std::string(type) + "' is not supported (supported: " + list + ")" + hint};
    }
    HfReader hf(object, std::string(type));
    hf.ignore({"model_type", "architectures", "torch_dtype", "dtype", "transformers_version", "auto_map", "_name_or_path",
               "tokenizer_class", "use_cache"});
    ImportedModel model;
    found->read(hf, model);
    if (hf.find("quantization_config")) {
        hf.warn("quantization_config (the checkpoint's weight format) ignored: the config's precision sets the training dtypes");
    }
    if (auto error = hf.finish()) return *error;
    std::string_view path;
    if (object["_name_or_path"].get_string().get(path) == simdjson::SUCCESS && !path.empty()) {
        model.name = std::string(path);
    } else {
        model.name = "hf-" + std::string(type);
    }
    model.display_name = model.name;
    return Imported{model_json(model, type), hf.take_warnings()};
}

Result<ModelSpec> model_from_hf_config(std::string_view hf_json) {
    auto imported = import_hf_config(hf_json);
    if (!imported) return imported.error();
    auto config = merge_config_json(config_draft(), "{\"model\": " + imported.value().json + "}");
    if (!config) {
        Error error = config.error();
        if (error.key.rfind("model.", 0) == 0) error.key = error.key.substr(6);
        error.message += " (in the model imported from the Hugging Face config)";
        return error;
    }
    return config.value().model;
}

}  // namespace trainclock
