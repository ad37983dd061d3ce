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
};

// Architecture of one model (a preset in presets/models/ or an inline object in the config).
struct ModelSpec {
    std::string name;                             // preset id or "custom"
    std::string display_name;                     // "Llama 3 70B"
    Architecture architecture = Architecture::decoder;
    int64_t layers = 0;                           // decoder layers; encoder layers for encoder-decoder
    int64_t decoder_layers = 0;                   // encoder-decoder only
    int64_t hidden = 0;                           // d_model
    int64_t heads = 0;                            // query heads
    int64_t kv_heads = 0;                         // key/value heads (== heads for MHA)
    int64_t head_dim = 0;                         // per-head width; 0 means hidden / heads
    int64_t ffn_hidden = 0;                       // dense MLP width
    int64_t vocab = 0;
    int64_t max_seq_len = 0;                      // published context length (0 = unknown)
    Activation activation = Activation::gelu;
    Norm norm = Norm::layernorm;
    bool tied_embeddings = false;
    // Transformer-XL (Dai et al. 2019, arXiv 1901.02860) and adaptive softmax (Grave et al. 2017):
    int64_t memory_len = 0;                       // segment recurrence: cached tokens of the previous segment every query also attends to
    bool relative_position = false;               // relative positional attention: position projection, 2nd score matmul (BD), rel-shift copy
    int64_t softmax_head = 0;                     // logits computed per token (adaptive softmax head cluster); 0 = vocab
    MoeSpec moe;                                  // moe.experts == 0 for dense models
    std::string source;                           // where the figures come from

    int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
    bool is_moe() const { return moe.experts > 0; }
};

// Gated MLP units (SwiGLU/GeGLU, Shazeer 2020 arXiv 2002.05202) have gate, up and down matrices;
// the others up and down.
bool gated_mlp(Activation activation);
int64_t mlp_matrices(Activation activation);  // 3 gated, else 2

// Closed-form counts (exact integer arithmetic on the architecture).
int64_t parameter_count(const ModelSpec& model);         // all weights incl. embeddings and every expert
int64_t active_parameter_count(const ModelSpec& model);  // weights touched per token (top_k experts)
int64_t active_matmul_parameter_count(const ModelSpec& model);  // the same without norm gains/biases (no matmul FLOPs)

} // namespace trainclock
