// trainclock CLI: command registry, shared flag parsing and formatting (cli_common.hpp).
//
// Index
//   [SECTION] Registry
//   [SECTION] Flags
//   [SECTION] Config from flags
//   [SECTION] Errors and files
//   [SECTION] Formatting
#include "cli_common.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/perf/calibration.hpp"

namespace trainclock::cli {

// [SECTION] Registry -------------------------------------------------------------------------------

namespace {
std::vector<Command>& registry() {
    static std::vector<Command> commands;  // function-local: safe from static initialisation order
    return commands;
}
}  // namespace

CommandRegistrar::CommandRegistrar(Command command) {
    auto& all = registry();
    all.push_back(std::move(command));
    std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
}

const std::vector<Command>& commands() { return registry(); }

const Command* find_command(std::string_view name) {
    for (const Command& command : registry()) {
        if (command.name == name) return &command;
    }
    return nullptr;
}

// [SECTION] Flags ----------------------------------------------------------------------------------

bool Args::has(std::string_view flag) const {
    return std::any_of(flags_.begin(), flags_.end(), [&](const auto& pair) { return pair.first == flag; });
}

std::optional<std::string> Args::value(std::string_view flag) const {
    for (auto it = flags_.rbegin(); it != flags_.rend(); ++it) {
        if (it->first == flag) return it->second;
    }
    return std::nullopt;
}

std::vector<FlagSpec> config_flag_specs() {
    std::vector<FlagSpec> specs = {{"--config", "FILE|-", "config/v1 JSON file (- = stdin); the flags below override it"},
                                   {"--memory-headroom", "GiB|%", "memory a layout must leave free to fit: 8 (GiB) or 10% (of the GPU's)"}};
    for (const ConfigField& field : config_fields()) {
        std::string value_name;
        switch (field.type) {
        case FieldType::spec: value_name = "ID|JSON"; break;
        case FieldType::integer: value_name = "N"; break;
        case FieldType::number: value_name = "X"; break;
        case FieldType::choice: value_name = "NAME"; break;
        case FieldType::object: value_name = "FILE"; break;
        case FieldType::text: value_name = "TEXT"; break;
        case FieldType::boolean: break;
        }
        specs.push_back({std::string(field.flag), value_name, std::string(field.help)});
    }
    return specs;
}

namespace {

bool is_boolean_word(const std::string& word) {
    for (const char* boolean : {"1", "0", "true", "false", "yes", "no", "on", "off"}) {
        if (word == boolean) return true;
    }
    return false;
}

std::vector<FlagSpec> all_flags(const Command& command) {
    std::vector<FlagSpec> flags = command.flags;
    flags.push_back({"--help", "", "show this help"});
    if (command.config_flags) {
        const auto config = config_flag_specs();
        flags.insert(flags.end(), config.begin(), config.end());
    }
    return flags;
}

}  // namespace

namespace {
// A flag given twice is an error, as a repeated JSON key is (`--tp 8 --tp 4` used to keep the last).
Error repeated(const std::string& flag) {
    return Error{flag, "given twice (give a flag once, as a JSON key; --no-X after --X is allowed and wins)"};
}
}  // namespace

Result<Args> parse_args(const Command& command, const std::vector<std::string>& argv) {
    const std::vector<FlagSpec> flags = all_flags(command);
    Args args;
    std::set<std::string> seen;  // spellings given so far
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg == "--") {  // the rest are positionals (`import megatron -- --num-layers 32 ...`)
            for (++i; i < argv.size(); ++i) args.add_positional(argv[i]);
            break;
        }
        if (arg == "-h") {
            args.add_flag("--help", "true");
            continue;
        }
        if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
            args.add_positional(arg);
            continue;
        }
        const size_t equals = arg.find('=');
        std::string name = arg.substr(0, equals);
        std::optional<std::string> inline_value;
        if (equals != std::string::npos) inline_value = arg.substr(equals + 1);

        // "--no-sp" negates the switch "--sp".
        bool negated = false;
        auto spec = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
        if (spec == flags.end() && name.compare(0, 5, "--no-") == 0) {
            const std::string positive = "--" + name.substr(5);
            spec = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == positive && f.value_name.empty(); });
            negated = spec != flags.end();
        }
        if (spec == flags.end()) {
            std::vector<std::string> names;
            for (const FlagSpec& f : flags) names.push_back(f.name);
            const std::string guess = did_you_mean(name, names);
            return Error{name, "unknown flag for `trainclock " + command.name + "`" +
                                   (guess.empty() ? "; see --help" : "; did you mean " + guess + "?")};
        }
        if (spec->value_name.empty()) {
            // Config switches also take a value, "--sp=0" or "--sp 0" (the spelling of the web
            // app's "Copy CLI command", which writes link pairs as flags).
            const bool is_config_switch = find_field_by_flag(spec->name) != nullptr;
            if (inline_value && (!is_config_switch || negated)) return Error{name, "takes no value"};
            if (!inline_value && is_config_switch && !negated && i + 1 < argv.size() && is_boolean_word(argv[i + 1])) {
                inline_value = argv[++i];
            }
            // The same spelling twice is an error; "--no-x" after "--x" overrides it (appending it to a copied command).
            const std::string spelling = negated ? name : spec->name;
            if (spec->name != "--help" && !seen.insert(spelling).second) return repeated(spelling);
            args.add_flag(spec->name, inline_value ? *inline_value : negated ? "false" : "true");
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= argv.size()) return Error{name, "needs a value (" + spec->value_name + ")"};
            inline_value = argv[++i];
        }
        if (!seen.insert(spec->name).second) return repeated(spec->name);
        args.add_flag(spec->name, *inline_value);
    }
    return args;
}

std::string command_help(const Command& command) {
    std::ostringstream out;
    out << "usage: " << command.usage << "\n\n" << command.summary << "\n";
    if (!command.description.empty()) out << "\n" << command.description << "\n";
    auto list = [&](const std::vector<FlagSpec>& specs) {
        for (const FlagSpec& spec : specs) {
            std::string left = spec.name;
            if (!spec.value_name.empty())
                left += " " + spec.value_name;
            else if (find_field_by_flag(spec.name))
                left += ", --no-" + spec.name.substr(2);
            constexpr size_t kColumn = 30;  // help text column; longer flag spellings wrap
            out << "  " << left;
            if (left.size() + 2 > kColumn)
                out << "\n" << std::string(kColumn + 2, ' ');
            else
                out << std::string(kColumn + 2 - left.size() - 2, ' ');
            out << spec.help << "\n";
        }
    };
    out << "\nflags:\n";
    std::vector<FlagSpec> own = command.flags;
    own.push_back({"--help", "", "show this help"});
    list(own);
    if (command.config_flags) {
        out << "\nconfig flags (a config/v1 file and/or flags; flags win):\n";
        list(config_flag_specs());
    }
    return out.str();
}

// [SECTION] Config from flags ----------------------------------------------------------------------

Result<Config> config_from_args(const Args& args) {
    auto draft = config_draft_from_args(args);
    if (!draft) return draft;
    return validate_config(std::move(draft).value());
}

Result<std::optional<std::string>> config_text_from_args(const Args& args) {
    const auto path = args.value("--config");
    if (!path) return std::optional<std::string>();
    auto text = read_text_file(*path);
    if (!text) return text.error();
    return std::optional<std::string>(std::move(text).value());
}

Result<Config> config_draft_from_args(const Args& args) {
    auto text = config_text_from_args(args);
    if (!text) return text.error();
    return config_draft_from_args(args, text.value());
}

Result<Config> config_draft_from_args(const Args& args, const std::optional<std::string>& config_text) {
    Config config = config_draft();
    if (const auto path = args.value("--config"); path && config_text) {
        auto merged = merge_config_json(std::move(config), *config_text);
        const std::string file = *path == "-" ? "<stdin>" : *path;
        if (!merged) {
            const Error& error = merged.error();
            return Error{file + (error.key.empty() ? "" : ": " + error.key), error.message};
        }
        config = std::move(merged).value();
    }
    // --fp8-recipe changes the precision, so it applies after --precision wherever it is given.
    std::vector<std::pair<std::string, std::string>> flags;
    for (const auto& [flag, value] : args.flags()) {
        if (flag == "--memory-headroom") {  // "10%" is memory_headroom_pct, "8" memory_headroom_gib (issue 25 item 9)
            const bool percent = !value.empty() && value.back() == '%';
            if (args.has("--memory-headroom-pct") || args.has("--memory-headroom-gib"))
                return Error{"--memory-headroom", "given with --memory-headroom-" +
                                                      std::string(args.has("--memory-headroom-pct") ? "pct" : "gib") + ": give one"};
            flags.emplace_back(percent ? "--memory-headroom-pct" : "--memory-headroom-gib",
                               percent ? value.substr(0, value.size() - 1) : value);
        } else if (flag != "--fp8-recipe") {
            flags.emplace_back(flag, value);
        }
    }
    for (const auto& [flag, value] : args.flags())
        if (flag == "--fp8-recipe") flags.emplace_back(flag, value);
    for (const auto& [flag, value] : flags) {
        const ConfigField* field = find_field_by_flag(flag);
        if (!field) continue;
        std::string text = value;
        const bool inline_text = value.rfind('~', 0) == 0 || value.rfind('{', 0) == 0;
        // --calibration FILE; --model/--gpu/... FILE when it names a file (a config/v1 object or an HF config.json).
        const bool spec_file = field->type == FieldType::spec && names_file(value);
        if ((field->type == FieldType::object || spec_file) && !inline_text) {
            auto contents = read_text_file(value);
            if (!contents) return contents.error();
            text = std::move(contents).value();
        }
        auto updated = set_config_field(std::move(config), *field, text, flag);
        if (!updated) return updated.error();
        config = std::move(updated).value();
        // A calibration read from a file is named by it in every output (issue 25 item 4), unless it names itself.
        if (field->path == "calibration" && config.calibration.name.empty())
            config.calibration.name = inline_text ? "--calibration (inline)" : value == "-" ? "<stdin>" : value;
        if (field->path == "calibration.precision_blind" && config.calibration.name.empty() && config.calibration.precision_blind)
            config.calibration.name = "--precision-blind";
    }
    return config;
}

std::string framework_text(const Config& c) {
    return c.framework.name.empty() ? "none (" + std::string(kDefaultFrameworkEquivalent) + " defaults)" : c.framework.name;
}

std::string calibration_lines(const Config& c) {
    std::string out = calibration_summary(c) + "\n";
    if (const std::optional<CalibrationUse> use = calibration_use(c))
        for (const std::string& warning : use->warnings) out += "  warning: " + warning + "\n";
    return out;
}

// [SECTION] Errors and files -----------------------------------------------------------------------

int report_error(const Error& error) {
    std::cerr << "trainclock: error: " << error.to_string() << "\n";
    return kExitBadInput;
}

bool names_file(std::string_view value) {
    return value == "-" || value.find('/') != std::string_view::npos || (value.size() > 5 && value.substr(value.size() - 5) == ".json");
}

namespace {
// Reads at most kMaxInputBytes + 1 bytes: /dev/zero or /dev/urandom as a config ends with an error, not an endless read.
Result<std::string> read_capped(std::istream& in, const std::string& name) {
    std::string text;
    char buffer[1 << 16];
    while (in && text.size() <= kMaxInputBytes) {
        in.read(buffer, sizeof buffer);
        text.append(buffer, size_t(in.gcount()));
    }
    if (text.size() > kMaxInputBytes)
        return Error{name, "larger than the " + std::to_string(kMaxInputBytes >> 20) +
                               " MiB limit on input files (a config, preset or measurement file is far smaller)"};
    if (in.bad()) return Error{name, "cannot read file"};
    return text;
}
}  // namespace

Result<std::string> read_text_file(const std::string& path) {
    if (path == "-") return read_capped(std::cin, "<stdin>");
    // A directory opens, but reading it throws from libstdc++'s filebuf: refuse it first.
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) return Error{path, "is a directory, not a file"};
    std::ifstream file(path, std::ios::binary);
    if (!file) return Error{path, "cannot open file"};
    return read_capped(file, path);
}

// [SECTION] Formatting -----------------------------------------------------------------------------

std::string format_fixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

namespace {
// Three significant digits: 1.23, 12.3, 123, 1234.
std::string three_digits(double value) {
    const double magnitude = std::fabs(value);
    return format_fixed(value, magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2);
}
}  // namespace

std::string format_seconds(double seconds) {
    if (!std::isfinite(seconds)) return "n/a";
    if (seconds == 0) return "0 s";
    if (seconds < 1e-3) return three_digits(seconds * 1e6) + " us";
    if (seconds < 1) return three_digits(seconds * 1e3) + " ms";
    if (seconds < 120) return three_digits(seconds) + " s";
    if (seconds < 7200) return three_digits(seconds / 60) + " min";
    if (seconds < 3 * 86400) return three_digits(seconds / 3600) + " h";
    if (seconds < 730 * 86400) return three_digits(seconds / 86400) + " days";
    return three_digits(seconds / (365.25 * 86400)) + " years";
}

namespace {
// Scales by thousands: returns the mantissa's three digits and the prefix index (0..6).
std::string scaled(double value, int* index) {
    *index = 0;
    while (std::fabs(value) >= 999.5 && *index < 6) {
        value /= 1000;
        ++*index;
    }
    return three_digits(value);
}
}  // namespace

std::string format_si(double value, std::string_view unit) {
    static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!std::isfinite(value)) return "n/a";
    int index = 0;
    const std::string digits = scaled(value, &index);
    return digits + " " + kPrefixes[index] + std::string(unit);
}

std::string format_count(double value, std::string_view unit) {
    static const char* const kPrefixes[] = {"", " k", " M", " B", " T", " P", " E"};
    if (!std::isfinite(value)) return "n/a";
    int index = 0;
    const std::string digits = scaled(value, &index);
    return digits + kPrefixes[index] + (unit.empty() ? "" : " " + std::string(unit));
}

std::string format_percent(double fraction) { return format_fixed(fraction * 100, 1) + " %"; }
std::string format_usd(double usd) {
    if (!std::isfinite(usd)) return "n/a";
    if (usd != 0 && std::fabs(usd) < 0.01) {  // a step's cost: two significant digits, not "$0.00"
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "$%.2g", usd);
        return buffer;
    }
    return "$" + format_count(usd, "");
}
std::string format_signed_percent(double fraction) { return (fraction >= 0 ? "+" : "") + format_percent(fraction); }

std::string TextTable::render(std::string_view indent) const {
    std::vector<size_t> widths;
    std::vector<bool> numeric;  // right-align columns whose body cells all look like numbers
    for (size_t r = 0; r < rows_.size(); ++r) {
        const auto& row = rows_[r];
        if (widths.size() < row.size()) {
            widths.resize(row.size(), 0);
            numeric.resize(row.size(), true);
        }
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], row[i].size());
            const bool number_like = row[i].empty() || std::isdigit(static_cast<unsigned char>(row[i][0])) ||
                                     std::string_view("-+$.").find(row[i][0]) != std::string_view::npos;
            if (r > 0 && !number_like) numeric[i] = false;
        }
    }
    std::string out;
    for (const auto& row : rows_) {
        std::string line(indent);
        for (size_t i = 0; i < row.size(); ++i) {
            const std::string pad(widths[i] - row[i].size(), ' ');
            if (i > 0) line += "  ";
            line += (i > 0 && numeric[i]) ? pad + row[i] : row[i] + pad;
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

}  // namespace trainclock::cli
