// trainclock: closed-form parameter counts of a transformer (model.hpp).
//
// Counts weight matrices, norm gains/biases and embeddings exactly; linear-layer biases and learned
// position embeddings are left out (under 0.1 % of any preset: GPT-3 175B has 25 M position weights
// and ~0.3 M biases per layer), matching how Narayanan et al. SC'21 (arXiv 2104.04473) eq. (2)
// counts P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)) up to those terms.
#include "trainclock/model/model.hpp"

namespace trainclock {

bool gated_mlp(Activation a) { return a == Activation::swiglu || a == Activation::geglu; }
int64_t mlp_matrices(Activation a) { return gated_mlp(a) ? 3 : 2; }

namespace {

// Gain (+ bias for LayerNorm, Ba et al. 2016; RMSNorm has no bias, Zhang & Sennrich 2019).
int64_t norm_params(const ModelSpec& m) { return (m.norm == Norm::layernorm ? 2 : 1) * m.hidden; }

}  // namespace

// Q and O are hidden x heads*head_dim; K and V hidden x kv_heads*head_dim (GQA, Ainslie et al. 2023).
// MLA (DeepSeek-V2 arXiv 2405.04434 eqs. 9-14; HF DeepseekV3Attention): q_a (h x d_c') + its RMSNorm +
// q_b (d_c' x n_h (d_h + d_h^R)), or one h x n_h (d_h + d_h^R) without query compression; kv_a
// (h x (d_c + d_h^R), the RoPE key shared by all heads) + its RMSNorm; kv_b (d_c x n_h (d_h + d_v)); o (n_h d_v x h).
int64_t attention_parameter_count(const ModelSpec& m) {
    if (m.mla.enabled()) {
        const MlaSpec& a = m.mla;
        const int64_t qk = m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim);
        const int64_t q = a.q_lora_rank > 0 ? m.hidden * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * qk : m.hidden * qk;
        const int64_t kv = m.hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
                           a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
        return q + kv + m.heads * a.v_head_dim * m.hidden;
    }
    const int64_t d = m.effective_head_dim();
    return 2 * m.hidden * m.heads * d + 2 * m.hidden * m.kv_heads * d;
}

int64_t attention_replicated_parameter_count(const ModelSpec& m) {
    if (!m.mla.enabled()) return 0;
    const MlaSpec& a = m.mla;
    const int64_t q = a.q_lora_rank > 0 ? m.hidden * a.q_lora_rank + a.q_lora_rank : 0;
    return q + m.hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
}

int64_t mtp_extra_parameter_count(const ModelSpec& m) {
    // eh_proj (2h x h) over [norm(h_prev); norm(embedding)], enorm, hnorm and the shared head's norm
    // (HF DeepSeek-V3 checkpoint layer 61: enorm, hnorm, eh_proj, shared_head.norm).
    return 2 * m.hidden * m.hidden + 3 * norm_params(m);
}

namespace {

// MLP of one layer; `experts_counted` routed experts are included (all of them, or top_k when active).
int64_t mlp_params(const ModelSpec& m, bool moe_layer, int64_t experts_counted) {
    const int64_t mats = mlp_matrices(m.activation);
    if (!moe_layer) return mats * m.hidden * m.ffn_hidden;
    const int64_t router = m.hidden * m.moe.experts;  // token -> expert logits (Shazeer et al. 2017)
    const int64_t expert = mats * m.hidden * m.moe.expert_ffn_hidden;
    return router + (experts_counted + m.moe.shared_experts) * expert;
}

// Linear-layer biases (HF BertSelfAttention query/key/value, BertSelfOutput, BertIntermediate,
// BertOutput: nn.Linear with bias=True): Q, K, V and O outputs, and the dense MLP's up and down.
int64_t attention_bias_params(const ModelSpec& m) {
    if (!m.linear_bias) return 0;
    const int64_t d = m.effective_head_dim();
    return m.heads * d + 2 * m.kv_heads * d + m.hidden;
}
int64_t mlp_bias_params(const ModelSpec& m, bool moe_layer) {
    if (!m.linear_bias || moe_layer) return 0;
    return (mlp_matrices(m.activation) - 1) * m.ffn_hidden + m.hidden;
}

int64_t layer_params(const ModelSpec& m, int64_t index, bool active_only, bool with_norms) {
    const int64_t experts_counted = active_only ? m.moe.top_k : m.moe.experts;
    const int64_t attn = attention_parameter_count(m) + (with_norms ? attention_bias_params(m) : 0);
    const int64_t norm = with_norms ? norm_params(m) : 0;
    // Layer stack 1: decoder layers of a decoder, encoder layers otherwise (self-attn + MLP, 2 norms);
    // decoder of an encoder-decoder: self-attn, cross-attn, MLP, 3 norms (Vaswani et al. 2017).
    if (m.architecture == Architecture::encoder_decoder && index >= m.layers) {
        const int64_t in_stack = index - m.layers;
        const bool moe = m.is_moe_layer(in_stack);
        return 2 * attn + mlp_params(m, moe, experts_counted) + (with_norms ? mlp_bias_params(m, moe) : 0) + 3 * norm;
    }
    const bool moe = m.is_moe_layer(index);
    return attn + mlp_params(m, moe, experts_counted) + (with_norms ? mlp_bias_params(m, moe) : 0) + 2 * norm;
}

}  // namespace

int64_t layer_parameter_count(const ModelSpec& m, int64_t index, bool active_only, bool with_norms) {
    return layer_params(m, index, active_only, with_norms);
}

namespace {

int64_t count(const ModelSpec& m, bool active_only, bool with_norms = true) {
    const int64_t experts_counted = active_only ? m.moe.top_k : m.moe.experts;
    const int64_t attn = attention_parameter_count(m);
    const int64_t norm = with_norms ? norm_params(m) : 0;
    int64_t total = 0;
    for (int64_t layer = 0; layer < total_layers(m); ++layer) total += layer_params(m, layer, active_only, with_norms);
    total += norm * (m.architecture == Architecture::encoder_decoder ? 2 : 1);  // final norm of each stack
    // MTP modules: a transformer layer of the last layer's kind each, plus projection and norms.
    const bool last_moe = m.is_moe_layer(m.layers - 1);
    for (int64_t k = 0; k < m.mtp_layers; ++k)
        total += attn + mlp_params(m, last_moe, experts_counted) + 2 * norm + mtp_extra_parameter_count(m);
    // Token embedding (shared by encoder and decoder) and the output projection unless tied.
    total += m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2);
    if (with_norms) {
        // Learned positions and token types (BertEmbeddings) and BertPooler's dense layer + bias.
        total += (m.position_embeddings + m.token_types) * m.hidden;
        if (m.pooler) total += m.hidden * m.hidden + m.hidden;
    }
    return total;
}

}  // namespace

int64_t total_layers(const ModelSpec& m) { return m.layers + (m.architecture == Architecture::encoder_decoder ? m.decoder_layers : 0); }

int64_t parameter_count(const ModelSpec& model) { return count(model, false); }
int64_t active_parameter_count(const ModelSpec& model) { return count(model, true); }
int64_t active_matmul_parameter_count(const ModelSpec& model) { return count(model, true, false); }

}  // namespace trainclock
