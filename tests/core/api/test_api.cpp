// Tests for trainclock/api.hpp: the JSON-string facade used by the web app.
#include <catch2/catch.hpp>

#include "trainclock/api/api.hpp"
#include "trainclock/catalogue/presets.hpp"

using namespace trainclock;

namespace {
bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }
const char* const kConfig = R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "parallel": {"pp": 2}})";
}  // namespace

TEST_CASE("predict_json returns the result with config and timeline") {
    const std::string json = predict_json(kConfig);
    CHECK(json.rfind("{\"schema\":\"trainclock/result/v1\"", 0) == 0);
    for (const char* key : {"iteration_time_s", "tokens_per_s", "mfu", "memory", "breakdown_s", "warnings", "config", "timeline"}) {
        INFO(key);
        CHECK(has(json, std::string("\"") + key + "\":"));
    }
    CHECK_FALSE(has(json, "\"error\""));
    CHECK(predict_json(kConfig) == json);  // deterministic
}

TEST_CASE("API errors are {error: {key, message}}") {
    CHECK(
        predict_json(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb", "precision": "fp8-mixed"})") ==
        R"json({"error":{"key":"precision","message":"gpu a100-sxm4-80gb has no fp8 tensor cores (precision fp8-mixed needs fp8)"}})json");
    CHECK(has(predict_json(""), R"({"error":{"key":"","message":"empty input)"));
    CHECK(has(compare_json("{"), R"("error")"));
    CHECK(has(encode_link(R"({"model": "gpt2"})"), R"({"error":{"key":"gpu")"));
    CHECK(has(decode_link("v=9"), R"({"error":{"key":"v")"));
    CHECK(has(presets_json("cpus"), R"({"error":{"key":"kind")"));
}

TEST_CASE("compare_json lists the precisions the GPU runs") {
    const std::string json = compare_json(kConfig);
    CHECK(has(json, R"("baseline":"fp32")"));
    CHECK(has(json, R"({"precision":"fp32","gemm":"fp32","speedup":1,)"));
    CHECK(has(json, R"("precision":"bf16-mixed")"));
    CHECK(has(json, R"("unsupported":["fp8-mixed")"));  // A100 has no FP8
}

TEST_CASE("presets_json lists every kind, or one") {
    const std::string all = presets_json("");
    for (const char* kind : {"\"models\":[", "\"gpus\":[", "\"nodes\":[", "\"precisions\":["}) CHECK(has(all, kind));
    for (const auto& name : preset_names(PresetKind::gpu)) CHECK(has(all, "{\"name\":\"" + name + "\""));
    const std::string gpus = presets_json("gpus");
    CHECK(gpus == presets_json("gpu"));
    CHECK_FALSE(has(gpus, "\"models\""));
}

TEST_CASE("encode_link and decode_link round-trip through JSON") {
    const std::string encoded = encode_link(kConfig);
    REQUIRE(encoded.rfind("{\"fragment\":\"v=2&m=gpt3-1.3b&g=a100-sxm4-80gb&N=8&p=bf16-mixed&fw=megatron-core&pp=2", 0) == 0);
    const std::string fragment = encoded.substr(13, encoded.size() - 13 - 2);
    const std::string decoded = decode_link(fragment);
    REQUIRE(decoded.rfind("{\"config\":{\"schema\":\"trainclock/config/v1\"", 0) == 0);
    const std::string config = decoded.substr(10, decoded.size() - 11);
    CHECK(predict_json(config) == predict_json(kConfig));
}

TEST_CASE("scaling_json lists every GPU count and precision, with results or errors") {
    const std::string json = scaling_json(kConfig);
    CHECK(json.rfind(R"({"gpu_counts":[1,2,4,8,16,32,64,128,256,512],"points":[)", 0) == 0);
    CHECK(has(json, R"({"num_gpus":1,"precision":"fp32","gemm":"fp32","error":{"key":)"));  // PP=2 needs 2 GPUs
    CHECK(has(json, R"({"num_gpus":8,"precision":"bf16-mixed","gemm":"bf16","speedup":)"));
    CHECK(has(scaling_json("{"), R"("error")"));
}

TEST_CASE("import_hf_json returns the model object and the warnings") {
    const std::string json = import_hf_json(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
                                                "quantization_config": {}})");
    CHECK(json.rfind(R"({"model":{"name":"hf-gpt2",)", 0) == 0);
    CHECK(has(json, R"("ffn_hidden":3072,)"));  // n_inner absent: 4 * n_embd (GPT2Config)
    CHECK(has(json, R"("warnings":["quantization_config)"));
    CHECK(has(import_hf_json(R"({"model_type": "rwkv"})"), R"({"error":{"key":"model_type","message":"'rwkv' is not supported)"));
}

TEST_CASE("search_json and validate_json") {
    const std::string search =
        search_json(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8})", R"({"top": 3, "pin": ["tp"]})");
    CHECK(search.rfind(R"({"schema":"trainclock/search/v1")", 0) == 0);
    CHECK(has(search, R"("rank":3)"));
    CHECK_FALSE(has(search, R"("rank":4)"));
    CHECK_FALSE(has(search, R"("tp":2,)"));  // pinned to the config's tp = 1
    CHECK(has(search_json(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb", "num_gpus": 8})", R"({"pin": ["dp"]})"),
              R"({"error":{"key":"options.pin","message":"unknown layout key 'dp'"}})"));
    // Pins are named as the config names the keys (parallel.sequence_parallel, training.micro_batch).
    const std::string pinned =
        search_json(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "training": {"micro_batch": 2}})",
                    R"({"top": 50, "pin": ["sequence_parallel", "micro_batch", "recompute", "virtual_stages"]})");
    CHECK(has(pinned, R"("rank":1)"));
    CHECK_FALSE(has(pinned, R"("micro_batch":1,)"));
    CHECK_FALSE(has(pinned, R"("micro_batch":4,)"));
    CHECK(has(search_json(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb"})", ""), R"("key":"num_gpus")"));
    const std::string validation = validate_json(R"({"source": "te-llama"})");
    CHECK(has(validation, R"("schema": "trainclock/validation/v1")"));
    CHECK(has(validation, R"("name": "te-llama")"));
    CHECK(has(validate_json(R"({"calibration": {"memory_efficiency": 2}})"), R"({"error":{"key":"calibration.memory_efficiency")"));
    CHECK(has(validate_json(R"({"sources": "x"})"), R"({"error":{"key":"sources")"));
}

TEST_CASE("calibrate_json: the report as JSON, errors as the error object", "[api][fit]") {
    CHECK(validate_json(R"({"cross_source": true, "source": "MEG21"})").find("\"key\":\"cross_source\"") != std::string::npos);
    CHECK(calibrate_json("{").find("\"key\":\"measurements\"") != std::string::npos);
    const std::string runs = R"({"schema_version":1,"name":"mine","set":"public","source":"test","cases":[
{"id":"R-1","config":{"schema":"trainclock/config/v1","model":"gpt2","gpu":"a100-sxm4-80gb","num_gpus":1,"training":{"seq_len":1024,"global_batch":8,"micro_batch":8}},"measured":{"metric":"iteration_time_s","value":0.3},"citation":"test"}]})";
    const std::string report = calibrate_json(runs);
    CHECK(report.find("\"trainclock/calibrate/v1\"") != std::string::npos);
    CHECK(report.find("\"a100-sxm4-80gb\"") != std::string::npos);
}
