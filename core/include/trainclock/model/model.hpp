// trainclock: transformer architecture description and its closed-form counts.
#pragma once

#include <cstdint>
#include <string>

namespace trainclock {

enum class Architecture { decoder, encoder, encoder_decoder };
enum class Activation { gelu, relu, squared_relu, swiglu, geglu };  // swiglu/geglu are gated (3 matrices)
enum class Norm { layernorm, rmsnorm };

struct MoeSpec {
    int64_t experts = 0;            // routed experts per MoE layer (0 = dense model)
    int64_t top_k = 0;              // experts each token is routed to
    int64_t expert_ffn_hidden = 0;  // hidden width of one expert's MLP
    int64_t shared_experts = 0;     // always-active experts (DeepSeek style)
    int64_t dense_layers = 0;       // leading layers that keep a dense MLP of width ffn_hidden
    int64_t every = 1;              // MoE on every k-th layer after the dense ones (1-based index % k == 0; Llama 4 Maverick: 2)
    double capacity_factor = 0;     // tokens an expert takes, over the balanced mean; 0 = dropless
    double imbalance = 1;           // load of the busiest expert over the mean (1 = balanced)
};

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 sec. 2.1): K/V (and optionally Q) are
// down-projected to a latent, normed, up-projected per head; a decoupled RoPE part rides alongside.
struct MlaSpec {
    int64_t q_lora_rank = 0;       // query latent width d_c' (0 = queries projected directly)
    int64_t kv_lora_rank = 0;      // key/value latent width d_c (0 = no MLA)
    int64_t qk_nope_head_dim = 0;  // per-head query/key width without RoPE (d_h)
    int64_t qk_rope_head_dim = 0;  // decoupled RoPE width per head (d_h^R), key part shared by all heads
    int64_t v_head_dim = 0;        // per-head value width
    bool enabled() const { return kv_lora_rank > 0; }
};

// Attention restricted to nearby tokens on some layers (Mistral, Gemma 2/3, gpt-oss, Llama 4).
enum class LocalAttentionKind { none, sliding, chunked };  // sliding: the last `window` tokens; chunked: own chunk of `window`
struct LocalAttentionSpec {
    LocalAttentionKind kind = LocalAttentionKind::none;
    int64_t window = 0;      // tokens
    int64_t full_every = 0;  // every k-th layer (1-based index % k == 0) keeps full attention; 0 = none does
    bool enabled() const { return kind != LocalAttentionKind::none && window > 0; }
};

// Architecture of one model (a preset in presets/models/ or an inline object in the config).
struct ModelSpec {
    std::string name;          // preset id or "custom"
    std::string display_name;  // "Llama 3 70B"
    Architecture architecture = Architecture::decoder;
    int64_t layers = 0;          // decoder layers; encoder layers for encoder-decoder
    int64_t decoder_layers = 0;  // encoder-decoder only
    int64_t hidden = 0;          // d_model
    int64_t heads = 0;           // query heads
    int64_t kv_heads = 0;        // key/value heads (== heads for MHA)
    int64_t head_dim = 0;        // per-head width; 0 means hidden / heads
    int64_t ffn_hidden = 0;      // dense MLP width
    int64_t vocab = 0;
    int64_t max_seq_len = 0;  // published context length (0 = unknown)
    Activation activation = Activation::gelu;
    Norm norm = Norm::layernorm;
    bool tied_embeddings = false;
    // Transformer-XL (Dai et al. 2019, arXiv 1901.02860) and adaptive softmax (Grave et al. 2017):
    int64_t memory_len = 0;              // segment recurrence: cached tokens of the previous segment every query also attends to
    bool relative_position = false;      // relative positional attention: position projection, 2nd score matmul (BD), rel-shift copy
    int64_t softmax_head = 0;            // logits computed per token (adaptive softmax head cluster); 0 = vocab
    MoeSpec moe;                         // moe.experts == 0 for dense models
    MlaSpec mla;                         // mla.kv_lora_rank == 0 for standard attention
    LocalAttentionSpec local_attention;  // kind none = every layer attends to the whole sequence
    int64_t mtp_layers = 0;              // DeepSeek-V3 multi-token-prediction modules (arXiv 2412.19437 sec. 2.2)
    // Counted in the parameter total only (each well under 1 % of the step's work; HF BertModel):
    int64_t position_embeddings = 0;  // learned absolute positions (rows; BertEmbeddings.position_embeddings)
    int64_t token_types = 0;          // token-type (segment) embedding rows (BertEmbeddings.token_type_embeddings)
    bool pooler = false;              // BertPooler: a hidden x hidden dense + bias on the first token
    bool linear_bias = false;         // biases of the attention and dense-MLP linear layers (nn.Linear bias=True)
    std::string source;               // where the figures come from

    int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
    bool is_moe() const { return moe.experts > 0; }
    // Layer `index_in_stack` (0-based, within its stack) has a routed-expert MLP.
    bool is_moe_layer(int64_t index_in_stack) const {
        return is_moe() && index_in_stack >= moe.dense_layers && (index_in_stack + 1) % (moe.every > 0 ? moe.every : 1) == 0;
    }
    // Layer `index_in_stack` attends locally (sliding window or chunk) rather than to the whole sequence.
    bool is_local_layer(int64_t index_in_stack) const {
        const int64_t k = local_attention.full_every;
        return local_attention.enabled() && !(k > 0 && (index_in_stack + 1) % k == 0);
    }
};

// Gated MLP units (SwiGLU/GeGLU, Shazeer 2020 arXiv 2002.05202) have gate, up and down matrices;
// the others up and down.
bool gated_mlp(Activation activation);
int64_t mlp_matrices(Activation activation);  // 3 gated, else 2

int64_t active_matmul_parameter_count(const ModelSpec& model);  // the same without norm gains/biases (no matmul FLOPs)

// Transformer layers of every stack: an encoder-decoder's encoder, then its decoder.
int64_t total_layers(const ModelSpec& model);

// Closed-form counts (exact integer arithmetic on the architecture).
int64_t parameter_count(const ModelSpec& model);         // all weights incl. embeddings, every expert and MTP modules
int64_t active_parameter_count(const ModelSpec& model);  // weights touched per token (top_k experts; MTP modules included)
// Weights of layer `index` (pipeline order, total_layers); active_only: top_k experts; without
// with_norms: the matmul weights only (no norm gains/biases).
int64_t layer_parameter_count(const ModelSpec& model, int64_t index, bool active_only, bool with_norms = true);
// Weights of the attention block of one layer (Q, K, V, O or the MLA projections and latent norms).
int64_t attention_parameter_count(const ModelSpec& model);
// The part of it every tensor-parallel rank holds whole: MLA's down projections and latent norms
// (Megatron-Core MLASelfAttention builds linear_q/kv_down_proj duplicated, not split); 0 otherwise.
int64_t attention_replicated_parameter_count(const ModelSpec& model);
// Weights of one DeepSeek-V3 MTP module besides its transformer layer: the 2h -> h projection and
// its two RMSNorms (embedding and output head are shared with the main model, arXiv 2412.19437 sec. 2.2).
int64_t mtp_extra_parameter_count(const ModelSpec& model);

}  // namespace trainclock
