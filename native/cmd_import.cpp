// `trainclock import hf|megatron|torchtitan|deepspeed`: other tools' configs as config/v1 JSON.
// The importers live in the core (trainclock/import.hpp); this file reads files and prints.
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/formats/import.hpp"

namespace trainclock::cli {
namespace {

// Prints the imported JSON on stdout and each warning as one stderr line.
int print_imported(const Result<Imported>& imported, const std::string& source) {
    if (!imported) {
        const Error& error = imported.error();
        return report_error({source + (error.key.empty() ? "" : ": " + error.key), error.message});
    }
    for (const std::string& line : imported.value().warnings) std::cerr << "trainclock: warning: " << line << "\n";
    std::cout << imported.value().json;
    return kExitOk;
}

// --model/--gpu/--node/--gpus as a config/v1 fragment the importer puts over what it read: a preset
// id, inline JSON, or a FILE (a model object or a Hugging Face config.json).
Result<std::string> overrides(const Args& args) {
    std::string out;
    for (const char* flag : {"--model", "--gpu", "--node"}) {
        const auto value = args.value(flag);
        if (!value) continue;
        std::string json;
        if (!value->empty() && (*value)[0] == '{') {
            json = *value;
        } else if (names_file(*value) && *value != "-") {
            auto text = read_text_file(*value);
            if (!text) return text.error();
            json = text.value();
        } else {
            json = "\"" + *value + "\"";  // a preset id (checked when the config is read)
        }
        out += (out.empty() ? "" : ", ") + ("\"" + std::string(flag + 2) + "\": ") + json;
    }
    if (const auto gpus = args.value("--gpus")) {
        if (gpus->empty() || gpus->find_first_not_of("0123456789") != std::string::npos) {
            return Error{"--gpus", "expected a positive integer, got '" + *gpus + "'"};
        }
        out += (out.empty() ? "" : ", ") + std::string("\"num_gpus\": ") + *gpus;
    }
    return "{" + out + "}";
}

int run(const Args& args) {
    const auto& positionals = args.positionals();
    const std::string kind = positionals.empty() ? "" : positionals[0];
    const std::vector<std::string> rest(positionals.begin() + (positionals.empty() ? 0 : 1), positionals.end());
    auto extra = overrides(args);
    if (!extra) return report_error(extra.error());
    if (kind == "megatron") {
        // The arguments after --, or one FILE (or -) holding the command line.
        std::vector<std::string> words = rest;
        std::string source = "megatron arguments";
        // One word that is no Megatron flag is the FILE, with or without a '/' (train_cmd.txt).
        if (rest.size() == 1 && (names_file(rest[0]) || rest[0].rfind("--", 0) != 0)) {
            auto text = read_text_file(rest[0]);
            if (!text) return report_error(text.error());
            words = split_command_line(text.value());
            source = rest[0] == "-" ? "<stdin>" : rest[0];
        }
        if (words.empty()) return report_error({"import megatron", "needs the arguments after -- (or a FILE holding the command line)"});
        return print_imported(import_megatron(words, extra.value()), source);
    }
    if (kind == "hf" || kind == "torchtitan" || kind == "deepspeed") {
        if (rest.size() != 1) return report_error({"import " + kind, "needs one FILE (- = stdin)"});
        auto text = read_text_file(rest[0]);
        if (!text) return report_error(text.error());
        const std::string source = rest[0] == "-" ? "<stdin>" : rest[0];
        if (kind == "hf") return print_imported(import_hf_config(text.value()), source);
        if (kind == "torchtitan") return print_imported(import_torchtitan(text.value(), extra.value()), source);
        return print_imported(import_deepspeed(text.value(), extra.value()), source);
    }
    return report_error({"import", kind.empty() ? "needs a kind: hf, megatron, torchtitan or deepspeed"
                                                : "unknown kind '" + kind + "' (hf, megatron, torchtitan, deepspeed)"});
}

const CommandRegistrar registrar({
    "import",
    "other tools' configs as config/v1 JSON (HF config.json, Megatron, torchtitan, DeepSpeed)",
    "trainclock import hf FILE|-\n"
    "       trainclock import megatron [--model M] [--gpu G] [--gpus N] -- ARGS...   (or FILE|- with the command line)\n"
    "       trainclock import torchtitan FILE.toml|- [--model M] [--gpu G] [--gpus N]\n"
    "       trainclock import deepspeed FILE.json|- --model M [--gpu G] [--gpus N]",
    "hf: a Hugging Face config.json (model types llama, mistral, mixtral, qwen2, qwen3, qwen3_moe,\n"
    "deepseek_v3, gpt_oss, gemma2, gemma3_text, gpt2, gpt_neox, bert, t5, bart) -> the config/v1 model\n"
    "object, to paste as \"model\" of a config. --model FILE and {\"model\": {\"hf_config\": {...}}} read\n"
    "the same files directly.\n"
    "megatron, torchtitan, deepspeed: a launch config -> a whole config/v1 document with \"framework\"\n"
    "set, for `trainclock predict --config -`. --model, --gpu, --node and --gpus fill or replace what\n"
    "the launch config does not say (a DeepSpeed config names no model; Megatron arguments name no GPU).\n"
    "A value that cannot be represented is an error naming it (exit 2); an argument that is not\n"
    "understood, and every cost-changing default assumed, is a warning on stderr.",
    {{"--model", "ID|JSON|FILE", "the model (preset id, inline object, model or HF config.json file)"},
     {"--gpu", "ID|JSON", "the GPU (preset id or inline object)"},
     {"--node", "ID|JSON", "the node (default: the GPU's)"},
     {"--gpus", "N", "the number of GPUs of the job"}},
    false,
    run,
});

}  // namespace
}  // namespace trainclock::cli
