// trainclock: the JSON-string facade (api.hpp) used by web/bindings.cpp and scripts.
// Replies are compact JSON; every failure is {"error": {"key": "...", "message": "..."}}.
#include "trainclock/api.hpp"

#include "spec_json.hpp"
#include "trainclock/compare.hpp"
#include "trainclock/fit.hpp"
#include "trainclock/link.hpp"
#include "trainclock/presets.hpp"

namespace trainclock {
namespace {

std::string error_json(const Error& error) {
    JsonWriter out;
    out.begin_object().key("error").begin_object();
    out.field("key", error.key).field("message", error.message);
    out.end_object().end_object();
    return out.take();
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

} // namespace

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
        out.field("precision", row.config.precision.name);
        out.field("gemm", dtype_name(row.config.precision.gemm));
        if (row.error) {
            out.key("error").begin_object().field("key", row.error->key).field("message", row.error->message).end_object();
        } else {
            out.field("speedup", row.speedup);
            write_prediction_members(out, row.prediction, nullptr);
        }
        out.end_object();
    }
    out.end_array();
    out.key("unsupported").begin_array();
    for (const std::string& name : comparison.unsupported) out.value(name);
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
    if (all || singular == "framework") write_presets<FrameworkSpec>(out, PresetKind::framework, framework_preset,
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

std::string calibrate_json(std::string_view measurements_json) {
    auto suite = parse_measurements(measurements_json);
    if (!suite) return error_json({"measurements", suite.error().message});
    auto report = calibrate(suite.value());
    if (!report) return error_json(report.error());
    return calibrate_report_json(suite.value(), report.value());
}

} // namespace trainclock
