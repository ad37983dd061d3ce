// trainclock fuzzing: the harness shared by every libFuzzer target (tests/fuzz/README.md).
// A target is one fuzz_<name>.cpp holding TRAINCLOCK_FUZZ_TEXT(text) { ... }: it hands the input
// to a parser and checks the contract of DESIGN.md 3 on what comes back, aborting (a libFuzzer
// "crash") when it breaks: an Error has a one-line message, a config reads back to itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "trainclock/base/status.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/model/config.hpp"

// Defines LLVMFuzzerTestOneInput over the input as text; the body follows the macro. The preset
// catalogue is parsed once in LLVMFuzzerInitialize, so the first input's time (libFuzzer's -timeout)
// is that of the parser alone.
#define TRAINCLOCK_FUZZ_TEXT(text)                                                                                                         \
    static void trainclock_fuzz_one(std::string_view text);                                                                                \
    extern "C" int LLVMFuzzerInitialize(int*, char***) {                                                                                   \
        (void)trainclock::model_preset("gpt2");                                                                                            \
        return 0;                                                                                                                          \
    }                                                                                                                                      \
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {                                                              \
        trainclock_fuzz_one(std::string_view(reinterpret_cast<const char*>(data), size));                                                  \
        return 0;                                                                                                                          \
    }                                                                                                                                      \
    static void trainclock_fuzz_one(std::string_view text)

namespace trainclock::fuzz {

[[noreturn]] inline void fail(const std::string& what, const std::string& detail) {
    std::fprintf(stderr, "trainclock fuzz: %s\n%s\n", what.c_str(), detail.c_str());
    std::abort();
}

// An Error as the CLI prints it: a non-empty message, one line, key and message without line breaks.
inline void check_error(const Error& error) {
    if (error.message.empty()) fail("an error without a message", "key: " + error.key);
    if (error.message.find_first_of("\r\n") != std::string::npos || error.key.find_first_of("\r\n") != std::string::npos)
        fail("an error of more than one line", error.to_string());
}

// A validated config's canonical JSON loads back to the same config (config.hpp's contract).
inline void check_round_trip(const Config& config) {
    const std::string json = config_to_json(config);
    const Result<Config> again = load_config(json);
    if (!again) fail("the canonical JSON of a valid config does not load", again.error().to_string() + "\n" + json);
    const std::string twice = config_to_json(again.value());
    if (twice != json) fail("the canonical JSON changes when read back", json + "\n---\n" + twice);
}

// Any parser's result: a well-formed error, or a value (checked further by the target).
template <class T>
bool ok_or_well_formed_error(const Result<T>& result) {
    if (!result) check_error(result.error());
    return result.ok();
}

// An importer or config reader that returns a Config: a well-formed error, or a config that
// either breaks a rule (well-formed error) or is valid and round-trips.
inline void check_config_result(const Result<Config>& result) {
    if (!ok_or_well_formed_error(result)) return;
    const Result<Config> valid = validate_config(result.value());
    if (ok_or_well_formed_error(valid)) check_round_trip(valid.value());
}

// An importer's result: a well-formed error, or config/v1 JSON that check_config_result accepts;
// `wrap` turns the imported text into a whole config (e.g. a model object into {"model": ...}).
template <class Wrap>
void check_imported(const Result<Imported>& imported, Wrap wrap) {
    if (!ok_or_well_formed_error(imported)) return;
    for (const std::string& warning : imported.value().warnings) {
        if (warning.empty() || warning.find_first_of("\r\n") != std::string::npos) fail("a warning that is not one line", warning);
    }
    check_config_result(parse_config(wrap(imported.value().json)));
}
inline std::string whole_config(const std::string& json) { return json; }

}  // namespace trainclock::fuzz
