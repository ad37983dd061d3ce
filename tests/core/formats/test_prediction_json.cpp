// Tests for the result JSON and CSV of trainclock/prediction.hpp (prediction_to_json,
// prediction_csv_header, prediction_to_csv_row) and the deterministic number formatting behind them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../../core/src/base/json_writer.hpp"  // internal: number formatting shared by every JSON writer
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

using namespace trainclock;

namespace {

Prediction sample_prediction() {
    Prediction p;
    p.iteration_time_s = 9.5;
    p.tokens_per_s = 883011.3;
    p.tokens_per_s_per_gpu = 862.3;
    p.samples_per_s = 107.8;
    p.model_tflops_per_gpu = 400.25;
    p.hardware_tflops_per_gpu = 420.5;
    p.mfu = 0.4047;
    p.steps = 1788139;
    p.total_time_s = 1.7e7;
    p.gpu_hours = 4.8e6;
    p.cost_usd = 1.2e7;
    p.energy_kwh = 6.1e6;
    p.memory = {4.2, 8.4, 8.4, 16.9, 40.1, 1.0, 79.0, 80.0, true};
    p.breakdown_s[StepPart::gemm] = 5.0;
    p.breakdown_s[StepPart::tp_comm] = 1.5;
    p.breakdown_s[StepPart::pipeline_bubble] = 3.0;
    p.warnings = {"pipeline bubble is 31 % of the step", "quote \" and backslash \\"};
    return p;
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("result JSON has exactly the DESIGN.md 3 keys") {
    const std::string json = prediction_to_json(sample_prediction());
    CHECK(json.find("\"schema\": \"trainclock/result/v1\"") != std::string::npos);
    for (const char* key : {"iteration_time_s",
                            "tokens_per_s",
                            "tokens_per_s_per_gpu",
                            "samples_per_s",
                            "model_tflops_per_gpu",
                            "hardware_tflops_per_gpu",
                            "mfu",
                            "mfu_precision_peak",
                            "steps",
                            "total_time_s",
                            "gpu_hours",
                            "cost_usd",
                            "energy_kwh",
                            "params_total",
                            "params_active",
                            "memory",
                            "breakdown_s",
                            "warnings",
                            "per_gpu_gib",
                            "capacity_gib",
                            "fits",
                            "weights_gib",
                            "grads_gib",
                            "master_gib",
                            "optimizer_gib",
                            "activations_gib",
                            "other_gib",
                            "host_gib",
                            "gemm",
                            "attention",
                            "elementwise",
                            "precision_overhead",
                            "optimizer",
                            "tp_comm",
                            "pp_comm",
                            "dp_comm",
                            "cp_comm",
                            "ep_comm",
                            "pipeline_bubble",
                            "overhead"}) {
        INFO(key);
        CHECK(count(json, std::string("\"") + key + "\":") == 1);
    }
    // 1 schema + 15 scalars + memory (9 numbers + fits) + breakdown (12) + warnings + the two objects,
    // goodput, expected_interruptions and whole_run (11 members).
    for (const char* key : {"goodput", "expected_interruptions", "whole_run", "ideal_time_s", "checkpoint_write_s", "defaults"}) {
        INFO(key);
        CHECK(count(json, std::string("\"") + key + "\":") == 1);
    }
    CHECK(count(json, "\":") == 1 + 15 + 1 + 10 + 1 + 12 + 1 + 2 + 1 + 11);  // memory: 9 numbers + fits
    CHECK(json.find("\"config\"") == std::string::npos);                     // only when a config is given
    CHECK(json.find("\"timeline\"") == std::string::npos);                   // only when non-empty
    CHECK(json.find("\"iteration_time_s\": 9.5,") != std::string::npos);
    CHECK(json.find("\"steps\": 1788139,") != std::string::npos);
    CHECK(json.find("\"fits\": true") != std::string::npos);
    CHECK(json.find(R"("quote \" and backslash \\")") != std::string::npos);
}

TEST_CASE("result JSON echoes the config and the timeline when present") {
    Prediction p = sample_prediction();
    p.timeline.push_back({1, 2, 0, false, 0.25, 0.75});
    const auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm"})");
    REQUIRE(config.ok());
    const std::string json = prediction_to_json(p, &config.value());
    CHECK(json.find("\"config\": {") != std::string::npos);
    CHECK(json.find("\"schema\": \"trainclock/config/v1\"") != std::string::npos);
    CHECK(json.find("\"timeline\": [") != std::string::npos);
    CHECK(json.find("\"stage\": 1") != std::string::npos);
    CHECK(json.find("\"forward\": false") != std::string::npos);
    CHECK(json.find("\"end_s\": 0.75") != std::string::npos);
}

TEST_CASE("the same prediction always gives the same bytes") {
    CHECK(prediction_to_json(sample_prediction()) == prediction_to_json(sample_prediction()));
}

TEST_CASE("CSV header and row have the same columns") {
    const auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(config.ok());
    const std::string header = prediction_csv_header();
    const std::string row = prediction_to_csv_row(sample_prediction(), config.value());
    CHECK(header.rfind("model,gpu,node,num_gpus,precision,", 0) == 0);
    CHECK(row.rfind("gpt2,h100-sxm,", 0) == 0);
    CHECK(header.find("iteration_time_s") != std::string::npos);
    CHECK(header.find("pipeline_bubble_s") != std::string::npos);
    CHECK(row.find('\n') == std::string::npos);
    // The warnings cell holds a quote: RFC 4180 doubles it inside a quoted cell, so count unquoted commas.
    size_t row_columns = 1;
    bool quoted = false;
    for (const char c : row) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++row_columns;
    }
    CHECK(row_columns == count(header, ",") + 1);
}

TEST_CASE("JSON numbers: shortest round-trip digits in ECMAScript layout") {
    CHECK(json_number(0) == "0");
    CHECK(json_number(-0.0) == "0");
    CHECK(json_number(1) == "1");
    CHECK(json_number(-2) == "-2");
    CHECK(json_number(0.1) == "0.1");
    CHECK(json_number(1.5) == "1.5");
    CHECK(json_number(0.1 + 0.2) == "0.30000000000000004");
    CHECK(json_number(15e12) == "15000000000000");
    CHECK(json_number(1e21) == "1e+21");
    CHECK(json_number(6.02214076e23) == "6.02214076e+23");
    CHECK(json_number(1e-6) == "0.000001");
    CHECK(json_number(1e-7) == "1e-7");
    CHECK(json_number(2.5e-9) == "2.5e-9");
    CHECK(json_number(std::nan("")) == "null");
    CHECK(json_number(INFINITY) == "null");
}

TEST_CASE("JSON numbers read back as the same double, in at most 17 digits, shortest for short decimals") {
    std::mt19937_64 random(20260417);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int i = 0; i < 20000; ++i) {
        double value;
        if (i % 2 == 0) {
            const uint64_t bits = random() & 0x7fefffffffffffffULL;  // any positive finite double
            std::memcpy(&value, &bits, sizeof value);
        } else {
            value = uniform(random) * std::pow(10.0, double(int(random() % 40) - 20));  // typical results
        }
        if (!(value > 0) || !std::isfinite(value)) continue;
        int exponent = 0;
        const std::string digits = shortest_digits(value, &exponent);
        INFO(value);
        CHECK(digits.size() <= 17);
        CHECK(std::strtod(json_number(value).c_str(), nullptr) == value);
        CHECK(std::strtod(json_number(-value).c_str(), nullptr) == -value);
    }
    // Decimals of up to 15 significant digits come back as written (DBL_DIG, C11 5.2.4.2.2).
    for (const char* text : {"0.869", "1979", "2.5", "0.000123", "123456.789", "3.14159265358979", "6.02214076e+23", "1e-300", "4.5e-8"}) {
        INFO(text);
        CHECK(std::strtod(json_number(std::strtod(text, nullptr)).c_str(), nullptr) == std::strtod(text, nullptr));
        int exponent = 0;
        std::string expected;
        for (const char* p = text; *p && *p != 'e'; ++p) {
            if (*p >= '0' && *p <= '9') expected += *p;
        }
        while (expected.size() > 1 && expected[0] == '0') expected.erase(0, 1);
        CHECK(shortest_digits(std::strtod(text, nullptr), &exponent) == expected);
    }
}

TEST_CASE("unknown cost and energy are null in JSON and empty CSV cells, never 0") {
    Prediction p = sample_prediction();
    p.cost_known = false;
    p.energy_known = false;
    const std::string json = prediction_to_json(p);
    CHECK(json.find("\"cost_usd\": null") != std::string::npos);
    CHECK(json.find("\"energy_kwh\": null") != std::string::npos);
    CHECK(json.find("\"gpu_hours\": 4800000") != std::string::npos);  // a known figure next to them stays
    const auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(config.ok());
    // Split the header and the row (its warnings cell last but two, quoted) into cells by name.
    auto cells = [](const std::string& line) {
        std::vector<std::string> out(1);
        bool quoted = false;
        for (const char c : line) {
            if (c == '"') quoted = !quoted;
            if (c == ',' && !quoted)
                out.emplace_back();
            else
                out.back() += c;
        }
        return out;
    };
    const std::vector<std::string> names = cells(prediction_csv_header()), values = cells(prediction_to_csv_row(p, config.value()));
    REQUIRE(names.size() == values.size());
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == "cost_usd" || names[i] == "energy_kwh") CHECK(values[i].empty());
        if (names[i] == "gpu_hours") CHECK(values[i] == "4800000");
        if (names[i] == "memory_per_gpu_gib") CHECK(values[i] == "79");
    }
}
