// trainclock: importers of the configs users already have (issue 11). Each takes text and returns
// config/v1 JSON text, which the normal parsers then read, so a translation never touches the
// model or config structs directly. No file I/O here: the CLI, the web app and fuzzers pass text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainclock/model.hpp"
#include "trainclock/status.hpp"

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

} // namespace trainclock
