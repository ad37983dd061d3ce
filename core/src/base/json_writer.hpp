// trainclock (internal): deterministic JSON text, identical bytes on native and WebAssembly.
// Numbers use a short decimal that reads back as the same double (simdjson's Grisu2, the same
// integer code on every platform), laid out with the rules of ECMAScript Number::toString
// (ECMA-262 7.1.12.1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainclock {

void append_json_number(std::string& out, double value);           // shortest round-trip; NaN/inf -> null
void append_json_string(std::string& out, std::string_view text);  // quoted and escaped
std::string json_number(double value);                             // append_json_number into a new string
std::string shortest_digits(double value, int* exponent10);        // positive finite: "1234", exponent 1 for 12.34
// The dotted path of a key, as errors name it: "parallel" + "tp" -> "parallel.tp" (no simdjson: users
// that only name keys stay off simdjson.h, which base/json_reader.hpp includes).
std::string join_key(std::string_view path, std::string_view key);

// Streaming writer with optional pretty printing (indent > 0 spaces per level).
class JsonWriter {
public:
    explicit JsonWriter(int indent = 0) : indent_(indent) {}

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view name);
    JsonWriter& value(std::string_view text);
    JsonWriter& value(const char* text) { return value(std::string_view(text)); }
    JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
    JsonWriter& value(double number);
    JsonWriter& value(int64_t number);
    JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
    JsonWriter& value(bool flag);
    JsonWriter& null();
    // name: text, or null where text is empty (a report's explanation, present only on failure).
    JsonWriter& text_or_null(std::string_view name, std::string_view text) {
        key(name);
        return text.empty() ? null() : value(text);
    }
    template <class T>
    JsonWriter& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    // name: [{...}, ...], one object per element of `items`, its members written by write_members(item).
    template <class Range, class WriteMembers>
    JsonWriter& object_array(std::string_view name, const Range& items, WriteMembers&& write_members) {
        key(name).begin_array();
        for (const auto& item : items) {
            begin_object();
            write_members(item);
            end_object();
        }
        return end_array();
    }

    const std::string& str() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    void before_value();  // comma, newline and indentation as the container requires
    void newline();
    JsonWriter& open(char bracket, bool object);  // starts an object or array
    void close(char bracket);                     // ends the innermost object or array

    struct Level {
        bool object;
        int count;
    };
    std::string out_;
    std::vector<Level> levels_;
    int indent_;
    bool after_key_ = false;
};

}  // namespace trainclock
