// trainclock: closed-form parameter counts of a transformer (model.hpp).
//
// Counts weight matrices, norm gains/biases and embeddings exactly; linear-layer biases and learned
// position embeddings are left out (under 0.1 % of any preset: GPT-3 175B has 25 M position weights
// and ~0.3 M biases per layer), matching how Narayanan et al. SC'21 (arXiv 2104.04473) eq. (2)
// counts P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) up to those terms.
#include "trainclock/model.hpp"

namespace trainclock {

bool gated_mlp(Activation a) { return a == Activation::swiglu || a == Activation::geglu; }
int64_t mlp_matrices(Activation a) { return gated_mlp(a) ? 3 : 2; }

namespace {

// Gain (+ bias for LayerNorm, Ba et al. 2016; RMSNorm has no bias, Zhang & Sennrich 2019).
int64_t norm_params(const ModelSpec& m) { return (m.norm == Norm::layernorm ? 2 : 1) * m.hidden; }

// Q and O are hidden x heads*head_dim; K and V hidden x kv_heads*head_dim (GQA, Ainslie et al. 2023).
int64_t attention_params(const ModelSpec& m) {
    const int64_t d = m.effective_head_dim();
    return 2 * m.hidden * m.heads * d + 2 * m.hidden * m.kv_heads * d;
}

// MLP of one layer; `experts_counted` routed experts are included (all of them, or top_k when active).
int64_t mlp_params(const ModelSpec& m, bool moe_layer, int64_t experts_counted) {
    const int64_t mats = mlp_matrices(m.activation);
    if (!moe_layer) return mats * m.hidden * m.ffn_hidden;
    const int64_t router = m.hidden * m.moe.experts;  // token -> expert logits (Shazeer et al. 2017)
    const int64_t expert = mats * m.hidden * m.moe.expert_ffn_hidden;
    return router + (experts_counted + m.moe.shared_experts) * expert;
}

int64_t count(const ModelSpec& m, bool active_only, bool with_norms = true) {
    const int64_t experts_counted = active_only ? m.moe.top_k : m.moe.experts;
    const int64_t attn = attention_params(m);
    const int64_t norm = with_norms ? norm_params(m) : 0;
    int64_t total = 0;
    // Layer stack 1: decoder layers of a decoder, encoder layers otherwise (self-attn + MLP, 2 norms).
    for (int64_t layer = 0; layer < m.layers; ++layer) {
        const bool moe_layer = m.is_moe() && layer >= m.moe.dense_layers;
        total += attn + mlp_params(m, moe_layer, experts_counted) + 2 * norm;
    }
    total += norm;  // final norm of the stack
    if (m.architecture == Architecture::encoder_decoder) {
        // Decoder of an encoder-decoder: self-attn, cross-attn, MLP, 3 norms (Vaswani et al. 2017).
        for (int64_t layer = 0; layer < m.decoder_layers; ++layer) {
            const bool moe_layer = m.is_moe() && layer >= m.moe.dense_layers;
            total += 2 * attn + mlp_params(m, moe_layer, experts_counted) + 3 * norm;
        }
        total += norm;
    }
    // Token embedding (shared by encoder and decoder) and the output projection unless tied.
    total += m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2);
    return total;
}

} // namespace

int64_t parameter_count(const ModelSpec& model) { return count(model, false); }
int64_t active_parameter_count(const ModelSpec& model) { return count(model, true); }
int64_t active_matmul_parameter_count(const ModelSpec& model) { return count(model, true, false); }

} // namespace trainclock
