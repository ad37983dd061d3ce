// parameter_count / active_parameter_count against closed forms and published figures.
#include "model_fixtures.hpp"

#include "trainclock/model/model.hpp"

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

TEST_CASE("MLA attention weights by hand from the DeepSeek-V2 equations (DeepSeek-V3 sizes)", "[model]") {
    // arXiv 2405.04434 eqs. 9-14: W^DQ d x d_c', W^UQ and W^QR d_c' x n_h (d_h + d_h^R), W^DKV + W^KR
    // d x (d_c + d_h^R), W^UK and W^UV d_c x n_h d_h, W^O n_h d_h x d; plus the two latent RMSNorms.
    const ModelSpec m = fixtures::model("deepseek-v3");
    const int64_t d = 7168, nh = 128, dh = 128, dr = 64, dc = 512, dq = 1536;
    const int64_t expected = d * dq + dq * nh * (dh + dr) + d * (dc + dr) + dc * nh * (dh + dh) + nh * dh * d + dq + dc;
    CHECK(attention_parameter_count(m) == expected);
    CHECK(attention_replicated_parameter_count(m) == d * dq + dq + d * (dc + dr) + dc);
    ModelSpec lite = fixtures::model("deepseek-v2-lite");  // no query compression: W^Q d x n_h (d_h + d_h^R)
    CHECK(attention_parameter_count(lite) == 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048);
}

TEST_CASE("New model presets count within 1 % of their published totals", "[model]") {
    // DeepSeek-V3 README: 671B main model + 14B MTP module = 685B on Hugging Face (whose checkpoint
    // also stores a second copy of the 1.85B embedding and head, shared here).
    ModelSpec v3 = fixtures::model("deepseek-v3");
    CHECK(double(parameter_count(v3)) == Approx(685e9).epsilon(0.01));
    ModelSpec main_model = v3;
    main_model.mtp_layers = 0;
    CHECK(double(parameter_count(main_model)) == Approx(671e9).epsilon(0.01));
    // Activated 37B: the input embedding is a lookup, not counted by DeepSeek (it is here).
    const double embedding = double(v3.vocab) * double(v3.hidden);
    CHECK(double(active_parameter_count(main_model)) - embedding == Approx(37e9).epsilon(0.015));
    const ModelSpec lite = fixtures::model("deepseek-v2-lite");
    CHECK(double(parameter_count(lite)) == Approx(15.7e9).epsilon(0.01));  // V2 paper appendix B
    CHECK(double(active_parameter_count(lite)) - double(lite.vocab) * double(lite.hidden) == Approx(2.4e9).epsilon(0.03));
    const ModelSpec maverick = fixtures::model("llama4-maverick");
    CHECK(double(parameter_count(maverick)) == Approx(400e9).epsilon(0.01));
    CHECK(double(active_parameter_count(maverick)) == Approx(17e9).epsilon(0.02));
    CHECK(double(parameter_count(fixtures::model("gemma3-27b"))) == Approx(27e9).epsilon(0.01));
    // Scout's 109B includes the ~1B vision encoder (not represented): the text model is 1.1 % below.
    const ModelSpec scout = fixtures::model("llama4-scout");
    CHECK(double(parameter_count(scout)) == Approx(109e9).epsilon(0.015));
    CHECK(double(active_parameter_count(scout)) == Approx(17e9).epsilon(0.02));
    // Kimi K2 publishes the nominal "1T" (README) / 32B activated; the architecture counts 1.026T.
    const ModelSpec kimi = fixtures::model("kimi-k2");
    CHECK(double(parameter_count(kimi)) == Approx(1e12).epsilon(0.03));
    CHECK(double(active_parameter_count(kimi)) == Approx(32e9).epsilon(0.03));
}

TEST_CASE("MoE every k-th layer and the MTP module's extra weights", "[model]") {
    const ModelSpec maverick = fixtures::model("llama4-maverick");
    int moe_layers = 0;
    for (int64_t i = 0; i < maverick.layers; ++i) moe_layers += maverick.is_moe_layer(i) ? 1 : 0;
    CHECK(moe_layers == 24);
    CHECK(!maverick.is_moe_layer(0));
    CHECK(maverick.is_moe_layer(1));  // HF Llama4TextConfig: moe_layers = 1, 3, 5, ... (0-based)
    ModelSpec all = maverick;
    all.moe.every = 1;
    // 24 dense MLPs (3 h 16384) become 24 MoE MLPs (router + 128 routed + 1 shared expert of 3 h 8192).
    const int64_t h = 5120;
    CHECK(parameter_count(all) - parameter_count(maverick) == 24 * (h * 128 + 129 * 3 * h * 8192 - 3 * h * 16384));
    const ModelSpec v3 = fixtures::model("deepseek-v3");
    ModelSpec no_mtp = v3;
    no_mtp.mtp_layers = 0;
    // One module: a MoE layer of the main stack (layer 60), eh_proj 2h x h and three RMSNorms.
    const int64_t d = v3.hidden;
    const int64_t moe_mlp = d * 256 + (256 + 1) * 3 * d * 2048;
    CHECK(parameter_count(v3) - parameter_count(no_mtp) == attention_parameter_count(v3) + moe_mlp + 2 * d + 2 * d * d + 3 * d);
}

TEST_CASE("Local attention layer pattern: every full_every-th layer (1-based) is global", "[model]") {
    const ModelSpec gemma3 = fixtures::model("gemma3-27b");
    for (int64_t i = 0; i < gemma3.layers; ++i) CHECK(gemma3.is_local_layer(i) == ((i + 1) % 6 != 0));
    const ModelSpec mistral = fixtures::model("mistral-7b");  // full_every 0: every layer slides
    for (int64_t i = 0; i < mistral.layers; ++i) CHECK(mistral.is_local_layer(i));
    const ModelSpec gemma2 = fixtures::model("gemma2-9b");  // HF Gemma2: is_sliding = not layer_idx % 2
    CHECK(gemma2.is_local_layer(0));
    CHECK(!gemma2.is_local_layer(1));
    CHECK(!fixtures::model("llama3-8b").is_local_layer(0));
}
