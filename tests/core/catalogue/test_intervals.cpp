// Tests of trainclock/intervals.hpp: family-weighted ranges around the estimate (counted coverage),
// the group of a config and its fallbacks, the widening by distance to the evidence and its reason,
// the result JSON fields, the estimate inside its range for every preset combination, the coverage
// of the range under cross-source, and that the embedded table is what
// `trainclock validate --cross-source --write-intervals` regenerates.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "trainclock/api/api.hpp"
#include "trainclock/catalogue/intervals.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/validation/fit.hpp"
#include "model_fixtures.hpp"
#include "validation/shipped_cross_source.hpp"

using namespace trainclock;

namespace {

IntervalResidual residual(const std::string& group, const std::string& family, double ratio) {
    IntervalResidual r;
    r.groups = {group, "*|*|*"};
    r.axes = {"hopper", "megatron-lm", "9-64", "dense", "full", "16-bit"};
    r.family = family;
    r.ratio = ratio;
    return r;
}

const IntervalRow* row_of(const IntervalTable& table, const std::string& group) {
    for (const IntervalRow& row : table.rows)
        if (row.group == group) return &row;
    return nullptr;
}

// The fraction of residuals of `family` ("" = all) inside a row.
double inside(const std::vector<IntervalResidual>& residuals, const IntervalRow& row, const std::string& family = "") {
    int64_t n = 0, in = 0;
    for (const IntervalResidual& r : residuals) {
        if (!family.empty() && r.family != family) continue;
        ++n;
        in += r.ratio >= row.low && r.ratio <= row.high;
    }
    return n ? double(in) / double(n) : 0.0;
}

}  // namespace

TEST_CASE("an interval row holds 80 % of its cases per case and per family, around the estimate", "[intervals]") {
    std::vector<IntervalResidual> residuals;
    // Family a: 40 cases spread 0.80 .. 1.19; family b: 5 cases near 1.5 (one witness as heavy as a).
    for (int i = 0; i < 40; ++i) residuals.push_back(residual("x|hopper|16-bit", "a", 0.80 + 0.01 * i));
    for (int i = 0; i < 5; ++i) residuals.push_back(residual("x|hopper|16-bit", "b", 1.48 + 0.01 * i));
    for (int i = 0; i < 4; ++i) residuals.push_back(residual("y|hopper|16-bit", "c", 1.0));
    const IntervalTable table = interval_table_base(residuals);
    CHECK(row_of(table, "y|hopper|16-bit") == nullptr);  // 4 < kMinIntervalCases cases
    const IntervalRow* row = row_of(table, "x|hopper|16-bit");
    REQUIRE(row != nullptr);
    CHECK(row->cases == 45);
    CHECK(row->families == 2);
    CHECK(row->low <= 1.0);
    CHECK(row->high >= 1.0);
    std::vector<IntervalResidual> x(residuals.begin(), residuals.begin() + 45);
    CHECK(inside(x, *row) >= 0.8);
    // Per family: the mean of a's and b's coverage; b's cases count as much as a's, so the range reaches 1.5
    // (weighted per case, 80 % of the 45 cases would not need b at all).
    CHECK(0.5 * inside(x, *row, "a") + 0.5 * inside(x, *row, "b") >= 0.8);
    CHECK(row->high >= 1.48);
}

TEST_CASE("a group whose errors all lie above 1 starts its range at the estimate", "[intervals]") {
    std::vector<IntervalResidual> residuals;
    for (int i = 0; i < 20; ++i) residuals.push_back(residual("x|blackwell|16-bit", "a", 1.10 + 0.01 * i));
    const IntervalTable table = interval_table_base(residuals);
    const IntervalRow* row = row_of(table, "x|blackwell|16-bit");
    REQUIRE(row != nullptr);
    CHECK(row->low == 1.0);  // the estimate is inside: never [1.1x, 1.3x]
    CHECK(inside(residuals, *row) >= 0.8);
    CHECK(inside(residuals, *row) <= 0.85 + 1e-9);  // the shortest such range: not the whole spread
}

TEST_CASE("a range is chosen by the cases its written ends hold: rounding up to 0.001 takes no case past the cap", "[intervals]") {
    // 20 cases: one at 0.90, 14 at 1.01 .. 1.14, then 1.1495 and three within 0.001 above 1.1505. From
    // the estimate, 80 % of the cases end at 1.1505, which the file writes as 1.151: 18 cases, 90 %.
    std::vector<IntervalResidual> residuals{residual("x|blackwell|16-bit", "a", 0.90)};
    for (int i = 1; i <= 14; ++i) residuals.push_back(residual("x|blackwell|16-bit", "a", 1.0 + 0.01 * i));
    for (double ratio : {1.1495, 1.1505, 1.1507, 1.1509, 1.30}) residuals.push_back(residual("x|blackwell|16-bit", "a", ratio));
    const IntervalTable table = interval_table_base(residuals);  // the row points into it
    const IntervalRow* row = row_of(table, "x|blackwell|16-bit");
    REQUIRE(row != nullptr);
    CHECK(inside(residuals, *row) >= 0.8);
    CHECK(inside(residuals, *row) <= 0.85 + 1e-9);
    CHECK(row->low == Approx(0.9));  // reaching down to 0.90 instead: 16 cases, 80 %
}

TEST_CASE("the likely range of a value is the value times the row's low and high", "[intervals]") {
    const IntervalRow row{"*|*|*", 12, 3, 0.75, 1.25};
    const LikelyRange range = likely_range(row, 2.0);
    CHECK(range.low == 1.5);  // 2 x 0.75 and 2 x 1.25, exact in binary
    CHECK(range.high == 2.5);
    CHECK(likely_range(row, 0.0).high == 0.0);  // no time (no run length): no range
}

TEST_CASE("a config far from the evidence is widened by its axis's factor and the reason names the axis", "[intervals]") {
    IntervalTable table;
    table.rows.push_back({"*|*|*", 100, 4, 0.8, 1.25});
    for (size_t a = 0; a < kIntervalAxisCount; ++a)
        table.widening.push_back({std::string(interval_axis_name(IntervalAxis(a))), a == size_t(IntervalAxis::moe) ? 1.5 : 1.1, 10, 2});
    const IntervalAxes near{"hopper", "megatron-lm", "9-64", "dense", "full", "16-bit"};
    table.evidence.push_back({near, 100, {"f1", "f2"}});

    const auto same = likely_interval(table, {"*|*|*"}, near, "h100-sxm");
    REQUIRE(same);
    CHECK(same->widening == 1.0);
    CHECK(same->widened_by.empty());
    CHECK(same->low == 0.8);
    CHECK(same->nearest_cases == 100);
    CHECK(same->nearest_families == std::vector<std::string>{"f1", "f2"});

    IntervalAxes moe = near;
    moe[size_t(IntervalAxis::moe)] = "moe";
    moe[size_t(IntervalAxis::gpu_generation)] = "blackwell";
    const auto far = likely_interval(table, {"*|*|*"}, moe, "gb300");
    REQUIRE(far);
    CHECK(far->widening == 1.5);  // the largest of the differing axes' factors
    CHECK(far->widened_by == std::vector<std::string>{"gpu_generation", "moe"});
    CHECK(far->low == Approx(0.8 / 1.5));
    CHECK(far->high == Approx(1.25 * 1.5));
    CHECK(far->reason.find("no validation case on gb300 (blackwell) with MoE") != std::string::npos);
    CHECK(!likely_interval(table, {"x|y|z"}, near));  // no row answers
}

TEST_CASE("the interval table file reads back what it writes and refuses an old shape", "[intervals]") {
    IntervalTable table;
    table.rows.push_back({"*|*|*", 100, 4, 0.8, 1.25});
    table.widening.push_back({"moe", 1.2, 3, 1});
    table.evidence.push_back({{"hopper", "jax", "1", "dense", "lora", "fp8"}, 7, {"a", "b"}});
    const auto parsed = parse_interval_table(interval_table_json(table));
    REQUIRE(parsed);
    CHECK(interval_table_json(parsed.value()) == interval_table_json(table));
    CHECK(parsed.value().evidence[0].axes[1] == "jax");
    CHECK(!parse_interval_table(R"({"schema_version":1,"rows":[]})"));
}

TEST_CASE("a config's interval groups go from framework x generation x precision family to any", "[intervals]") {
    const char* json = R"({"schema":"trainclock/config/v1","model":"llama3-8b","gpu":"h100-sxm","num_gpus":8,
        "precision":"bf16-mixed","training":{"seq_len":4096,"global_batch":64,"micro_batch":1}})";
    Config c = load_config(json).value();
    const std::vector<std::string> groups = interval_groups(c);
    REQUIRE(groups.size() == 4);
    CHECK(groups[0] == std::string(kDefaultFramework) + "|hopper|16-bit");  // no framework named: the default
    CHECK(groups[1] == "*|hopper|16-bit");
    Config none = c;
    none.framework = FrameworkSpec{};  // framework "none": the preset it equals
    CHECK(interval_groups(none)[0] == "megatron-lm|hopper|16-bit");
    CHECK(groups[3] == "*|*|*");
    const IntervalAxes axes = interval_axes(c);
    CHECK(axes[size_t(IntervalAxis::scale_gpus)] == "2-8");
    CHECK(axes[size_t(IntervalAxis::moe)] == "dense");
    const IntervalRow* row = find_interval(c);
    REQUIRE(row != nullptr);
    CHECK(row->cases >= kMinIntervalCases);
    CHECK(row->low <= row->high);
    const auto interval = likely_interval(c);
    REQUIRE(interval);
    const std::string out = predict_json(json);
    CHECK(out.find("\"iteration_time_s_low\"") != std::string::npos);
    CHECK(out.find("\"cost_usd_high\"") != std::string::npos);
    CHECK(out.find("\"interval_cases\":" + std::to_string(row->cases)) != std::string::npos);
    CHECK(out.find("\"interval_families\":" + std::to_string(row->families)) != std::string::npos);
    CHECK(out.find("\"interval_nearest_cases\":" + std::to_string(interval->nearest_cases)) != std::string::npos);
    for (const char* key : {"\"interval_widened_by\"", "\"interval_nearest_families\"", "\"interval_reason\"", "\"interval_widening\""})
        CHECK(out.find(key) != std::string::npos);
}

TEST_CASE("the estimate is inside its likely range for every model x GPU x precision x framework preset", "[intervals][exhaustive]") {
    const fixtures::PresetGrid grid = fixtures::every_preset();
    const std::vector<ModelSpec>& models = grid.models;
    const std::vector<GpuSpec>& gpus = grid.gpus;
    const std::vector<PrecisionSpec>& precisions = grid.precisions;
    const std::vector<FrameworkSpec>& frameworks = grid.frameworks;  // and no framework
    REQUIRE(models.size() > 10);
    Config c;
    const int64_t scales[] = {1, 8, 64, 512, 4096, 16384};
    int64_t checked = 0, failed = 0, widened = 0;
    for (size_t m = 0; m < models.size(); ++m) {
        c.model = models[m];
        c.training.finetune.method = m % 3 == 0 ? FinetuneMethod::lora : FinetuneMethod::full;
        for (const GpuSpec& gpu : gpus) {
            c.gpu = gpu;
            for (const PrecisionSpec& precision : precisions) {
                c.precision = precision;
                for (size_t f = 0; f < frameworks.size(); ++f) {
                    c.framework = frameworks[f];
                    c.num_gpus = scales[(m + f) % 6];
                    const auto interval = likely_interval(c);
                    ++checked;
                    if (!interval) {
                        ++failed;
                        continue;
                    }
                    widened += interval->widening > 1;
                    const LikelyRange range = likely_range(*interval, 1.234);
                    if (!(range.low <= 1.234 && 1.234 <= range.high && interval->low > 0 && !interval->reason.empty())) ++failed;
                }
            }
        }
    }
    INFO(checked << " combinations");
    CHECK(failed == 0);
    CHECK(widened > 0);
    // Through the public API: a prediction's range holds its estimate (one model per GPU and precision).
    for (const auto& gpu : preset_names(PresetKind::gpu)) {
        for (const auto& precision : preset_names(PresetKind::precision)) {
            const std::string out =
                predict_json(R"({"schema":"trainclock/config/v1","model":"llama3-8b","gpu":")" + gpu + R"(","num_gpus":8,"precision":")" +
                             precision + R"(","training":{"seq_len":2048,"global_batch":16,"micro_batch":1}})");
            const auto number = [&](const std::string& key) {
                const size_t at = out.find("\"" + key + "\":");
                return at == std::string::npos ? -1.0 : std::stod(out.substr(at + key.size() + 3));
            };
            const double low = number("iteration_time_s_low"), value = number("iteration_time_s"), high = number("iteration_time_s_high");
            if (low < 0) continue;  // an unsupported precision on this GPU: an error, no range
            INFO(gpu << " " << precision);
            CHECK(low <= value);
            CHECK(value <= high);
        }
    }
}

TEST_CASE("the 80 % range holds 75-85 % of the cases under cross-source, overall and per group", "[intervals][slow][cross-source]") {
    const std::vector<IntervalResidual> residuals = cross_source_residuals(fixtures::shipped_suite(), fixtures::shipped_cross_source());
    const IntervalCoverage coverage = interval_coverage(residuals, interval_table(residuals));
    const CoverageGroup* all = coverage.find(coverage.cross_source, "all", "all");
    REQUIRE(all != nullptr);
    CHECK(all->cases > 1000);
    CHECK(all->coverage >= 0.75);
    CHECK(all->coverage <= 0.85);
    for (const CoverageGroup& g : coverage.cross_source) {
        if (g.kind != "group" || g.cases < 20) continue;
        INFO(g.name << ": " << g.cases << " cases");
        CHECK(g.coverage >= 0.75);
        CHECK(g.coverage <= 0.85 + 1e-9);  // a small family far off does not stretch a row past 85 % of its cases
    }
    // A family the table never saw (rebuilt without it, widened by distance): each family one witness.
    const CoverageGroup* held = coverage.find(coverage.held_out, "all", "all");
    REQUIRE(held != nullptr);
    CHECK(held->by_family >= 0.65);
    CHECK(held->coverage >= 0.65);
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
