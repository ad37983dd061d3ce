// Tests for trainclock/scaling.hpp: the GPU-count sweep and the Pareto front.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/search/scaling.hpp"

using namespace trainclock;

TEST_CASE("scaling_gpu_counts: powers of two around the count, the count itself kept") {
    CHECK(scaling_gpu_counts(1024) == std::vector<int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536});
    CHECK(scaling_gpu_counts(8, 2, 1) == std::vector<int64_t>{2, 4, 8, 16});
    CHECK(scaling_gpu_counts(1, 5, 2) == std::vector<int64_t>{1, 2, 4});  // nothing below one GPU
    CHECK(scaling_gpu_counts(96, 1, 1) == std::vector<int64_t>{32, 64, 96, 128});
}

TEST_CASE("scaling_sweep: each point is predict() of the config at that count, DP derived") {
    auto config = load_config(R"({"model": "gpt3-1.3b", "gpu": "a100-sxm4-80gb", "num_gpus": 8, "precision": "bf16-mixed",
                                  "parallel": {"tp": 2}, "training": {"global_batch": 64, "tokens": 1e10}})");
    REQUIRE(config.ok());
    const ScalingSweep sweep = scaling_sweep(config.value(), {16, 1, 4, 4});
    CHECK(sweep.gpu_counts == std::vector<int64_t>{1, 4, 16});  // sorted, unique
    REQUIRE(sweep.at.size() == 3);
    // One GPU cannot hold TP=2: an error row at that count, not a missing point.
    for (const PrecisionRow& row : sweep.at[0].rows) CHECK(row.error.has_value());
    for (size_t i = 1; i < 3; ++i) {
        Config at = config.value();
        at.num_gpus = sweep.gpu_counts[i];
        at.parallel.dp = 0;
        const PrecisionComparison expected = compare_precisions(at);
        REQUIRE(sweep.at[i].rows.size() == expected.rows.size());
        for (size_t r = 0; r < expected.rows.size(); ++r) {
            INFO(sweep.gpu_counts[i] << " " << expected.rows[r].config.precision.name);
            CHECK(sweep.at[i].rows[r].config.parallel.dp == sweep.gpu_counts[i] / 2);
            CHECK(sweep.at[i].rows[r].prediction.iteration_time_s == expected.rows[r].prediction.iteration_time_s);
        }
    }
    // Same tokens, 4x the GPUs: the run is faster (strong scaling) in bf16-mixed.
    auto bf16 = [&](size_t i) {
        for (const PrecisionRow& row : sweep.at[i].rows)
            if (row.config.precision.name == "bf16-mixed") return row.prediction.total_time_s;
        return 0.0;
    };
    CHECK(bf16(2) < bf16(1));
}

TEST_CASE("run_scaling computes the counts in slices, with the same result as at once") {
    auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(config.ok());
    ScalingSweep sliced = plan_scaling(config.value(), scaling_gpu_counts(8, 2, 2));
    while (!sliced.done()) run_scaling(sliced, 1);
    const ScalingSweep whole = scaling_sweep(config.value(), scaling_gpu_counts(8, 2, 2));
    REQUIRE(sliced.at.size() == whole.at.size());
    for (size_t i = 0; i < whole.at.size(); ++i)
        for (size_t r = 0; r < whole.at[i].rows.size(); ++r)
            CHECK(sliced.at[i].rows[r].prediction.cost_usd == whole.at[i].rows[r].prediction.cost_usd);
}

TEST_CASE("run_scaling_rows computes one prediction at a time, with the same result as at once") {
    auto config = load_config(R"({"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8})");
    REQUIRE(config.ok());
    ScalingSweep sliced = plan_scaling(config.value(), scaling_gpu_counts(8, 2, 2));
    size_t steps = 0;
    run_scaling_rows(sliced, 3);  // part of the first count
    CHECK(sliced.at.empty());
    run_scaling(sliced, 1);  // finishes the count begun
    CHECK(sliced.at.size() == 1);
    while (!sliced.done()) {
        run_scaling_rows(sliced, 1);
        ++steps;
    }
    const ScalingSweep whole = scaling_sweep(config.value(), scaling_gpu_counts(8, 2, 2));
    REQUIRE(sliced.at.size() == whole.at.size());
    size_t rows = 0;
    for (size_t i = 0; i < whole.at.size(); ++i) {
        REQUIRE(sliced.at[i].rows.size() == whole.at[i].rows.size());
        CHECK(sliced.at[i].baseline == whole.at[i].baseline);
        rows += i > 0 ? whole.at[i].rows.size() : 0;
        for (size_t r = 0; r < whole.at[i].rows.size(); ++r) {
            CHECK(sliced.at[i].rows[r].prediction.cost_usd == whole.at[i].rows[r].prediction.cost_usd);
            CHECK(sliced.at[i].rows[r].speedup == whole.at[i].rows[r].speedup);
        }
    }
    CHECK(steps == rows);  // one prediction per call
}

TEST_CASE("pareto_front keeps the points nothing beats on both coordinates") {
    // Hand count: (1,9) (2,5) (4,4) are the front; (3,6) loses to (2,5), (5,4) to (4,4), (2,7) to (2,5).
    const std::vector<std::pair<double, double>> points = {{3, 6}, {4, 4}, {1, 9}, {5, 4}, {2, 5}, {2, 7}};
    CHECK(pareto_front(points) == std::vector<size_t>{2, 4, 1});
    CHECK(pareto_front({}).empty());
    CHECK(pareto_front({{1, 1}, {1, 1}}) == std::vector<size_t>{0, 1});  // equal points both stay
    CHECK(pareto_front({{1, 2}, {2, 1}}) == std::vector<size_t>{0, 1});
}

TEST_CASE("scaling_to_csv: the header, then one row per valid point") {
    auto config = load_config(R"({"model": "gpt2", "gpu": "a100-sxm4-80gb", "num_gpus": 2, "parallel": {"pp": 2}})");
    REQUIRE(config.ok());
    const ScalingSweep sweep = scaling_sweep(config.value(), {1, 2, 4});
    const std::string csv = scaling_to_csv(sweep);
    CHECK(csv.rfind(prediction_csv_header() + "\n", 0) == 0);
    size_t valid = 0;
    for (const PrecisionComparison& at : sweep.at)
        for (const PrecisionRow& row : at.rows) valid += row.error ? 0 : 1;
    CHECK(valid == 2 * sweep.at[1].rows.size());  // one GPU cannot hold PP=2: no rows at count 1
    CHECK(size_t(std::count(csv.begin(), csv.end(), '\n')) == 1 + valid);
}
