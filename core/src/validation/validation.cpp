// trainclock: accuracy against published measurements (see validation.hpp, issue 3).
//
// Index
//   [SECTION] Names and small helpers
//   [SECTION] Reading validation files (line numbers, cases, issues)
//   [SECTION] Running the predictions and the error statistics
//   [SECTION] Report JSON
#include "trainclock/formats/config_json.hpp"
#include "trainclock/validation/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <simdjson.h>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "catalogue/spec_json.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {

// [SECTION] Names and small helpers ---------------------------------------------------------------

namespace {

constexpr EnumName<MeasuredMetric> kMetricNames[] = {
    {"iteration_time_s", MeasuredMetric::iteration_time_s},         {"tokens_per_s", MeasuredMetric::tokens_per_s},
    {"tokens_per_s_per_gpu", MeasuredMetric::tokens_per_s_per_gpu}, {"samples_per_s", MeasuredMetric::samples_per_s},
    {"peak_memory_gib", MeasuredMetric::peak_memory_gib},
};

// GPU preset id prefixes by architecture generation (presets/gpus, vendor datasheets).
constexpr std::pair<std::string_view, std::string_view> kGenerations[] = {
    {"v100", "Volta"},         {"a100", "Ampere"},    {"a10", "Ampere"},     {"a40", "Ampere"},
    {"rtx-3090", "Ampere"},    {"l4", "Ada"},         {"l40", "Ada"},        {"rtx-4090", "Ada"},
    {"h100", "Hopper"},        {"h200", "Hopper"},    {"h800", "Hopper"},    {"h20", "Hopper"},
    {"gh200", "Hopper"},       {"b100", "Blackwell"}, {"b200", "Blackwell"}, {"gb200", "Blackwell"},
    {"rtx-5090", "Blackwell"}, {"mi250", "CDNA2"},    {"mi300", "CDNA3"},    {"mi325", "CDNA3"},
    {"mi355", "CDNA4"},        {"gaudi", "Gaudi"},    {"tpu", "TPU"},
};

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// Width rank of a gemm dtype, widest first: a pair's "wide" member has the lower rank.
int dtype_rank(DType dtype) {
    switch (dtype) {
    case DType::fp32: return 0;
    case DType::tf32: return 1;
    case DType::fp16:
    case DType::bf16: return 2;
    case DType::fp8:
    case DType::mxfp8: return 3;
    case DType::nvfp4: return 4;
    }
    return 5;
}

// The predicted value of a case's metric.
double predicted_value(MeasuredMetric metric, const Prediction& p) {
    switch (metric) {
    case MeasuredMetric::iteration_time_s: return p.iteration_time_s;
    case MeasuredMetric::tokens_per_s: return p.tokens_per_s;
    case MeasuredMetric::tokens_per_s_per_gpu: return p.tokens_per_s_per_gpu;
    case MeasuredMetric::samples_per_s: return p.samples_per_s;
    case MeasuredMetric::peak_memory_gib: return p.memory.per_gpu_gib;
    }
    return 0;
}

// Iteration time implied by a value of `metric` for config `c`: tokens/s = global_batch * seq / t,
// samples/s = global_batch / t (same convention as Prediction).
double iteration_time_from(MeasuredMetric metric, double value, const Config& c) {
    const double samples = static_cast<double>(c.training.global_batch);
    const double tokens = samples * static_cast<double>(c.training.seq_len);
    switch (metric) {
    case MeasuredMetric::iteration_time_s: return value;
    case MeasuredMetric::tokens_per_s: return tokens / value;
    case MeasuredMetric::tokens_per_s_per_gpu: return tokens / (value * static_cast<double>(c.num_gpus));
    case MeasuredMetric::samples_per_s: return samples / value;
    case MeasuredMetric::peak_memory_gib: return 0;  // not a time (memory cases never pair)
    }
    return 0;
}

}  // namespace

std::string_view measured_metric_name(MeasuredMetric metric) {
    for (const auto& entry : kMetricNames) {
        if (entry.value == metric) return entry.name;
    }
    return "?";
}

std::string_view gpu_generation(std::string_view gpu_name) {
    // Longest matching prefix wins ("a100" before "a10", "h200" before "h20").
    std::string_view best = "other";
    size_t best_length = 0;
    for (const auto& [prefix, generation] : kGenerations) {
        if (starts_with(gpu_name, prefix) && prefix.size() > best_length) {
            best = generation;
            best_length = prefix.size();
        }
    }
    return best;
}

double predicted_metric(MeasuredMetric metric, const Prediction& prediction) { return predicted_value(metric, prediction); }

bool is_memory_case(const ValidationCase& c) { return c.metric == MeasuredMetric::peak_memory_gib; }

double measured_iteration_time_s(const ValidationCase& c) { return iteration_time_from(c.metric, c.measured, c.config); }

std::string ValidationIssue::to_string() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
    if (case_index >= 0) {
        out += "case " + std::to_string(case_index);
        if (!id.empty()) out += " (" + id + ")";
        out += ": ";
    }
    return out + message;
}

// [SECTION] Reading validation files (line numbers, cases, issues) --------------------------------

namespace {

// Line numbers (1-based) of the elements of the top-level "cases" array of a valid JSON document.
// The DOM keeps no positions, so this light scan (strings, nesting, commas) supplies them, counting
// line breaks as it goes (a JSON string holds none unescaped).
std::vector<int64_t> case_lines(std::string_view json) {
    std::vector<int64_t> lines;
    int64_t line = 1;
    int depth = 0;
    std::string_view last_key;  // last string seen directly inside the root object
    bool in_cases = false, done = false, expect_element = false;
    for (size_t i = 0; i < json.size() && !done; ++i) {
        const char c = json[i];
        const bool element_start = in_cases && depth == 2 && expect_element && c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != ']';
        if (element_start) {
            lines.push_back(line);
            expect_element = false;
        }
        if (c == '\n') {
            ++line;
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
            if (depth == 1) last_key = json.substr(i + 1, j - i - 1);
            i = j;
        } else if (c == '{' || c == '[') {
            ++depth;
            if (c == '[' && depth == 2 && last_key == "cases") in_cases = expect_element = true;
        } else if (c == '}' || c == ']') {
            --depth;
            if (in_cases && depth < 2) done = true;
        } else if (c == ',' && in_cases && depth == 2) {
            expect_element = true;
        }
    }
    return lines;
}

// Canonical text of a config object without its "precision" and training.optimizer (part of a
// case's pair key): a script's precision switch may change its optimizer with it (DLE BERT
// run_squad.py builds apex FusedAdam under --fp16, BertAdam otherwise), and the published speed-up
// is that of the switch.
std::string config_without_precision(simdjson::dom::object config, std::string_view skip = "precision") {
    std::string key;
    for (const auto field : config) {
        if (field.key == skip) continue;
        append_json_string(key, field.key);
        key += ':';
        simdjson::dom::object training;
        if (skip == "precision" && field.key == "training" && field.value.get_object().get(training) == simdjson::SUCCESS)
            key += "{" + config_without_precision(training, "optimizer") + "}";
        else
            key += simdjson::minify(field.value);
        key += ',';
    }
    return key;
}

// One element of "cases": fills `out` or returns the reason it cannot be used.
std::optional<Error> read_case(simdjson::dom::element element, ValidationCase& out) {
    simdjson::dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) { return Error{"", "expected an object, got " + json_type_phrase(element)}; }
    ObjectReader reader(object, "");
    reader.require("id");
    reader.read("id", out.id);
    reader.require("config");
    reader.require("measured");
    reader.require("citation");
    reader.read("citation", out.citation);
    std::string notes;
    reader.read("notes", notes);
    const auto config = reader.read_object("config");
    const auto measured = reader.read_object("measured");
    if (measured) {
        ObjectReader m(*measured, "measured");
        m.require("metric");
        m.require("value");
        m.read_enum("metric", kMetricNames, out.metric);
        m.read("value", out.measured);
        if (!m.failed() && !(out.measured > 0)) m.fail("value", "must be > 0");
        if (auto error = m.finish()) return error;
    }
    if (auto error = reader.finish()) return error;
    const std::string config_json = simdjson::minify(*config);
    auto loaded = load_config(config_json);
    if (!loaded) { return Error{join_key("config", loaded.error().key), loaded.error().message}; }
    out.config = std::move(loaded).value();
    // Pairs come from one source table (the id without its row number: "PT-BERT-hist-013" ->
    // "PT-BERT-hist"), so runs of different README versions or commits never pair.
    out.pair_key = out.id.substr(0, out.id.find_last_of('-')) + "|" + config_without_precision(*config);
    if (out.metric == MeasuredMetric::peak_memory_gib) out.pair_key += "|memory";
    return std::nullopt;
}

}  // namespace

void parse_validation_file(std::string_view file, std::string_view json, ValidationSuite& suite) {
    const std::string file_name(file);
    auto file_issue = [&](std::string message) { suite.issues.push_back(ValidationIssue{file_name, 0, -1, "", std::move(message)}); };
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, json);
    if (!document) return file_issue(document.error().to_string());
    simdjson::dom::object root;
    if (document.value().get_object().get(root) != simdjson::SUCCESS) {
        return file_issue("expected a JSON object, got " + json_type_phrase(document.value()));
    }
    // File header (presets/validation/README.md): schema_version 1, name = file stem, set, source.
    ObjectReader header(root, "");
    int64_t version = 0;
    std::string name, set, source, notes;
    for (const char* key : {"schema_version", "name", "set", "source", "cases"}) header.require(key);
    header.read("schema_version", version);
    header.read("name", name);
    header.read("set", set);
    header.read("source", source);
    header.read("notes", notes);
    simdjson::dom::array cases;
    if (const auto value = header.find("cases"); value && value->get_array().get(cases) != simdjson::SUCCESS) {
        header.fail("cases", "expected an array, got " + json_type_phrase(*value));
    }
    std::string stem = file_name;
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0) stem.resize(stem.size() - 5);
    if (!header.failed() && version != 1)
        header.fail("schema_version", "unknown source format version " + std::to_string(version) + " (expected 1)");
    if (!header.failed() && name != stem) header.fail("name", "'" + name + "' differs from the file stem '" + stem + "'");
    if (!header.failed() && set != "public" && set != "public-2" && set != "vtrain" && set != "unrepresentable")
        header.fail("set", "unknown set '" + set + "'; expected public, public-2, vtrain or unrepresentable");
    if (auto error = header.finish()) return file_issue(error->to_string());

    const std::vector<int64_t> lines = case_lines(json);
    int64_t index = 0;
    for (const auto element : cases) {
        ValidationCase c;
        c.file = stem;
        c.set = set;
        c.line = index < static_cast<int64_t>(lines.size()) ? lines[static_cast<size_t>(index)] : 0;
        if (auto error = read_case(element, c)) {
            suite.issues.push_back(ValidationIssue{file_name, c.line, index, c.id, error->to_string()});
        } else {
            suite.cases.push_back(std::move(c));
        }
        ++index;
    }
}

ValidationSuite load_validation_suite() {
    ValidationSuite suite;
    for (const auto& preset : embedded_presets()) {
        if (preset.kind != PresetKind::validation) continue;
        parse_validation_file(std::string(preset.name) + ".json", preset.json, suite);
    }
    return suite;
}

Result<CalibrationSpec> parse_calibration_json(std::string_view json) {
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, json);
    if (!document) {
        const Error& error = document.error();  // a duplicate key: named as every other calibration key
        return error.key.empty() ? error : Error{join_key("calibration", error.key), error.message};
    }
    simdjson::dom::object object;
    if (document.value().get_object().get(object) != simdjson::SUCCESS) {
        return Error{"calibration", "expected an object, got " + json_type_phrase(document.value())};
    }
    CalibrationSpec spec;
    ObjectReader reader(object, "calibration");
    read_calibration(reader, spec);
    if (auto error = reader.finish()) return *error;
    if (auto error = check_calibration(spec)) return *error;
    return spec;
}

// [SECTION] Running the predictions and the error statistics --------------------------------------

const GroupError* ValidationReport::find(std::string_view kind, std::string_view name) const {
    for (const auto& group : groups) {
        if (group.kind == kind && group.name == name) return &group;
    }
    return nullptr;
}

namespace {

// Accumulates absolute and signed relative errors per (kind, name); std::map keeps the order stable.
class GroupAccumulator {
public:
    void add(const std::string& kind, const std::string& name, double signed_error) {
        auto& g = groups_[{kind, name}];
        g.kind = kind;
        g.name = name;
        g.count += 1;
        g.mape += std::fabs(signed_error);  // sums until finish()
        g.bias += signed_error;
        g.max_ape = std::max(g.max_ape, std::fabs(signed_error));
    }
    std::vector<GroupError> finish(const std::vector<std::string>& kind_order) const {
        std::vector<GroupError> out;
        for (const auto& kind : kind_order) {
            for (const auto& [key, g] : groups_) {
                if (key.first != kind) continue;
                GroupError mean = g;
                mean.mape = g.mape / static_cast<double>(g.count);
                mean.bias = g.bias / static_cast<double>(g.count);
                out.push_back(mean);
            }
        }
        return out;
    }

private:
    std::map<std::pair<std::string, std::string>, GroupError> groups_;
};

}  // namespace

ValidationReport run_validation(const ValidationSuite& suite, const ValidationOptions& options) {
    ValidationReport report;
    report.precision_blind = options.precision_blind;
    std::vector<double> predicted_time(suite.cases.size(), 0.0);
    std::vector<bool> selected(suite.cases.size(), false);
    for (size_t i = 0; i < suite.cases.size(); ++i) {
        const ValidationCase& c = suite.cases[i];
        if (!options.source_prefix.empty() && !starts_with(c.id, options.source_prefix) && !starts_with(c.file, options.source_prefix)) {
            continue;
        }
        Config config = c.config;
        if (options.calibration) config.calibration = *options.calibration;
        if (options.precision_blind) config.calibration.precision_blind = true;
        if (options.configure) options.configure(i, config);
        const Prediction p = predict(config);
        CaseResult r;
        r.case_index = i;
        r.predicted = predicted_value(c.metric, p);
        r.signed_error = (r.predicted - c.measured) / c.measured;
        r.ape = std::fabs(r.signed_error);
        // Time runs opposite to throughput: a throughput predicted too high is a step predicted too fast.
        r.time_error = c.metric == MeasuredMetric::iteration_time_s ? r.signed_error : -r.signed_error;
        r.fits = p.memory.fits;
        report.cases.push_back(r);
        predicted_time[i] = p.iteration_time_s;
        selected[i] = true;
    }

    // Precision pairs: selected cases with equal pair keys and different precisions.
    std::map<std::string, std::vector<size_t>> by_key;
    for (size_t i = 0; i < suite.cases.size(); ++i) {
        if (selected[i] && suite.cases[i].set != "unrepresentable" && !is_memory_case(suite.cases[i]))
            by_key[suite.cases[i].pair_key].push_back(i);
    }
    std::vector<bool> in_pair(suite.cases.size(), false);
    GroupAccumulator groups;
    for (const auto& [key, members] : by_key) {
        for (size_t x = 0; x < members.size(); ++x) {
            for (size_t y = x + 1; y < members.size(); ++y) {
                size_t wide = members[x], narrow = members[y];
                const PrecisionSpec& pw = suite.cases[wide].config.precision;
                const PrecisionSpec& pn = suite.cases[narrow].config.precision;
                if (pw.name == pn.name) continue;  // the same run published twice, not a pair
                if (std::make_pair(dtype_rank(pw.gemm), pw.name) > std::make_pair(dtype_rank(pn.gemm), pn.name)) {
                    std::swap(wide, narrow);
                }
                PairResult pair;
                pair.wide = wide;
                pair.narrow = narrow;
                // Speed-up = iteration time of the wider precision / that of the narrower one.
                pair.measured_speedup = measured_iteration_time_s(suite.cases[wide]) / measured_iteration_time_s(suite.cases[narrow]);
                pair.predicted_speedup = predicted_time[wide] / predicted_time[narrow];
                const double signed_error = (pair.predicted_speedup - pair.measured_speedup) / pair.measured_speedup;
                pair.ape = std::fabs(signed_error);
                report.pairs.push_back(pair);
                in_pair[wide] = in_pair[narrow] = true;
                const std::string kind_name = suite.cases[wide].config.precision.name + "->" + suite.cases[narrow].config.precision.name;
                groups.add("pairs", "all", signed_error);
                groups.add("pairs", kind_name, signed_error);
            }
        }
    }

    for (const CaseResult& r : report.cases) {
        const ValidationCase& c = suite.cases[r.case_index];
        // Memory cases: their own set and kind (per source), never in a time MAPE.
        if (is_memory_case(c)) {
            if (c.set != "unrepresentable") groups.add("set", "memory", r.signed_error);
            groups.add("memory", c.file, r.signed_error);
            continue;
        }
        groups.add("set", c.set, r.time_error);
        groups.add("source", c.file, r.time_error);
        // Runs the config cannot describe are reported as their own set and source only.
        if (c.set == "unrepresentable") continue;
        groups.add("set", "all", r.time_error);
        if (in_pair[r.case_index]) groups.add("set", "in_pairs", r.time_error);
        groups.add("precision", c.config.precision.name, r.time_error);
        groups.add("gpu_generation", std::string(gpu_generation(c.config.gpu.name)), r.time_error);
    }
    report.groups = groups.finish({"set", "source", "precision", "gpu_generation", "pairs", "memory"});
    return report;
}

// [SECTION] Report JSON ---------------------------------------------------------------------------

std::string validation_report_json(const ValidationSuite& suite, const ValidationReport& report) {
    JsonWriter out(2);
    out.begin_object();
    out.field("schema", "trainclock/validation/v1");
    out.field("precision_blind", report.precision_blind);
    out.object_array("groups", report.groups, [&](const GroupError& g) {
        out.field("kind", g.kind).field("name", g.name).field("count", g.count);
        out.field("mape", g.mape).field("bias", g.bias).field("max_ape", g.max_ape);
    });
    out.object_array("pairs", report.pairs, [&](const auto& p) {
        out.field("wide", suite.cases[p.wide].id).field("narrow", suite.cases[p.narrow].id);
        out.field("wide_precision", suite.cases[p.wide].config.precision.name);
        out.field("narrow_precision", suite.cases[p.narrow].config.precision.name);
        out.field("measured_speedup", p.measured_speedup).field("predicted_speedup", p.predicted_speedup);
        out.field("ape", p.ape);
    });
    out.object_array("cases", report.cases, [&](const auto& r) {
        const ValidationCase& c = suite.cases[r.case_index];
        out.field("id", c.id).field("source", c.file).field("set", c.set);
        out.field("gpu", c.config.gpu.name).field("num_gpus", c.config.num_gpus);
        out.field("precision", c.config.precision.name);
        out.field("metric", measured_metric_name(c.metric));
        out.field("measured", c.measured).field("predicted", r.predicted);
        out.field("error", r.signed_error).field("time_error", r.time_error).field("ape", r.ape).field("fits", r.fits);
    });
    out.key("issues").begin_array();
    for (const auto& issue : suite.issues) out.value(issue.to_string());
    out.end_array();
    out.end_object();
    return out.take();
}

}  // namespace trainclock
