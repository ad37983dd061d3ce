// trainclock: error values returned across the core API (no exceptions cross it; DESIGN.md 4).
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>
#include <variant>

namespace trainclock {

// One validation or parse failure. `key` is the dotted config path at fault ("parallel.tp",
// "model.heads", "gpu"); `message` says why, in one line, with units and a hint where one helps.
struct Error {
    std::string key;      // dotted path of the offending key ("" when the whole input is at fault)
    std::string message;  // one line, no trailing period needed

    Error() = default;
    // Input echoed into a key or message (a JSON key with "\n", a link value with raw bytes) has its
    // control characters escaped, so every error is one line of text (found by tests/fuzz).
    // A quoted value longer than kEchoChars is cut to an excerpt (a 1 MB preset name echoes 100
    // characters and "..."), and so is a key, keeping its end: the key at fault is its last part
    // ("<a long file path>: parallelism.data_parallel_shard_degree").
    Error(std::string key_, std::string message_)
        : key(excerpt_key(one_line(std::move(key_)))), message(excerpt_quoted(one_line(std::move(message_)))) {}

    static constexpr size_t kEchoChars = 100;    // the most characters of a bad value an error echoes
    static constexpr size_t kKeyHeadChars = 30;  // of a long key's kEchoChars, those kept from its start

    // `text` cut to its first kEchoChars characters and "..." (whole UTF-8 characters), or as it is.
    static std::string excerpt(std::string text) {
        if (text.size() <= kEchoChars + 3) return text;
        text.resize(char_start(text, kEchoChars));
        return text + "...";
    }

    // `text` cut to its first kKeyHeadChars characters, "..." and its last ones, kEchoChars in all.
    static std::string excerpt_key(std::string text) {
        if (text.size() <= kEchoChars + 3) return text;
        const size_t head = char_start(text, kKeyHeadChars);
        const size_t tail = char_start(text, text.size() - (kEchoChars - kKeyHeadChars));
        return text.substr(0, head) + "..." + text.substr(tail);
    }

    // The start of the UTF-8 character holding byte `at` (a cut there splits no character).
    static size_t char_start(const std::string& text, size_t at) {
        while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
        return at;
    }

    // Every 'quoted' or "quoted" value of `text` (opened after a non-alphanumeric character, closed
    // before one, so "model's" opens nothing) cut to an excerpt.
    static std::string excerpt_quoted(std::string text) {
        if (text.size() <= kEchoChars) return text;
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
        std::string out;
        bool unclosed[2] = {false, false};  // no closing quote after the last failed opener: no later one closes
        size_t i = 0;
        while (i < text.size()) {
            const char q = text[i];
            const int kind = q == '"';
            if ((q == '\'' || q == '"') && !unclosed[kind] && (i == 0 || !word(text[i - 1]))) {
                size_t close = i + 1;
                while (close < text.size() && !(text[close] == q && (close + 1 == text.size() || !word(text[close + 1])))) ++close;
                unclosed[kind] = close == text.size();
                if (close < text.size()) {
                    out += q;
                    out += excerpt(text.substr(i + 1, close - i - 1));
                    out += q;
                    i = close + 1;
                    continue;
                }
            }
            out += text[i++];
        }
        return out;
    }

    std::string to_string() const {  // "parallel.tp: 3 does not divide model.heads = 64"
        return key.empty() ? message : key + ": " + message;
    }

    // `text` with control characters written as \n, \r, \t or \xNN.
    static std::string one_line(std::string text) {
        bool clean = true;
        for (const char c : text) clean = clean && !(static_cast<unsigned char>(c) < 0x20 || c == 0x7f);
        if (clean) return text;
        static const char* const kHex = "0123456789abcdef";
        std::string out;
        for (const char c : text) {
            const auto byte = static_cast<unsigned char>(c);
            if (byte >= 0x20 && byte != 0x7f)
                out += c;
            else if (c == '\n')
                out += "\\n";
            else if (c == '\r')
                out += "\\r";
            else if (c == '\t')
                out += "\\t";
            else
                out += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
        }
        return out;
    }
};

// Value-or-error. Cheap to move; `ok()` before `value()`.
template <class T>
class Result {
public:
    Result(T value) : data_(std::move(value)) {}
    Result(Error error) : data_(std::move(error)) {}

    bool ok() const { return data_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<0>(data_); }
    T& value() & { return std::get<0>(data_); }
    T&& value() && { return std::get<0>(std::move(data_)); }
    const Error& error() const { return std::get<1>(data_); }

private:
    std::variant<T, Error> data_;
};

}  // namespace trainclock

// Returns the first rule's Error from a function returning std::optional<Error> or Result: each rule
// is an expression of type std::optional<Error> (nullopt = passed).
#define TRAINCLOCK_TRY(expression)                                                                                                         \
    if (auto trainclock_error_ = (expression)) { return *trainclock_error_; }
