// trainclock (internal): the constants table (constants.hpp), read from presets/tables/constants.json.
#include "perf/constants.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstdlib>

#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"  // kAttentionKernelNames
#include "trainclock/base/embedded.hpp"

namespace trainclock {
namespace {

// The embedded table is part of the build, so a malformed one is a defect of the build, not bad input.
[[noreturn]] void broken_table(const Error& error) {
    std::fprintf(stderr, "trainclock: presets/tables/constants.json: %s: %s\n", error.key.c_str(), error.message.c_str());
    std::abort();
}

ModelConstant read_row(simdjson::dom::element element, const std::string& path) {
    ModelConstant c;
    simdjson::dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) broken_table(Error{path, "expected an object"});
    ObjectReader row(object, path);
    for (const char* key : {"name", "value", "low", "high", "unit", "source"}) row.require(key);
    row.read_fields("name", c.name, "value", c.value, "low", c.low, "high", c.high, "unit", c.unit, "source", c.source);
    if (row.has("refit")) {
        std::string knob;
        row.read("refit", knob);
        const auto found = std::find(std::begin(kFitKnobNames), std::end(kFitKnobNames), knob);
        if (found == std::end(kFitKnobNames)) broken_table(Error{path + ".refit", "unknown knob '" + knob + "'"});
        c.refit = static_cast<FitKnob>(found - std::begin(kFitKnobNames));
    }
    if (row.has("attention_kernel")) {
        AttentionKernel kernel = AttentionKernel::flash2;
        row.read_enum("attention_kernel", kAttentionKernelNames, kernel);
        c.attention_kernel = static_cast<int>(kernel);
    }
    if (row.has("fp8_gpus")) {
        bool fp8_gpus = false;
        row.read("fp8_gpus", fp8_gpus);
        c.fp8_gpus = fp8_gpus ? 1 : 0;
    }
    std::string group, notes;  // documentation only
    row.read_fields("group", group, "notes", notes);
    if (const auto error = row.finish()) broken_table(*error);
    return c;
}

}  // namespace

std::array<ModelConstant, kConstantCount> read_model_constants() {
    simdjson::dom::parser parser;
    const auto root = parse_json_object(parser, embedded_json(PresetKind::table, "constants"), "the constants table");
    if (!root.ok()) broken_table(root.error());
    ObjectReader top(root.value(), "");
    int64_t schema_version = 0;
    std::string name, description, source;
    top.read_fields("schema_version", schema_version, "name", name, "description", description, "source", source);
    simdjson::dom::array rows;
    const auto constants = top.find("constants");
    if (!constants || constants->get_array().get(rows) != simdjson::SUCCESS) broken_table(Error{"constants", "expected an array"});
    if (const auto error = top.finish()) broken_table(*error);
    if (rows.size() != kConstantCount) broken_table(Error{"constants", "rows differ from the generated Constant enum: rebuild"});
    std::array<ModelConstant, kConstantCount> out;
    size_t i = 0;
    for (const simdjson::dom::element element : rows) {
        const std::string path = "constants[" + std::to_string(i) + "]";
        out[i] = read_row(element, path);
        if (out[i].name != kConstantNames[i]) broken_table(Error{path, "'" + out[i].name + "' is not the generated enum's: rebuild"});
        ++i;
    }
    return out;
}

}  // namespace trainclock
