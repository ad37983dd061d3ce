// trainclock CLI: the command registry, flag parsing shared by every command (the config flags
// --model --gpu ... --config FILE|-), error reporting and text-table formatting.
//
// A command lives in native/cmd_<name>.cpp and registers itself, so main.cpp never changes:
//
//     namespace { int run(const trainclock::cli::Args& args) { ... } }
//     static const trainclock::cli::CommandRegistrar registrar({
//         "search", "fastest parallel layouts that fit", "trainclock search [config flags] [--top N]",
//         "longer description", {{"--top", "N", "how many layouts to list"}}, /*config_flags=*/true, run});
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // a bug: an exception escaped
inline constexpr int kExitBadInput = 2;  // bad flags, files, configs, links

struct FlagSpec {
    std::string name;        // "--json"
    std::string value_name;  // "FILE"; empty for a switch
    std::string help;        // one line
};

// Parsed command line: flags in command-line order (switches carry "true"/"false") and positionals.
class Args {
public:
    bool has(std::string_view flag) const;
    std::optional<std::string> value(std::string_view flag) const;  // the last occurrence
    const std::vector<std::pair<std::string, std::string>>& flags() const { return flags_; }
    const std::vector<std::string>& positionals() const { return positionals_; }

    void add_flag(std::string name, std::string value) { flags_.emplace_back(std::move(name), std::move(value)); }
    void add_positional(std::string value) { positionals_.push_back(std::move(value)); }

private:
    std::vector<std::pair<std::string, std::string>> flags_;
    std::vector<std::string> positionals_;
};

struct Command {
    std::string name;             // "predict"
    std::string summary;          // one line for `trainclock --help`
    std::string usage;            // "trainclock predict [config flags] [--json | --csv]"
    std::string description;      // paragraph(s) for `trainclock predict --help`
    std::vector<FlagSpec> flags;  // the command's own flags (--help is implicit)
    bool config_flags = false;    // also accepts the shared config flags
    int (*run)(const Args& args) = nullptr;
};

struct CommandRegistrar {
    explicit CommandRegistrar(Command command);
};
const std::vector<Command>& commands();  // sorted by name
const Command* find_command(std::string_view name);

// Parses argv (after the command name). Unknown flags are errors with a did-you-mean.
Result<Args> parse_args(const Command& command, const std::vector<std::string>& argv);
std::string command_help(const Command& command);
std::vector<FlagSpec> config_flag_specs();  // --config, then every config field flag

// The Config of the command line: --config FILE|- first, then the config flags in order (flags
// override the file), then validate_config. Errors name the file, flag or config key.
Result<Config> config_from_args(const Args& args);
// The same before validate_config, for commands that vary the layout themselves (search).
Result<Config> config_draft_from_args(const Args& args);
// The two halves of it, for a command that also reads the file itself (stdin can be read once):
// --config's text (nullopt without --config), and the draft from that text and the flags.
Result<std::optional<std::string>> config_text_from_args(const Args& args);
Result<Config> config_draft_from_args(const Args& args, const std::optional<std::string>& config_text);

// Prints "trainclock: error: <key>: <reason>" on stderr; returns kExitBadInput.
int report_error(const Error& error);
inline constexpr size_t kMaxInputBytes = size_t(16) << 20;    // the largest file (or stdin) a command reads: 16 MiB
Result<std::string> read_text_file(const std::string& path);  // "-" reads stdin; larger than kMaxInputBytes: an error
bool names_file(std::string_view value);                      // "-", a path with '/', or a name ending in .json (not a preset id)

// The framework as outputs name it: its preset id, or "none (megatron-lm defaults)".
std::string framework_text(const Config& config);

// The calibration line (perf/calibration.hpp calibration_summary) and, one per line below it, the
// ways the config is outside its scope: for the tables without predict's warnings (search, compare, plan).
std::string calibration_lines(const Config& config);

// Human-readable numbers.
std::string format_seconds(double seconds);                     // "812 ms", "3.42 s", "5.1 min", "2.30 h", "41.7 days"
std::string format_si(double value, std::string_view unit);     // SI prefix on the unit: "6.31 GWh", "412 TFLOP/s"
std::string format_count(double value, std::string_view unit);  // counts: "862 k tokens/s", "70.6 B params", "4.95 M GPU-h"
std::string format_fixed(double value, int decimals);           // "12.35"
std::string format_percent(double fraction);                    // "41.7 %"
std::string format_signed_percent(double fraction);             // "+4.2 %", "-11.0 %"
std::string format_usd(double usd);                             // every cost printed: "$17.4 M", "$412 k", "$0.05", "$0.0031"

// Column-aligned text table: first column left-aligned, the others right-aligned.
class TextTable {
public:
    explicit TextTable(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string render(std::string_view indent = "") const;

private:
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace trainclock::cli
