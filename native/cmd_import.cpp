// `trainclock import hf FILE`: other tools' configs as config/v1 JSON (the importers live in the
// core, trainclock/import.hpp; this file only reads files and prints).
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/import.hpp"

namespace trainclock::cli {
namespace {

// Prints the imported JSON on stdout and each warning as one stderr line.
int print_imported(const Result<Imported>& imported, const std::string& file) {
    if (!imported) {
        const Error& error = imported.error();
        return report_error({file + (error.key.empty() ? "" : ": " + error.key), error.message});
    }
    for (const std::string& line : imported.value().warnings) std::cerr << "trainclock: warning: " << line << "\n";
    std::cout << imported.value().json;
    return kExitOk;
}

int run(const Args& args) {
    const auto& positionals = args.positionals();
    const std::string kind = positionals.empty() ? "" : positionals[0];
    if (kind == "hf") {
        if (positionals.size() != 2) return report_error({"import hf", "needs one FILE (a Hugging Face config.json; - = stdin)"});
        auto text = read_text_file(positionals[1]);
        if (!text) return report_error(text.error());
        return print_imported(import_hf_config(text.value()), positionals[1] == "-" ? "<stdin>" : positionals[1]);
    }
    return report_error({"import", kind.empty() ? "needs a kind: hf" : "unknown kind '" + kind + "' (hf)"});
}

const CommandRegistrar registrar({
    "import",
    "other tools' configs as config/v1 JSON (Hugging Face config.json)",
    "trainclock import hf FILE|-",
    "hf: a Hugging Face config.json (model types llama, mistral, mixtral, qwen2, qwen3, qwen3_moe,\n"
    "deepseek_v3, gpt_oss, gemma2, gemma3_text, gpt2, gpt_neox, bert, t5, bart) -> the config/v1 model\n"
    "object, to paste as \"model\" of a config. --model FILE and {\"model\": {\"hf_config\": {...}}} read\n"
    "the same files directly. A model_type or a shape key the importer does not understand is an error\n"
    "naming it (exit 2); what is read but not modelled is a warning on stderr.",
    {},
    false,
    run,
});

} // namespace
} // namespace trainclock::cli
