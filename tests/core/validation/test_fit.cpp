// Tests of trainclock/fit.hpp: the fitter recovers factors that generated the measurements, keeps
// to its bounds, refuses factors the cases do not constrain; the table of fitted constants; the
// leave-one-source-out refit; calibrate.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "perf/constants.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/validation/fit.hpp"
#include "validation/shipped_cross_source.hpp"

using namespace trainclock;

namespace {

// A validation file of small GPT-2 runs on A100s (sizes vary so GEMM- and memory-bound time mix).
std::string runs_file(const std::string& name, const std::vector<std::pair<int64_t, int64_t>>& gpus_and_seq) {
    std::string text = "{\"schema_version\":1,\n\"name\":\"" + name +
                       "\",\n\"set\":\"public\",\n"
                       "\"source\":\"unit test\",\n\"cases\":[\n";
    for (size_t i = 0; i < gpus_and_seq.size(); ++i) {
        const auto [gpus, seq] = gpus_and_seq[i];
        text += R"({"id":")" + name + "-" + std::to_string(i) +
                R"(","config":{"schema":"trainclock/config/v1","model":"gpt2-medium","gpu":"a100-sxm4-80gb","num_gpus":)" +
                std::to_string(gpus) + R"(,"precision":"bf16-mixed","framework":"none","training":{"seq_len":)" + std::to_string(seq) +
                R"(,"global_batch":)" + std::to_string(8 * gpus) +
                R"(,"micro_batch":4}},"measured":{"metric":"iteration_time_s","value":1},"citation":"test"})" +
                (i + 1 < gpus_and_seq.size() ? ",\n" : "\n");
    }
    return text + "]}\n";
}

FitParameter parameter(const std::string& name, FitKnob knob, double lo, double hi) {
    FitParameter p;
    p.name = name;
    p.knob = knob;
    p.lo = lo;
    p.hi = hi;
    return p;
}

// Replace every measurement by the prediction at `truth` (the data a perfect model would see).
void measure_at(ValidationSuite& suite, const FitProblem& problem, const std::vector<double>& truth) {
    for (size_t i = 0; i < suite.cases.size(); ++i) {
        Config config = suite.cases[i].config;
        problem.apply(i, truth, config);
        suite.cases[i].measured = predict(config).iteration_time_s;
    }
}

std::vector<size_t> every(const ValidationSuite& suite) {
    std::vector<size_t> all(suite.cases.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
}

}  // namespace

TEST_CASE("the fitter recovers the factors that produced the measurements", "[fit]") {
    ValidationSuite suite;
    parse_validation_file("runs.json", runs_file("runs", {{1, 256}, {1, 1024}, {2, 512}, {4, 2048}, {8, 128}, {8, 1024}}), suite);
    REQUIRE(suite.issues.empty());
    const FitProblem problem(suite, {parameter("gemm", FitKnob::gemm, 0.5, 1.5), parameter("memory", FitKnob::memory, 0.5, 1.5)});
    measure_at(suite, problem, {0.9, 1.2});
    FitOptions options;
    options.iterations = 6;
    const FitResult fit = problem.fit(every(suite), options);
    CHECK(fit.fitted[0]);
    CHECK(fit.fitted[1]);
    CHECK(fit.multipliers[0] == Approx(0.9).epsilon(0.01));
    CHECK(fit.multipliers[1] == Approx(1.2).epsilon(0.03));
    CHECK(fit.error_before > 0.02);
    CHECK(fit.error_after < 0.2 * fit.error_before);
}

TEST_CASE("the fitter keeps to its bounds and refuses unconstrained factors", "[fit]") {
    ValidationSuite suite;
    parse_validation_file("one.json", runs_file("one", {{1, 256}, {1, 512}, {1, 1024}, {1, 2048}}), suite);
    REQUIRE(suite.issues.empty());
    // Single-GPU runs move no bytes between nodes: the inter-node factor has zero sensitivity.
    const FitProblem problem(suite, {parameter("gemm", FitKnob::gemm, 0.8, 1.2), parameter("inter", FitKnob::inter_node, 0.5, 2.0)});
    measure_at(suite, problem, {0.6, 1.0});  // 0.6 lies outside [0.8, 1.2]
    const FitResult fit = problem.fit(every(suite));
    CHECK(fit.multipliers[0] == Approx(0.8));
    CHECK_FALSE(fit.fitted[1]);
    CHECK(fit.sensitivity[1] == Approx(0.0).margin(1e-12));
    CHECK(fit.multipliers[1] == 1.0);
}

TEST_CASE("the table of fitted constants names bounds, data set and refit command", "[fit]") {
    const std::vector<FittedConstant> table = fitted_constants();
    REQUIRE(table.size() >= 8);
    for (const FittedConstant& c : table) {
        INFO(c.parameter.name);
        CHECK(c.parameter.lo < 1.0);
        CHECK(c.parameter.hi > 1.0);
        CHECK(c.shipped > 0);
        CHECK_FALSE(c.data_set.empty());
        CHECK(c.refit_command.rfind("trainclock ", 0) == 0);
        CHECK_FALSE(c.source.empty());
    }
}

// The refit rows are the constants table's: each row with a refit knob has its own multiplier,
// bounded by the table's range around its value, limited to the cases the row names.
TEST_CASE("fitted_constants are the refit rows of the constants table", "[fit]") {
    const std::vector<FittedConstant> table = fitted_constants();
    size_t own = 0;
    for (const ModelConstant& c : model_constants()) {
        INFO(c.name);
        if (c.refit == FitKnob::none) continue;
        REQUIRE(own < table.size());
        const FittedConstant& row = table[own++];
        CHECK(row.parameter.name == c.name);
        CHECK(row.parameter.knob == c.refit);
        CHECK(row.parameter.attention_kernel == c.attention_kernel);
        CHECK(row.parameter.fp8_gpus == c.fp8_gpus);
        CHECK(row.shipped == c.value);
        CHECK(row.shipped * row.parameter.lo == Approx(c.low));
        CHECK(row.shipped * row.parameter.hi == Approx(c.high));
        CHECK(row.source == c.source);
    }
    CHECK(own == table.size());
}

// The two FlashAttention-2 factors (constants table attention_flash2, attention_flash2_fp8_gpus) scale
// disjoint GPUs: A100 has no FP8 units, H100 has.
TEST_CASE("each FA2 factor scales only its GPU generation", "[fit]") {
    std::string h100 = runs_file("h", {{1, 1024}});
    h100.replace(h100.find("a100-sxm4-80gb"), 14, "h100-sxm");
    ValidationSuite suite;
    parse_validation_file("a.json", runs_file("a", {{1, 1024}}), suite);
    parse_validation_file("h.json", h100, suite);
    REQUIRE(suite.issues.empty());
    std::vector<FitParameter> parameters;
    size_t ampere = 0, fp8 = 0;
    for (const FittedConstant& c : fitted_constants()) {
        if (c.parameter.name == "attention_flash2") ampere = parameters.size();
        if (c.parameter.name == "attention_flash2_fp8_gpus") fp8 = parameters.size();
        parameters.push_back(c.parameter);
    }
    REQUIRE(ampere != fp8);
    const FitProblem problem(suite, parameters);
    auto attention = [&](size_t index, size_t factor) {
        std::vector<double> m(parameters.size(), 1.0);
        m[factor] = 1.5;
        Config config = suite.cases[index].config;
        problem.apply(index, m, config);
        return config.calibration.per_gpu.empty() ? 0.0 : config.calibration.per_gpu.back().second.attention_efficiency.value_or(0.0);
    };
    const Calibration a100 = resolve_calibration(suite.cases[0].config.gpu, {}, AttentionKernel::flash2, &suite.cases[0].config.framework);
    const Calibration h = resolve_calibration(suite.cases[1].config.gpu, {}, AttentionKernel::flash2, &suite.cases[1].config.framework);
    CHECK(attention(0, ampere) == Approx(1.5 * a100.attention_efficiency));
    CHECK(attention(0, fp8) == 0.0);
    CHECK(attention(1, fp8) == Approx(1.5 * h.attention_efficiency));
    CHECK(attention(1, ampere) == 0.0);
}

TEST_CASE("cross-source refits without the family it scores", "[fit]") {
    ValidationSuite suite;
    parse_validation_file("a.json", runs_file("a", {{1, 256}, {2, 1024}, {8, 512}}), suite);
    parse_validation_file("b.json", runs_file("b", {{1, 2048}, {4, 128}, {8, 2048}}), suite);
    REQUIRE(suite.issues.empty());
    std::vector<FitParameter> parameters;
    for (const FittedConstant& c : fitted_constants()) parameters.push_back(c.parameter);
    const FitProblem problem(suite, parameters);
    std::vector<double> truth(parameters.size(), 1.0);
    truth[0] = 0.9;  // gemm_sustained
    measure_at(suite, problem, truth);
    const CrossSourceReport report = run_cross_source(suite);
    REQUIRE(report.families == std::vector<std::string>{"a", "b"});
    const FitResult only_b = problem.fit({3, 4, 5});
    CHECK(report.fold_fits[0].multipliers == only_b.multipliers);
    CHECK(source_family("vtrain-multi") == "vtrain");
    CHECK(source_family("megatron-sc21") == source_family("korthikanti22"));
    // Each case of family a is scored at the fit without a.
    Config config = suite.cases[0].config;
    problem.apply(0, only_b.multipliers, config);
    CHECK(report.cross_source.cases[0].predicted == Approx(predict(config).iteration_time_s));
}

namespace {

// The llm-foundry H100 rows (mosaicml/llm-foundry benchmarking README, presets/validation).
ValidationSuite foundry_h100() {
    ValidationSuite all = load_validation_suite();
    ValidationSuite out;
    for (auto& c : all.cases)
        if (c.file == "mosaic-llm-foundry" && c.config.gpu.name == "h100-sxm") out.cases.push_back(std::move(c));
    return out;
}

double mape(const ValidationReport& report) { return report.find("set", "public")->mape; }

}  // namespace

// Issue 11's "done when": calibrating on 3 measured runs of one stack and GPU cuts the error on the
// other runs of that stack (the first 3 llm-foundry H100 rows in file order; 74 others scored).
TEST_CASE("calibrate on three runs of a stack cuts the error on its other runs", "[fit][calibrate]") {
    ValidationSuite rest = foundry_h100();
    REQUIRE(rest.cases.size() > 50);
    ValidationSuite three;
    three.cases.assign(rest.cases.begin(), rest.cases.begin() + 3);
    rest.cases.erase(rest.cases.begin(), rest.cases.begin() + 3);
    const auto report = calibrate(three);
    REQUIRE(report.ok());
    const CalibrateReport& r = report.value();
    CHECK(r.mape_after < r.mape_before);
    CHECK(r.mape_leave_one_out < r.mape_before);
    // Factors these FSDP runs barely touch are refused, with the reason; the fitted ones matter.
    CHECK_FALSE(r.refused.empty());
    for (const auto& line : r.refused) CHECK(line.find("kept as shipped") != std::string::npos);
    for (size_t j = 0; j < r.parameters.size(); ++j)
        if (r.fit.fitted[j]) CHECK(r.fit.sensitivity[j] >= 0.02);
    REQUIRE(r.calibration.per_gpu.size() == 1);
    CHECK(r.calibration.per_gpu[0].first == "h100-sxm");

    ValidationOptions calibrated;
    calibrated.calibration = r.calibration;
    const double before = mape(run_validation(rest)), after = mape(run_validation(rest, calibrated));
    INFO("other H100 runs: " << 100 * before << " % -> " << 100 * after << " %");
    CHECK(after < 0.8 * before);
    // The calibration JSON is what --calibration reads, and reads back to the same overrides.
    const auto parsed = parse_calibration_json(calibration_json(r.calibration));
    REQUIRE(parsed.ok());
    CHECK(calibration_json(parsed.value()) == calibration_json(r.calibration));
}

// The same on Megatron-Core + TE on B200 (SimuMax's measured rows): the first 3 step times in file
// order calibrate the other 22 (when written: 31.6 % -> 6.6 % over all 25).
TEST_CASE("calibrate on three Megatron-Core B200 runs cuts the error on the other 22", "[fit][calibrate]") {
    ValidationSuite all = load_validation_suite(), three, rest;
    for (auto& c : all.cases) {
        if (c.file != "simumax-b200" || is_memory_case(c)) continue;
        (three.cases.size() < 3 ? three : rest).cases.push_back(std::move(c));
    }
    REQUIRE(rest.cases.size() >= 20);
    const auto report = calibrate(three);
    REQUIRE(report.ok());
    ValidationOptions calibrated;
    calibrated.calibration = report.value().calibration;
    const double before = run_validation(rest).find("set", "public-2")->mape;
    const double after = run_validation(rest, calibrated).find("set", "public-2")->mape;
    INFO("other B200 runs: " << 100 * before << " % -> " << 100 * after << " %");
    CHECK(after < 0.5 * before);
}

TEST_CASE("calibrate refuses measurements without a time and never fits more factors than runs", "[fit][calibrate]") {
    ValidationSuite memory_only = foundry_h100();
    memory_only.cases.resize(1);
    memory_only.cases[0].metric = MeasuredMetric::peak_memory_gib;
    const auto refused = calibrate(memory_only);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().key == "measurements");

    ValidationSuite one = foundry_h100();
    one.cases.resize(1);
    const auto report = calibrate(one);
    REQUIRE(report.ok());
    int64_t fitted = 0;
    for (bool f : report.value().fit.fitted) fitted += f ? 1 : 0;
    CHECK(fitted == 1);
    CHECK(report.value().mape_after < 0.01);  // one factor reproduces one run
}

// A calibration has one section per GPU: runs of two frameworks on one GPU would be averaged into it.
TEST_CASE("calibrate refuses runs of two frameworks on one GPU, naming both", "[fit][calibrate]") {
    ValidationSuite mixed = foundry_h100();
    mixed.cases.resize(3);
    mixed.cases[2].config.framework.name = "megatron-core";
    const auto refused = calibrate(mixed);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().key == "framework");
    CHECK(refused.error().message.find("llm-foundry and megatron-core") != std::string::npos);
    mixed.cases[2].config.gpu.name = "a100-sxm4-80gb";  // another GPU: its own section, its own stack
    CHECK(calibrate(mixed).ok());
}

// Issue 9's cross-source targets, gated as far as met when this gate was set (cross-source public
// 9.9 %, precision speed-ups 4.8 %, in-sample 9.4 % / 4.5 %): public <= 11 % and speed-ups <= 8 %
// (the issue's target for speed-ups); the public target of 10 % is met by a hair (9.9 %).
TEST_CASE("cross-source accuracy on the public set", "[fit][accuracy][cross-source]") {
    const CrossSourceReport& report = fixtures::shipped_cross_source();
    const GroupError* pub = report.cross_source.find("set", "public");
    const GroupError* pairs = report.cross_source.find("pairs", "all");
    REQUIRE(pub != nullptr);
    REQUIRE(pairs != nullptr);
    INFO("cross-source public " << 100 * pub->mape << " %, speed-ups " << 100 * pairs->mape << " %");
    CHECK(pub->mape <= 0.11);
    CHECK(pairs->mape <= 0.08);
    // Every family was left out once, and a fold never saw its own family.
    CHECK(report.families.size() == report.fold_fits.size());
    CHECK(report.families.size() >= 8);
}
