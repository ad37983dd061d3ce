// Issue 25 item 9 on the CLI: without --framework every command runs the default framework
// (megatron-core) and names it in its first line; --framework none keeps the old defaults; the help
// states the default; a link of version 1 (made when none was the default) still decodes to none.
// Run against an older binary with TRAINCLOCK_CLI=/path/to/trainclock to see them fail.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

const std::string kRun = "--model llama3.1-8b --gpu h100-sxm --gpus 8 --tp 4 --seq 4096 --gbs 64";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

TEST_CASE("without --framework predict, search, compare and plan run megatron-core and say so in their first line", "[framework]") {
    const Run plain = trainclock("predict " + kRun + " --json");
    const Run core = trainclock("predict " + kRun + " --framework megatron-core --json");
    const Run none = trainclock("predict " + kRun + " --framework none --json");
    REQUIRE(plain.exit_code == 0);
    REQUIRE(none.exit_code == 0);
    CHECK(plain.out == core.out);
    CHECK(plain.out != none.out);
    CHECK(has(none.out, "\"framework\": \"none\""));  // the config written back names it
    for (const std::string command : {"predict " + kRun, "search " + kRun + " --top 1", "compare " + kRun,
                                      std::string("plan --model llama3.1-8b --tokens 1e10 --gpu h100-sxm --max-gpus 8")}) {
        const Run run = trainclock(command);
        INFO(command << "\n" << run.err);
        REQUIRE(run.exit_code == 0);
        CHECK(has(first_line(run.out), "framework megatron-core"));
    }
    CHECK(has(first_line(trainclock("predict " + kRun + " --framework none").out), "framework none"));
    const Run help = trainclock("predict --help");
    CHECK(has(help.out, "(default: megatron-core)"));
}

TEST_CASE("link decode reads a version-1 link without fw as framework none, and link encode always writes fw", "[framework]") {
    const Run old_link = trainclock("link decode 'v=1&m=llama3.1-8b&g=h100-sxm&N=8&p=bf16-mixed&tp=4&seq=4096&gbs=64'");
    REQUIRE(old_link.exit_code == 0);
    CHECK(has(old_link.out, "\"framework\": \"none\""));
    const Run from_old = trainclock("predict --json --config -", old_link.out);
    const Run none = trainclock("predict " + kRun + " --framework none --json");
    CHECK(from_old.out == none.out);
    CHECK(has(trainclock("link encode " + kRun).out, "&fw=megatron-core"));
    CHECK(has(trainclock("link encode " + kRun + " --framework none").out, "&fw=none"));
}
