// trainclock: shareable links and the flat config fields shared with CLI flags (link.hpp).
//
// Index
//   [SECTION] Field values as JSON
//   [SECTION] base64url (RFC 4648 section 5)
//   [SECTION] Encode / decode
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/json_reader.hpp"
#include "catalogue/spec_json.hpp"
#include "formats/config_json.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"

namespace trainclock {

// [SECTION] Field values as JSON ------------------------------------------------------------------

namespace {

bool is_identifier(std::string_view text) {
    if (text.empty()) return false;
    for (const char c : text) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') return false;
    }
    return true;
}

// A number as JSON writes it (RFC 8259 section 6): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view text) {
    size_t i = 0;
    auto digits = [&] {
        const size_t start = i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
        return i - start;
    };
    if (i < text.size() && text[i] == '-') ++i;
    const size_t first = i;
    const size_t whole = digits();
    if (whole == 0 || (whole > 1 && text[first] == '0')) return false;
    if (i < text.size() && text[i] == '.') {
        ++i;
        if (digits() == 0) return false;
    }
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (digits() == 0) return false;
    }
    return i == text.size();
}

// An inline object: '~' + base64url JSON, or raw JSON starting with '{'. Must be one JSON object.
Result<std::string> object_text(std::string_view text) {
    std::string json;
    if (!text.empty() && text[0] == '~') {
        auto decoded = base64url_decode(text.substr(1));
        if (!decoded) return decoded.error();
        json = std::move(decoded).value();
    } else {
        json = std::string(text);
    }
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, json);
    if (!document) return Error{"", "inline object: " + document.error().to_string()};
    if (!document.value().is_object()) {
        return Error{"", "inline object: expected a JSON object, got " + json_type_phrase(document.value())};
    }
    return json;
}

// The JSON value of a field's text form, or an Error (key "") saying why the text is unreadable.
Result<std::string> field_json(const ConfigField& field, std::string_view text) {
    switch (field.type) {
    case FieldType::spec:
        if (!text.empty() && (text[0] == '~' || text[0] == '{')) return object_text(text);
        if (!is_identifier(text)) return Error{"", "'" + std::string(text) + "' is neither a preset id nor an inline object"};
        break;
    case FieldType::object: return object_text(text);
    case FieldType::integer:
    case FieldType::number: {
        const std::string copy(text);
        const bool integer = field.type == FieldType::integer;
        const std::string expected = integer ? "expected an integer" : "expected a number";
        // strtod alone also reads hex ("0x10" = 16), inf, nan and leading spaces.
        if (!is_json_number(copy)) return Error{"", expected + " (decimal digits), got '" + copy + "'"};
        const double value = std::strtod(copy.c_str(), nullptr);
        // 2^53 bounds the exactly representable integers, as json_reader's integer rule.
        if (!std::isfinite(value) || (integer && std::fabs(value) > 9007199254740992.0)) {
            return Error{"", "'" + copy + "' is out of range"};
        }
        return json_number(value);
    }
    case FieldType::boolean:
        for (const char* yes : {"1", "true", "yes", "on"}) {
            if (text == yes) return std::string("true");
        }
        for (const char* no : {"0", "false", "no", "off"}) {
            if (text == no) return std::string("false");
        }
        return Error{"", "expected 1/0, true/false, yes/no or on/off, got '" + std::string(text) + "'"};
    case FieldType::choice:
        if (!is_identifier(text)) return Error{"", "'" + std::string(text) + "' is not a valid choice"};
        break;
    case FieldType::text: break;  // the config's rules check it (parallel.pipeline_layout: stage_split.hpp)
    }
    std::string quoted;
    append_json_string(quoted, text);
    return quoted;
}

}  // namespace

Result<Config> set_config_field(Config base, const ConfigField& field, std::string_view text, std::string_view error_key) {
    auto value = field_json(field, text);
    if (!value) {
        const Error& error = value.error();
        return Error{std::string(error_key), error.key.empty() ? error.message : error.to_string()};
    }
    // {"a": V}, {"a": {"b": V}}, {"a": {"b": {"c": V}}} for the path "a", "a.b", "a.b.c".
    std::string_view path = field.path;
    std::string document, closing;
    for (;;) {
        const size_t dot = path.find('.');
        document += '{';
        append_json_string(document, path.substr(0, dot));
        document += ':';
        closing += '}';
        if (dot == std::string_view::npos) break;
        path.remove_prefix(dot + 1);
    }
    document += value.value() + closing;
    return merge_config_json(std::move(base), document);
}

// [SECTION] base64url (RFC 4648 section 5) --------------------------------------------------------

namespace {
constexpr std::string_view kBase64Url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}

std::string base64url_encode(std::string_view bytes) {
    std::string out;
    uint32_t buffer = 0;
    int bits = 0;
    for (const char c : bytes) {
        buffer = (buffer << 8) | static_cast<unsigned char>(c);
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += kBase64Url[(buffer >> bits) & 63];
        }
    }
    if (bits > 0) out += kBase64Url[(buffer << (6 - bits)) & 63];
    return out;
}

Result<std::string> base64url_decode(std::string_view text) {
    std::string out;
    uint32_t buffer = 0;
    int bits = 0;
    for (const char c : text) {
        if (c == '=') break;  // tolerate padding
        const size_t index = kBase64Url.find(c);
        if (index == std::string_view::npos) return Error{"", "garbled base64url text (unexpected '" + std::string(1, c) + "')"};
        buffer = (buffer << 6) | static_cast<uint32_t>(index);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> bits) & 0xff);
        }
    }
    if (bits >= 6) return Error{"", "garbled base64url text (truncated)"};
    return out;
}

// [SECTION] Encode / decode -----------------------------------------------------------------------

namespace {

std::string json_pointer(std::string_view path) {
    std::string pointer = "/" + std::string(path);
    for (char& c : pointer) {
        if (c == '.') c = '/';
    }
    return pointer;
}

// The link text of one JSON value: strings as is, booleans 1/0, numbers in JSON form, objects as
// '~' + base64url of their minified JSON (custom specs: see compact_spec_json).
std::string link_text(simdjson::dom::element value) {
    std::string_view text;
    bool flag = false;
    int64_t integer = 0;
    double number = 0;
    if (value.get_string().get(text) == simdjson::SUCCESS) return std::string(text);
    if (value.get_bool().get(flag) == simdjson::SUCCESS) return flag ? "1" : "0";
    if (value.get_int64().get(integer) == simdjson::SUCCESS) return std::to_string(integer);
    if (value.get_double().get(number) == simdjson::SUCCESS) return json_number(number);
    return "~" + base64url_encode(simdjson::minify(value));
}

// The canonical object of a preset ("model", "gpu", "node" or "precision" path), or "" if unknown.
std::string preset_object_text(std::string_view path, const std::string& name) {
    auto text = [](const auto& preset, auto write) {
        JsonWriter out;
        if (!preset) return std::string();
        write(out, preset.value());
        return out.take();
    };
    if (path == "model") return text(model_preset(name), write_model);
    if (path == "gpu") return text(gpu_preset(name), write_gpu);
    if (path == "node") return text(node_preset(name), write_node);
    if (path == "framework")
        return text(framework_preset(name), [](JsonWriter& out, const FrameworkSpec& spec) { write_framework(out, spec); });
    return text(precision_preset(name), write_precision);
}

PresetKind preset_kind_of(std::string_view path) {
    if (path == "framework") return PresetKind::framework;
    return path == "model"  ? PresetKind::model
           : path == "gpu"  ? PresetKind::gpu
           : path == "node" ? PresetKind::node
                            : PresetKind::precision;
}

// {"preset": base, ...the keys that differ} for a custom spec: keys only the base has are reset
// (0, "", false). Returns "" when a key cannot be expressed that way.
std::string spec_diff(simdjson::dom::object spec, const std::string& base_name, simdjson::dom::object base) {
    JsonWriter out;
    out.begin_object().field("preset", base_name);
    std::string_view name;
    if (spec["name"].get_string().get(name) == simdjson::SUCCESS && name != "custom") out.field("name", name);
    std::string text = out.take();
    for (const auto field : spec) {
        if (field.key == "name") continue;
        simdjson::dom::element base_value;
        const std::string value = simdjson::minify(field.value);
        if (base[field.key].get(base_value) == simdjson::SUCCESS && simdjson::minify(base_value) == value) continue;
        text += ',';
        append_json_string(text, field.key);
        text += ':' + value;
    }
    for (const auto field : base) {
        simdjson::dom::element ignored;
        if (field.key == "name" || spec[field.key].get(ignored) == simdjson::SUCCESS) continue;
        text += ',';
        append_json_string(text, field.key);
        switch (field.value.type()) {
        case simdjson::dom::element_type::STRING: text += ":\"\""; break;
        case simdjson::dom::element_type::BOOL: text += ":false"; break;
        case simdjson::dom::element_type::INT64:
        case simdjson::dom::element_type::UINT64:
        case simdjson::dom::element_type::DOUBLE: text += ":0"; break;
        default: return "";
        }
    }
    return text + '}';
}

// The shortest exact JSON of a custom spec for a link: a diff against the closest preset when it
// reads back to the very same object, else the whole object.
std::string compact_spec_json(std::string_view path, simdjson::dom::object spec) {
    std::string best = simdjson::minify(spec);
    simdjson::dom::parser base_parser;
    for (const std::string& name : preset_names(preset_kind_of(path))) {
        const std::string base_text = preset_object_text(path, name);
        simdjson::dom::object base;
        if (base_text.empty() || base_parser.parse(base_text).get(base) != simdjson::SUCCESS) continue;
        const std::string diff = spec_diff(spec, name, base);
        if (diff.empty() || diff.size() >= best.size()) continue;
        // Verify: reading the diff back must reproduce the object exactly.
        std::string document = "{";
        append_json_string(document, path);
        document += ':' + diff + '}';
        const auto merged = merge_config_json(config_draft(), document);
        if (!merged) continue;
        JsonWriter written;
        write_config(written, merged.value());
        simdjson::dom::parser check_parser;
        simdjson::dom::element check;
        if (check_parser.parse(written.str()).get(check) != simdjson::SUCCESS) continue;
        simdjson::dom::element reread;
        if (check.at_pointer(json_pointer(path)).get(reread) != simdjson::SUCCESS) continue;
        if (simdjson::minify(reread) == simdjson::minify(spec)) best = diff;
    }
    return best;
}

std::string percent_decode(std::string_view text, bool* ok) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
            !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            *ok = false;
            return out;
        }
        out += static_cast<char>(std::strtol(std::string(text.substr(i + 1, 2)).c_str(), nullptr, 16));
        i += 2;
    }
    return out;
}

}  // namespace

std::string encode_config_link(const Config& config) {
    JsonWriter actual_writer;
    write_config(actual_writer, config);
    JsonWriter default_writer;
    write_config(default_writer, Config{});
    const std::string actual_json = actual_writer.take();
    const std::string default_json = default_writer.take();
    simdjson::dom::parser actual_parser;
    simdjson::dom::parser default_parser;
    simdjson::dom::element actual;
    simdjson::dom::element defaults;
    if (actual_parser.parse(actual_json).get(actual) != simdjson::SUCCESS ||
        default_parser.parse(default_json).get(defaults) != simdjson::SUCCESS) {
        return "v=" + std::to_string(kLinkVersion);  // unreachable: write_config emits valid JSON
    }
    std::string out = "v=" + std::to_string(kLinkVersion);
    for (const ConfigField& field : config_fields()) {
        // dp is always derived again; an fp8 recipe travels inside the custom precision of "p".
        if (field.link_key.empty() || field.link_key == "dp" || field.link_key == "f8") continue;
        simdjson::dom::element value;
        if (actual.at_pointer(json_pointer(field.path)).get(value) != simdjson::SUCCESS) continue;
        simdjson::dom::object object;
        const bool custom_spec = field.type == FieldType::spec && value.get_object().get(object) == simdjson::SUCCESS;
        const std::string text = custom_spec ? "~" + base64url_encode(compact_spec_json(field.path, object)) : link_text(value);
        // The framework too (link version 2): a link without it is a version-1 link, framework "none".
        const bool always =
            field.link_key == "m" || field.link_key == "g" || field.link_key == "N" || field.link_key == "p" || field.path == "framework";
        // Under a framework a knob the config names itself overrides the framework's value even when
        // it equals the plain default, so it stays in the link (config.hpp ExplicitKnobs).
        const ExplicitKnobs& knobs = config.explicit_knobs;
        const bool named_knob =
            !config.framework.name.empty() &&
            ((field.path == "parallel.overlap_dp_comm" && knobs.overlap_dp_comm) ||
             (field.path == "parallel.overlap_tp_comm" && knobs.overlap_tp_comm) ||
             (field.path == "training.attention_kernel" && knobs.attention_kernel) ||
             (field.path == "training.cuda_graphs" && knobs.cuda_graphs) || (field.path == "training.compile" && knobs.compile) ||
             // Only a stack without a fused kernel sets it (framework.cpp).
             (field.path == "training.flash_attention" && knobs.flash_attention && !config.framework.flash_attention) ||
             (field.path == "training.moe_dispatcher" && knobs.moe_dispatcher));
        if (named_knob) {
        } else if (field.link_key == "n") {
            if (text == config.gpu.default_node) continue;
        } else if (!always) {
            simdjson::dom::element default_value;
            if (defaults.at_pointer(json_pointer(field.path)).get(default_value) == simdjson::SUCCESS && link_text(default_value) == text) {
                continue;
            }
        }
        out += '&';
        out += field.link_key;
        out += '=';
        out += text;
    }
    return out;
}

Result<PinnedLink> split_pinned_link(std::string_view link) {
    const size_t hash = link.rfind('#');
    if (hash != std::string_view::npos) link.remove_prefix(hash + 1);
    PinnedLink out;
    size_t start = 0;
    while (start <= link.size()) {
        size_t end = link.find('&', start);
        if (end == std::string_view::npos) end = link.size();
        const std::string_view part = link.substr(start, end - start);
        start = end + 1;
        if (part.substr(0, 4) == "pin=") {
            if (out.pinned) return Error{"pin", "appears twice in the link"};
            auto pinned = base64url_decode(part.substr(4));
            if (!pinned) return Error{"pin", "the pinned configuration (A) is not base64url: " + pinned.error().message};
            out.pinned = std::move(pinned).value();
            continue;
        }
        if (part.empty()) continue;
        if (!out.current.empty()) out.current += '&';
        out.current += part;
    }
    return out;
}

Result<Config> decode_config_link(std::string_view fragment) {
    const size_t hash = fragment.rfind('#');
    if (hash != std::string_view::npos) fragment.remove_prefix(hash + 1);
    if (!fragment.empty() && fragment[0] == '?') fragment.remove_prefix(1);
    std::vector<std::pair<std::string, std::string>> pairs;
    size_t start = 0;
    while (start <= fragment.size()) {
        size_t end = fragment.find('&', start);
        if (end == std::string_view::npos) end = fragment.size();
        const std::string_view part = fragment.substr(start, end - start);
        start = end + 1;
        if (part.empty()) continue;
        const size_t equals = part.find('=');
        bool ok = true;
        const std::string key = percent_decode(part.substr(0, equals), &ok);
        if (equals == std::string_view::npos) return Error{key, "garbled link field (expected key=value)"};
        const std::string value = percent_decode(part.substr(equals + 1), &ok);
        if (!ok) return Error{key, "garbled link field (bad %-escape)"};
        for (const auto& [seen, ignored] : pairs) {
            if (seen == key) return Error{key, "appears twice in the link"};
        }
        pairs.emplace_back(key, value);
    }
    const auto version = std::find_if(pairs.begin(), pairs.end(), [](const auto& pair) { return pair.first == "v"; });
    if (version == pairs.end()) return Error{"v", "missing link version (expected v=" + std::to_string(kLinkVersion) + ")"};
    const std::string& v = version->second;
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
        return Error{"v", "garbled link version '" + v + "'"};
    }
    const long number = std::strtol(v.c_str(), nullptr, 10);
    if (number > kLinkVersion) {
        return Error{"v", "link version " + v + " is newer than this trainclock supports (" + std::to_string(kLinkVersion) + ")"};
    }
    if (number < 1) return Error{"v", "unknown link version " + v};

    std::vector<std::string> known;
    for (const ConfigField& field : config_fields()) {
        if (!field.link_key.empty()) known.emplace_back(field.link_key);
    }
    Config config = config_draft();
    // Links before version 2 left the framework out when it was "none", the default then (issue 25
    // item 9): such a link keeps its meaning. Version 2 links always carry "fw".
    if (number < kLinkVersionFrameworkDefault) config.framework = FrameworkSpec{};
    for (const auto& [key, value] : pairs) {
        if (key == "v") continue;
        const ConfigField* field = find_field_by_link_key(key);
        if (!field) {
            const std::string guess = did_you_mean(key, known);
            return Error{key, "unknown link field" + (guess.empty() ? std::string() : "; did you mean " + guess + "?")};
        }
        auto updated = set_config_field(std::move(config), *field, value, key);
        if (!updated) return updated.error();
        config = std::move(updated).value();
    }
    return validate_config(std::move(config));
}

}  // namespace trainclock
