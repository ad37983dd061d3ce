// trainclock (internal): strict reading of JSON objects (see json_reader.hpp).
#include "base/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "trainclock/base/names.hpp"

namespace trainclock {

namespace {

// The dotted path of the first key that appears twice in one object (depth-first, document order).
// RFC 8259 section 4 leaves duplicates to the implementation; a silent "last one wins" hides typos.
std::optional<std::string> first_duplicate_key(simdjson::dom::element value, std::string_view path) {
    simdjson::dom::object object;
    simdjson::dom::array array;
    if (value.get_object().get(object) == simdjson::SUCCESS) {
        std::vector<std::string_view> small;         // linear search for the usual few keys
        std::unordered_set<std::string_view> large;  // hashed past 32 keys: no quadratic blow-up
        for (const auto field : object) {
            const std::string_view key = field.key;
            const bool seen = small.size() < 32 ? std::find(small.begin(), small.end(), key) != small.end() : !large.insert(key).second;
            if (seen) return join_key(path, key);
            if (small.size() < 32) {
                small.push_back(key);
                if (small.size() == 32) large.insert(small.begin(), small.end());
            }
            const auto type = field.value.type();
            if (type != simdjson::dom::element_type::OBJECT && type != simdjson::dom::element_type::ARRAY) continue;
            if (auto duplicate = first_duplicate_key(field.value, join_key(path, key))) return duplicate;
        }
    } else if (value.get_array().get(array) == simdjson::SUCCESS) {
        size_t index = 0;
        for (const auto item : array) {
            const auto type = item.type();
            if (type == simdjson::dom::element_type::OBJECT || type == simdjson::dom::element_type::ARRAY) {
                if (auto duplicate = first_duplicate_key(item, std::string(path) + "[" + std::to_string(index) + "]")) { return duplicate; }
            }
            ++index;
        }
    }
    return std::nullopt;
}

}  // namespace

Result<simdjson::dom::element> parse_json_document(simdjson::dom::parser& parser, std::string_view json) {
    // A UTF-8 byte order mark (Windows editors write one) is skipped, as RFC 8259 section 8.1 allows.
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (json.substr(0, kBom.size()) == kBom) json.remove_prefix(kBom.size());
    const bool blank = std::all_of(json.begin(), json.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
    if (blank) return Error{"", "empty input: expected a JSON object"};
    simdjson::dom::element document;
    const auto code = parser.parse(json.data(), json.size(), true).get(document);
    switch (code) {
    case simdjson::SUCCESS: break;
    case simdjson::TAPE_ERROR:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
        return Error{"", "malformed JSON: unbalanced braces or brackets, a missing comma or value, or truncated input"};
    case simdjson::UNCLOSED_STRING: return Error{"", "malformed JSON: unterminated string (truncated input?)"};
    case simdjson::NUMBER_ERROR: return Error{"", "malformed JSON: a number is malformed or out of range (integers: at most 2^64 - 1)"};
    default: return Error{"", std::string("malformed JSON: ") + simdjson::error_message(code)};
    }
    if (auto duplicate = first_duplicate_key(document, "")) {
        return Error{*duplicate, "duplicate key: it appears more than once in its object (say it once)"};
    }
    return document;
}

Result<simdjson::dom::object> parse_json_object(simdjson::dom::parser& parser, std::string_view json, std::string_view what) {
    auto document = parse_json_document(parser, json);
    if (!document) return document.error();
    simdjson::dom::object object;
    if (document.value().get_object().get(object) != simdjson::SUCCESS)
        return Error{"", "expected " + std::string(what) + ", got " + json_type_phrase(document.value())};
    return object;
}

std::string json_type_phrase(simdjson::dom::element value) {
    switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: return "an array";
    case simdjson::dom::element_type::OBJECT: return "an object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "a number";
    case simdjson::dom::element_type::STRING: return "a string";
    case simdjson::dom::element_type::BOOL: return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
    }
    return "a value";
}

ObjectReader::ObjectReader(simdjson::dom::object object, std::string path) : object_(object), path_(std::move(path)) {}

std::optional<simdjson::dom::element> ObjectReader::find(std::string_view key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
    // parse_json_document rejects duplicate keys, so the first match is the only one.
    for (const auto field : object_) {
        if (field.key == key) return field.value;
    }
    return std::nullopt;
}

void ObjectReader::fail(std::string_view key, std::string message) {
    if (!error_) error_ = Error{join_key(path_, key), std::move(message)};
}

void ObjectReader::require(std::string_view key) {
    if (!has(key)) fail(key, "missing (required)");
}

void ObjectReader::adopt(std::optional<Error> error) {
    if (!error_ && error) error_ = std::move(error);
}

void ObjectReader::read(std::string_view key, int64_t& out) {
    const auto value = find(key);
    if (!value) return;
    int64_t integer = 0;
    double number = 0;
    if (value->get_int64().get(integer) == simdjson::SUCCESS) {
        out = integer;
    } else if (value->is_uint64()) {
        fail(key, "integer out of range");
    } else if (value->get_double().get(number) == simdjson::SUCCESS) {
        // Accept integral doubles such as 1e3 or 8.0; 2^53 bounds the exactly representable integers.
        if (number != std::floor(number) || std::fabs(number) > 9007199254740992.0) {
            fail(key, "expected an integer, got " + std::string(simdjson::minify(*value)));
        } else {
            out = static_cast<int64_t>(number);
        }
    } else {
        fail(key, "expected an integer, got " + json_type_phrase(*value));
    }
}

void ObjectReader::read(std::string_view key, double& out) {
    const auto value = find(key);
    if (!value) return;
    double number = 0;
    if (value->get_double().get(number) == simdjson::SUCCESS)
        out = number;
    else
        fail(key, "expected a number, got " + json_type_phrase(*value));
}

void ObjectReader::read(std::string_view key, bool& out) {
    const auto value = find(key);
    if (!value) return;
    bool flag = false;
    if (value->get_bool().get(flag) == simdjson::SUCCESS)
        out = flag;
    else
        fail(key, "expected true or false, got " + json_type_phrase(*value));
}

void ObjectReader::read(std::string_view key, std::string& out) {
    const auto value = find(key);
    if (!value) return;
    std::string_view text;
    if (value->get_string().get(text) == simdjson::SUCCESS)
        out = std::string(text);
    else
        fail(key, "expected a string, got " + json_type_phrase(*value));
}

std::optional<simdjson::dom::object> ObjectReader::read_object(std::string_view key) {
    const auto value = find(key);
    if (!value) return std::nullopt;
    simdjson::dom::object object;
    if (value->get_object().get(object) == simdjson::SUCCESS) return object;
    fail(key, "expected an object, got " + json_type_phrase(*value));
    return std::nullopt;
}

void ObjectReader::fail_unknown_value(std::string_view key, std::string_view value, const std::vector<std::string>& candidates) {
    std::string message = "unknown value '" + std::string(value) + "'";
    const std::string guess = did_you_mean(value, candidates);
    if (!guess.empty()) {
        message += "; did you mean " + guess + "?";
    } else {
        message += "; expected one of";
        for (size_t i = 0; i < candidates.size(); ++i) message += (i ? ", " : " ") + candidates[i];
    }
    fail(key, message);
}

std::optional<Error> ObjectReader::finish() {
    for (const auto field : object_) {
        const std::string_view key = field.key;
        if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
            std::string message = "unknown key";
            const std::string guess = did_you_mean(key, known_);
            if (!guess.empty()) message += "; did you mean " + guess + "?";
            return Error{join_key(path_, key), message};
        }
    }
    return error_;
}

}  // namespace trainclock
