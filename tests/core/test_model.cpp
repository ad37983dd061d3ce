// parameter_count / active_parameter_count against closed forms and published figures.
#include "model_fixtures.hpp"

#include "trainclock/model.hpp"

using namespace trainclock;

TEST_CASE("GPT-3 175B parameter count equals 12 l h^2 + 4 l h + 2 h + V h", "[model]") {
    // Narayanan et al. SC'21 eq. (2) without biases and position embeddings: per layer 4h^2
    // (attention) + 8h^2 (MLP) + 4h (two LayerNorms); final LayerNorm 2h; tied embedding V h.
    const ModelSpec m = fixtures::model("gpt3-175b");
    const int64_t l = m.layers, h = m.hidden, V = m.vocab;
    CHECK(parameter_count(m) == 12 * l * h * h + 4 * l * h + 2 * h + V * h);
    CHECK(parameter_count(m) == Approx(175e9).epsilon(0.01));
    CHECK(active_parameter_count(m) == parameter_count(m));
}

TEST_CASE("GQA, gated MLP, RMSNorm and untied embeddings (Llama 3 8B)", "[model]") {
    const ModelSpec m = fixtures::model("llama3-8b");
    const int64_t h = m.hidden, d = m.effective_head_dim();
    const int64_t attn = 2 * h * m.heads * d + 2 * h * m.kv_heads * d;
    const int64_t mlp = 3 * h * m.ffn_hidden;
    CHECK(parameter_count(m) == m.layers * (attn + mlp + 2 * h) + h + 2 * m.vocab * h);
    CHECK(parameter_count(m) == Approx(8.03e9).epsilon(0.01));  // Meta: 8.03B
}

TEST_CASE("MoE counts every expert in total and top_k in active (Mixtral 8x7B)", "[model]") {
    const ModelSpec m = fixtures::model("mixtral-8x7b");
    CHECK(parameter_count(m) == Approx(46.7e9).epsilon(0.01));         // Mistral: 46.7B total
    CHECK(active_parameter_count(m) == Approx(12.9e9).epsilon(0.01));  // 12.9B per token
    ModelSpec dense_first = m;
    dense_first.moe.dense_layers = 1;
    dense_first.ffn_hidden = m.moe.expert_ffn_hidden;
    // One dense layer instead of 8 experts + router: 7 experts and the router fewer.
    const int64_t expert = 3 * m.hidden * m.moe.expert_ffn_hidden;
    CHECK(parameter_count(m) - parameter_count(dense_first) == 7 * expert + m.hidden * m.moe.experts);
}

TEST_CASE("Encoder-decoder adds cross-attention and a third norm per decoder layer", "[model]") {
    ModelSpec m;
    m.architecture = Architecture::encoder_decoder;
    m.layers = 2;
    m.decoder_layers = 3;
    m.hidden = 64;
    m.heads = 4;
    m.kv_heads = 4;
    m.ffn_hidden = 256;
    m.vocab = 100;
    m.tied_embeddings = true;
    const int64_t h = 64, attn = 4 * h * h, mlp = 2 * h * 256, ln = 2 * h;
    CHECK(parameter_count(m) == 2 * (attn + mlp + 2 * ln) + ln + 3 * (2 * attn + mlp + 3 * ln) + ln + 100 * h);
}
