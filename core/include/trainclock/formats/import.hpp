// trainclock: importers of the configs users already have (issue 11). Each takes text and returns
// config/v1 JSON text, which the normal parsers then read, so a translation never touches the
// model or config structs directly. No file I/O here: the CLI, the web app and fuzzers pass text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/model.hpp"

namespace trainclock {

// What an importer produced: config/v1 JSON text and the lines to show the user about it.
struct Imported {
    std::string json;                   // pretty-printed, ends with a newline
    std::vector<std::string> warnings;  // read but not modelled, or assumed; one line each
};

// Hugging Face `config.json` (recognised by its "model_type") -> a config/v1 inline *model object*.
// Model types: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss, gemma2,
// gemma3_text, gpt2, gpt_neox, bert, t5, bart. An unsupported model_type, a value the cost model
// cannot represent, or a shape key the importer does not understand is an Error naming the key.
Result<Imported> import_hf_config(std::string_view hf_json);

// import_hf_config, then the model parser: the ModelSpec an inline {"hf_config": ...} yields.
// Error keys are the HF keys (the caller prefixes its own path).
Result<ModelSpec> model_from_hf_config(std::string_view hf_json);

// Launch configs -> a full config/v1 document with "framework" set. `overrides_json` is a config/v1
// fragment ({"model": ..., "gpu": ..., "num_gpus": ...}) whose top-level keys replace the imported
// ones (the CLI's --model/--gpu/--gpus). What the importer cannot translate, and every default it
// assumes that changes the cost, is listed in Imported::warnings; bad values are Errors naming the
// argument or key.

// Megatron-LM / NeMo pretraining arguments (pretrain_gpt.py; a torchrun prefix is read for the GPU
// count). Framework "megatron-core", or "megatron-lm" with --transformer-impl local.
Result<Imported> import_megatron(const std::vector<std::string>& args, std::string_view overrides_json = "");
// A torchtitan job config (TOML: [model] [training] [parallelism] [activation_checkpoint] ...).
Result<Imported> import_torchtitan(std::string_view toml, std::string_view overrides_json = "");
// A DeepSpeed config JSON (ZeRO stage, offload, bf16/fp16, batch and accumulation); it names no
// model, so overrides_json should give one.
Result<Imported> import_deepspeed(std::string_view json, std::string_view overrides_json = "");

// tools/measure_gpu.py's micro-benchmarks (schema trainclock/measurements/v1) -> a calibration of
// one GPU preset: GEMM per dtype -> gemm_efficiency, copy bandwidth -> memory_efficiency, SDPA ->
// attention_efficiency, NCCL busbw intra/inter -> the link efficiencies, each over the GPU or node
// preset's peak. `gpu`/`node` replace the file's "gpu"/"node" ("" = the file's; node default: the
// GPU's default_node). Framework-independent: it applies to every run on that GPU.
struct MeasuredCalibration {
    std::string gpu, node;                // the presets whose peaks the efficiencies divide by
    std::string json;                     // calibration JSON ({"gpus": {gpu: {...}}}), ends with a newline
    std::string report_json;              // trainclock/calibrate-microbenchmarks/v1: derivation, warnings, calibration
    std::vector<std::string> derivation;  // one line per factor: measured / peak = value
    std::vector<std::string> warnings;    // figures capped, skipped or measured on a CPU
};
bool is_microbenchmark_file(std::string_view json);  // "schema": "trainclock/measurements/v1"
Result<MeasuredCalibration> calibration_from_microbenchmarks(std::string_view json, std::string_view gpu = "", std::string_view node = "");

// Words of a shell command line (quotes, backslash escapes and line continuations; no expansion).
std::vector<std::string> split_command_line(std::string_view text);

}  // namespace trainclock
