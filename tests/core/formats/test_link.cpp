// Tests for trainclock/link.hpp: fragment encode/decode round trips, errors naming the field,
// base64url per RFC 4648, and the flat config fields shared with CLI flags.
#include <catch2/catch.hpp>

#include "catalogue/spec_json.hpp"  // internal: enum_name
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/prediction.hpp"

#include "model_fixtures.hpp"

using namespace trainclock;

namespace {

using fixtures::load;

Error decode_error(const std::string& fragment) {
    auto config = decode_config_link(fragment);
    INFO(fragment);
    REQUIRE_FALSE(config.ok());
    return config.error();
}

}  // namespace

TEST_CASE("base64url matches the RFC 4648 test vectors (unpadded)") {
    const std::pair<const char*, const char*> vectors[] = {{"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        CHECK(base64url_encode(plain) == encoded);
        const auto decoded = base64url_decode(encoded);
        REQUIRE(decoded.ok());
        CHECK(decoded.value() == plain);
    }
    CHECK(base64url_encode("\xfb\xff") == "-_8");  // the URL-safe alphabet: '-' and '_' for 62 and 63
    CHECK_FALSE(base64url_decode("ab+c").ok());
    CHECK_FALSE(base64url_decode("a").ok());  // 6 bits cannot end a byte sequence
}

TEST_CASE("a preset config encodes to short keys with only non-default values") {
    const Config config = load(R"({"model": "llama3-70b", "gpu": "h100-sxm", "num_gpus": 1024, "precision": "bf16-mixed",
        "parallel": {"tp": 8, "pp": 4}, "training": {"seq_len": 8192, "global_batch": 1024, "tokens": 15e12}})");
    const std::string fragment = encode_config_link(config);
    CHECK(fragment == "v=2&m=llama3-70b&g=h100-sxm&N=1024&p=bf16-mixed&fw=megatron-core&tp=8&pp=4&seq=8192&gbs=1024&tok=15000000000000");
}

TEST_CASE("links round-trip exactly for every model and GPU preset") {
    const auto gpus = preset_names(PresetKind::gpu);
    size_t index = 0;
    for (const auto& model : preset_names(PresetKind::model)) {
        const std::string gpu = gpus[index++ % gpus.size()];
        const std::string json = R"({"model": ")" + model + R"(", "gpu": ")" + gpu + R"(", "training": {"seq_len": 1024}})";
        auto config = load_config(json);
        if (!config.ok()) continue;  // e.g. a default precision rule; covered by test_config
        const std::string fragment = encode_config_link(config.value());
        INFO(fragment);
        const auto decoded = decode_config_link(fragment);
        REQUIRE(decoded.ok());
        CHECK(config_to_json(decoded.value()) == config_to_json(config.value()));
    }
}

TEST_CASE("custom objects and every field round-trip through a link") {
    const Config config = load(R"({"model": {"preset": "mixtral-8x7b", "layers": 8}, "gpu": {"preset": "h100-sxm", "memory_gib": 94},
        "node": "dgx-h200", "precision": {"preset": "bf16-mixed", "grad_reduce": "bf16"}, "num_gpus": 32,
        "parallel": {"tp": 2, "pp": 2, "ep": 2, "zero": 2, "sequence_parallel": true, "schedule": "interleaved",
                     "virtual_stages": 2, "overlap_dp_comm": false, "overlap_tp_comm": true},
        "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2, "recompute": "selective",
                     "flash_attention": false, "attention_kernel": "flash3", "optimizer": "adam", "tokens": 1.5e11,
                     "price_per_gpu_hour": 3.75},
        "calibration": {"memory_efficiency": 0.8, "gemm_efficiency": {"bf16": 0.66}}})");
    const std::string fragment = encode_config_link(config);
    CHECK(fragment.find("m=~") != std::string::npos);  // inline objects as ~base64url JSON
    CHECK(fragment.find("n=dgx-h200") != std::string::npos);
    CHECK(fragment.find("&dp=") == std::string::npos);  // derived again on decode
    CHECK(fragment.find("&ak=flash3") != std::string::npos);
    const auto decoded = decode_config_link("https://example.org/trainclock/#" + fragment);
    REQUIRE(decoded.ok());
    CHECK(config_to_json(decoded.value()) == config_to_json(config));
}

TEST_CASE("uneven stages and whole-run keys travel through a link and the flags of the same names") {
    const Config config = load(R"({"model": "llama3.1-405b", "gpu": "h100-sxm", "num_gpus": 1024,
        "parallel": {"tp": 8, "pp": 8, "virtual_stages": 8, "schedule": "interleaved", "embedding_in_stage_split": true,
                     "loss_in_stage_split": true},
        "training": {"seq_len": 8192, "global_batch": 512, "tokens": 1e12, "checkpoint_interval_steps": 500,
                     "storage_bw_gbps": 100, "restart_s": 0, "failure_rate_per_gpu_hour": 1e-5, "ideal": true}})");
    const std::string fragment = encode_config_link(config);
    for (const char* pair : {"&ess=1", "&lss=1", "&cks=500", "&sbw=100", "&rst=0", "&fr=0.00001", "&ideal=1"}) {
        INFO(pair);
        CHECK(fragment.find(pair) != std::string::npos);
    }
    const auto decoded = decode_config_link(fragment);
    REQUIRE(decoded.ok());
    CHECK(config_to_json(decoded.value()) == config_to_json(config));
    const auto uneven = decode_config_link("v=1&m=llama3.1-405b&g=h100-sxm&N=1024&p=bf16-mixed&tp=8&pp=16&fsl=7&lsl=7&gbs=512");
    REQUIRE(uneven.ok());
    CHECK(uneven.value().parallel.stage_split.first_stage_layers == 7);
    CHECK(find_field_by_flag("--first-stage-layers")->path == "parallel.first_stage_layers");
    CHECK(find_field_by_flag("--ideal")->path == "training.ideal");
    const Error bad = decode_error("v=1&m=llama3.1-405b&g=h100-sxm&N=1024&tp=8&pp=16&fsl=6&lsl=7&gbs=512");
    CHECK(bad.key == "parallel.first_stage_layers");
}

TEST_CASE("expert_tp travels through a link (etp) and the flag --expert-tp") {
    const Config config = load(R"({"model": "deepseek-v3", "gpu": "h100-sxm", "num_gpus": 512,
        "parallel": {"tp": 2, "pp": 8, "ep": 64, "expert_tp": 1, "sequence_parallel": true}, "training": {"seq_len": 4096, "global_batch": 4096}})");
    const std::string fragment = encode_config_link(config);
    CHECK(fragment.find("&etp=1") != std::string::npos);
    const auto decoded = decode_config_link(fragment);
    REQUIRE(decoded.ok());
    CHECK(decoded.value().parallel.expert_tp == 1);
    CHECK(config_to_json(decoded.value()) == config_to_json(config));
    CHECK(find_field_by_flag("--expert-tp")->path == "parallel.expert_tp");
    // Left out when it is the default (expert TP = TP).
    const Config plain = load(R"({"model": "mixtral-8x7b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 2, "ep": 4}})");
    CHECK(encode_config_link(plain).find("etp=") == std::string::npos);
}

TEST_CASE("cuda_graphs and compile travel through a link (cg, tc) and the flags of the same names") {
    const Config config = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8,
        "training": {"seq_len": 4096, "global_batch": 64, "cuda_graphs": "layers", "compile": true}})");
    const std::string fragment = encode_config_link(config);
    CHECK(fragment.find("&cg=layers") != std::string::npos);
    CHECK(fragment.find("&tc=1") != std::string::npos);
    const auto decoded = decode_config_link(fragment);
    REQUIRE(decoded.ok());
    CHECK(config_to_json(decoded.value()) == config_to_json(config));
    // Under a framework a key set to the plain default still overrides the framework, so it stays.
    const Config named = load(R"({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "framework": "torchtitan",
        "training": {"seq_len": 4096, "global_batch": 64, "cuda_graphs": "none", "compile": false}})");
    const std::string named_fragment = encode_config_link(named);
    CHECK(named_fragment.find("&cg=none") != std::string::npos);
    CHECK(named_fragment.find("&tc=0") != std::string::npos);
    const auto named_back = decode_config_link(named_fragment);
    REQUIRE(named_back.ok());
    CHECK(named_back.value().framework_defaults == named.framework_defaults);
    CHECK(find_field_by_flag("--cuda-graphs")->path == "training.cuda_graphs");
    CHECK(find_field_by_flag("--compile")->path == "training.compile");
    CHECK(decode_error("v=1&m=gpt2&g=h100-sxm&cg=all").key == "training.cuda_graphs");
}

TEST_CASE("decode rejects future versions, unknown and garbled fields, naming the key") {
    const Error future = decode_error("v=3&m=gpt2&g=h100-sxm");
    CHECK(future.key == "v");
    CHECK(future.message == "link version 3 is newer than this trainclock supports (2)");
    CHECK(decode_error("m=gpt2&g=h100-sxm").key == "v");
    CHECK(decode_error("v=x&m=gpt2&g=h100-sxm").key == "v");
    CHECK(decode_error("v=0&m=gpt2&g=h100-sxm").key == "v");
    const Error unknown = decode_error("v=1&m=gpt2&g=h100-sxm&tpp=2");
    CHECK(unknown.key == "tpp");
    CHECK_THAT(unknown.message, Catch::Contains("unknown link field"));
    CHECK(decode_error("v=1&m=gpt2&g=h100-sxm&tp=two").key == "tp");
    CHECK(decode_error("v=1&m=gpt2&g=h100-sxm&sp=maybe").key == "sp");
    CHECK(decode_error("v=1&m=~%%%&g=h100-sxm").key == "m");
    CHECK(decode_error("v=1&m=~!!!&g=h100-sxm").key == "m");
    CHECK(decode_error("v=1&m=~WzEsMl0&g=h100-sxm").key == "m");  // base64url of [1,2]: not an object
    CHECK(decode_error("v=1&m=gpt2&g=h100-sxm&tp").key == "tp");
    CHECK(decode_error("v=1&m=gpt2&m=gpt2-xl&g=h100-sxm").key == "m");
    CHECK(decode_error("v=1&m=gpt2&g=h100").key == "gpu");                   // unknown preset: config key
    CHECK(decode_error("v=1&m=gpt2&g=h100-sxm&tp=5").key == "parallel.tp");  // rule: config key
}

TEST_CASE("decode accepts percent escapes and a leading '#'") {
    const auto decoded = decode_config_link("#v=1&m=llama3%2D8b&g=h100-sxm");
    REQUIRE(decoded.ok());
    CHECK(decoded.value().model.name == "llama3-8b");
}

TEST_CASE("config fields: one table for link keys and CLI flags") {
    for (const ConfigField& field : config_fields()) {
        CHECK(find_field_by_flag(field.flag) == &field);
        if (!field.link_key.empty()) CHECK(find_field_by_link_key(field.link_key) == &field);
    }
    CHECK(find_field_by_flag("--tp")->path == "parallel.tp");
    CHECK(find_field_by_link_key("N")->path == "num_gpus");
    CHECK(find_field_by_flag("--nope") == nullptr);
}

TEST_CASE("config fields: the rows of presets/tables/config-fields.json, typed") {
    CHECK(find_field_by_flag("--model")->type == FieldType::spec);
    CHECK(find_field_by_flag("--tp")->type == FieldType::integer);
    CHECK(find_field_by_flag("--tokens")->type == FieldType::number);
    CHECK(find_field_by_flag("--sp")->type == FieldType::boolean);
    CHECK(find_field_by_flag("--schedule")->type == FieldType::choice);
    CHECK(find_field_by_flag("--calibration")->type == FieldType::object);
    CHECK(find_field_by_flag("--precision-blind")->link_key.empty());  // CLI only
    CHECK(find_field_by_flag("--help") == nullptr);
    for (const ConfigField& field : config_fields()) {
        INFO(field.flag);
        CHECK(field.flag.substr(0, 2) == "--");
        CHECK(!field.path.empty());
        CHECK(!field.help.empty());
        // A choice is spelt by the enum table of its config key, so --help and the parser agree.
        if (field.type == FieldType::choice) CHECK(!enum_names(field.path).empty());
    }
    const std::string_view json = embedded_json(PresetKind::table, "config-fields");
    CHECK(json.find(R"("schema_version": 1)") != std::string_view::npos);
    CHECK(json.find(R"("name": "config-fields")") != std::string_view::npos);
}

TEST_CASE("set_config_field converts text and merges it, errors name the flag or the config key") {
    Config config = config_draft();
    auto step = set_config_field(config, *find_field_by_flag("--model"), "llama3-8b", "--model");
    REQUIRE(step.ok());
    step = set_config_field(step.value(), *find_field_by_flag("--gpu"), "h100-sxm", "--gpu");
    REQUIRE(step.ok());
    step = set_config_field(step.value(), *find_field_by_flag("--tp"), "4", "--tp");
    REQUIRE(step.ok());
    step = set_config_field(step.value(), *find_field_by_flag("--sp"), "on", "--sp");
    REQUIRE(step.ok());
    CHECK(step.value().parallel.tp == 4);
    CHECK(step.value().parallel.sequence_parallel);
    step = set_config_field(step.value(), *find_field_by_flag("--model"), R"({"preset": "llama3-8b", "layers": 2})", "--model");
    REQUIRE(step.ok());
    CHECK(step.value().model.layers == 2);
    CHECK(validate_config(step.value()).ok());

    const auto bad_text = set_config_field(config, *find_field_by_flag("--tp"), "four", "--tp");
    REQUIRE_FALSE(bad_text.ok());
    CHECK(bad_text.error().key == "--tp");
    const auto bad_value = set_config_field(config, *find_field_by_flag("--tp"), "2.5", "--tp");
    REQUIRE_FALSE(bad_value.ok());
    CHECK(bad_value.error().key == "parallel.tp");
    const auto bad_choice = set_config_field(config, *find_field_by_flag("--schedule"), "zigzag", "--schedule");
    REQUIRE_FALSE(bad_choice.ok());
    CHECK(bad_choice.error().key == "parallel.schedule");
}

TEST_CASE("a custom spec travels as its changes against the closest preset") {
    const Config config = load(R"({"model": {"preset": "llama3-8b", "layers": 16}, "gpu": "h100-sxm"})");
    const std::string fragment = encode_config_link(config);
    const size_t start = fragment.find("m=~") + 3;
    const std::string encoded = fragment.substr(start, fragment.find('&', start) - start);
    const auto json = base64url_decode(encoded);
    REQUIRE(json.ok());
    CHECK(json.value() == R"({"preset":"llama3-8b","layers":16})");
    const auto decoded = decode_config_link(fragment);
    REQUIRE(decoded.ok());
    CHECK(config_to_json(decoded.value()) == config_to_json(config));

    // A spec far from every preset, with keys the presets have and it lacks, still round-trips.
    const Config bare = load(R"({"model": {"architecture": "encoder", "layers": 3, "hidden": 96, "heads": 3,
        "ffn_hidden": 384, "vocab": 500, "activation": "relu", "norm": "layernorm"}, "gpu": "h100-sxm"})");
    const auto bare_decoded = decode_config_link(encode_config_link(bare));
    REQUIRE(bare_decoded.ok());
    CHECK(config_to_json(bare_decoded.value()) == config_to_json(bare));
}

TEST_CASE("enum_names: every choice field's spellings in enum order, each one a value the field accepts") {
    // Hand-listed from the flags' help (DESIGN.md 3) and presets/README.md.
    CHECK(enum_names("training.recompute") == std::vector<std::string_view>{"none", "selective", "full"});
    CHECK(enum_names("parallel.schedule") == std::vector<std::string_view>{"gpipe", "1f1b", "interleaved"});
    CHECK(enum_names("training.finetune.method") == std::vector<std::string_view>{"full", "lora", "qlora"});
    CHECK(enum_names("training.finetune.lora_targets") == std::vector<std::string_view>{"attention", "all-linear"});
    CHECK(enum_names("dtype") == std::vector<std::string_view>{"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4"});
    CHECK(enum_names("model.architecture") == std::vector<std::string_view>{"decoder", "encoder", "encoder-decoder"});
    CHECK(enum_names("parallel.tp").empty());
    CHECK(enum_names("nonsense").empty());
    const Config base = load(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "precision": "fp8-mixed"})");
    for (const ConfigField& field : config_fields()) {
        if (field.type != FieldType::choice) continue;
        const auto names = enum_names(field.path);
        INFO(field.path);
        CHECK(names.size() >= 2);
        for (const std::string_view name : names) {
            INFO(name);
            CHECK(set_config_field(base, field, name, field.link_key).ok());
        }
    }
    for (size_t i = 0; i < enum_names("precision.fp8_recipe").size(); ++i)
        CHECK(fp8_recipe_name(Fp8Recipe(i)) == enum_names("precision.fp8_recipe")[i]);
}

TEST_CASE("enum_name spells a value as its config key lists it, from the one table of spellings") {
    CHECK(enum_name(PipelineSchedule::one_f_one_b) == "1f1b");
    CHECK(enum_name(LoraTargets::all_linear) == "all-linear");
    CHECK(enum_name(GpuGeneration::pre_hopper) == "pre_hopper");  // a table no config key reads
    CHECK(enum_names("").empty());
    const std::vector<std::string_view> optimizers = enum_names("training.optimizer");
    REQUIRE(optimizers.size() == 7);  // adamw, adamw8bit, adam, lamb, lamb-per-tensor, sgd, adamw-per-tensor
    for (size_t i = 0; i < optimizers.size(); ++i) CHECK(enum_name(Optimizer(i)) == optimizers[i]);
    CHECK(enum_name(Recompute(99)) == "?");
}

TEST_CASE("a knob the config names under a framework stays in the link even at the plain default") {
    // Megatron-Core picks flash3 on Hopper and overlaps TP (presets/frameworks/megatron-core.json); the
    // config asks for flash2 and no TP overlap, today's defaults, which a link would otherwise drop.
    const Config named = load(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
                                  "parallel": {"tp": 2, "sequence_parallel": true, "overlap_tp_comm": false},
                                  "training": {"attention_kernel": "flash2"}})");
    const std::string fragment = encode_config_link(named);
    CHECK(fragment.find("&ak=flash2") != std::string::npos);
    CHECK(fragment.find("&otp=0") != std::string::npos);
    CHECK(fragment.find("&odp=") == std::string::npos);  // not named: the framework's
    auto decoded = decode_config_link(fragment);
    REQUIRE(decoded.ok());
    CHECK(decoded.value().training.attention_kernel == AttentionKernel::flash2);
    CHECK(!decoded.value().parallel.overlap_tp_comm);
    CHECK(predict(decoded.value()).iteration_time_s == predict(named).iteration_time_s);
    const Config framework_only = load(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "framework": "megatron-core",
                                           "parallel": {"tp": 2, "sequence_parallel": true}})");
    CHECK(predict(framework_only).iteration_time_s != predict(named).iteration_time_s);
    CHECK(encode_config_link(framework_only).find("&ak=") == std::string::npos);
}
