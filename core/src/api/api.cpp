// trainclock: the JSON-string facade (api.hpp) used by web/bindings.cpp and scripts.
// Replies are compact JSON; every failure is {"error": {"key": "...", "message": "..."}}.
#include "trainclock/api/api.hpp"

#include <algorithm>

#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"
#include "formats/config_json.hpp"
#include "formats/prediction_json.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/perf/compare.hpp"
#include "trainclock/search/plan.hpp"
#include "trainclock/search/scaling.hpp"
#include "trainclock/search/search.hpp"
#include "trainclock/validation/components.hpp"
#include "trainclock/validation/fit.hpp"
#include "trainclock/validation/validation.hpp"

namespace trainclock {
namespace {

std::string error_json(const Error& error) {
    JsonWriter out;
    out.begin_object().key("error").begin_object();
    out.field("key", error.key).field("message", error.message);
    out.end_object().end_object();
    return out.take();
}

// One precision row of compare_json / scaling_json: its name, GEMM type, and the error or result.
void write_row_members(JsonWriter& out, const PrecisionRow& row) {
    out.field("precision", row.config.precision.name);
    out.field("gemm", dtype_name(row.config.precision.gemm));
    if (row.error) {
        out.key("error").begin_object().field("key", row.error->key).field("message", row.error->message).end_object();
    } else {
        out.field("speedup", row.speedup);
        write_prediction_members(out, row.prediction, nullptr);
    }
}

template <class Spec, class Lookup, class Write>
void write_presets(JsonWriter& out, PresetKind kind, Lookup lookup, Write write) {
    out.key(std::string(preset_kind_name(kind)) + "s").begin_array();
    for (const std::string& name : preset_names(kind)) {
        auto spec = lookup(name);
        if (spec) write(out, spec.value());
    }
    out.end_array();
}

}  // namespace

std::string predict_json(std::string_view config_json) {
    auto config = load_config(config_json);
    if (!config) return error_json(config.error());
    PredictOptions options;
    options.timeline = true;
    const Prediction prediction = predict(config.value(), options);
    JsonWriter out;
    out.begin_object();
    write_prediction_members(out, prediction, &config.value());
    out.end_object();
    return out.take();
}

std::string compare_json(std::string_view config_json) {
    auto config = load_config(config_json);
    if (!config) return error_json(config.error());
    const PrecisionComparison comparison = compare_precisions(config.value());
    JsonWriter out;
    out.begin_object();
    out.field("baseline", comparison.baseline);
    out.key("rows").begin_array();
    for (const PrecisionRow& row : comparison.rows) {
        out.begin_object();
        write_row_members(out, row);
        out.end_object();
    }
    out.end_array();
    out.key("unsupported").begin_array();
    for (const std::string& name : comparison.unsupported) out.value(name);
    out.end_array();
    out.end_object();
    return out.take();
}

std::string scaling_json(std::string_view config_json) {
    auto config = load_config(config_json);
    if (!config) return error_json(config.error());
    const ScalingSweep sweep = scaling_sweep(config.value(), scaling_gpu_counts(config.value().num_gpus));
    JsonWriter out;
    out.begin_object();
    out.key("gpu_counts").begin_array();
    for (int64_t count : sweep.gpu_counts) out.value(count);
    out.end_array();
    out.key("points").begin_array();
    for (size_t i = 0; i < sweep.at.size(); ++i) {
        for (const PrecisionRow& row : sweep.at[i].rows) {
            out.begin_object().field("num_gpus", sweep.gpu_counts[i]);
            write_row_members(out, row);
            out.end_object();
        }
    }
    out.end_array();
    out.end_object();
    return out.take();
}

std::string presets_json(std::string_view kind) {
    std::string_view singular = kind;
    if (!singular.empty() && singular.back() == 's') singular.remove_suffix(1);
    const bool all = singular.empty();
    if (!all && singular != "model" && singular != "gpu" && singular != "node" && singular != "precision" && singular != "framework") {
        return error_json({"kind", "unknown preset kind '" + std::string(kind) + "' (models, gpus, nodes, precisions or frameworks)"});
    }
    JsonWriter out;
    out.begin_object();
    if (all || singular == "model") write_presets<ModelSpec>(out, PresetKind::model, model_preset, write_model);
    if (all || singular == "gpu") write_presets<GpuSpec>(out, PresetKind::gpu, gpu_preset, write_gpu);
    if (all || singular == "node") write_presets<NodeSpec>(out, PresetKind::node, node_preset, write_node);
    if (all || singular == "precision") write_presets<PrecisionSpec>(out, PresetKind::precision, precision_preset, write_precision);
    if (all || singular == "framework")
        write_presets<FrameworkSpec>(out, PresetKind::framework, framework_preset,
                                     [](JsonWriter& w, const FrameworkSpec& f) { write_framework(w, f, true); });
    out.end_object();
    return out.take();
}

std::string encode_link(std::string_view config_json) {
    auto config = load_config(config_json);
    if (!config) return error_json(config.error());
    JsonWriter out;
    out.begin_object().field("fragment", encode_config_link(config.value())).end_object();
    return out.take();
}

std::string decode_link(std::string_view fragment) {
    auto config = decode_config_link(fragment);
    if (!config) return error_json(config.error());
    JsonWriter out;
    out.begin_object().key("config");
    write_config(out, config.value());
    out.end_object();
    return out.take();
}

namespace {

// {"<member>": <the importer's JSON>, "warnings": [...]}, or the error.
std::string imported_json(const Result<Imported>& imported, std::string_view member) {
    if (!imported) return error_json(imported.error());
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, imported.value().json);  // the importer's own output: always valid
    std::string reply = "{";
    append_json_string(reply, member);
    reply += ":" + (document ? simdjson::minify(document.value()) : std::string("null")) + ",\"warnings\":[";
    for (size_t i = 0; i < imported.value().warnings.size(); ++i) {
        if (i > 0) reply += ',';
        append_json_string(reply, imported.value().warnings[i]);
    }
    return reply + "]}";
}

}  // namespace

std::string import_hf_json(std::string_view hf_json) { return imported_json(import_hf_config(hf_json), "model"); }

std::string import_launch_json(std::string_view kind, std::string_view text, std::string_view overrides_json) {
    if (kind == "megatron") return imported_json(import_megatron(split_command_line(text), overrides_json), "config");
    if (kind == "torchtitan") return imported_json(import_torchtitan(text, overrides_json), "config");
    if (kind == "deepspeed") return imported_json(import_deepspeed(text, overrides_json), "config");
    return error_json({"kind", "unknown launch config kind '" + std::string(kind) + "' (megatron, torchtitan, deepspeed)"});
}

namespace {

// The options object of search_json / validate_json ("" = every default).
Result<simdjson::dom::object> options_object(simdjson::dom::parser& parser, std::string_view json) {
    if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) json = "{}";
    auto object = parse_json_object(parser, json, "an object");
    if (!object) return Error{"options", object.error().message};
    return object;
}

}  // namespace

std::string search_json(std::string_view config_json, std::string_view options_json) {
    auto draft = parse_config(config_json);
    if (!draft) return error_json(draft.error());
    const Config& c = draft.value();
    if (c.num_gpus < 1) return error_json({"num_gpus", "required: the number of GPUs to lay out"});
    simdjson::dom::parser parser;
    auto object = options_object(parser, options_json);
    if (!object) return error_json(object.error());
    ObjectReader reader(object.value(), "options");
    SearchOptions options;
    std::string objective = "time";
    bool all_precisions = false;
    reader.read("top", options.top_k);
    reader.read("objective", objective);
    reader.read("all_precisions", all_precisions);
    if (objective != "time" && objective != "cost") reader.fail("objective", "expected time or cost, got '" + objective + "'");
    options.objective = objective == "cost" ? SearchObjective::cost : SearchObjective::time;
    if (options.top_k < 1) reader.fail("top", "must be at least 1");
    // As `trainclock search --config` (issue 25 item 6): the layout keys the config sets pin the
    // search, except those "widen" names ("all": every one); "pin" pins more.
    std::vector<SearchDimension> widened;
    auto dimension_named = [](std::string_view key) {
        return std::find_if(std::begin(kSearchDimensionPaths), std::end(kSearchDimensionPaths),
                            [&](std::string_view path) { return path.substr(path.rfind('.') + 1) == key; });
    };
    if (const auto widen = reader.find("widen")) {
        std::string_view all;
        simdjson::dom::array array;
        if (widen->get_string().get(all) == simdjson::SUCCESS) {
            if (all != "all") reader.fail("widen", "expected \"all\" or an array of layout keys, got '" + std::string(all) + "'");
            for (size_t d = 0; d < std::size(kSearchDimensionPaths); ++d) widened.push_back(SearchDimension(d));
        } else if (widen->get_array().get(array) == simdjson::SUCCESS) {
            for (const auto item : array) {
                std::string_view key;
                const auto* at = item.get_string().get(key) == simdjson::SUCCESS ? dimension_named(key) : std::end(kSearchDimensionPaths);
                if (at == std::end(kSearchDimensionPaths)) {
                    reader.fail("widen", "expected layout keys (tp, pp, cp, ep, zero, virtual_stages, schedule, sequence_parallel, "
                                         "micro_batch, recompute) or \"all\"");
                    break;
                }
                widened.push_back(SearchDimension(at - std::begin(kSearchDimensionPaths)));
            }
        } else {
            reader.fail("widen", "expected \"all\" or an array of layout keys");
        }
    }
    for (const SearchDimension d : dimensions_set_by(config_json))
        if (std::find(widened.begin(), widened.end(), d) == widened.end()) pin_dimension(options, c, d);
    if (const auto pins = reader.find("pin")) {
        simdjson::dom::array array;
        if (pins->get_array().get(array) != simdjson::SUCCESS) reader.fail("pin", "expected an array of layout keys");
        for (const auto item : array) {
            std::string_view key;
            if (item.get_string().get(key) != simdjson::SUCCESS) {
                reader.fail("pin", "expected an array of layout keys");
                break;
            }
            // A layout key of a config, by the name it has there (the last part of its path).
            const auto pin = std::find_if(std::begin(kSearchDimensionPaths), std::end(kSearchDimensionPaths),
                                          [&](std::string_view path) { return path.substr(path.rfind('.') + 1) == key; });
            if (pin == std::end(kSearchDimensionPaths))
                reader.fail("pin", "unknown layout key '" + std::string(key) + "'");
            else
                pin_dimension(options, c, static_cast<SearchDimension>(pin - std::begin(kSearchDimensionPaths)));
        }
    }
    if (auto error = reader.finish()) return error_json(*error);
    // No precision in the config: the pretraining recipes the GPU runs, as the CLI searches.
    if (all_precisions)
        options.precisions = precisions_for_gpu(c.gpu);
    else if (c.precision.name.empty())
        options.precisions = pretraining_precisions_for_gpu(c.gpu);
    auto space = SearchSpace::create(c, options);
    if (!space) return error_json(space.error());
    SearchState state(space.value());
    state.run(0, space.value().cells());
    return search_report_to_json(space.value(), finish(space.value(), state));
}

std::string plan_json(std::string_view config_json, std::string_view options_json) {
    auto draft = parse_config(config_json);
    if (!draft) return error_json(draft.error());
    Config base = draft.value();
    simdjson::dom::parser parser;
    auto object = options_object(parser, options_json);
    if (!object) return error_json(object.error());
    ObjectReader reader(object.value(), "options");
    PlanOptions o;
    o.tokens = base.training.tokens;
    reader.read("days", o.deadline_days);
    reader.read("budget_usd", o.budget_usd);
    reader.read("max_gpus", o.max_gpus);
    reader.read("top", o.top);
    reader.read("fixed_batch", o.fixed_batch);
    if (const auto gpus = reader.find("gpus")) {
        simdjson::dom::array array;
        if (gpus->get_array().get(array) != simdjson::SUCCESS) reader.fail("gpus", "expected an array of GPU preset ids");
        for (const auto item : array) {
            std::string_view id;
            if (item.get_string().get(id) != simdjson::SUCCESS) {
                reader.fail("gpus", "expected an array of GPU preset ids");
                break;
            }
            Result<GpuSpec> gpu = gpu_preset(id);
            if (gpu)
                o.gpus.push_back(gpu.value());
            else
                reader.fail("gpus", gpu.error().message);
        }
    }
    if (const auto precisions = reader.find("precisions")) {
        std::string_view all;
        simdjson::dom::array array;
        if (precisions->get_string().get(all) == simdjson::SUCCESS && all == "all") {
            o.all_precisions = true;
        } else if (precisions->get_array().get(array) == simdjson::SUCCESS) {
            for (const auto item : array) {
                std::string_view id;
                Result<PrecisionSpec> p = item.get_string().get(id) == simdjson::SUCCESS
                                              ? precision_preset(id)
                                              : Result<PrecisionSpec>(Error{"", "expected a preset id"});
                if (p)
                    o.precisions.push_back(p.value());
                else
                    reader.fail("precisions", p.error().message);
            }
        } else {
            reader.fail("precisions", "expected \"all\" or an array of precision preset ids");
        }
    }
    if (const auto prices = reader.read_object("prices")) {
        for (const auto field : *prices) {
            double usd = 0;
            if (field.value.get_double().get(usd) != simdjson::SUCCESS) {
                int64_t whole = 0;
                if (field.value.get_int64().get(whole) != simdjson::SUCCESS) {
                    reader.fail("prices", "expected USD per GPU-hour for " + std::string(field.key));
                    continue;
                }
                usd = double(whole);
            }
            o.prices.emplace_back(std::string(field.key), usd);
        }
    }
    if (auto error = reader.finish()) return error_json(*error);
    if (base.training.price_per_gpu_hour_usd >= 0) {  // the config's price: every GPU (prices per id override it)
        o.prices.insert(o.prices.begin(), {"", base.training.price_per_gpu_hour_usd});
        base.training.price_per_gpu_hour_usd = -1;
    }
    auto report = plan(base, o);
    if (!report) return error_json(report.error());
    return plan_report_to_json(base, o, report.value());
}

std::string validate_json(std::string_view options_json) {
    simdjson::dom::parser parser;
    auto object = options_object(parser, options_json);
    if (!object) return error_json(object.error());
    ObjectReader reader(object.value(), "");
    ValidationOptions options;
    reader.read("source", options.source_prefix);
    reader.read("precision_blind", options.precision_blind);
    bool cross_source = false, components = false;
    reader.read("cross_source", cross_source);
    reader.read("components", components);
    if (const auto calibration = reader.read_object("calibration")) {
        auto spec = parse_calibration_json(simdjson::minify(*calibration));  // what validate --calibration reads
        if (spec)
            options.calibration = std::move(spec).value();
        else
            reader.adopt(spec.error());
    }
    if (cross_source && (options.calibration || options.precision_blind || !options.source_prefix.empty()))
        reader.fail("cross_source", "refits the shipped constants on every source: not with source, precision_blind or calibration");
    if (components && (cross_source || options.calibration || options.precision_blind || !options.source_prefix.empty()))
        reader.fail("components",
                    "scores the component microbenchmarks alone: not with cross_source, source, precision_blind or calibration");
    if (auto error = reader.finish()) return error_json(*error);
    if (components) {
        const ComponentSuite rows = load_component_suite();
        return components_report_json(rows, run_components(rows));
    }
    const ValidationSuite suite = load_validation_suite();
    if (cross_source) return cross_source_report_json(run_cross_source(suite));
    return validation_report_json(suite, run_validation(suite, options));
}

std::string calibrate_json(std::string_view measurements_json) {
    if (is_microbenchmark_file(measurements_json)) {  // tools/measure_gpu.py's file
        auto measured = calibration_from_microbenchmarks(measurements_json);
        return measured ? measured.value().report_json : error_json(measured.error());
    }
    auto suite = parse_measurements(measurements_json);
    if (!suite) return error_json({"measurements", suite.error().message});
    auto report = calibrate(suite.value());
    if (!report) return error_json(report.error());
    return calibrate_report_json(suite.value(), report.value());
}

}  // namespace trainclock
