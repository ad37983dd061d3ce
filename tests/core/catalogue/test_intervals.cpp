// Tests of trainclock/intervals.hpp: percentile bands from residuals (hand-computed quantiles),
// the group of a config and its fallbacks, the result JSON fields, and that the embedded table is
// what `trainclock validate --cross-source --write-intervals` regenerates.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainclock/api/api.hpp"
#include "trainclock/catalogue/intervals.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/validation/fit.hpp"
#include "validation/shipped_cross_source.hpp"

using namespace trainclock;

TEST_CASE("interval rows are the 10th-90th percentile of each group with enough cases", "[intervals]") {
    std::vector<std::pair<std::vector<std::string>, double>> residuals;
    for (int i = 1; i <= 10; ++i) residuals.push_back({{"a|hopper|fp8", "*|*|*"}, double(i)});
    for (int i = 0; i < 4; ++i) residuals.push_back({{"b|hopper|fp8", "*|*|*"}, 2.0});
    const std::vector<IntervalRow> rows = interval_rows(residuals);
    REQUIRE(rows.size() == 2);  // b has 4 < kMinIntervalCases cases
    CHECK(rows[0].group == "*|*|*");
    CHECK(rows[0].cases == 14);
    CHECK(rows[1].group == "a|hopper|fp8");
    // Type-7 quantiles of 1..10: 1 + 0.1 * 9 = 1.9 and 1 + 0.9 * 9 = 9.1.
    CHECK(rows[1].low == Approx(1.9));
    CHECK(rows[1].high == Approx(9.1));
}

TEST_CASE("the likely range of a value is the value times the row's low and high percentile", "[intervals]") {
    const IntervalRow row{"*|*|*", 12, 0.75, 1.25};
    const LikelyRange range = likely_range(row, 2.0);
    CHECK(range.low == 1.5);  // 2 x 0.75 and 2 x 1.25, exact in binary
    CHECK(range.high == 2.5);
    CHECK(likely_range(row, 0.0).high == 0.0);  // no time (no run length): no range
}

TEST_CASE("a config's interval groups go from framework x generation x precision family to any", "[intervals]") {
    Config c = load_config(R"({"schema":"trainclock/config/v1","model":"llama3-8b","gpu":"h100-sxm","num_gpus":8,
        "precision":"bf16-mixed","training":{"seq_len":4096,"global_batch":64,"micro_batch":1}})")
                   .value();
    const std::vector<std::string> groups = interval_groups(c);
    REQUIRE(groups.size() == 4);
    CHECK(groups[0] == "megatron-lm|hopper|16-bit");  // no framework: the preset it equals
    CHECK(groups[1] == "*|hopper|16-bit");
    CHECK(groups[3] == "*|*|*");
    const IntervalRow* row = find_interval(c);
    REQUIRE(row != nullptr);
    CHECK(row->cases >= kMinIntervalCases);
    CHECK(row->low <= row->high);
    const std::string json = predict_json(R"({"schema":"trainclock/config/v1","model":"llama3-8b","gpu":"h100-sxm",
        "num_gpus":8,"precision":"bf16-mixed","training":{"seq_len":4096,"global_batch":64,"micro_batch":1}})");
    CHECK(json.find("\"iteration_time_s_low\"") != std::string::npos);
    CHECK(json.find("\"cost_usd_high\"") != std::string::npos);
    CHECK(json.find("\"interval_cases\":" + std::to_string(row->cases)) != std::string::npos);
}

TEST_CASE("the embedded interval table is what --write-intervals regenerates", "[intervals][slow][cross-source]") {
    const std::string regenerated =
        interval_table_json(cross_source_intervals(fixtures::shipped_suite(), fixtures::shipped_cross_source()));
    std::string embedded;
    for (const auto& preset : embedded_presets())
        if (preset.kind == PresetKind::interval && preset.name == "cross-source") embedded = std::string(preset.json);
    INFO("regenerate: build/bin/trainclock validate --cross-source --write-intervals presets/intervals/cross-source.json");
    CHECK(regenerated == embedded);
}
