// Tests for trainclock/import.hpp: Hugging Face config.json import, checked against the published
// parameter counts of the real configs in tests/core/hf/ (transcribed from the Hugging Face Hub).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/model/config.hpp"

using namespace trainclock;

namespace {

const std::pair<std::string_view, std::string_view> kHfConfigs[] = {
#include "hf_files.inc"
};
const std::pair<std::string_view, std::string_view> kLaunchFiles[] = {
#include "launch_files.inc"
};

std::string hf_config(std::string_view name) {
    for (const auto& [file, text] : kHfConfigs) {
        if (file == std::string(name) + ".json") return std::string(text);
    }
    FAIL("no tests/core/hf/" << name << ".json");
    return {};
}

std::string launch_file(std::string_view name) {
    for (const auto& [file, text] : kLaunchFiles) {
        if (file == name) return std::string(text);
    }
    FAIL("no tests/core/launch/" << name);
    return {};
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Published parameter counts (total, and active where published), with where they are published.
struct Published {
    std::string_view config;
    double total;
    double active;  // 0 = not checked
    std::string_view source;
    double active_tolerance = 0.01;  // wider where the figure is published to two digits only
};

// Every file of tests/core/hf/, each mapped with all of its cost-changing keys (MLA ranks, sliding
// windows and layer patterns, MTP, leading dense layers, shared experts included).
const Published kPublished[] = {
    {"llama3-8b", 8.030e9, 0, "Meta-Llama-3-8B model card / safetensors: 8.03 B"},
    {"llama3.1-70b", 70.55e9, 0, "Llama-3.1-70B safetensors: 70.6 B"},
    {"mistral-7b", 7.24e9, 0, "Mistral-7B-v0.1 safetensors: 7.24 B (7,241,732,096)"},
    {"mixtral-8x7b", 46.70e9, 12.9e9, "Mixtral of Experts (arXiv 2401.04088) and model card: 46.7 B total, 12.9 B per token"},
    {"qwen2-7b", 7.62e9, 0, "Qwen2-7B model card: 7.62 B (Qwen2 technical report, arXiv 2407.10671: 7.6 B)"},
    {"qwen3-8b", 8.2e9, 0, "Qwen3-8B model card: 8.2 B"},
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, "Qwen3-30B-A3B model card: 30.5 B total, 3.3 B activated (two digits)", 0.02},
    // The Hub's 685 B is the 671 B main model plus the 14 B multi-token-prediction module (arXiv
    // 2412.19437 and the model card); the MTP module shares the embedding and head, counted once here.
    {"deepseek-v3", 685e9, 0, "DeepSeek-V3 model card: 685 B (671 B main model + 14 B MTP module)"},
    {"gpt-oss-20b", 20.91e9, 0, "gpt-oss model card (arXiv 2508.10925) table 1: 20.91 B total"},
    {"gemma2-9b", 9.24e9, 0, "gemma-2-9b model card: 9.24 B"},
    {"gemma3-1b", 1.0e9, 0, "gemma-3-1b-pt: 1 B (999,885,952)"},
    {"gpt2", 124.44e6, 0, "openai-community/gpt2 safetensors: 124 M (124,439,808 with the 0.79 M position table)"},
    {"gpt-neox-20b", 20.55e9, 0, "GPT-NeoX-20B (arXiv 2204.06745): 20 B class; checkpoint weights 20,554,568,208"},
    {"bert-base-uncased", 109.48e6, 0, "BertModel of bert-base-uncased: 109,482,240 (Devlin et al. 2019: 110 M)"},
    {"t5-base", 222.9e6, 0, "google-t5/t5-base: 222,903,552 (Raffel et al. 2020: 220 M)"},
    {"bart-large", 406.29e6, 0, "facebook/bart-large: 406,291,456 (406 M)"},
};

}  // namespace

TEST_CASE("Hugging Face configs import within 1 % of the published parameter counts") {
    // One real config from the Hub per supported model_type, every file checked.
    REQUIRE(std::size(kPublished) == std::size(kHfConfigs));
    for (const Published& p : kPublished) {
        INFO(p.config << " (" << p.source << ")");
        auto model = model_from_hf_config(hf_config(p.config));
        REQUIRE(model.ok());
        CHECK(static_cast<double>(parameter_count(model.value())) == Approx(p.total).epsilon(0.01));
        if (p.active > 0) CHECK(static_cast<double>(active_parameter_count(model.value())) == Approx(p.active).epsilon(p.active_tolerance));
    }
    // gpt-oss publishes its active count without the input embedding (model card: 3.61 B active in
    // gpt-oss-20b; the 201,088 x 2,880 table is looked up, not multiplied).
    auto oss = model_from_hf_config(hf_config("gpt-oss-20b"));
    REQUIRE(oss.ok());
    const double embedding = static_cast<double>(oss.value().vocab * oss.value().hidden);
    CHECK(static_cast<double>(active_parameter_count(oss.value())) - embedding == Approx(3.61e9).epsilon(0.01));
}

TEST_CASE("Llama 3 8B maps GQA, SwiGLU, RMSNorm, untied embeddings and the context length") {
    auto model = model_from_hf_config(hf_config("llama3-8b"));
    REQUIRE(model.ok());
    const ModelSpec& m = model.value();
    CHECK(m.architecture == Architecture::decoder);
    CHECK(m.layers == 32);
    CHECK(m.hidden == 4096);
    CHECK(m.heads == 32);
    CHECK(m.kv_heads == 8);
    CHECK(m.effective_head_dim() == 128);
    CHECK(m.ffn_hidden == 14336);
    CHECK(m.vocab == 128256);
    CHECK(m.max_seq_len == 8192);
    CHECK(m.activation == Activation::swiglu);
    CHECK(m.norm == Norm::rmsnorm);
    CHECK_FALSE(m.tied_embeddings);
    CHECK_FALSE(m.is_moe());
}

TEST_CASE("MoE configs map experts, top-k and the expert width") {
    auto mixtral = model_from_hf_config(hf_config("mixtral-8x7b"));
    REQUIRE(mixtral.ok());
    CHECK(mixtral.value().moe.experts == 8);
    CHECK(mixtral.value().moe.top_k == 2);
    CHECK(mixtral.value().moe.expert_ffn_hidden == 14336);
    CHECK(mixtral.value().ffn_hidden == 0);  // every layer routed
    auto qwen = model_from_hf_config(hf_config("qwen3-30b-a3b"));
    REQUIRE(qwen.ok());
    CHECK(qwen.value().moe.experts == 128);
    CHECK(qwen.value().moe.top_k == 8);
    CHECK(qwen.value().moe.expert_ffn_hidden == 768);
    CHECK(qwen.value().head_dim == 128);  // 32 heads x 128 = 4096 != hidden 2048
}

TEST_CASE("encoder and encoder-decoder configs") {
    auto bert = model_from_hf_config(hf_config("bert-base-uncased"));
    REQUIRE(bert.ok());
    CHECK(bert.value().architecture == Architecture::encoder);
    CHECK(bert.value().norm == Norm::layernorm);
    CHECK(bert.value().tied_embeddings);
    // HF BertModel's exact count (sum of its parameters' numel for bert-base-uncased): word 30522 x 768,
    // positions 512 x 768, token types 2 x 768, embedding LayerNorm, 12 layers of 7,087,872 with
    // their biases, pooler 768 x 768 + 768.
    CHECK(bert.value().position_embeddings == 512);
    CHECK(bert.value().token_types == 2);
    CHECK(bert.value().pooler);
    CHECK(bert.value().linear_bias);
    const int64_t layer = 4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 2 * 2 * 768;
    CHECK(parameter_count(bert.value()) == 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768 + 12 * layer + 768 * 768 + 768);
    CHECK(parameter_count(bert.value()) == 109482240);
    // The cost model's matmul count leaves them out (no FLOPs from lookups, biases or the pooler).
    ModelSpec bare = bert.value();
    bare.position_embeddings = bare.token_types = 0;
    bare.pooler = bare.linear_bias = false;
    CHECK(active_matmul_parameter_count(bert.value()) == active_matmul_parameter_count(bare));
    // Relative positions (position_embedding_type relative_key) have no absolute table.
    std::string relative = hf_config("bert-base-uncased");
    relative.replace(relative.find("\"absolute\""), 10, "\"relative_key\"");
    auto rel = model_from_hf_config(relative);
    REQUIRE(rel.ok());
    CHECK(rel.value().position_embeddings == 0);
    auto t5 = model_from_hf_config(hf_config("t5-base"));
    REQUIRE(t5.ok());
    CHECK(t5.value().architecture == Architecture::encoder_decoder);
    CHECK(t5.value().layers == 12);
    CHECK(t5.value().decoder_layers == 12);  // num_decoder_layers absent: T5Config uses num_layers
    CHECK(t5.value().activation == Activation::relu);
    auto bart = model_from_hf_config(hf_config("bart-large"));
    REQUIRE(bart.ok());
    CHECK(bart.value().decoder_layers == 12);
    CHECK(bart.value().activation == Activation::gelu);
}

TEST_CASE("sliding windows become local_attention with the full-attention period") {
    struct Case {
        std::string_view config, expected;
    };
    // Mistral v0.1: every layer slides over 4096; Gemma 2: layers alternate (odd 1-based slide);
    // Gemma 3: every 6th layer global; gpt-oss: layer_types alternates sliding/full over 128.
    const Case cases[] = {
        {"mistral-7b", R"("local_attention": {
    "kind": "sliding",
    "window": 4096,
    "full_every": 0
  })"},
        {"gemma2-9b", R"("kind": "sliding",
    "window": 4096,
    "full_every": 2)"},
        {"gemma3-1b", R"("kind": "sliding",
    "window": 512,
    "full_every": 6)"},
        {"gpt-oss-20b", R"("kind": "sliding",
    "window": 128,
    "full_every": 2)"},
    };
    for (const Case& c : cases) {
        INFO(c.config);
        auto imported = import_hf_config(hf_config(c.config));
        REQUIRE(imported.ok());
        CHECK(has(imported.value().json, std::string(c.expected)));
    }
    // Qwen2 names a window but does not use it (use_sliding_window false): no local attention.
    auto qwen = import_hf_config(hf_config("qwen2-7b"));
    REQUIRE(qwen.ok());
    CHECK_FALSE(has(qwen.value().json, "local_attention"));
}

TEST_CASE("DeepSeek-V3 maps MLA ranks, shared experts, leading dense layers and MTP") {
    auto imported = import_hf_config(hf_config("deepseek-v3"));
    REQUIRE(imported.ok());
    const std::string& json = imported.value().json;
    CHECK(has(json, R"("mla": {
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128
  })"));
    CHECK(has(json, R"("experts": 256,
    "top_k": 8,
    "expert_ffn_hidden": 2048,
    "shared_experts": 1,
    "dense_layers": 3)"));
    CHECK(has(json, R"("ffn_hidden": 18432)"));
    CHECK(has(json, R"("mtp_layers": 1)"));
    CHECK(has(json, R"("name": "hf-deepseek_v3")"));
    // Read but not modelled, said so: node-limited routing (4 of 8 groups) and the FP8 checkpoint format.
    REQUIRE(imported.value().warnings.size() == 2);
    CHECK(has(imported.value().warnings[0], "topk_group 4 of n_group 8"));
    CHECK(has(imported.value().warnings[1], "quantization_config"));
    auto model = model_from_hf_config(hf_config("deepseek-v3"));
    REQUIRE(model.ok());
    CHECK(model.value().mla.q_lora_rank == 1536);
    CHECK(model.value().mla.kv_lora_rank == 512);
    CHECK(model.value().mtp_layers == 1);
    CHECK(model.value().moe.dense_layers == 3);
    CHECK(model.value().moe.shared_experts == 1);
}

TEST_CASE("an inline hf_config and a bare config.json both parse as the model of a config") {
    const std::string hf = hf_config("llama3-8b");
    auto bare = load_config(R"({"model": )" + hf + R"(, "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(bare.ok());
    CHECK(bare.value().model.kv_heads == 8);
    auto wrapped = load_config(R"({"model": {"hf_config": )" + hf + R"(}, "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(wrapped.ok());
    CHECK(parameter_count(wrapped.value().model) == parameter_count(bare.value().model));
    // Keys beside hf_config override the imported ones, as they do over a "preset".
    auto overridden = load_config(R"({"model": {"hf_config": )" + hf + R"(, "layers": 16}, "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(overridden.ok());
    CHECK(overridden.value().model.layers == 16);
    CHECK(overridden.value().model.name == "custom");
}

TEST_CASE("unsupported model types and shape keys not understood are errors naming them") {
    auto bad_type = import_hf_config(R"({"model_type": "mamba", "hidden_size": 768})");
    REQUIRE_FALSE(bad_type.ok());
    CHECK(bad_type.error().key == "model_type");
    CHECK(has(bad_type.error().message, "'mamba' is not supported"));
    auto typo = import_hf_config(R"({"model_type": "lama"})");
    REQUIRE_FALSE(typo.ok());
    CHECK(has(typo.error().message, "did you mean llama?"));
    auto wrapper = import_hf_config(R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text"}})");
    REQUIRE_FALSE(wrapper.ok());
    CHECK(has(wrapper.error().message, "text_config"));

    std::string llama = hf_config("llama3-8b");
    llama.insert(llama.find('{') + 1, R"("n_routed_experts": 64, )");
    auto unknown = import_hf_config(llama);
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().key == "n_routed_experts");
    CHECK(has(unknown.error().message, "does not understand"));

    auto missing = import_hf_config(R"({"model_type": "llama", "hidden_size": 4096})");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().key == "num_hidden_layers");
    auto activation = import_hf_config(R"({"model_type": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1, "vocab_size": 8,
                                           "activation_function": "tanh"})");
    REQUIRE_FALSE(activation.ok());
    CHECK(activation.error().key == "activation_function");
    auto qwen_freq = import_hf_config(R"({"model_type": "qwen3_moe", "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 1,
                                          "vocab_size": 8, "mlp_only_layers": [2]})");
    REQUIRE_FALSE(qwen_freq.ok());
    CHECK(qwen_freq.error().key == "mlp_only_layers");
    auto layer_types = import_hf_config(R"({"model_type": "gpt_oss", "hidden_size": 8, "num_hidden_layers": 3, "num_attention_heads": 1,
        "vocab_size": 8, "sliding_window": 4, "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]})");
    REQUIRE_FALSE(layer_types.ok());
    CHECK(layer_types.error().key == "layer_types");
    CHECK_FALSE(import_hf_config("[1]").ok());
    CHECK_FALSE(import_hf_config("{").ok());
    CHECK(import_hf_config(R"({"hidden_size": 1})").error().key == "model_type");

    // In a config the error names the path down to the HF key.
    auto config = parse_config(R"({"model": {"hf_config": {"model_type": "llama", "hidden_size": 64}}})");
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().key == "model.hf_config.num_hidden_layers");
}

// ------------------------------------------------------------------------------------------------
// Launch configs (tests/core/launch/: real recipes, sources in its README.md)

namespace {

// load_config of an imported document (its "framework" key included).
Result<Config> load_imported(const Imported& imported) { return load_config(imported.json); }

bool warned(const Imported& imported, const std::string& text) {
    for (const std::string& line : imported.warnings) {
        if (has(line, text)) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("Megatron: the Llama 3 8B FP8 recipe imports whole and predicts") {
    auto imported = import_megatron(split_command_line(launch_file("megatron-llama3-8b-h100-fp8.txt")), R"({"gpu": "h100-sxm"})");
    REQUIRE(imported.ok());
    CHECK(has(imported.value().json, R"("framework": "megatron-core")"));
    CHECK(imported.value().warnings.empty());  // every argument of the recipe is read or known not to change the cost
    auto config = load_imported(imported.value());
    REQUIRE(config.ok());
    const Config& c = config.value();
    CHECK(c.num_gpus == 8);  // torchrun --nproc_per_node 8 --nnodes 1
    CHECK(c.model.layers == 32);
    CHECK(c.model.kv_heads == 8);  // --group-query-attention --num-query-groups 8
    CHECK(c.model.ffn_hidden == 14336);
    CHECK(c.model.activation == Activation::swiglu);
    CHECK_FALSE(c.model.tied_embeddings);
    // The recipe's shape is Llama 3 8B: 8.03 B parameters (meta-llama/Meta-Llama-3-8B).
    CHECK(static_cast<double>(parameter_count(c.model)) == Approx(8.03e9).epsilon(0.01));
    CHECK(c.parallel.tp == 1);
    CHECK(c.parallel.dp == 8);
    CHECK(c.parallel.sequence_parallel);
    CHECK(c.parallel.zero == 1);  // --use-distributed-optimizer
    CHECK(c.parallel.overlap_dp_comm);
    CHECK(c.training.seq_len == 8192);
    CHECK(c.training.global_batch == 128);
    CHECK(c.training.micro_batch == 1);
    CHECK(c.training.recompute == Recompute::none);
    CHECK(c.training.tokens == Approx(1953125000.0 * 8192));  // --train-samples x --seq-length
    CHECK(c.precision.gemm == DType::fp8);                    // --fp8-format hybrid over --bf16
    CHECK(c.precision.grad_reduce == DType::bf16);            // --grad-reduce-in-bf16
}

TEST_CASE("Megatron: the GPT-3 175B recipe needs a model (it reads its vocabulary from files)") {
    const auto words = split_command_line(launch_file("megatron-gpt3-175b.txt"));
    auto bare = import_megatron(words);
    REQUIRE_FALSE(bare.ok());
    CHECK(bare.error().key == "--vocab-size");
    auto imported = import_megatron(words, R"({"model": "gpt3-175b", "gpu": "a100-sxm4-80gb", "num_gpus": 1536})");
    REQUIRE(imported.ok());
    CHECK(warned(imported.value(), "--rampup-batch-size"));
    auto config = load_imported(imported.value());
    REQUIRE(config.ok());
    CHECK(config.value().parallel.tp == 8);
    CHECK(config.value().parallel.pp == 16);
    CHECK(config.value().parallel.dp == 12);  // 1536 / (8 x 16)
    CHECK(config.value().precision.name == "fp16-mixed");
    CHECK_FALSE(config.value().parallel.overlap_dp_comm);  // Megatron's default without --overlap-grad-reduce
    CHECK(config.value().training.tokens == Approx(500000.0 * 1536 * 2048));
}

TEST_CASE("Megatron arguments: MoE, MLA, uneven stages, interleaving, recompute and errors") {
    const std::string args =
        "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 --vocab-size 129280 "
        "--normalization RMSNorm --swiglu --untie-embeddings-and-output-weights --multi-latent-attention --q-lora-rank 1536 "
        "--kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --mtp-num-layers 1 "
        "--num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
        "--moe-layer-freq '([0]*3+[1]*58)' --tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 "
        "--expert-model-parallel-size 64 --expert-tensor-parallel-size 1 --decoder-first-pipeline-num-layers 4 "
        "--decoder-last-pipeline-num-layers 1 "
        "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --bf16 --fp8-format e4m3 "
        "--fp8-recipe blockwise --seq-length 4096 --micro-batch-size 1 --global-batch-size 8192 --made-up-flag 3";
    auto imported = import_megatron(split_command_line(args));
    REQUIRE(imported.ok());
    const std::string& json = imported.value().json;
    CHECK(has(json, R"("moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden": 2048, "shared_experts": 1, "dense_layers": 3})"));
    CHECK(has(json,
              R"("mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})"));
    CHECK(has(json, R"("mtp_layers": 1)"));
    CHECK(has(json, R"("ffn_hidden": 18432)"));  // the 3 leading dense layers keep it
    CHECK(has(json, R"("first_stage_layers": 4, "last_stage_layers": 1)"));
    CHECK(has(json, R"("expert_tp": 1)"));  // MoE parallel folding: EP 64 over TP 2 x DP
    CHECK(has(json, R"("recompute": "full")"));
    CHECK(has(json, R"("precision": {"preset": "fp8-mixed", "fp8_recipe": "blockwise"})"));
    CHECK(has(json, R"("vocab": 129280)"));  // already a multiple of 128 x tp 2
    CHECK(warned(imported.value(), "not understood, ignored: --made-up-flag"));
    CHECK(warned(imported.value(), "GPU count"));

    auto vp = import_megatron(split_command_line("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 32000 "
                                                 "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2 "
                                                 "--recompute-activations --swiglu"));
    REQUIRE(vp.ok());
    CHECK(has(vp.value().json, R"("virtual_stages": 4, "schedule": "interleaved")"));
    CHECK(has(vp.value().json, R"("recompute": "selective")"));
    CHECK(has(vp.value().json, R"("ffn_hidden": 10880)"));  // int(4h * 2/3 / 64) * 64 = 10880 (arguments.py, --swiglu)
    CHECK(has(vp.value().json, R"("vocab": 32000)"));
    CHECK(has(vp.value().json, R"("precision": "fp32")"));  // neither --bf16 nor --fp16
    auto padded = import_megatron(split_command_line("--num-layers 2 --hidden-size 64 --num-attention-heads 2 --vocab-size 50257 "
                                                     "--tensor-model-parallel-size 2"));
    REQUIRE(padded.ok());
    CHECK(has(padded.value().json, R"("vocab": 50432)"));  // padded to a multiple of 128 x 2 (_vocab_size_with_padding)
    // Arguments not understood: each once, in the order they first appear; read and harmless ones are not.
    auto unread = import_megatron(split_command_line("--zz-flag 1 --lr 3e-4 --aa-flag 2 --zz-flag 4 --num-layers 2 --lr-warmup-iters 5 "
                                                     "--hidden-size 64 --aa-flag --num-attention-heads 2 --vocab-size 128 --mm-flag"));
    REQUIRE(unread.ok());
    std::vector<std::string> ignored;
    for (const std::string& w : unread.value().warnings) {
        if (w.rfind("not understood", 0) == 0) ignored.push_back(w);
    }
    CHECK(ignored == std::vector<std::string>{"not understood, ignored: --zz-flag", "not understood, ignored: --aa-flag",
                                              "not understood, ignored: --mm-flag"});

    const auto rejected = [](const std::string& text, const std::string& key) {
        INFO(text);
        auto result = import_megatron(split_command_line(text), R"({"model": "gpt2"})");
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().key == key);
    };
    rejected("--recompute-granularity some", "--recompute-granularity");
    rejected("--tensor-model-parallel-size x", "--tensor-model-parallel-size");
    rejected("--nproc_per_node 8 --nnodes 1:4", "--nnodes");
    rejected("--fp8-format e5m2", "--fp8-format");
    rejected("--optimizer muon", "--optimizer");
    // Products of numbers read up to 9e15 each: past 2^53 an error, not a signed overflow.
    rejected("--nproc-per-node 9000000000000000 --nnodes 9000000000000000", "--nnodes");
    auto padding = import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 "
                                                      "--make-vocab-size-divisible-by 9000000000000000 "
                                                      "--tensor-model-parallel-size 9000000000000000"));
    REQUIRE_FALSE(padding.ok());
    CHECK(padding.error().key == "--make-vocab-size-divisible-by");
    rejected("--pipeline-model-parallel-size 9000000000000000 --num-layers-per-virtual-pipeline-stage 9000000000000000",
             "--num-layers-per-virtual-pipeline-stage");
    // --kv-channels x heads past int64 (fuzz_import_megatron, UBSan): no hidden size, so head_dim is given.
    auto wide = import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 600000000004 "
                                                   "--kv-channels 1953125000 --vocab-size 128"));
    REQUIRE(wide.ok());
    CHECK(wide.value().json.find("\"head_dim\": 1953125000") != std::string::npos);
    auto freq = import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 "
                                                   "--num-experts 4 --moe-layer-freq [1,0,1,1]"));
    REQUIRE_FALSE(freq.ok());
    CHECK(freq.error().key == "--moe-layer-freq");
    // A repeat count past the layers is refused as it is read: it was expanded first (2e9 entries:
    // over a minute and 3 GB; 9e15: out of memory).
    for (const char* pattern : {"[1]*9000000000000000", "([0]*2+[1]*2000000000)", "[0,1]*4611686018427387904"}) {
        INFO(pattern);
        auto huge = import_megatron(split_command_line(std::string("--num-layers 4 --hidden-size 64 --num-attention-heads 2 "
                                                                   "--vocab-size 128 --num-experts 4 --moe-layer-freq '") +
                                                       pattern + "'"));
        REQUIRE_FALSE(huge.ok());
        CHECK(huge.error().key == "--moe-layer-freq");
        CHECK_THAT(huge.error().message, Catch::Contains("a 0/1 list of 4 layers"));
    }
    CHECK(import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 "
                                             "--num-experts 4 --moe-layer-freq '[0]*1+[1]*3'"))
              .ok());
    // An empty list repeated is empty, as in Python, however large the count: it looped over the
    // count (9e15 no-op inserts: a hang).
    const auto with_freq = [](const std::string& pattern) {
        return import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 "
                                                  "--num-experts 4 --moe-layer-freq '" +
                                                  pattern + "'"));
    };
    const auto empty_run = with_freq("[]*9000000000000000+[0]+[1]*3");
    REQUIRE(empty_run.ok());
    CHECK(empty_run.value().json == with_freq("[0]+[1]*3").value().json);
    CHECK_THAT(empty_run.value().json, Catch::Contains(R"("dense_layers": 1)"));
    const auto only_empty = with_freq("[]*9000000000000000");
    REQUIRE_FALSE(only_empty.ok());
    CHECK_THAT(only_empty.error().message, Catch::Contains("a 0/1 list of 4 layers"));
    // Runs repeated: the first MoE layer inside the second repetition, and a dense layer after it.
    CHECK_THAT(with_freq("[0,0]*1+[0,1]*1+[1]*0").value().json, Catch::Contains(R"("dense_layers": 3)"));
    CHECK_FALSE(with_freq("[1,0]*2").ok());
    CHECK_FALSE(with_freq("[0,1]*2").ok());

    // CUDA graphs: --cuda-graph-impl (and the deprecated per-layer flags) become training.cuda_graphs.
    const auto graphs = [](const std::string& flags) {
        return import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 " + flags));
    };
    CHECK_THAT(graphs("--cuda-graph-impl full_iteration").value().json, Catch::Contains(R"("cuda_graphs": "full")"));
    CHECK_THAT(graphs("--cuda-graph-impl transformer_engine").value().json, Catch::Contains(R"("cuda_graphs": "layers")"));
    CHECK_THAT(graphs("--enable-cuda-graph").value().json, Catch::Contains(R"("cuda_graphs": "layers")"));
    CHECK_FALSE(graphs("").value().json.find("cuda_graphs") != std::string::npos);
    CHECK(graphs("--cuda-graph-impl everything").error().key == "--cuda-graph-impl");

    // The MoE token dispatcher: --moe-token-dispatcher-type (flex: DeepEP), --moe-enable-deepep.
    const auto moe = [](const std::string& flags) {
        return import_megatron(split_command_line("--num-layers 4 --hidden-size 64 --num-attention-heads 2 --vocab-size 128 "
                                                  "--num-experts 8 --moe-router-topk 2 " +
                                                  flags));
    };
    CHECK_THAT(moe("--moe-token-dispatcher-type alltoall").value().json, Catch::Contains(R"("moe_dispatcher": "alltoall")"));
    CHECK_THAT(moe("--moe-token-dispatcher-type allgather").value().json, Catch::Contains(R"("moe_dispatcher": "allgather")"));
    CHECK_THAT(moe("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep").value().json,
               Catch::Contains(R"("moe_dispatcher": "deepep")"));
    CHECK_THAT(moe("--moe-token-dispatcher-type flex --moe-enable-deepep").value().json, Catch::Contains(R"("moe_dispatcher": "deepep")"));
    CHECK(moe("").value().json.find("moe_dispatcher") == std::string::npos);  // the framework's default then
    const auto read = moe("--moe-token-dispatcher-type alltoall");
    REQUIRE(read.ok());
    for (const std::string& w : read.value().warnings)
        CHECK(w.find("moe-token-dispatcher-type") == std::string::npos);  // read, not "ignored"
    CHECK(moe("--moe-token-dispatcher-type ring").error().key == "--moe-token-dispatcher-type");
    CHECK(graphs("--moe-token-dispatcher-type alltoall").value().json.find("moe_dispatcher") == std::string::npos);  // dense: no key
}

TEST_CASE("NeMo: Hydra overrides of the NeMo launcher's GPT-3 20B example") {
    auto imported = import_megatron(split_command_line(launch_file("nemo-launcher-gpt3-20b-a100.txt")),
                                    R"({"model": "gpt3-13b", "gpu": "a100-sxm4-80gb", "num_gpus": 8})");
    REQUIRE(imported.ok());
    CHECK(warned(imported.value(), "NeMo overrides"));
    const std::string& json = imported.value().json;
    CHECK(has(json, R"("parallel": {"tp": 2, "pp": 4})"));  // training.model.*_parallel_size; the rest from the YAML
    CHECK(has(json, R"("training": {"global_batch": 32})"));
    CHECK_FALSE(has(json, R"("precision")"));  // trainer.precision not overridden: not Megatron's fp32 default
    auto config = load_imported(imported.value());
    REQUIRE(config.ok());
    CHECK(config.value().parallel.dp == 1);
    // NeMo key names: underscores, encoder_seq_length, trainer.devices x num_nodes, activations_checkpoint_*,
    // share_embeddings_and_output_weights, distributed_fused_adam, num_query_groups without a GQA switch.
    auto keys = import_megatron(split_command_line(
        "trainer.devices=8 trainer.num_nodes=2 trainer.precision=bf16-mixed model.num_layers=32 model.hidden_size=4096 "
        "model.num_attention_heads=32 model.num_query_groups=8 model.ffn_hidden_size=14336 model.normalization=rmsnorm "
        "model.activation=fast-swiglu model.share_embeddings_and_output_weights=False model.encoder_seq_length=8192 "
        "model.micro_batch_size=1 model.global_batch_size=128 model.optim.name=distributed_fused_adam model.data.data_prefix=[1.0,x] "
        "model.activations_checkpoint_granularity=selective model.sequence_parallel=False ++model.made_up_key=3 --vocab-size 128256"));
    REQUIRE(keys.ok());
    const std::string& k = keys.value().json;
    CHECK(has(k, R"("num_gpus": 16)"));
    CHECK(has(k, R"("kv_heads": 8)"));
    CHECK(has(k, R"("activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false)"));
    CHECK(has(k, R"("precision": "bf16-mixed")"));
    CHECK(has(k, R"("parallel": {"zero": 1})"));
    CHECK(has(k, R"("training": {"seq_len": 8192, "global_batch": 128, "micro_batch": 1, "recompute": "selective"})"));
    CHECK(warned(keys.value(), "not understood, ignored: --made-up-key"));
}

TEST_CASE("command lines split like a shell") {
    CHECK(split_command_line("a 'b c' \"d \\\"e\\\"\" f\\ g \\\n h # comment\n i") ==
          std::vector<std::string>{"a", "b c", "d \"e\"", "f g", "h", "i"});
}

TEST_CASE("torchtitan: the Llama 3 70B job config imports and predicts") {
    const std::string toml = launch_file("torchtitan-llama3-70b.toml");
    auto imported = import_torchtitan(toml, R"({"gpu": "a100-sxm4-80gb", "num_gpus": 64})");
    REQUIRE(imported.ok());
    CHECK(has(imported.value().json, R"("framework": "torchtitan")"));
    auto config = load_imported(imported.value());
    REQUIRE(config.ok());
    const Config& c = config.value();
    CHECK(c.model.name == "llama3.1-70b");  // [model] llama3 / 70B
    CHECK(c.parallel.tp == 8);
    CHECK(c.parallel.dp == 8);    // data_parallel_shard_degree -1: 64 / 8
    CHECK(c.parallel.zero == 3);  // FSDP2
    CHECK(c.training.micro_batch == 8);
    CHECK(c.training.global_batch == 64);  // local_batch_size x dp
    CHECK(c.training.recompute == Recompute::full);
    CHECK(c.precision.name == "bf16-mixed");  // mixed_precision_param bfloat16, reduce float32 (defaults)
    CHECK(c.training.tokens == Approx(1000.0 * 64 * 8192));
    auto no_gpus = import_torchtitan(toml);
    REQUIRE_FALSE(no_gpus.ok());
    CHECK(no_gpus.error().key == "parallelism.data_parallel_shard_degree");
    auto fp8 = import_torchtitan("[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\n  \"float8\",\n]\n[parallelism]\n"
                                 "data_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\nseq_len = 8192\ncompile = true\n");
    REQUIRE(fp8.ok());
    CHECK(has(fp8.value().json, R"("precision": "fp8-mixed")"));
    CHECK(has(fp8.value().json, R"("num_gpus": 8)"));
    CHECK(has(fp8.value().json, R"("recompute": "selective")"));  // ActivationCheckpoint.mode default
    CHECK(has(fp8.value().json, R"("compile": true)"));           // training.compile = true: Inductor's fusions costed
    CHECK_FALSE(c.training.compile);                              // [compile] enable=false
    auto bad = import_torchtitan("[model]\nname = llama3\n");
    REQUIRE_FALSE(bad.ok());  // an unquoted string is not a TOML value torchtitan writes
    CHECK(import_torchtitan("just words\n").error().key == "line 1");
    auto unknown = import_torchtitan("[model]\nname = \"mamba\"\nflavor = \"1B\"\n");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().key == "model.flavor");
    // A multi-line array ends where its brackets balance outside quotes, on whichever line; one
    // that never balances is an error on the line of its key.
    const std::string rest = "[parallelism]\ndata_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n";
    auto lines =
        import_torchtitan("[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\n  \"]\", # ]\n  [\"float8\",\n]]\n" + rest);
    auto one_line = import_torchtitan("[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"]\", [\"float8\"]]\n" + rest);
    REQUIRE(lines.ok());
    REQUIRE(one_line.ok());
    CHECK(has(lines.value().json, R"("precision": "fp8-mixed")"));
    CHECK(lines.value().json == one_line.value().json);
    // Degrees and batch sizes are read up to 2^53 each; their products past 2^53 are errors, not a
    // signed overflow (UBSan in fuzz_import_torchtitan: 16666661666661 * 16666661666661).
    const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    auto degrees = import_torchtitan(model + "[parallelism]\ntensor_parallel_degree = 16666661666661\n"
                                             "data_parallel_shard_degree = 16666661666661\n");
    REQUIRE_FALSE(degrees.ok());
    CHECK(degrees.error().key == "parallelism");
    CHECK(degrees.error().message == "the degrees multiply to more than 2^53 GPUs");
    auto spread = import_torchtitan(model + "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 4294967296\n"
                                            "pipeline_parallel_degree = 4294967296\n",
                                    R"({"num_gpus": 8})");
    REQUIRE_FALSE(spread.ok());
    CHECK(spread.error().key == "parallelism.data_parallel_shard_degree");
    auto batch = import_torchtitan(model + "[parallelism]\ndata_parallel_shard_degree = 1048576\n"
                                           "[training]\nlocal_batch_size = 1125899906842624\n");
    REQUIRE_FALSE(batch.ok());
    CHECK(batch.error().key == "training.local_batch_size");
    // An array that never closes is a syntax error (toml++) on the line where the document ran out.
    auto open_array = import_torchtitan("[model]\nname = \"llama3\"\nconverters = [\n  \"float8\",\n  [\n]\n");
    REQUIRE_FALSE(open_array.ok());
    CHECK(open_array.error().key.rfind("line ", 0) == 0);
    CHECK(open_array.error().key != "line 1");
}

TEST_CASE("torchtitan: TOML inline tables and dotted keys read as [table] headers do (toml++)") {
    const std::string tables = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"
                               "[training]\nlocal_batch_size = 2\nseq_len = 4096\n";
    const std::string inline_and_dotted = "model = { name = \"llama3\", flavor = \"8B\" }\nparallelism.data_parallel_shard_degree = 8\n"
                                          "training.local_batch_size = 2\ntraining.seq_len = 4096\n";
    auto a = import_torchtitan(tables);
    auto b = import_torchtitan(inline_and_dotted);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(has(b.value().json, R"("seq_len": 4096)"));
    CHECK(a.value().json == b.value().json);
    // A syntax error names its line: the unclosed inline table on line 2.
    auto bad = import_torchtitan("[job]\nmodel = { name = \"llama3\"\n[training]\nseq_len = 4096\n");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "line 2");
    // A key defined twice is a TOML error too (the hand-written reader kept the last).
    auto twice = import_torchtitan("[training]\nseq_len = 4096\nseq_len = 8192\n");
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.error().key == "line 3");
    // A header key starting with ',' aborted toml++ 3.3 (its parse_key assertion; found by fuzz_import_torchtitan).
    for (const char* header : {"[,", "[training]\nseq_len = 1\n[ ,]\n", "[[,", "[\n", "[[ \r\n", "[[[s"}) {
        INFO(header);
        auto refused = import_torchtitan(header);
        REQUIRE_FALSE(refused.ok());
        CHECK(has(refused.error().message, "table header"));
    }
}

TEST_CASE("DeepSpeed: ZeRO stage, offload, fp16 and the batch triple") {
    auto offload = import_deepspeed(launch_file("deepspeed-zero2-cpu-offload.json"), R"({"model": "gpt2-xl", "gpu": "a100-sxm4-80gb"})");
    REQUIRE(offload.ok());
    CHECK(has(offload.value().json, R"("framework": "deepspeed")"));
    CHECK(warned(offload.value(), "cpu_offload not modelled"));
    CHECK(warned(offload.value(), "train_micro_batch_size_per_gpu not given"));
    CHECK(warned(offload.value(), "activation_checkpointing"));
    auto config = load_imported(offload.value());
    REQUIRE(config.ok());
    CHECK(config.value().parallel.zero == 2);
    CHECK(config.value().precision.name == "fp16-mixed");
    CHECK(config.value().num_gpus == 16);  // train_batch_size 16 = micro 1 (assumed) x accumulation 1 x 16 ranks
    CHECK(config.value().training.optimizer == Optimizer::adamw);
    // Batch products past int64 are errors (micro x accumulation 2^80 wrapped to 0: a division by zero).
    auto wide = import_deepspeed(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1099511627776,
                                     "gradient_accumulation_steps": 1099511627776})",
                                 R"({"model": "gpt2-xl", "gpu": "a100-sxm4-80gb"})");
    REQUIRE_FALSE(wide.ok());
    CHECK(wide.error().key == "train_batch_size");
    CHECK(wide.error().message == "micro x accumulation overflows a 64-bit integer");
    auto wide_total = import_deepspeed(R"({"train_micro_batch_size_per_gpu": 4294967296, "gradient_accumulation_steps": 4294967296})",
                                       R"({"model": "gpt2-xl", "gpu": "a100-sxm4-80gb", "num_gpus": 8})");
    REQUIRE_FALSE(wide_total.ok());
    CHECK(wide_total.error().key == "train_batch_size");
    auto wide_tp = import_deepspeed(R"({"train_batch_size": 4611686018427387904, "train_micro_batch_size_per_gpu": 1,
                                        "gradient_accumulation_steps": 1, "tensor_parallel": {"autotp_size": 4}})",
                                    R"({"model": "gpt2-xl", "gpu": "a100-sxm4-80gb"})");
    REQUIRE_FALSE(wide_tp.ok());
    CHECK(wide_tp.error().key == "tensor_parallel.autotp_size");

    auto zero3 = import_deepspeed(launch_file("deepspeed-zero3.json"), R"({"model": "gpt2-xl", "gpu": "a100-sxm4-80gb", "num_gpus": 16})");
    REQUIRE(zero3.ok());
    auto c3 = load_imported(zero3.value());
    REQUIRE(c3.ok());
    CHECK(c3.value().parallel.zero == 3);
    CHECK(c3.value().parallel.overlap_dp_comm);  // DeepSpeedZeroConfig: overlap_comm defaults to true for stage 3
    CHECK(c3.value().training.micro_batch == 8);
    CHECK(c3.value().training.global_batch == 128);  // 8 x 1 x 16

    auto mismatch = import_deepspeed(R"({"train_batch_size": 10, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1})",
                                     R"({"num_gpus": 4})");
    REQUIRE_FALSE(mismatch.ok());
    CHECK(mismatch.error().key == "train_batch_size");
    auto bad_stage = import_deepspeed(R"({"zero_optimization": {"stage": 4}})");
    REQUIRE_FALSE(bad_stage.ok());
    CHECK(bad_stage.error().key == "zero_optimization.stage");
    auto bf16 = import_deepspeed(R"({"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "new_feature": 1})");
    REQUIRE(bf16.ok());
    CHECK(has(bf16.value().json, R"("precision": "bf16-mixed")"));
    CHECK(warned(bf16.value(), "not understood, ignored: new_feature"));
    CHECK(warned(bf16.value(), "no model"));
}

TEST_CASE("importers answer every truncated or corrupted input with a value or an error, never a crash") {
    int64_t calls = 0;
    const auto check = [&](const Result<Imported>& result) {
        ++calls;
        if (!result.ok()) CHECK_FALSE(result.error().message.empty());
    };
    for (const auto& [file, text] : kHfConfigs) {
        for (size_t cut = 0; cut < text.size(); cut += 17) check(import_hf_config(text.substr(0, cut)));
        std::string corrupted(text);
        for (size_t at = 1; at < corrupted.size(); at += 29) corrupted[at] = "0\"{}[],:-"[at % 9];
        check(import_hf_config(corrupted));
    }
    for (const auto& [file, text] : kLaunchFiles) {
        for (size_t cut = 0; cut < text.size(); cut += 23) {
            const std::string_view part = text.substr(0, cut);
            const std::string_view name = file;
            if (name.find("megatron") == 0 || name.find("nemo") == 0)
                check(import_megatron(split_command_line(part), R"({"model": "gpt2"})"));
            else if (name.find("torchtitan") == 0)
                check(import_torchtitan(part, R"({"num_gpus": 64})"));
            else
                check(import_deepspeed(part));
        }
    }
    CHECK(calls > 1000);
    // Values at the edges of what the readers accept.
    check(import_hf_config(
        R"({"model_type": "llama", "hidden_size": 1e300, "num_hidden_layers": -1, "num_attention_heads": 0, "vocab_size": 1})"));
    check(import_hf_config(R"({"model_type": "gpt_oss", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 1, "vocab_size": 8,
                               "layer_types": ["sliding_attention", 3]})"));
    check(import_megatron(
        split_command_line("--num-layers 0 --hidden-size 64 --num-attention-heads 2 --vocab-size 8 --make-vocab-size-divisible-by 0")));
    check(import_torchtitan("[parallelism]\ndata_parallel_shard_degree = 0\ntensor_parallel_degree = 0\n",
                            R"({"model": "gpt2", "num_gpus": 8})"));
    check(import_deepspeed(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 0, "gradient_accumulation_steps": 0})"));
}

// ------------------------------------------------------------------------------------------------
// tools/measure_gpu.py micro-benchmarks -> calibration (efficiency = measured / preset peak)

namespace {

// H100 SXM preset: bf16 989.5, fp8 1979 TFLOP/s dense, 3,350 GB/s HBM; DGX H100: 450 GB/s NVLink and
// 50 GB/s of NIC per GPU (presets/gpus/h100-sxm.json, presets/nodes/dgx-h100.json).
constexpr const char* kMicrobenchmarks = R"({
  "schema": "trainclock/measurements/v1", "gpu": "h100-sxm", "node": null, "device": "NVIDIA H100 80GB HBM3",
  "gemm": [{"dtype": "bf16", "m": 8192, "n": 12288, "k": 4096, "tflops": 700.0},
           {"dtype": "bf16", "m": 8192, "n": 16384, "k": 4096, "tflops": 794.2},
           {"dtype": "fp8", "m": 8192, "n": 16384, "k": 4096, "tflops": 1400.0}],
  "memory": {"op": "copy", "bandwidth_gbps": 2900.0},
  "attention": [{"dtype": "bf16", "pass": "forward", "kernel": "sdpa", "tflops": 600.0},
                {"dtype": "fp32", "pass": "forward+backward", "kernel": "sdpa", "tflops": 60.0},
                {"dtype": "bf16", "pass": "forward+backward", "kernel": "sdpa", "tflops": 500.0}],
  "collectives": [{"op": "all_reduce", "group": "intra", "ranks": 8, "busbw_gbps": 360.0},
                  {"op": "all_gather", "group": "intra", "ranks": 8, "busbw_gbps": 400.0},
                  {"op": "all_reduce", "group": "inter", "ranks": 2, "busbw_gbps": 44.0},
                  {"op": "all_reduce", "group": "intra", "ranks": 1, "busbw_gbps": null}]
})";

}  // namespace

TEST_CASE("micro-benchmarks become efficiencies over the GPU and node presets' peaks") {
    REQUIRE(is_microbenchmark_file(kMicrobenchmarks));
    CHECK_FALSE(is_microbenchmark_file(R"({"cases": []})"));
    auto measured = calibration_from_microbenchmarks(kMicrobenchmarks);
    REQUIRE(measured.ok());
    CHECK(measured.value().gpu == "h100-sxm");
    CHECK(measured.value().node == "dgx-h100");  // the GPU's default node
    auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 16, "calibration": )" + measured.value().json + "}");
    REQUIRE(config.ok());  // predict, compare, search and validate read it the same way
    const auto& sections = config.value().calibration.per_gpu;
    REQUIRE(sections.size() == 1);
    CHECK(sections[0].first == "h100-sxm");
    const CalibrationOverrides& o = sections[0].second;
    const auto gemm = [&](DType d) { return o.gemm_efficiency[static_cast<int>(d)].value_or(-1); };
    CHECK(gemm(DType::bf16) == Approx(794.2 / 989.5));  // the best shape
    CHECK(gemm(DType::fp8) == Approx(1400.0 / 1979.0));
    CHECK(gemm(DType::fp16) == Approx(794.2 / 989.5));                          // carried from bf16: same datapath (calibration.cpp)
    CHECK_FALSE(o.gemm_efficiency[static_cast<int>(DType::fp32)].has_value());  // not measured: as shipped
    // A copy is a pure stream; training's memory-bound kernels get 0.8 of it (calibration.cpp), as
    // for a preset's measured figure.
    CHECK(o.memory_efficiency.value_or(-1) == Approx(2900.0 / 3350.0 * 0.8));
    CHECK(o.attention_efficiency.value_or(-1) == Approx(500.0 / 989.5));   // forward+backward, not forward
    CHECK(o.intra_node_efficiency.value_or(-1) == Approx(360.0 / 450.0));  // all-reduce, not the all-gather
    CHECK(o.inter_node_efficiency.value_or(-1) == Approx(44.0 / 50.0));
    CHECK_FALSE(o.kernel_launch_s.has_value());  // micro-benchmarks do not measure fixed costs
    CHECK(measured.value().warnings.empty());

    // --gpu/--node replace the file's; a figure above the peak is capped, saying so.
    auto a100 = calibration_from_microbenchmarks(kMicrobenchmarks, "a100-sxm4-80gb");
    REQUIRE(a100.ok());
    CHECK(has(a100.value().json, R"("a100-sxm4-80gb")"));
    bool capped = false;
    for (const auto& line : a100.value().warnings) capped = capped || has(line, "capped at 1");
    CHECK(capped);

    // Errors name the key.
    CHECK(calibration_from_microbenchmarks(R"({"schema": "trainclock/measurements/v1", "gemm": []})").error().key == "gpu");
    CHECK(calibration_from_microbenchmarks(kMicrobenchmarks, "h100-typo").error().key == "gpu");
    CHECK(calibration_from_microbenchmarks(kMicrobenchmarks, "", "dgx-typo").error().key == "node");
    CHECK(calibration_from_microbenchmarks(R"({"schema": "trainclock/measurements/v1", "gpu": "h100-sxm",
                                              "gemm": [{"dtype": "int3", "tflops": 1}]})")
              .error()
              .key == "gemm[0].dtype");
    CHECK(calibration_from_microbenchmarks(R"({"schema": "trainclock/measurements/v1", "gpu": "h100-sxm"})").error().key == "measurements");
    CHECK(calibration_from_microbenchmarks(R"({"schema": "other"})").error().key == "schema");
    CHECK_FALSE(calibration_from_microbenchmarks("{").ok());
}

TEST_CASE("the micro-benchmark reader answers truncated, corrupted and odd files with a value or an error") {
    int64_t calls = 0;
    const auto check = [&](const Result<MeasuredCalibration>& result) {
        ++calls;
        if (result.ok())
            CHECK(load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "calibration": )" + result.value().json + "}").ok());
        else
            CHECK_FALSE(result.error().message.empty());
    };
    const std::string text = kMicrobenchmarks;
    for (size_t cut = 0; cut < text.size(); cut += 7) check(calibration_from_microbenchmarks(text.substr(0, cut)));
    for (size_t at = 1; at < text.size(); at += 11) {
        std::string corrupted = text;
        corrupted[at] = "0\"{}[],:-"[at % 9];
        check(calibration_from_microbenchmarks(corrupted));
    }
    CHECK(calls > 100);
    // Rows of the wrong type, zeros, negatives, huge and tiny figures: skipped, capped or raised, said so.
    check(calibration_from_microbenchmarks(
        R"({"schema": "trainclock/measurements/v1", "gpu": "h100-sxm", "gemm": [1, {"dtype": "bf16", "tflops": 1e300}],
        "memory": {"bandwidth_gbps": -1}, "attention": {"a": 1}, "collectives": [null, {"group": "intra", "busbw_gbps": 1e-30}]})"));
    check(calibration_from_microbenchmarks(R"({"schema": "trainclock/measurements/v1", "gpu": "h100-sxm", "memory": 3,
        "gemm": [{"dtype": "fp8", "tflops": 0}]})"));
}
