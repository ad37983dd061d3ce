// trainclock: error values returned across the core API (no exceptions cross it; DESIGN.md 4).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace trainclock {

// One validation or parse failure. `key` is the dotted config path at fault ("parallel.tp",
// "model.heads", "gpu"); `message` says why, in one line, with units and a hint where one helps.
struct Error {
    std::string key;                 // dotted path of the offending key ("" when the whole input is at fault)
    std::string message;             // one line, no trailing period needed
    std::string to_string() const {  // "parallel.tp: 3 does not divide model.heads = 64"
        return key.empty() ? message : key + ": " + message;
    }
};

// Value-or-error. Cheap to move; `ok()` before `value()`.
template <class T> class Result {
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

} // namespace trainclock
