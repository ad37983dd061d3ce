// trainclock (internal): strict reading of JSON objects with simdjson's error-code DOM API.
// Every failure is an Error naming the dotted key; unknown keys and keys repeated in one object are errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "base/json_writer.hpp"  // join_key
#include "trainclock/base/enum_name.hpp"
#include "trainclock/base/status.hpp"

namespace trainclock {

// Parses a whole document, skipping a UTF-8 byte order mark; empty, truncated and malformed input
// give a one-line Error (key ""), a key repeated in one object an Error naming its dotted path.
Result<simdjson::dom::element> parse_json_document(simdjson::dom::parser& parser, std::string_view json);
// parse_json_document, then the root must be an object: else "expected <what>, got a string" (key "").
Result<simdjson::dom::object> parse_json_object(simdjson::dom::parser& parser, std::string_view json, std::string_view what);

std::string json_type_phrase(simdjson::dom::element value);  // "a string", "an object", ...

// Reads the keys of one object. Getters leave the target untouched when the key is absent (so an
// object can override a base); the first failure is kept and reported by finish(), which also
// rejects keys nobody asked for (an unknown key wins over the errors it causes, e.g. "missing").
class ObjectReader {
public:
    ObjectReader(simdjson::dom::object object, std::string path);

    std::optional<simdjson::dom::element> find(std::string_view key);  // marks the key as known
    bool has(std::string_view key) { return find(key).has_value(); }
    void fail(std::string_view key, std::string message);  // records an error on a key
    void require(std::string_view key);                    // absent -> "missing"
    void adopt(std::optional<Error> error);                // a nested reader's result

    void read(std::string_view key, int64_t& out);
    void read(std::string_view key, double& out);
    void read(std::string_view key, bool& out);
    void read(std::string_view key, std::string& out);
    // read(key, out) for each (key, out) pair in turn: read_fields("tp", s.tp, "pp", s.pp).
    template <class T, class... Rest>
    void read_fields(std::string_view key, T& out, Rest&&... rest) {
        read(key, out);
        if constexpr (sizeof...(rest) > 0) read_fields(std::forward<Rest>(rest)...);
    }
    std::optional<simdjson::dom::object> read_object(std::string_view key);
    template <class E, size_t N>
    void read_enum(std::string_view key, const EnumName<E> (&names)[N], E& out) {
        read_enum(key, names, N, out);
    }
    template <class E>
    void read_enum(std::string_view key, const EnumName<E>* names, size_t count, E& out) {
        std::string text;
        if (!find(key)) return;
        read(key, text);
        for (size_t i = 0; i < count; ++i) {
            if (names[i].name == text) {
                out = names[i].value;
                return;
            }
        }
        std::vector<std::string> candidates;
        for (size_t i = 0; i < count; ++i) candidates.emplace_back(names[i].name);
        fail_unknown_value(key, text, candidates);
    }
    void fail_unknown_value(std::string_view key, std::string_view value, const std::vector<std::string>& candidates);

    const std::string& path() const { return path_; }
    bool failed() const { return error_.has_value(); }
    std::optional<Error> finish();  // an unknown key, else the first recorded error

private:
    simdjson::dom::object object_;
    std::string path_;
    std::vector<std::string> known_;
    std::optional<Error> error_;
};

}  // namespace trainclock
