// trainclock: a config's JSON form: config/v1 parsing (presets by name or inline objects) and the
// canonical JSON (DESIGN.md 3; trainclock/formats/config_json.hpp declares both). The rules are model/config.cpp's.
//
// Index
//   [SECTION] Reading specs by preset name or inline object
//   [SECTION] Parsing
//   [SECTION] Canonical JSON
//
// Inline objects: {"preset": "<id>", ...} starts from that preset and overrides the keys given;
// without "preset" every mandatory key of presets/README.md must be present. An inline object is
// named by its "name" key, else by its base when nothing changed, else "custom".
#include "formats/config_json.hpp"

#include <algorithm>
#include <map>
#include <type_traits>
#include <utility>

#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {
namespace {

// [SECTION] Reading specs by preset name or inline object -----------------------------------------

// How config_json reads and writes one kind of spec: by preset id, or as an object.
template <class S, const char* Name, Result<S> (*Preset)(std::string_view), void (*Read)(ObjectReader&, S&, bool),
          void (*Write)(JsonWriter&, const S&)>
struct SpecKind {
    using Spec = S;
    static constexpr std::string_view kind = Name;
    static Result<Spec> preset(std::string_view name) { return Preset(name); }
    static void read(ObjectReader& r, Spec& s, bool required) { Read(r, s, required); }
    static void write(JsonWriter& w, const Spec& s) { Write(w, s); }
};
constexpr char kModel[] = "model", kGpu[] = "gpu", kNode[] = "node", kPrecision[] = "precision", kFramework[] = "framework";
void write_framework_spec(JsonWriter& w, const FrameworkSpec& s) { write_framework(w, s); }
using ModelKind = SpecKind<ModelSpec, kModel, model_preset, read_model, write_model>;
using GpuKind = SpecKind<GpuSpec, kGpu, gpu_preset, read_gpu, write_gpu>;
using NodeKind = SpecKind<NodeSpec, kNode, node_preset, read_node, write_node>;
using PrecisionKind = SpecKind<PrecisionSpec, kPrecision, precision_preset, read_precision, write_precision>;
using FrameworkKind = SpecKind<FrameworkSpec, kFramework, framework_preset, read_framework, write_framework_spec>;

template <class Kind>
std::string text_of(const typename Kind::Spec& spec) {
    return spec_text(spec, Kind::write);
}

template <class Kind>
void read_spec(ObjectReader& reader, std::string_view key, typename Kind::Spec& out) {
    const auto value = reader.find(key);
    if (!value) return;
    std::string_view preset_id;
    if (value->get_string().get(preset_id) == simdjson::SUCCESS) {
        if constexpr (std::is_same_v<Kind, FrameworkKind>) {
            if (preset_id == kNoFramework) {  // no stack's defaults (framework.hpp kNoFramework)
                out = typename Kind::Spec{};
                return;
            }
        }
        auto preset = Kind::preset(preset_id);
        if (preset)
            out = std::move(preset).value();
        else
            reader.fail(key, preset.error().message);
        return;
    }
    simdjson::dom::object object;
    if (value->get_object().get(object) != simdjson::SUCCESS) {
        reader.fail(key, "expected a " + std::string(Kind::kind) + " preset name or an object, got " + json_type_phrase(*value));
        return;
    }
    ObjectReader inner(object, join_key(reader.path(), key));
    typename Kind::Spec spec;
    std::optional<typename Kind::Spec> base;
    std::string base_name;
    if constexpr (std::is_same_v<Kind, ModelKind>) {
        // A Hugging Face config.json (it names its model_type), whole or as {"hf_config": {...}, overrides}.
        const bool bare = object["model_type"].error() == simdjson::SUCCESS;
        const auto hf = bare ? std::optional<simdjson::dom::element>(value) : inner.find("hf_config");
        if (hf) {
            auto imported = model_from_hf_config(simdjson::minify(*hf));
            if (!imported) {
                const Error& error = imported.error();
                std::string where = std::string(key) + (bare ? "" : ".hf_config");
                if (!error.key.empty()) where += "." + error.key;
                reader.fail(where, error.message);
                return;
            }
            if (bare) {
                out = std::move(imported).value();
                return;
            }
            base = std::move(imported).value();
        }
    }
    // --fp8-recipe / link key f8: {"fp8_recipe": R} alone changes the precision already set.
    if constexpr (std::is_same_v<Kind, PrecisionKind>) {
        if (object.size() == 1 && object["fp8_recipe"].error() == simdjson::SUCCESS && !out.name.empty()) base = out;
    }
    if (!base && inner.has("preset")) {
        inner.read("preset", base_name);
        auto preset = Kind::preset(base_name);
        if (preset)
            base = preset.value();
        else
            inner.fail("preset", preset.error().message);
    }
    if (base) spec = *base;
    std::string name;
    inner.read("name", name);
    int64_t schema_version = 1;  // accepted so that a preset file can be pasted inline
    inner.read("schema_version", schema_version);
    if (schema_version != 1) inner.fail("schema_version", std::to_string(schema_version) + " is not supported (expected 1)");
    Kind::read(inner, spec, !base);
    if (auto error = inner.finish()) {
        reader.adopt(std::move(error));
        return;
    }
    if (name.empty()) {
        spec.name = base ? base->name : "";
        name = (base && text_of<Kind>(spec) == text_of<Kind>(*base)) ? base->name : "custom";
    }
    spec.name = name;
    out = std::move(spec);
}

// The canonical text of every preset of a kind that parses, by id: written once, not at each
// write_config (which compares a spec with its preset by this text).
template <class Kind>
const std::string* preset_text(std::string_view name) {
    static const std::map<std::string, std::string, std::less<>> texts = [] {
        std::map<std::string, std::string, std::less<>> out;
        for (const EmbeddedPreset& embedded : embedded_presets()) {
            if (preset_kind_name(embedded.kind) != Kind::kind) continue;
            const auto preset = Kind::preset(embedded.name);
            if (preset) out.emplace(std::string(embedded.name), text_of<Kind>(preset.value()));
        }
        return out;
    }();
    const auto found = texts.find(name);
    return found == texts.end() ? nullptr : &found->second;
}

// A preset referenced by name when the spec equals that preset, else the whole object.
template <class Kind>
void write_spec(JsonWriter& out, std::string_view key, const typename Kind::Spec& spec) {
    out.key(key);
    const std::string* preset = preset_text<Kind>(spec.name);
    if (preset && *preset == text_of<Kind>(spec)) {
        out.value(spec.name);
        return;
    }
    Kind::write(out, spec);
}

std::string str(int64_t value) { return std::to_string(value); }
std::string str(double value) { return json_number(value); }

}  // namespace

// [SECTION] Parsing --------------------------------------------------------------------------------

Config config_draft() {
    // The default framework (issue 25 item 9), looked up once: every config that names none runs it.
    static const FrameworkSpec framework = [] {
        auto preset = framework_preset(kDefaultFramework);
        return preset ? std::move(preset).value() : FrameworkSpec{};
    }();
    Config config;
    config.num_gpus = 0;
    config.parallel.dp = 0;
    config.framework = framework;
    return config;
}

Result<Config> merge_config_json(Config config, std::string_view json) {
    simdjson::dom::parser parser;
    auto object = parse_json_object(parser, json, "a JSON object");
    if (!object) return object.error();
    ObjectReader reader(object.value(), "");
    std::string schema;
    reader.read("schema", schema);
    if (!schema.empty() && schema != kConfigSchema) {
        reader.fail("schema", "'" + schema + "' is not supported (expected " + std::string(kConfigSchema) + ")");
    }
    read_spec<ModelKind>(reader, "model", config.model);
    read_spec<GpuKind>(reader, "gpu", config.gpu);
    read_spec<NodeKind>(reader, "node", config.node);
    read_spec<PrecisionKind>(reader, "precision", config.precision);
    read_spec<FrameworkKind>(reader, "framework", config.framework);
    // num_gpus is derived from tp*pp*cp*dp when absent; an explicit 0 is not "derive" but a mistake.
    if (reader.find("num_gpus")) {
        int64_t num_gpus = 1;
        reader.read("num_gpus", num_gpus);
        if (num_gpus < 1)
            reader.fail("num_gpus", "must be >= 1, got " + str(num_gpus) + " (leave it out to derive it as tp*pp*cp*dp)");
        else
            config.num_gpus = num_gpus;
    }
    if (const auto parallel = reader.read_object("parallel")) {
        ObjectReader p(*parallel, "parallel");
        ParallelSpec& s = config.parallel;
        p.read_fields("tp", s.tp, "pp", s.pp, "dp", s.dp, "cp", s.cp, "ep", s.ep, "sequence_parallel", s.sequence_parallel, "zero", s.zero,
                      "virtual_stages", s.virtual_stages, "expert_tp", s.expert_tp);
        p.read_enum("schedule", kScheduleNames, s.schedule);
        // Knobs a framework defaults: given here they win over the framework (config.hpp ExplicitKnobs).
        if (p.has("overlap_dp_comm")) config.explicit_knobs.overlap_dp_comm = true;
        if (p.has("overlap_tp_comm")) config.explicit_knobs.overlap_tp_comm = true;
        StageSplit& split = s.stage_split;
        p.read_fields("overlap_dp_comm", s.overlap_dp_comm, "overlap_tp_comm", s.overlap_tp_comm, "first_stage_layers",
                      split.first_stage_layers, "last_stage_layers", split.last_stage_layers, "embedding_in_stage_split",
                      split.embedding_in_stage_split, "loss_in_stage_split", split.loss_in_stage_split, "pipeline_layout",
                      split.pipeline_layout);
        reader.adopt(p.finish());
    }
    if (const auto training = reader.read_object("training")) {
        ObjectReader t(*training, "training");
        TrainingSpec& s = config.training;
        t.read_fields("seq_len", s.seq_len, "global_batch", s.global_batch, "micro_batch", s.micro_batch);
        t.read_enum("recompute", kRecomputeNames, s.recompute);
        if (t.has("flash_attention")) config.explicit_knobs.flash_attention = true;
        t.read("flash_attention", s.flash_attention);
        if (t.has("attention_kernel")) config.explicit_knobs.attention_kernel = true;
        t.read_enum("attention_kernel", kAttentionKernelNames, s.attention_kernel);
        if (t.has("cuda_graphs")) config.explicit_knobs.cuda_graphs = true;
        t.read_enum("cuda_graphs", kCudaGraphsNames, s.cuda_graphs);
        if (t.has("moe_dispatcher")) config.explicit_knobs.moe_dispatcher = true;
        t.read_enum("moe_dispatcher", kMoeDispatcherNames, s.moe_dispatcher);
        if (t.has("compile")) config.explicit_knobs.compile = true;
        t.read("compile", s.compile);
        t.read_enum("optimizer", kOptimizerNames, s.optimizer);
        t.read("tokens", s.tokens);
        if (const auto finetune = t.read_object("finetune")) {
            ObjectReader f(*finetune, "training.finetune");
            f.read_enum("method", kFinetuneMethodNames, s.finetune.method);
            f.read("lora_rank", s.finetune.lora_rank);
            f.read_enum("lora_targets", kLoraTargetsNames, s.finetune.lora_targets);
            f.read("frozen_layers", s.finetune.frozen_layers);
            t.adopt(f.finish());
        }
        t.read("offload_optimizer", s.offload_optimizer);
        t.read("offload_params", s.offload_params);
        t.read("paged_optimizer", s.paged_optimizer);
        t.read("optimizer_in_backward", s.optimizer_in_backward);
        t.read("offload_activations", s.offload_activations);
        if (t.find("price_per_gpu_hour")) {
            double price = 0;
            t.read("price_per_gpu_hour", price);
            if (price < 0) t.fail("price_per_gpu_hour", "must be >= 0 USD, got " + str(price));
            s.price_per_gpu_hour_usd = price;
        }
        t.read("checkpoint_interval_s", s.checkpoint_interval_s);
        t.read("checkpoint_interval_steps", s.checkpoint_interval_steps);
        t.read("storage_bw_gbps", s.storage_bw_gbps);
        t.read("memory_headroom_gib", s.memory_headroom_gib);
        t.read("memory_headroom_pct", s.memory_headroom_pct);
        // Present = given: 0 GB/s writes no checkpoint, it is not the default (omit the key for that).
        if (t.find("storage_bw_gbps") && s.storage_bw_gbps == 0)
            t.fail("storage_bw_gbps",
                   "must be > 0 GB/s (omit it for the default: a local NVMe SSD on one host, else Llama 3's 2 TB/s over 16K GPUs per GPU)");
        // Present = given: 0 is a valid restart time and failure rate (their defaults are < 0).
        for (auto [key, value] :
             {std::pair<const char*, double*>{"restart_s", &s.restart_s}, {"failure_rate_per_gpu_hour", &s.failure_rate_per_gpu_hour}}) {
            if (!t.find(key)) continue;
            t.read(key, *value);
            if (*value < 0) t.fail(key, "must be >= 0, got " + str(*value));
        }
        t.read("ideal", s.ideal);
        reader.adopt(t.finish());
    }
    if (const auto calibration = reader.read_object("calibration")) {
        ObjectReader c(*calibration, "calibration");
        read_calibration(c, config.calibration);
        reader.adopt(c.finish());
    }
    if (auto error = reader.finish()) return *error;
    return config;
}

Result<Config> parse_config(std::string_view json) { return merge_config_json(config_draft(), json); }

Result<Config> load_config(std::string_view json) {
    auto parsed = parse_config(json);
    if (!parsed) return parsed;
    return validate_config(std::move(parsed).value());
}

// [SECTION] Canonical JSON -------------------------------------------------------------------------

void write_config(JsonWriter& out, const Config& c) {
    out.begin_object();
    out.field("schema", kConfigSchema);
    write_spec<ModelKind>(out, "model", c.model);
    write_spec<GpuKind>(out, "gpu", c.gpu);
    write_spec<NodeKind>(out, "node", c.node);
    out.field("num_gpus", c.num_gpus);
    write_spec<PrecisionKind>(out, "precision", c.precision);
    // With a framework, the knobs it defaults are written only when the config set them, so that
    // reading the JSON back gives the same explicit/framework split (and the same stated defaults).
    // Always written, "none" too: a config without it reads as kDefaultFramework (issue 25 item 9).
    const bool framework = !c.framework.name.empty();
    if (framework)
        write_spec<FrameworkKind>(out, "framework", c.framework);
    else
        out.field("framework", kNoFramework);
    const ParallelSpec& p = c.parallel;
    out.key("parallel").begin_object();
    out.field("tp", p.tp).field("pp", p.pp).field("dp", p.dp).field("cp", p.cp).field("ep", p.ep);
    out.field("sequence_parallel", p.sequence_parallel).field("zero", p.zero).field("virtual_stages", p.virtual_stages);
    out.field("schedule", enum_name(p.schedule));
    if (!framework || c.explicit_knobs.overlap_dp_comm) out.field("overlap_dp_comm", p.overlap_dp_comm);
    if (!framework || c.explicit_knobs.overlap_tp_comm) out.field("overlap_tp_comm", p.overlap_tp_comm);
    // Written only when set, so configs without an uneven split keep their canonical text.
    const StageSplit& split = p.stage_split;
    if (split.first_stage_layers != 0) out.field("first_stage_layers", split.first_stage_layers);
    if (split.last_stage_layers != 0) out.field("last_stage_layers", split.last_stage_layers);
    if (split.embedding_in_stage_split) out.field("embedding_in_stage_split", true);
    if (split.loss_in_stage_split) out.field("loss_in_stage_split", true);
    if (p.expert_tp != 0) out.field("expert_tp", p.expert_tp);  // 0 = tp: left out
    if (!split.pipeline_layout.empty()) out.field("pipeline_layout", split.pipeline_layout);
    out.end_object();
    const TrainingSpec& t = c.training;
    out.key("training").begin_object();
    out.field("seq_len", t.seq_len).field("global_batch", t.global_batch).field("micro_batch", t.micro_batch);
    out.field("recompute", enum_name(t.recompute));
    // Left out where the framework turned it off (no fused kernel) and the config did not name it.
    if (!framework || c.explicit_knobs.flash_attention || c.framework.flash_attention) out.field("flash_attention", t.flash_attention);
    if (!framework || c.explicit_knobs.attention_kernel) out.field("attention_kernel", enum_name(t.attention_kernel));
    // Without a framework only when set, so configs without them keep their canonical text.
    if (framework ? c.explicit_knobs.cuda_graphs : t.cuda_graphs != CudaGraphs::none) out.field("cuda_graphs", enum_name(t.cuda_graphs));
    if (framework ? c.explicit_knobs.compile : t.compile) out.field("compile", t.compile);
    if (framework ? c.explicit_knobs.moe_dispatcher : t.moe_dispatcher != MoeDispatcher::alltoall)
        out.field("moe_dispatcher", enum_name(t.moe_dispatcher));
    out.field("optimizer", enum_name(t.optimizer)).field("tokens", t.tokens);
    if (t.price_per_gpu_hour_usd >= 0) out.field("price_per_gpu_hour", t.price_per_gpu_hour_usd);
    if (!t.finetune.is_default()) {
        const FinetuneSpec& f = t.finetune;
        out.key("finetune").begin_object();
        out.field("method", enum_name(f.method));
        if (f.lora_rank != 0) out.field("lora_rank", f.lora_rank);
        out.field("lora_targets", enum_name(f.lora_targets)).field("frozen_layers", f.frozen_layers);
        out.end_object();
    }
    if (t.offload_optimizer) out.field("offload_optimizer", true);
    if (t.offload_params) out.field("offload_params", true);
    if (t.paged_optimizer) out.field("paged_optimizer", true);
    if (t.optimizer_in_backward) out.field("optimizer_in_backward", true);
    if (t.offload_activations) out.field("offload_activations", true);
    // Whole-run keys only when set, so configs without them keep their canonical text.
    if (t.checkpoint_interval_s > 0) out.field("checkpoint_interval_s", t.checkpoint_interval_s);
    if (t.checkpoint_interval_steps > 0) out.field("checkpoint_interval_steps", t.checkpoint_interval_steps);
    if (t.storage_bw_gbps > 0) out.field("storage_bw_gbps", t.storage_bw_gbps);
    if (t.memory_headroom_gib > 0) out.field("memory_headroom_gib", t.memory_headroom_gib);
    if (t.memory_headroom_pct > 0) out.field("memory_headroom_pct", t.memory_headroom_pct);
    if (t.restart_s >= 0) out.field("restart_s", t.restart_s);
    if (t.failure_rate_per_gpu_hour >= 0) out.field("failure_rate_per_gpu_hour", t.failure_rate_per_gpu_hour);
    if (t.ideal) out.field("ideal", true);
    out.end_object();
    if (!calibration_is_default(c.calibration)) {
        out.key("calibration");
        write_calibration(out, c.calibration);
    }
    out.end_object();
}

std::string config_to_json(const Config& config) {
    JsonWriter out(2);
    write_config(out, config);
    return out.take() + "\n";
}

}  // namespace trainclock
