// Tests for trainclock/run.hpp: the whole run around the steps, against the closed forms of the
// first-order checkpoint/restart model (Young 1974) and the Llama 3 interruption count.
#include "model_fixtures.hpp"

#include <cmath>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/perf/run.hpp"

using namespace trainclock;

namespace {

// Llama 3.1 405B on 16,384 H100 as Meta trained it (TP 8, CP 1, PP 16 with first/last 7, 15.6T tokens).
const std::string k16k =
    R"("model": "llama3.1-405b", "gpu": "h100-sxm", "num_gpus": 16384, "parallel": {"tp": 8, "pp": 16, "first_stage_layers": 7, "last_stage_layers": 7, "sequence_parallel": true, "zero": 1}, "training": {"seq_len": 8192, "global_batch": 2048, "recompute": "full", "tokens": 15.6e12)";

}  // namespace

TEST_CASE("the default interruption rate is Llama 3's: 419 in 54 days on 16,384 GPUs", "[run]") {
    // 16384 x 54 x 24 = 21,233,664 GPU-hours.
    CHECK(kLlama3FailuresPerGpuHour == Approx(419.0 / 21233664.0));
    CHECK(kLlama3FailuresPerGpuHour == Approx(1.9733e-5).epsilon(1e-4));
    // One interruption every ~3.1 hours at 16K GPUs, as the paper's count implies (54 x 24 / 419).
    CHECK(1.0 / (16384 * kLlama3FailuresPerGpuHour) == Approx(54.0 * 24 / 419));
    CHECK(kLlama3StorageGbpsPerGpu * 16384 == Approx(2000));  // Tectonic: 2 TB/s sustained
}

TEST_CASE("a 16K-GPU run: wall time, goodput and interruptions follow the closed form", "[run]") {
    const Config c = fixtures::config(k16k + "}");
    const Prediction p = predict(c);
    const WholeRun& r = p.run;
    REQUIRE_FALSE(r.ideal);
    const double T = p.steps * p.iteration_time_s;
    CHECK(r.ideal_time_s == Approx(T));
    // Checkpoint: every weight in bf16, the fp32 master copy, Adam's two fp32 states = 14 B/param,
    // written at 2 TB/s.
    const double n = double(parameter_count(c.model));
    CHECK(r.checkpoint_bytes == Approx(14.0 * n));
    CHECK(r.storage_bw_gbps == Approx(2000));
    const double C = 14.0 * n / 2e12;
    CHECK(r.checkpoint_write_s == Approx(C));
    // Young's interval sqrt(2 C / lambda), lambda = 16384 x rate per hour / 3600 s.
    const double lambda = 16384 * kLlama3FailuresPerGpuHour / 3600;
    const double tau = std::sqrt(2 * C / lambda);
    CHECK(r.checkpoint_interval_s == Approx(tau));
    CHECK(r.checkpoints == Approx(std::floor(T / tau)));
    const double W = (T + std::floor(T / tau) * C) / (1 - lambda * (600 + C + 0.5 * (tau + C)));
    CHECK(p.total_time_s == Approx(W));
    CHECK(r.goodput == Approx(T / W));
    CHECK(r.expected_interruptions == Approx(lambda * W));
    CHECK(p.gpu_hours == Approx(W * 16384 / 3600));
    // Every default is named, and the warning says so.
    CHECK(r.defaults.size() == 4);
    bool stated = false;
    for (const std::string& w : p.warnings)
        stated = stated || (w.find("whole run: goodput") != std::string::npos && w.find("Llama 3") != std::string::npos);
    CHECK(stated);
}

TEST_CASE("training.ideal (and one step) give steps x step time", "[run]") {
    const Prediction ideal = predict(fixtures::config(k16k + R"(, "ideal": true})"));
    CHECK(ideal.run.ideal);
    CHECK(ideal.run.goodput == 1);
    CHECK(ideal.run.expected_interruptions == 0);
    CHECK(ideal.total_time_s == Approx(ideal.steps * ideal.iteration_time_s));
    const Prediction real = predict(fixtures::config(k16k + "}"));
    CHECK(real.iteration_time_s == ideal.iteration_time_s);  // the step itself does not change
    CHECK(real.total_time_s > ideal.total_time_s);
    const Prediction one = predict(fixtures::config(R"("model": "gpt2", "gpu": "h100-sxm")"));
    CHECK(one.run.ideal);
    CHECK(one.total_time_s == one.iteration_time_s);
}

TEST_CASE("given keys replace the defaults: no failures leaves only the checkpoint saves", "[run]") {
    const Prediction p = predict(fixtures::config(
        k16k + R"(, "failure_rate_per_gpu_hour": 0, "checkpoint_interval_steps": 100, "storage_bw_gbps": 500, "restart_s": 0})"));
    const WholeRun& r = p.run;
    CHECK(r.defaults.empty());
    CHECK(r.expected_interruptions == 0);
    const double T = p.steps * p.iteration_time_s, tau = 100 * p.iteration_time_s, C = r.checkpoint_bytes / 500e9;
    CHECK(r.checkpoint_interval_s == Approx(tau));
    CHECK(p.total_time_s == Approx(T + std::floor(T / tau) * C));
}

TEST_CASE("a run whose interruptions outpace its checkpoints says it would not finish", "[run]") {
    // 16,384 GPUs at 1e-3 interruptions per GPU-hour: one every 3.7 minutes of wall time, restarts of an hour.
    const Prediction p = predict(fixtures::config(k16k + R"(, "failure_rate_per_gpu_hour": 1e-3, "restart_s": 3600})"));
    CHECK(p.run.stalls);
    CHECK(p.run.goodput <= 0.0101);
    bool said = false;
    for (const std::string& w : p.warnings) said = said || w.find("would not finish") != std::string::npos;
    CHECK(said);
}

TEST_CASE("whole-run keys: parse, round-trip, range errors naming the key", "[run]") {
    const auto c = load_config(
        R"({"model": "gpt2", "gpu": "h100-sxm", "training": {"tokens": 1e9, "checkpoint_interval_s": 3600, "restart_s": 0, "failure_rate_per_gpu_hour": 1e-4, "storage_bw_gbps": 10, "ideal": true}})");
    REQUIRE(c.ok());
    const auto again = load_config(config_to_json(c.value()));
    REQUIRE(again.ok());
    CHECK(again.value().training.restart_s == 0);
    CHECK(again.value().training.checkpoint_interval_s == 3600);
    CHECK(again.value().training.ideal);
    auto key_of = [](const std::string& training) {
        const auto r = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "training": {)" + training + "}}");
        return r.ok() ? std::string() : r.error().key;
    };
    CHECK(key_of(R"("restart_s": -5)") == "training.restart_s");
    CHECK(key_of(R"("failure_rate_per_gpu_hour": 2)") == "training.failure_rate_per_gpu_hour");
    CHECK(key_of(R"("checkpoint_interval_s": 60, "checkpoint_interval_steps": 10)") == "training.checkpoint_interval_steps");
    CHECK(key_of(R"("storage_bw_gbps": -1)") == "training.storage_bw_gbps");
    CHECK(key_of(R"("ideal": "yes")") == "training.ideal");
}

TEST_CASE("cost and energy a preset cannot give are null with a warning, never 0", "[run]") {
    // gb300 has no published price; tpu-v5e no TDP.
    const Prediction gb300 = predict(
        fixtures::config(R"("model": "llama3-70b", "gpu": "gb300", "num_gpus": 64, "parallel": {"tp": 8}, "training": {"tokens": 1e11})"));
    CHECK_FALSE(gb300.cost_known);
    CHECK(gb300.energy_known);
    const std::string json = prediction_to_json(gb300);
    CHECK(json.find("\"cost_usd\": null") != std::string::npos);
    CHECK(json.find("\"goodput\": ") != std::string::npos);
    bool warned = false;
    for (const std::string& w : gb300.warnings) warned = warned || w.find("cost unknown") != std::string::npos;
    CHECK(warned);
    const Prediction priced = predict(fixtures::config(
        R"("model": "llama3-70b", "gpu": "gb300", "num_gpus": 64, "parallel": {"tp": 8}, "training": {"tokens": 1e11, "price_per_gpu_hour": 0})"));
    CHECK(priced.cost_known);  // an explicit price of 0 is a price
    const Prediction tpu = predict(fixtures::config(R"("model": "gpt2", "gpu": "tpu-v5e", "training": {"tokens": 1e9})"));
    CHECK_FALSE(tpu.energy_known);
    CHECK(prediction_to_json(tpu).find("\"energy_kwh\": null") != std::string::npos);
}
