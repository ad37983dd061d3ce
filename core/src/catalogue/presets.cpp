// trainclock: the preset catalogue, parsed once from the embedded presets/**.json files.
#include "trainclock/catalogue/presets.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"

namespace trainclock {
namespace {

template <class Spec>
struct KindTable {
    std::map<std::string, Result<Spec>, std::less<>> by_name;
    std::vector<std::string> names;  // sorted (embedded_presets() is sorted by name)
};

struct Catalogue {
    KindTable<ModelSpec> models;
    KindTable<GpuSpec> gpus;
    KindTable<NodeSpec> nodes;
    KindTable<PrecisionSpec> precisions;
    KindTable<FrameworkSpec> frameworks;
};

// Framework presets state a source for every value (presets/README.md): the keys read_framework
// requires of a preset file, and the generations of attention_kernel.
void read_framework_preset(ObjectReader& reader, FrameworkSpec& spec, bool required) {
    read_framework(reader, spec, required);
    if (reader.failed()) return;
    for (const char* key :
         {"attention_kernel", "overlap_tp_comm", "overlap_dp_comm", "overlap_pp_comm", "overlap_cp_comm", "overlap_ep_comm", "fp8_recipe",
          "fused_optimizer", "fused_norms", "fused_elementwise", "host_op_s", "gather_prefetch", "cuda_graphs", "compile", "moe_dispatcher",
          "step_host_syncs", "step_host_ops_per_tensor", "step_overhead_fitted"}) {
        const bool cited = std::any_of(spec.sources.begin(), spec.sources.end(),
                                       [&](const auto& source) { return source.first == key && !source.second.empty(); });
        if (!cited) reader.fail("sources", std::string("no citation for ") + key);
    }
    // Optional: a stack without a fused attention kernel says so with its source.
    const bool flash_cited = std::any_of(spec.sources.begin(), spec.sources.end(),
                                         [](const auto& source) { return source.first == "flash_attention" && !source.second.empty(); });
    if (!spec.flash_attention && !flash_cited) reader.fail("sources", "no citation for flash_attention");
}

// One preset file: the kind's keys plus "schema_version": 1 and "name" equal to the file stem
// (presets/README.md). Errors are keyed by the file ("models/gpt2.json") and name the key inside.
template <class Spec, class Read>
Result<Spec> parse_preset(simdjson::dom::parser& parser, const EmbeddedPreset& preset, Read read) {
    const std::string file = std::string(preset_kind_name(preset.kind)) + "s/" + std::string(preset.name) + ".json";
    auto document = parse_json_document(parser, preset.json);
    if (!document) return Error{file, document.error().message};
    simdjson::dom::object object;
    if (document.value().get_object().get(object) != simdjson::SUCCESS) return Error{file, "expected a JSON object"};
    ObjectReader reader(object, "");
    int64_t version = 0;
    std::string name;
    reader.require("schema_version");
    reader.read("schema_version", version);
    reader.require("name");
    reader.read("name", name);
    Spec spec;
    read(reader, spec, true);
    if (auto error = reader.finish()) return Error{file, error->to_string()};
    if (version != 1) return Error{file, "schema_version: " + std::to_string(version) + " is not supported (expected 1)"};
    if (name != preset.name) return Error{file, "name: '" + name + "' differs from the file name"};
    spec.name = name;
    return spec;
}

template <class Spec, class Read>
void add_preset(KindTable<Spec>& table, simdjson::dom::parser& parser, const EmbeddedPreset& preset, Read read) {
    table.names.emplace_back(preset.name);
    table.by_name.emplace(std::string(preset.name), parse_preset<Spec>(parser, preset, read));
}

const Catalogue& catalogue() {
    static const Catalogue parsed = [] {
        Catalogue c;
        simdjson::dom::parser parser;
        for (const EmbeddedPreset& preset : embedded_presets()) {
            switch (preset.kind) {
            case PresetKind::model: add_preset(c.models, parser, preset, read_model); break;
            case PresetKind::gpu: add_preset(c.gpus, parser, preset, read_gpu); break;
            case PresetKind::node: add_preset(c.nodes, parser, preset, read_node); break;
            case PresetKind::precision: add_preset(c.precisions, parser, preset, read_precision); break;
            case PresetKind::framework: add_preset(c.frameworks, parser, preset, read_framework_preset); break;
            case PresetKind::validation: break;  // read by the validation module
            case PresetKind::interval: break;    // read by fit.cpp (find_interval)
            case PresetKind::table: break;       // the core's own tables, read by their modules (names.cpp)
            case PresetKind::component: break;   // read by validation/components.cpp
            }
        }
        return c;
    }();
    return parsed;
}

template <class Spec>
Result<Spec> lookup(const KindTable<Spec>& table, std::string_view kind, std::string_view name) {
    const auto found = table.by_name.find(name);
    if (found == table.by_name.end()) return unknown_preset_error(kind, kind, name, table.names);
    return found->second;
}

}  // namespace

std::string_view preset_kind_name(PresetKind kind) {
    switch (kind) {
    case PresetKind::model: return "model";
    case PresetKind::gpu: return "gpu";
    case PresetKind::node: return "node";
    case PresetKind::precision: return "precision";
    case PresetKind::framework: return "framework";
    case PresetKind::validation: return "validation";
    case PresetKind::interval: return "interval";
    case PresetKind::table: return "table";
    case PresetKind::component: return "component";
    }
    return "?";
}

std::vector<std::string> preset_names(PresetKind kind) {
    std::vector<std::string> names;
    for (const EmbeddedPreset& preset : embedded_presets()) {
        if (preset.kind == kind) names.emplace_back(preset.name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

Result<ModelSpec> model_preset(std::string_view name) { return lookup(catalogue().models, "model", name); }
Result<GpuSpec> gpu_preset(std::string_view name) { return lookup(catalogue().gpus, "gpu", name); }
Result<NodeSpec> node_preset(std::string_view name) { return lookup(catalogue().nodes, "node", name); }
Result<PrecisionSpec> precision_preset(std::string_view name) { return lookup(catalogue().precisions, "precision", name); }
Result<FrameworkSpec> framework_preset(std::string_view name) { return lookup(catalogue().frameworks, "framework", name); }

}  // namespace trainclock
