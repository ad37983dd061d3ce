// trainclock: TOML through toml++ (toml.hpp). The only translation unit that includes toml++; the
// build defines TOML_HEADER_ONLY=1, TOML_EXCEPTIONS=0 and TOML_ENABLE_FORMATTERS=0
// (cmake/Dependencies.cmake).
#include "formats/toml.hpp"

// toml++ 3.3's internal asserts fire on malformed input that its release build reports as a parse
// error (fuzz_import_torchtitan: "0=[}{"); debug and sanitizer builds take the release path too.
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include <cctype>
#include <cstdio>
#include <optional>

namespace trainclock {

namespace {

std::string double_quoted(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// An array or table as TOML-like text (strings double-quoted), for the readers that look inside.
std::string node_text(const toml::node& node) {
    if (const auto* s = node.as_string()) return double_quoted(s->get());
    if (const auto* i = node.as_integer()) return std::to_string(i->get());
    if (const auto* f = node.as_floating_point()) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.17g", f->get());
        return buffer;
    }
    if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
    if (const auto* a = node.as_array()) {
        std::string out = "[";
        for (size_t i = 0; i < a->size(); ++i) out += (i ? ", " : "") + node_text(*a->get(i));
        return out + "]";
    }
    if (const auto* t = node.as_table()) {
        std::string out = "{";
        bool first = true;
        for (const auto& [key, value] : *t) {
            out += (first ? "" : ", ") + std::string(key.str()) + " = " + node_text(value);
            first = false;
        }
        return out + "}";
    }
    return "<date-time>";
}

void flatten(const toml::table& table, const std::string& prefix, std::map<std::string, TomlValue>& out) {
    for (const auto& [key, node] : table) {
        const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
        if (const auto* t = node.as_table()) {
            flatten(*t, path, out);
            continue;
        }
        TomlValue v;
        v.line = int64_t(node.source().begin.line);
        if (const auto* s = node.as_string()) {
            v.kind = TomlValue::string;
            v.text = s->get();
        } else if (const auto* i = node.as_integer()) {
            v.kind = TomlValue::number;
            v.value = double(i->get());
        } else if (const auto* f = node.as_floating_point()) {
            v.kind = TomlValue::number;
            v.value = f->get();
        } else if (const auto* b = node.as_boolean()) {
            v.kind = TomlValue::boolean;
            v.flag = b->get();
        } else if (node.is_array()) {
            v.kind = TomlValue::array;
            v.text = node_text(node);
        } else {
            v.text = node_text(node);  // dates and times
        }
        out[path] = std::move(v);
    }
}

// toml++ 3.3 asserts (a debug abort; __builtin_assume under clang release builds) when a table
// header's key starts with a character no key can start with ("[,"): such a header is refused here
// first. A line of a multi-line string or a nested array that starts so is refused too, which no
// torchtitan config writes.
std::optional<Error> check_table_headers(std::string_view toml) {
    size_t line = 0;
    for (size_t start = 0; start < toml.size();) {
        const size_t end = std::min(toml.find('\n', start), toml.size());
        const std::string_view text = toml.substr(start, end - start);
        ++line;
        start = end + 1;
        const size_t comment = text.find('#');
        for (size_t at = 0; at < std::min(comment, text.size()); ++at)
            if (static_cast<unsigned char>(text[at]) >= 0x80)
                return Error{"line " + std::to_string(line), "non-ASCII text outside a comment is not read (torchtitan configs are ASCII)"};
        size_t i = text.find_first_not_of(" \t");
        if (i == std::string_view::npos || text[i] != '[') continue;
        i += i + 1 < text.size() && text[i + 1] == '[' ? 2 : 1;  // "[" or "[[", then the key
        i = text.find_first_not_of(" \t", i);
        if (i == std::string_view::npos || text[i] == '\r')  // "[" alone: toml++ 3.3 asserts on the line break too
            return Error{"line " + std::to_string(line), "a table header has no key (write [name])"};
        const char c = text[i];
        const bool key_start = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'' || c == ']';
        if (!key_start)
            return Error{"line " + std::to_string(line), std::string("a table header's key cannot start with '") + c +
                                                             "' (a bare key is letters, digits, '_' and '-', or a quoted string)"};
    }
    return std::nullopt;
}

}  // namespace

Result<std::map<std::string, TomlValue>> parse_toml(std::string_view toml) {
    if (auto error = check_table_headers(toml)) return *error;
    toml::parse_result parsed = toml::parse(toml);
    if (!parsed) {
        const toml::parse_error& error = parsed.error();
        return Error{"line " + std::to_string(error.source().begin.line), std::string(error.description())};
    }
    std::map<std::string, TomlValue> out;
    flatten(parsed.table(), "", out);
    return out;
}

}  // namespace trainclock
