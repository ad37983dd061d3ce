// Regression tests of issue 25 (the first hour of a new user): each input used to hang, pass
// silently or be refused wrongly. Run against an older binary with
// TRAINCLOCK_CLI=/path/to/trainclock build/bin/trainclock_cli_tests "[issue25]" to see them fail.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

const std::string kSmall = "--model gpt2 --gpu h100-sxm";

// The CLI under `timeout`: an endless read is a failed test (exit 124), not a hung test suite.
Run bounded(const std::string& args, const std::string& input = "") { return shell("timeout 60 '" + cli_path() + "' " + args, input); }

}  // namespace

TEST_CASE("file reads are capped: a device or huge file is refused naming the file and the limit", "[issue25]") {
    for (const char* args : {"predict --config /dev/zero", "predict --config /dev/urandom", "predict --model /dev/zero --gpu h100-sxm",
                             "calibrate --measurements /dev/zero"}) {
        INFO(args);
        const Run run = bounded(args);
        CHECK(run.exit_code == 2);
        CHECK(has(run.err, "/dev/"));
        CHECK(has(run.err, "16 MiB"));
        CHECK(lines(run.err) == 1);
    }
    // stdin too: 17 MiB of spaces on --config - is refused, not read whole.
    const Run in = bounded("predict --config -", std::string(size_t(17) << 20, ' '));
    CHECK(in.exit_code == 2);
    CHECK(has(in.err, "<stdin>"));
    CHECK(has(in.err, "16 MiB"));
}

TEST_CASE("an error echoes at most about 100 characters of a bad value", "[issue25]") {
    const std::string huge(100000, 'x');
    for (const std::string& args : {"predict --model " + huge + " --gpu h100-sxm", "predict " + kSmall + " --tp " + huge,
                                    "predict " + kSmall + " --precision " + huge, "link decode 'v=1&m=" + huge + "'"}) {
        const Run run = bounded(args);
        INFO(run.err.substr(0, 300));
        CHECK(run.exit_code == 2);
        CHECK(run.err.size() < 400);
        CHECK(has(run.err, std::string(100, 'x') + "..."));
    }
    // A short value is echoed whole.
    const Run short_value = bounded("predict --model nosuchmodel --gpu h100-sxm");
    CHECK(has(short_value.err, "'nosuchmodel'"));
}
