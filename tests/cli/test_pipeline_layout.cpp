// End-to-end: --pipeline-layout (parallel.pipeline_layout, Megatron-Core's --pipeline-model-parallel-layout)
// predicts, is refused with one line naming the key (exit 2), shows in the layout line and round-trips
// through link encode / decode.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.hpp"

using namespace cli_test;

namespace {

// DeepSeek-V3 on 1024 H100 as Megatron-Bridge's recipe runs it (TP 2, PP 16, EP 64, expert TP 1).
const std::string kDeepSeek = "--model deepseek-v3 --gpu h100-sxm --gpus 1024 --tp 2 --pp 16 --ep 64 --expert-tp 1 --sp 1 --zero 1 "
                              "--seq 4096 --gbs 4096 --mbs 1 --recompute selective ";

}  // namespace

TEST_CASE("flag pipeline-layout: DeepSeek-V3's layout predicts, a bad one exits 2 naming the key", "[pipeline_layout]") {
    const Run ok = trainclock("predict " + kDeepSeek + "--pipeline-layout 'Et*4|(t*4|)*14,tmL'");
    CHECK(ok.exit_code == 0);
    CHECK(has(ok.out, "stages Et*4|(t*4|)*14,tmL"));
    const Run json = trainclock("predict " + kDeepSeek + "--pipeline-layout 'Et*4|(t*4|)*14,tmL' --json");
    CHECK(has(json.out, "\"pipeline_layout\": \"Et*4|(t*4|)*14,tmL\""));
    const Run stages = trainclock("predict " + kDeepSeek + "--pipeline-layout 'Et*3|(tt|)*29,m|L'");
    CHECK(stages.exit_code == 2);
    CHECK(has(stages.err, "parallel.pipeline_layout: has 32 stages, not pp x virtual_stages = 16 x 1 = 16"));
    CHECK(lines(stages.err) == 1);
    const Run layers = trainclock("predict " + kDeepSeek + "--pipeline-layout 'Et*4|(t*4|)*14,mL'");
    CHECK(layers.exit_code == 2);
    CHECK(has(layers.err, "holds 60 transformer layers t, the model has 61"));
    const Run link = trainclock("link encode " + kDeepSeek + "--pipeline-layout 'Et*4|(t*4|)*14,tmL'");
    REQUIRE(link.exit_code == 0);
    CHECK(has(link.out, "ppl=Et*4|(t*4|)*14,tmL"));
    std::string fragment = link.out.substr(0, link.out.find('\n'));
    const Run decoded = trainclock("link decode '" + fragment + "'");
    CHECK(decoded.exit_code == 0);
    CHECK(has(decoded.out, "\"pipeline_layout\": \"Et*4|(t*4|)*14,tmL\""));
}
