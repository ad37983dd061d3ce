// Tests of trainclock/validation.hpp: loading the published measurements of presets/validation,
// reporting bad cases without stopping, precision pairs, the error statistics, and the accuracy
// gate of issue 3 against the public set.
//
// Sources of the public set (presets/validation/README.md): Narayanan et al. SC'21 Table 1;
// Korthikanti et al. 2022 (arXiv 2205.05198) Table 5; mosaicml/llm-foundry benchmarking README;
// NVIDIA/Megatron-LM Llama 3 FP8 performance; Transformer Engine Llama tutorial;
// NVIDIA DeepLearningExamples PyTorch BERT and Transformer-XL READMEs. vTrain (arXiv 2312.12391)
// ground truth is reported separately.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "trainclock/catalogue/presets.hpp"
#include "trainclock/validation/validation.hpp"

using namespace trainclock;

namespace {

// One case line as in presets/validation (a small 2-GPU Megatron-style config).
std::string case_line(const std::string& id, const std::string& precision, int64_t tp, int64_t gbs,
                      const std::string& measured = R"({"metric":"iteration_time_s","value":0.5})") {
    return R"({"id":")" + id +
           R"(","config":{"schema":"trainclock/config/v1","model":"gpt2","gpu":"a100-sxm4-80gb",)"
           R"("num_gpus":2,"precision":")" +
           precision + R"(","parallel":{"tp":)" + std::to_string(tp) + R"(},"training":{"seq_len":1024,"global_batch":)" +
           std::to_string(gbs) + R"(,"micro_batch":4}},"measured":)" + measured + R"(,"citation":"test"})";
}

std::string file_text(const std::string& name, const std::vector<std::string>& cases) {
    std::string text = "{\"schema_version\":1,\n\"name\":\"" + name +
                       "\",\n\"set\":\"public\",\n"
                       "\"source\":\"unit test\",\n\"cases\":[\n";
    for (size_t i = 0; i < cases.size(); ++i) text += cases[i] + (i + 1 < cases.size() ? ",\n" : "\n");
    return text + "]}\n";
}

double mean_ape(const ValidationReport& report, const std::function<bool(const CaseResult&)>& keep) {
    double sum = 0;
    int64_t n = 0;
    for (const auto& r : report.cases) {
        if (!keep(r)) continue;
        sum += r.ape;
        ++n;
    }
    return n ? sum / double(n) : 0;
}

}  // namespace

TEST_CASE("every embedded validation case loads", "[validation]") {
    const ValidationSuite suite = load_validation_suite();
    for (const auto& issue : suite.issues) UNSCOPED_INFO(issue.to_string());
    CHECK(suite.issues.empty());
    std::map<std::string, int64_t> per_set;
    std::set<std::string> files, ids;
    for (const auto& c : suite.cases) {
        per_set[c.set] += 1;
        files.insert(c.file);
        CHECK(ids.insert(c.id).second);  // ids are unique across files
        CHECK(c.measured > 0);
        CHECK(c.line > 0);
        CHECK_FALSE(c.citation.empty());
    }
    // Every embedded validation file contributes cases.
    int64_t embedded_files = 0;
    for (const auto& p : embedded_presets()) embedded_files += p.kind == PresetKind::validation;
    CHECK(int64_t(files.size()) == embedded_files);
    // vTrain's ground truth has 1,440 single-node and 109 multi-node rows (vtrain/README.md).
    CHECK(per_set["vtrain"] == 1440 + 109);
    CHECK(per_set["public"] >= 400);
}

TEST_CASE("a malformed validation case is reported by file, line and id, and the rest still load", "[validation]") {
    ValidationSuite suite;
    const std::string text =
        file_text("unit", {
                              case_line("GOOD-1", "bf16-mixed", 1, 64),  // line 6
                              case_line("BAD-TP", "bf16-mixed", 3, 64),  // line 7: tp 3 of 2 GPUs
                              R"({"id":"NO-MEASURED","config":{"schema":"trainclock/config/v1"},"citation":"x"})",  // line 8
                              case_line("BAD-METRIC", "bf16-mixed", 1, 64, R"({"metric":"furlongs","value":1})"),   // line 9
                              case_line("BAD-FP8", "fp8-mixed", 1, 64),                                             // line 10: FP8 on A100
                              case_line("GOOD-3", "tf32", 1, 64),                                                   // line 11
                          });
    parse_validation_file("unit.json", text, suite);
    REQUIRE(suite.cases.size() == 2);
    CHECK(suite.cases[0].id == "GOOD-1");
    CHECK(suite.cases[0].line == 6);
    CHECK(suite.cases[1].id == "GOOD-3");
    CHECK(suite.cases[1].line == 11);
    REQUIRE(suite.issues.size() == 4);
    CHECK(suite.issues[0].to_string().rfind("unit.json:7: case 1 (BAD-TP): config.", 0) == 0);
    CHECK(suite.issues[1].to_string().rfind("unit.json:8: case 2 (NO-MEASURED): ", 0) == 0);
    CHECK(suite.issues[1].message.find("measured") != std::string::npos);
    CHECK(suite.issues[2].to_string().rfind("unit.json:9: case 3 (BAD-METRIC): measured.metric", 0) == 0);
    CHECK(suite.issues[3].line == 10);

    SECTION("a truncated or foreign file is one issue naming the file") {
        ValidationSuite other;
        parse_validation_file("cut.json", text.substr(0, text.size() / 2), other);
        parse_validation_file("v2.json", R"({"schema_version":2,"name":"v2","set":"public","source":"x","cases":[]})", other);
        parse_validation_file("unit.json", text, other);  // still read after the bad files
        REQUIRE(other.issues.size() >= 2);
        CHECK(other.issues[0].to_string().rfind("cut.json: ", 0) == 0);
        CHECK(other.issues[1].to_string().find("v2.json: schema_version") != std::string::npos);
        CHECK(other.cases.size() == 2);
    }
}

TEST_CASE("precision pairs are cases of one source table identical except for the precision", "[validation]") {
    ValidationSuite suite;
    parse_validation_file("pairs.json",
                          file_text("pairs",
                                    {
                                        case_line("T-1", "tf32", 1, 64, R"({"metric":"iteration_time_s","value":1.0})"),
                                        case_line("T-2", "bf16-mixed", 1, 64, R"({"metric":"iteration_time_s","value":0.5})"),
                                        case_line("T-3", "bf16-mixed", 1, 128),  // other batch
                                        case_line("OTHER-1", "fp32", 1, 64),     // other source table
                                    }),
                          suite);
    REQUIRE(suite.issues.empty());
    const ValidationReport report = run_validation(suite);
    REQUIRE(report.pairs.size() == 1);
    const PairResult& pair = report.pairs[0];
    CHECK(suite.cases[pair.wide].id == "T-1");  // the wider gemm dtype is the reference
    CHECK(suite.cases[pair.narrow].id == "T-2");
    CHECK(pair.measured_speedup == Approx(2.0));
    const double t_wide = report.cases[0].predicted, t_narrow = report.cases[1].predicted;
    CHECK(pair.predicted_speedup == Approx(t_wide / t_narrow));
    CHECK(pair.ape == Approx(std::fabs(pair.predicted_speedup - 2.0) / 2.0));
    REQUIRE(report.find("pairs", "tf32->bf16-mixed") != nullptr);
    CHECK(report.find("set", "in_pairs")->count == 2);
}

TEST_CASE("a precision switch that changes the optimizer still pairs, another difference does not", "[validation]") {
    // DLE BERT run_squad.py: FusedAdam under --fp16, BertAdam (adamw-per-tensor) otherwise.
    auto with_optimizer = [](std::string line, const char* optimizer) {
        const std::string at = R"("micro_batch":4})";
        return line.replace(line.find(at), at.size(), std::string(R"("micro_batch":4,"optimizer":")") + optimizer + "\"}");
    };
    ValidationSuite suite;
    parse_validation_file("pairs.json",
                          file_text("pairs",
                                    {
                                        with_optimizer(case_line("S-1", "tf32", 1, 64), "adamw-per-tensor"),
                                        with_optimizer(case_line("S-2", "fp16-amp", 1, 64), "adamw"),
                                        with_optimizer(case_line("S-3", "fp16-amp", 2, 64), "adamw"),  // other TP: no pair
                                    }),
                          suite);
    REQUIRE(suite.issues.empty());
    const ValidationReport report = run_validation(suite);
    REQUIRE(report.pairs.size() == 1);
    CHECK(suite.cases[report.pairs[0].wide].id == "S-1");
    CHECK(suite.cases[report.pairs[0].narrow].id == "S-2");
}

TEST_CASE("validation statistics follow their definitions", "[validation]") {
    const ValidationSuite suite = load_validation_suite();
    ValidationOptions options;
    options.source_prefix = "MEG21";
    const ValidationReport report = run_validation(suite, options);
    REQUIRE(report.cases.size() == 10);
    for (const auto& r : report.cases) {
        const ValidationCase& c = suite.cases[r.case_index];
        CHECK(c.id.rfind("MEG21", 0) == 0);
        CHECK(r.ape == Approx(std::fabs(r.predicted - c.measured) / c.measured));
    }
    const GroupError* all = report.find("set", "all");
    REQUIRE(all != nullptr);
    CHECK(all->count == 10);
    CHECK(all->mape == Approx(mean_ape(report, [](const CaseResult&) { return true; })));
    CHECK(report.find("gpu_generation", "Ampere")->count == 10);
    CHECK(gpu_generation("a100-sxm4-40gb") == "Ampere");
    CHECK(gpu_generation("a10") == "Ampere");
    CHECK(gpu_generation("h200-sxm") == "Hopper");
    CHECK(gpu_generation("v100-sxm2-16gb") == "Volta");

    // A user calibration replaces every case's calibration; a parse error names the key.
    CHECK(parse_calibration_json(R"({"kernel_launch_s": 5e-6})").ok());
    auto bad = parse_calibration_json(R"({"kernel_launch": 5e-6})");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().key == "calibration.kernel_launch");
    // ...and out-of-range values are refused as in a config, per-GPU sections included.
    CHECK(parse_calibration_json(R"({"memory_efficiency": 5})").error().key == "calibration.memory_efficiency");
    CHECK(parse_calibration_json(R"({"gpus": {"h100-sxm": {"kernel_launch_s": -1}}})").error().key ==
          "calibration.gpus.h100-sxm.kernel_launch_s");
}

// Accuracy on the public set (llm_public.csv + precision_public.csv rows): both gates below run the
// same report. The figures are printed on failure; `trainclock validate` shows them by source.
namespace {
struct AccuracyFigures {
    double public_mape, ratio_mape, aware_in_pairs, blind_in_pairs;
    std::vector<GroupError> precisions;  // groups of at least 5 cases
};

// The issue-3 data (sets public and vtrain, time metrics): the second batch (set public-2, its own
// gate below) and memory cases are scored apart, so these gates keep their meaning and limits.
ValidationSuite issue3_suite() {
    ValidationSuite suite = load_validation_suite();
    REQUIRE(suite.issues.empty());
    std::vector<ValidationCase> kept;
    for (auto& c : suite.cases)
        if (c.set != "public-2" && !is_memory_case(c)) kept.push_back(std::move(c));
    suite.cases = std::move(kept);
    return suite;
}

AccuracyFigures measure_accuracy() {
    const ValidationSuite suite = issue3_suite();
    const ValidationReport aware = run_validation(suite);
    ValidationOptions blind_options;
    blind_options.precision_blind = true;
    const ValidationReport blind = run_validation(suite, blind_options);

    const GroupError* pub = aware.find("set", "public");
    const GroupError* pairs = aware.find("pairs", "all");
    const GroupError* aware_in_pairs = aware.find("set", "in_pairs");
    const GroupError* blind_in_pairs = blind.find("set", "in_pairs");
    REQUIRE(pub != nullptr);
    REQUIRE(pairs != nullptr);
    REQUIRE(aware_in_pairs != nullptr);
    REQUIRE(blind_in_pairs != nullptr);
    AccuracyFigures figures{pub->mape, pairs->mape, aware_in_pairs->mape, blind_in_pairs->mape, {}};
    for (const auto& g : aware.groups)
        if (g.kind == "precision" && g.count >= 5) figures.precisions.push_back(g);
    return figures;
}

void check_accuracy(double public_limit, double ratio_limit, double precision_limit) {
    const AccuracyFigures f = measure_accuracy();
    INFO("public MAPE " << 100 * f.public_mape << " %");
    INFO("precision-ratio MAPE " << 100 * f.ratio_mape << " %");
    INFO("cases in pairs: aware " << 100 * f.aware_in_pairs << " %, precision-blind " << 100 * f.blind_in_pairs << " %");
    CHECK(f.public_mape <= public_limit);
    CHECK(f.ratio_mape <= ratio_limit);
    CHECK(f.blind_in_pairs >= 3.0 * f.aware_in_pairs);  // the paper's contrast, reproduced on public data
    for (const auto& g : f.precisions) {
        INFO("precision " << g.name << ": MAPE " << 100 * g.mape << " % over " << g.count << " cases");
        CHECK(g.mape <= precision_limit);
    }
}
}  // namespace

// Issue 3's "done when", run in CI: public <= 10 %, precision ratios <= 10 %, every precision with
// >= 5 cases <= 15 %, and the precision-blind baseline at least 3x worse on the cases in pairs
// (when this gate was set: public 9.5 %, ratios 6.7 %, worst precision tf32 14.7 %, blind 5.5x).
TEST_CASE("accuracy against published measurements meets the issue-3 targets", "[validation][accuracy]") {
    check_accuracy(0.10, 0.10, 0.15);
}

// The second batch (llm_public_2.csv, precision_public_2.csv: B200, MI300X, torchtitan, JAX): gated
// as far as met when transcribed (in-sample public-2 36.4 %; peak memory 24.5 %, 28.8 % once memory
// counts the CUDA context and allocator reserve: SimuMax's allocated bytes 3.2 %, torchtitan's
// reserved bytes over-predicted by 21-93 %), so a physics change may only improve them; issue 9
// targets 10 %.
TEST_CASE("accuracy on the second public batch does not regress", "[validation][accuracy]") {
    const ValidationSuite suite = load_validation_suite();
    const ValidationReport report = run_validation(suite);
    const GroupError* second = report.find("set", "public-2");
    const GroupError* memory = report.find("set", "memory");
    REQUIRE(second != nullptr);
    REQUIRE(memory != nullptr);
    CHECK(second->count >= 40);
    CHECK(second->mape <= 0.40);
    CHECK(memory->mape <= 0.30);
}

TEST_CASE("memory cases are scored apart from time and never pair", "[validation]") {
    ValidationSuite suite;
    const std::string memory = R"({"metric":"peak_memory_gib","value":10})";
    parse_validation_file("unit.json",
                          file_text("unit", {case_line("M-1", "tf32", 1, 8, memory), case_line("M-2", "bf16-mixed", 1, 8, memory),
                                             case_line("M-3", "bf16-mixed", 1, 8)}),
                          suite);
    REQUIRE(suite.issues.empty());
    const ValidationReport report = run_validation(suite);
    CHECK(report.pairs.empty());  // M-1/M-2 differ only in precision but measure memory
    REQUIRE(report.find("set", "memory") != nullptr);
    CHECK(report.find("set", "memory")->count == 2);
    CHECK(report.find("set", "public")->count == 1);
    CHECK(report.find("precision", "tf32") == nullptr);
    const Prediction p = predict(suite.cases[0].config);
    CHECK(report.cases[0].predicted == Approx(p.memory.per_gpu_gib));
}
