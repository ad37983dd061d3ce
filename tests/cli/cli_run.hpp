// Runs build/bin/trainclock for the CLI end-to-end tests (test_*.cpp here): exit code, stdout,
// stderr; TRAINCLOCK_CLI in the environment runs another binary (e.g. a baseline, to show that a
// regression test fails before its fix).
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli_test {

struct Run {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// Per-process file names: ctest -j runs the test cases of this program in parallel processes.
inline std::string work_path(const std::string& name) {
    return std::string(TRAINCLOCK_CLI_WORK_DIR) + "/" + std::to_string(getpid()) + "-" + name;
}

// The binary under test: TRAINCLOCK_CLI from the environment, else this build's.
inline std::string cli_path() {
    const char* cli = std::getenv("TRAINCLOCK_CLI");
    return cli && *cli ? cli : TRAINCLOCK_CLI;
}

// Runs a shell command line (sh -c) with optional stdin text, in the folder `cwd` when one is given.
inline Run shell(const std::string& command_line, const std::string& input = "", const std::string& cwd = "") {
    const std::string in = work_path("stdin.txt"), out = work_path("stdout.txt"), err = work_path("stderr.txt");
    std::ofstream(in) << input;
    const std::string command =
        (cwd.empty() ? "" : "cd '" + cwd + "' && ") + "{ " + command_line + "; } <'" + in + "' >'" + out + "' 2>'" + err + "'";
    const int status = std::system(command.c_str());
    Run run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = slurp(out);
    run.err = slurp(err);
    for (const std::string& path : {in, out, err}) std::remove(path.c_str());
    return run;
}

// Runs the CLI with `args` (shell words, already quoted where needed) and optional stdin text,
// in the folder `cwd` when one is given.
inline Run trainclock(const std::string& args, const std::string& input = "", const std::string& cwd = "") {
    return shell("'" + cli_path() + "' " + args, input, cwd);
}

inline bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// The number after the first "key": in a JSON text (the CLI's result JSON), NaN when absent.
inline double json_number(const std::string& json, const std::string& key) {
    const std::string needle = "\"" + key + "\": ";
    const size_t at = json.find(needle);
    return at == std::string::npos ? std::nan("") : std::strtod(json.c_str() + at + needle.size(), nullptr);
}

inline size_t lines(const std::string& text) {
    size_t n = 0;
    for (const char c : text) n += c == '\n' ? 1 : 0;
    return n;
}

// A bad input: exit 2, nothing on stdout, one line "trainclock: error: <key>: <reason>" on stderr.
inline void check_rejected(const std::string& args, const std::string& key, const std::string& input = "") {
    INFO("trainclock " << args);
    const Run run = trainclock(args, input);
    CHECK(run.exit_code == 2);
    CHECK(run.out.empty());
    CHECK(lines(run.err) == 1);
    CHECK(run.err.rfind("trainclock: error: " + key + ": ", 0) == 0);
    INFO(run.err);
}

}  // namespace cli_test
