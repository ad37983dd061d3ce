// trainclock (internal): deterministic JSON text (see json_writer.hpp).
#include "base/json_writer.hpp"

#include <cmath>
#include <cstdlib>

#include <simdjson.h>

namespace trainclock {

// Shortest-style digits from simdjson's Grisu2 to_chars (Loitsch 2010, "Printing floating-point
// numbers quickly and accurately with integers"): pure integer arithmetic, so native and wasm print
// the very same digits; the output always reads back as the same double and is the shortest form
// for all but rare values. Accepts its "1.5", "15000000000000.0", "2.5e-09" and "1e+21" forms.
std::string shortest_digits(double value, int* exponent10) {
    char buffer[64];
    const char* end = simdjson::internal::to_chars(buffer, nullptr, value);
    std::string digits;
    int point = -1;    // digits before the decimal point
    int exponent = 0;  // written exponent
    for (const char* p = buffer; p != end; ++p) {
        if (*p == '.') {
            point = static_cast<int>(digits.size());
        } else if (*p == 'e' || *p == 'E') {
            exponent = std::atoi(std::string(p + 1, end).c_str());
            break;
        } else if (*p >= '0' && *p <= '9') {
            digits += *p;
        }
    }
    if (point < 0) point = static_cast<int>(digits.size());
    size_t leading = 0;  // "0.000123" -> "123"
    while (leading + 1 < digits.size() && digits[leading] == '0') ++leading;
    digits.erase(0, leading);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    *exponent10 = point - static_cast<int>(leading) - 1 + exponent;
    return digits;
}

// ECMA-262 Number::toString layout: k digits, decimal point after n digits.
void append_json_number(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    if (value == 0) {
        out += '0';
        return;
    }
    if (value < 0) {
        out += '-';
        value = -value;
    }
    int exponent10 = 0;
    const std::string digits = shortest_digits(value, &exponent10);
    const int k = static_cast<int>(digits.size());
    const int n = exponent10 + 1;
    if (k <= n && n <= 21) {
        out += digits;
        out.append(static_cast<size_t>(n - k), '0');
    } else if (0 < n && n <= 21) {
        out.append(digits, 0, static_cast<size_t>(n));
        out += '.';
        out.append(digits, static_cast<size_t>(n), std::string::npos);
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<size_t>(-n), '0');
        out += digits;
    } else {
        out += digits[0];
        if (k > 1) {
            out += '.';
            out.append(digits, 1, std::string::npos);
        }
        out += 'e';
        out += (n - 1 >= 0) ? '+' : '-';
        out += std::to_string(std::abs(n - 1));
    }
}

std::string json_number(double value) {
    std::string out;
    append_json_number(out, value);
    return out;
}

void append_json_string(std::string& out, std::string_view text) {
    static const char* const kHex = "0123456789abcdef";
    out += '"';
    // Runs of characters that need no escape are appended whole (sources are long plain prose).
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) continue;
        out.append(text, start, i - start);
        start = i + 1;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out += kHex[(c >> 4) & 0xf];
            out += kHex[c & 0xf];
        }
    }
    out.append(text, start, text.size() - start);
    out += '"';
}

void JsonWriter::newline() {
    if (indent_ <= 0) return;
    out_ += '\n';
    out_.append(levels_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (levels_.empty()) return;
    if (levels_.back().count++ > 0) out_ += ',';
    newline();
}

JsonWriter& JsonWriter::begin_object() { return open('{', true); }

JsonWriter& JsonWriter::end_object() {
    close('}');
    return *this;
}

JsonWriter& JsonWriter::begin_array() { return open('[', false); }

JsonWriter& JsonWriter::end_array() {
    close(']');
    return *this;
}

JsonWriter& JsonWriter::open(char bracket, bool object) {
    before_value();
    out_ += bracket;
    levels_.push_back({object, 0});
    return *this;
}

void JsonWriter::close(char bracket) {
    const bool empty = levels_.back().count == 0;
    levels_.pop_back();
    if (!empty) newline();
    out_ += bracket;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    before_value();
    append_json_string(out_, name);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
    before_value();
    append_json_string(out_, text);
    return *this;
}

JsonWriter& JsonWriter::value(double number) {
    before_value();
    append_json_number(out_, number);
    return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
    before_value();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

std::string join_key(std::string_view path, std::string_view key) {
    if (path.empty()) return std::string(key);
    std::string out(path);
    out += '.';
    out += key;
    return out;
}

}  // namespace trainclock
