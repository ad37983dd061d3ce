// trainclock CLI entry point: dispatches to the commands that native/cmd_*.cpp register
// (cli_common.hpp). Bad input exits with 2 and one line on stderr; nothing escapes as a crash.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "trainclock/catalogue/presets.hpp"

namespace {

void print_overview(std::ostream& out) {
    out << "trainclock " << TRAINCLOCK_VERSION
        << ": predict the time and cost of training a transformer, as a function of precision,\n"
           "model, GPU, cluster and parallel layout.\n\n"
           "usage: trainclock <command> [flags]      (trainclock <command> --help for details)\n\ncommands:\n";
    for (const auto& command : trainclock::cli::commands()) {
        out << "  " << command.name << std::string(command.name.size() < 12 ? 12 - command.name.size() : 1, ' ') << command.summary << "\n";
    }
    out << "\nexample:\n  trainclock predict --model llama3-70b --gpu h100-sxm --gpus 1024 --tp 8 --pp 4 "
           "--seq 8192 --gbs 1024 --tokens 15e12\n";
}

int run(const std::vector<std::string>& argv) {
    using namespace trainclock::cli;
    if (argv.empty()) {
        print_overview(std::cerr);
        return kExitBadInput;
    }
    const std::string& name = argv[0];
    if (name == "--version" || name == "version") {
        std::cout << "trainclock " << TRAINCLOCK_VERSION << "\n";
        return kExitOk;
    }
    if (name == "--help" || name == "-h" || name == "help") {
        if (argv.size() > 1) {
            if (const Command* command = find_command(argv[1])) {
                std::cout << command_help(*command);
                return kExitOk;
            }
        }
        print_overview(std::cout);
        return kExitOk;
    }
    const Command* command = find_command(name);
    if (!command) {
        std::vector<std::string> names;
        for (const Command& c : commands()) names.push_back(c.name);
        const std::string guess = trainclock::did_you_mean(name, names);
        return report_error({name, "unknown command" + (guess.empty() ? "; see trainclock --help" : "; did you mean " + guess + "?")});
    }
    auto args = parse_args(*command, std::vector<std::string>(argv.begin() + 1, argv.end()));
    if (!args) return report_error(args.error());
    if (args.value().has("--help")) {
        std::cout << command_help(*command);
        return kExitOk;
    }
    return command->run(args.value());
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& exception) { std::cerr << "trainclock: internal error: " << exception.what() << "\n"; } catch (...) {
        std::cerr << "trainclock: internal error\n";
    }
    return trainclock::cli::kExitInternal;
}
