// Pipeline schedules: the event simulation against closed forms and invariants.
#include "model_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "trainclock/perf/pipeline.hpp"

using namespace trainclock;

namespace {
double simulate_uniform(PipelineShape sh, double f, double b, std::vector<TimelineSpan>* spans = nullptr) {
    const size_t n = size_t(sh.stages * sh.chunks);
    std::vector<double> fwd(n, f), bwd(n, b);
    return simulate_pipeline(sh, fwd.data(), bwd.data(), spans);
}
}  // namespace

TEST_CASE("Uniform stages: the simulation equals the closed form", "[pipeline]") {
    for (PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
        for (int64_t p : {1, 2, 4, 8}) {
            for (int64_t m : {1, 3, 8, 17, 64}) {
                const PipelineShape sh{schedule, p, m, 1};
                INFO("schedule " << int(schedule) << " p " << p << " m " << m);
                CHECK(simulate_uniform(sh, 1.0, 2.0) == Approx(uniform_pipeline_time_s(sh, 1.0, 2.0)));
                CHECK(simulate_uniform(sh, 0.3, 0.7) == Approx(uniform_pipeline_time_s(sh, 0.3, 0.7)));
            }
        }
    }
    // Interleaved 1F1B: bubble (p - 1)(f + b) / v with chunk times f / v, b / v (SC'21 sec. 2.2.2).
    for (int64_t p : {2, 4, 8}) {
        for (int64_t v : {2, 3, 4}) {
            for (int64_t k : {1, 2, 5}) {
                const PipelineShape sh{PipelineSchedule::interleaved, p, k * p, v};
                INFO("p " << p << " v " << v << " m " << k * p);
                CHECK(simulate_uniform(sh, 1.0 / double(v), 2.0 / double(v)) ==
                      Approx(uniform_pipeline_time_s(sh, 1.0 / double(v), 2.0 / double(v))));
            }
        }
    }
}

TEST_CASE("Interleaving shrinks the bubble by v", "[pipeline]") {
    const PipelineShape plain{PipelineSchedule::one_f_one_b, 8, 64, 1};
    const PipelineShape inter{PipelineSchedule::interleaved, 8, 64, 4};
    const double ideal = 64 * 3.0;
    const double b1 = simulate_uniform(plain, 1.0, 2.0) - ideal;
    const double b4 = simulate_uniform(inter, 0.25, 0.5) - ideal;
    CHECK(b1 == Approx(7 * 3.0));
    CHECK(b4 == Approx(b1 / 4));
}

TEST_CASE("Non-uniform stages: never faster than the busiest stage, timeline consistent", "[pipeline]") {
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 4, 12, 1};
    const double fwd[] = {1.2, 1.0, 1.0, 1.5}, bwd[] = {2.1, 2.0, 2.0, 3.0};
    std::vector<TimelineSpan> spans;
    const double t = simulate_pipeline(sh, fwd, bwd, &spans);
    CHECK(t >= 12 * (1.5 + 3.0));
    CHECK(t < 12 * (1.5 + 3.0) + 3 * (1.5 + 3.0));
    REQUIRE(spans.size() == size_t(2 * 4 * 12));
    // One stage runs one unit at a time; every backward follows its forward on the same stage.
    std::map<int, std::vector<TimelineSpan>> by_stage;
    for (const TimelineSpan& s : spans) by_stage[s.stage].push_back(s);
    for (auto& [stage, list] : by_stage) {
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
        for (size_t i = 1; i < list.size(); ++i) CHECK(list[i].start_s >= list[i - 1].end_s - 1e-12);
    }
    for (const TimelineSpan& s : spans) {
        CHECK(s.end_s <= t + 1e-12);
        CHECK(s.end_s - s.start_s == Approx(s.forward ? fwd[s.stage] : bwd[s.stage]));
    }
}

TEST_CASE("1F1B keeps at most PP micro-batches in flight on stage 0", "[pipeline]") {
    CHECK(stage0_units_in_flight({PipelineSchedule::one_f_one_b, 8, 64, 1}) == 8);
    CHECK(stage0_units_in_flight({PipelineSchedule::one_f_one_b, 8, 3, 1}) == 3);
    CHECK(stage0_units_in_flight({PipelineSchedule::gpipe, 8, 64, 1}) == 64);
    // Interleaved: 2 (p - 1) + (v - 1) p + 1 chunks (Megatron warm-up + the one in progress).
    CHECK(stage0_units_in_flight({PipelineSchedule::interleaved, 4, 16, 2}) == 2 * 3 + 4 + 1);
    const LayerRange r = virtual_stage_layers(10, 4, 1);
    CHECK(r.first == 3);
    CHECK(r.count == 3);
    CHECK(virtual_stage_layers(10, 4, 3).first == 8);
}

TEST_CASE("1536 micro-batches over 8 stages simulate quickly and exactly", "[pipeline]") {
    const PipelineShape sh{PipelineSchedule::one_f_one_b, 8, 1536, 1};
    CHECK(simulate_uniform(sh, 1.0, 2.0) == Approx((1536 + 7) * 3.0));
}

TEST_CASE("Steady-state skipping equals the full event walk", "[pipeline]") {
    // simulate_pipeline skips the periodic steady state (1F1B, interleaved) or uses the GPipe closed
    // form; the timeline comes from a walk of every event. Random non-uniform stage
    // costs, including near-ties and stages far heavier than the rest (long transients).
    std::mt19937_64 rng(20261130);
    std::uniform_real_distribution<double> cost(0.2, 3.0);
    int cases = 0;
    for (PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}) {
        for (int64_t p : {1, 2, 3, 4, 7, 8, 16}) {
            for (int64_t v : {1, 2, 3, 4}) {
                if ((schedule == PipelineSchedule::interleaved) != (v > 1)) continue;
                if (schedule == PipelineSchedule::interleaved && p == 1) continue;
                for (int64_t k : {1, 2, 3, 5, 12, 40, 193}) {
                    const int64_t m = schedule == PipelineSchedule::interleaved ? k * p : k * 3 + p % 2;
                    for (int trial = 0; trial < 4; ++trial) {
                        const PipelineShape sh{schedule, p, m, v};
                        const size_t n = size_t(p * v);
                        std::vector<double> fwd(n), bwd(n);
                        for (size_t i = 0; i < n; ++i) {
                            fwd[i] = cost(rng);
                            bwd[i] = trial == 1 ? 2.0 * fwd[i] : cost(rng);  // trial 1: backward = 2 forward
                        }
                        if (trial == 2) fwd[n / 2] += 1e-9;  // near-tie
                        if (trial == 3) bwd[n - 1] *= 5.0;   // one heavy stage
                        std::vector<TimelineSpan> spans;
                        const double with_spans = simulate_pipeline(sh, fwd.data(), bwd.data(), &spans);
                        const double fast = simulate_pipeline(sh, fwd.data(), bwd.data(), nullptr);
                        double full = 0;  // the full walk: the last span's end
                        for (const TimelineSpan& span : spans) full = std::max(full, span.end_s);
                        INFO("schedule " << int(schedule) << " p " << p << " v " << v << " m " << m << " trial " << trial);
                        REQUIRE(spans.size() == size_t(2 * m * v * p));
                        CHECK(std::fabs(fast - full) <= 1e-9 * full);
                        CHECK(with_spans == fast);  // asking for the timeline changes no bit
                        ++cases;
                    }
                }
            }
        }
    }
    CHECK(cases > 300);
}
