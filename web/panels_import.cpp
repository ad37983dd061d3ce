// trainclock GUI: import by paste or drop. The text of a Hugging Face config.json, a Megatron/NeMo
// command line, a torchtitan TOML, a DeepSpeed JSON, a calibration JSON or a trainclock config goes
// through the core's importers (import.hpp) and parsers, as in the CLI; a text that does not import
// or validate is reported in the banner and the last valid state stays.
//
// Index
// [SECTION] What a text is
// [SECTION] Import
// [SECTION] Import panel
#include <string>

#include "app.hpp"
#include "imgui.h"
#include "toolkit/platform.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/formats/link.hpp"
#include "toolkit/widgets.hpp"

namespace trainclock::gui {

// [SECTION] What a text is -----------------------------------------------------------------------

namespace {

bool has(const std::string& text, const char* needle) { return text.find(needle) != std::string::npos; }

}  // namespace

// By the keys each format requires: HF configs carry "model_type" (import.hpp), DeepSpeed configs
// their batch or ZeRO keys, trainclock configs their schema; a JSON object with none of these is a
// calibration. Text opening a [table] is TOML (torchtitan); anything else is a command line.
ImportKind import_kind(const std::string& text) {
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return ImportKind::none;
    if (text[first] == '{') {
        if (has(text, "\"model_type\"")) return ImportKind::hf_config;
        if (has(text, "trainclock/config/")) return ImportKind::config;
        for (const char* key :
             {"\"zero_optimization\"", "\"train_batch_size\"", "\"train_micro_batch_size_per_gpu\"", "\"gradient_accumulation_steps\""})
            if (has(text, key)) return ImportKind::deepspeed;
        return ImportKind::calibration;
    }
    if (text[first] == '[' || has(text, "\n[")) return ImportKind::torchtitan;
    return ImportKind::megatron;
}

const char* import_kind_name(ImportKind kind) {
    switch (kind) {
    case ImportKind::hf_config: return "Hugging Face config.json";
    case ImportKind::config: return "trainclock config";
    case ImportKind::deepspeed: return "DeepSpeed config";
    case ImportKind::calibration: return "calibration";
    case ImportKind::torchtitan: return "torchtitan TOML";
    case ImportKind::megatron: return "Megatron/NeMo command line";
    case ImportKind::none: break;
    }
    return "nothing";
}

// [SECTION] Import -------------------------------------------------------------------------------

void App::import_text(const std::string& text) {
    const ImportKind kind = import_kind(text);
    import_kind_ = kind;
    import_warnings_.clear();
    Result<Config> next = Error{"", "nothing to import (empty text)"};
    switch (kind) {
    case ImportKind::none: break;
    case ImportKind::hf_config: {
        auto imported = import_hf_config(text);
        auto model = model_from_hf_config(text);
        if (!model) {
            next = Error{"model." + model.error().key, model.error().message};
            break;
        }
        if (imported) import_warnings_ = imported.value().warnings;
        Config config = edit_;
        config.model = model.value();
        next = config;
        break;
    }
    case ImportKind::config: next = parse_config(text); break;
    case ImportKind::calibration: next = merge_config_json(edit_, "{\"calibration\": " + text + "}"); break;
    case ImportKind::deepspeed:
    case ImportKind::torchtitan:
    case ImportKind::megatron: {
        // A launch config rarely names the GPU (DeepSpeed names no model either, and neither a GPU
        // count): those of the current state fill in, as the CLI's --model/--gpu/--gpus do.
        const std::string overrides = kind == ImportKind::megatron ? "" : "{\"num_gpus\": " + std::to_string(edit_.num_gpus) + "}";
        auto imported = kind == ImportKind::deepspeed    ? import_deepspeed(text, overrides)
                        : kind == ImportKind::torchtitan ? import_torchtitan(text, overrides)
                                                         : import_megatron(split_command_line(text), overrides);
        if (!imported) {
            next = imported.error();
            break;
        }
        import_warnings_ = imported.value().warnings;
        next = parse_config(imported.value().json);
        if (next) {
            Config& c = next.value();
            if (c.model.name.empty()) c.model = edit_.model;
            if (c.gpu.name.empty()) {
                c.gpu = edit_.gpu;
                if (c.node.name.empty()) c.node = edit_.node;
            }
            if (c.num_gpus < 1) c.num_gpus = edit_.num_gpus;
        }
        break;
    }
    }
    const std::string what = import_kind_name(kind);
    if (!next) {
        import_error_ = "Could not import the " + what + " (" + next.error().to_string() + "); showing the last valid state.";
        return;
    }
    auto valid = validate_config(next.value());
    if (!valid && kind == ImportKind::hf_config) {
        // A new model under the current layout: a TP that does not divide its heads (or KV heads,
        // hidden size, ...) is the layout's fault, not the model's. The nearest TP that validates
        // (the smaller of two as near; DP derived again) replaces it, and a note says so.
        Config fixed = next.value();
        const int64_t tp = fixed.parallel.tp;
        fixed.parallel.dp = 0;
        for (int64_t d = 1; d <= 1024 && !valid; ++d)
            for (const int64_t t : {tp - d, tp + d}) {
                if (t < 1) continue;
                fixed.parallel.tp = t;
                if (fixed.parallel.expert_tp == tp) fixed.parallel.expert_tp = 0;
                if (t == 1) fixed.parallel.sequence_parallel = false;
                if (validate_config(fixed)) {
                    import_warnings_.push_back("TP " + std::to_string(tp) + " does not fit the imported model (" +
                                               valid.error().to_string() + "): TP set to " + std::to_string(t) +
                                               ", the nearest that does; DP derived again");
                    next = fixed;
                    valid = validate_config(fixed);
                    break;
                }
                fixed.parallel.sequence_parallel = next.value().parallel.sequence_parallel;
            }
    }
    if (!valid) {
        import_error_ =
            "The imported " + what + " gives an invalid combination (" + valid.error().to_string() + "); showing the last valid state.";
        return;
    }
    edit_ = next.value();
    if (edit_.node.name.empty()) fill_node_default(edit_);  // named, so links carry its id
    recompute_if_changed();
    import_error_.clear();
    notice_ = "Imported the " + what + (import_warnings_.empty() ? "" : " (notes under Import)");
    notice_until_s_ = ImGui::GetTime() + 3.0;
    // What was imported, with the importer's notes (tests: a layout fixed on import is stated).
    std::string notes;
    for (const std::string& warning : import_warnings_) {
        std::string text;
        for (char c : warning) {
            if (c == '"' || c == '\\') text += '\\';
            text += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
        }
        notes += std::string(notes.empty() ? "" : ", ") + "\"" + text + "\"";
    }
    publish_data("import", "{\"kind\": \"" + what + "\", \"warnings\": [" + notes + "]}");
}

// [SECTION] Import panel -------------------------------------------------------------------------

void App::draw_import() {
    const bool open = ImGui::CollapsingHeader("Import (paste or drop a file anywhere on the page)");
    annotate("import");
    if (!open) return;
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled(
        "A Hugging Face config.json, a Megatron/NeMo command line, a torchtitan TOML, a DeepSpeed JSON, a calibration JSON or a "
        "trainclock config: paste it (Ctrl+V) or drop the file on the page, or type it below.");
    ImGui::PopTextWrapPos();
    ImGui::InputTextMultiline("##import_text", import_buffer_, sizeof import_buffer_, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 5));
    annotate("import.text");
    if (ImGui::Button("Import")) import_text(import_buffer_);
    annotate("import.button");
    if (import_kind_ != ImportKind::none) {
        ImGui::SameLine();
        ImGui::TextDisabled("last: %s", import_kind_name(import_kind_));
    }
    if (!import_error_.empty()) widgets::error_text(import_error_);
    for (const std::string& warning : import_warnings_) widgets::info_text(warning);
}

}  // namespace trainclock::gui
