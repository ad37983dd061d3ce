// trainclock: pipeline schedule simulation (pipeline.hpp).
//
// Index
//   [SECTION] Stage orders (Megatron-LM schedules.py)
//   [SECTION] Event walk: each unit starts when its stage is free and its dependency has finished
//   [SECTION] Steady state: detect the period, skip whole periods, simulate the cool-down
//   [SECTION] GPipe closed form
//   [SECTION] Memo: the last results by their exact inputs
//   [SECTION] Public functions
#include "trainclock/perf/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace trainclock {
namespace {

// =====================================================================================
// [SECTION] Stage orders (Megatron-LM schedules.py)
// =====================================================================================

struct Unit {
    bool forward;
    int chunk;
    int micro_batch;
};

// Schedule of one stage: the pos-th unit it executes. Orders follow Megatron-LM schedules.py:
// GPipe: all forwards, then all backwards. 1F1B: min(PP - s - 1, M) warm-up forwards, then one
// forward / one backward, then the remaining backwards. Interleaved: warm-up (PP - s - 1) 2 + (v - 1) PP
// units; unit k runs chunk (k / PP) mod v (backwards in reverse chunk order) of micro-batch
// (k / (PP v)) PP + k mod PP.
struct StageOrder {
    int p, v, total, warm;
    bool gpipe;
    const int* chunk_in;  // interleaved: unit index mod PP v -> its chunk, and its micro-batch within the group of PP
    const int* mb_in;
    Unit at(int pos) const {
        bool forward;
        int k;
        if (gpipe) {
            forward = pos < total;
            k = forward ? pos : pos - total;
        } else if (pos < warm) {
            forward = true;
            k = pos;
        } else if (pos < 2 * total - warm) {  // steady state: forward then backward
            const int i = pos - warm;
            forward = (i & 1) == 0;
            k = forward ? warm + (i >> 1) : (i >> 1);
        } else {
            forward = false;
            k = pos - total;
        }
        if (v == 1) return {forward, 0, k};
        const int group = k / (p * v), i = k - group * p * v;
        return {forward, forward ? chunk_in[i] : v - 1 - chunk_in[i], group * p + mb_in[i]};
    }
};

// =====================================================================================
// [SECTION] Event walk: each unit starts when its stage is free and its dependency has finished
// =====================================================================================

// Finish times per micro-batch x virtual stage (< 0: not yet run; micro-batch-major so the moving
// wavefront stays in cache), per-stage next unit and free time. Thread-local scratch: no allocation
// per prediction once warm. Only the micro-batches the walk can reach are marked "not yet run":
// [0, cleared) before a skip, and from the first group after it (the skipped ones are never read).
struct Walk {
    int p, v, vs, m, total, units;
    const double* fwd_s;
    const double* bwd_s;
    const std::vector<StageOrder>& orders;
    double* fend;
    double* bend;
    double* free_at;
    int* next;
    double end_time = 0;
    int cleared = 0;

    void clear(int mb_begin, int mb_end) {
        std::fill(fend + mb_begin * vs, fend + mb_end * vs, -1.0);
        std::fill(bend + mb_begin * vs, bend + mb_end * vs, -1.0);
    }
    // Units at positions < stop belong to micro-batches < (stop / (PP v) + 1) PP (unit index <= position).
    void clear_for(int stop) {
        const int reach = std::min(m, v == 1 ? stop : (stop / (p * v) + 1) * p);
        if (reach > cleared) clear(cleared, reach);
        cleared = std::max(cleared, reach);
    }

    double& end_of(const Unit& u, int stage) const { return (u.forward ? fend : bend)[u.micro_batch * vs + u.chunk * p + stage]; }
    double time_at(int stage, int pos) const { return end_of(orders[size_t(stage)].at(pos), stage); }

    // Runs every stage up to (not including) position `stop`: a stage runs until a unit waits on
    // another stage, then the walk switches to the stage that owes the missing result (the previous
    // virtual stage for a forward, the next for a backward). Dependencies form a DAG and a unit never
    // waits on a later position of another stage, so following them always reaches a stage that can
    // run: O(units) work. False when it gets stuck (a dependency was skipped: see fast_forward).
    bool advance(int stop, std::vector<TimelineSpan>* timeline) {
        clear_for(stop);
        int remaining = 0;
        for (int s = 0; s < p; ++s) remaining += std::max(0, stop - next[s]);
        int s = 0, idle_hops = 0;
        while (s < p && next[s] >= stop) ++s;
        while (remaining > 0 && idle_hops <= p) {
            const StageOrder& order = orders[size_t(s)];
            double t = free_at[s];
            int pos = next[s], owner = -1;
            for (; pos < stop; ++pos) {
                const Unit u = order.at(pos);
                const int j = u.chunk * p + s;  // virtual stage
                double ready;
                if (u.forward)
                    ready = j == 0 ? 0.0 : fend[u.micro_batch * vs + j - 1];
                else
                    ready = j == vs - 1 ? fend[u.micro_batch * vs + j] : bend[u.micro_batch * vs + j + 1];
                if (ready < 0) {
                    owner = (u.forward ? j - 1 : j + 1) % p;
                    break;
                }
                const double start = t > ready ? t : ready;
                const int d = s * v + u.chunk;
                t = start + (u.forward ? fwd_s[d] : bwd_s[d]);
                (u.forward ? fend : bend)[u.micro_batch * vs + j] = t;
                if (timeline) timeline->push_back({s, u.micro_batch, u.chunk, u.forward, start, t});
            }
            idle_hops = pos == next[s] ? idle_hops + 1 : 0;
            remaining -= pos - next[s];
            next[s] = pos;
            free_at[s] = t;
            end_time = std::max(end_time, t);
            if (owner >= 0)
                s = owner;
            else if (remaining > 0)
                s = int(std::find_if(next, next + p, [stop](int n) { return n < stop; }) - next);
        }
        return remaining == 0;
    }
};

// =====================================================================================
// [SECTION] Steady state: detect the period, skip whole periods, simulate the cool-down
// =====================================================================================
// 1F1B and interleaved 1F1B are max-plus linear recurrences (Baccelli et al. 1992, "Synchronization
// and Linearity", ch. 3): after a transient every event repeats one period later shifted by a
// constant. In the steady part of the orders (positions [warm_0, 2 M v - warm_0) on every stage,
// warm_0 the longest warm-up) the unit at position pos + U is the unit at pos for micro-batch + G
// (U = 2, G = 1 for 1F1B; U = 2 PP v, G = PP for interleaved: one group of PP micro-batches), on
// the same stage and chunk; it waits on its own stage's previous unit and on one unit of a
// neighbouring stage at position pos - 1 (1F1B: warm-ups differ by 1 between stages) or pos - 2
// (interleaved: by 2), the last virtual stage's backward on its own forward at pos - 1, and j = 0
// forwards on nothing. The whole dependency graph of the steady part is thus invariant under
// the shift pos -> pos + U. So when one full period [q + U, q + 2U) on every stage ends exactly
// lambda after the period before it, induction over the graph (every dependency of a unit at
// >= q + 2U lies at >= q + U) gives the same shift for every later steady period: the walk skips
// n whole periods by writing the last verified period shifted by n U positions and n lambda, then
// simulates the cool-down. Schedules that never settle (or settle with a longer cycle) run in full.

// Deltas agree with the period to this relative precision (floating-point sums of up to U durations
// differ by a few ulps between periods that are equal in exact arithmetic).
constexpr double kPeriodTolerance = 1e-12;

// True and the end time when the walk could skip the steady state; false leaves the walk to rerun.
bool fast_forward(Walk& w, double& end_time) {
    const int groups_size = w.v > 1 ? w.p : 1;                // G micro-batches per period
    const int period = 2 * w.v * groups_size;                 // U positions per period
    const int back = groups_size * w.vs;                      // index distance of one period in fend / bend
    if (w.v > 1 && w.total % (w.p * w.v) != 0) return false;  // interleaving needs M % PP == 0
    const int warm0 = w.orders[0].warm;
    const int steady_end = w.units - warm0;         // every stage is steady in [warm0, steady_end)
    int q = warm0 + period;                         // [warm0, warm0 + U) is still settling
    if (q + 4 * period > steady_end) return false;  // nothing worth skipping
    if (!w.advance(q + 2 * period, nullptr)) return false;
    for (;; q += period) {
        if (q + 3 * period > steady_end) {  // never settled: finish the walk
            if (!w.advance(w.units, nullptr)) return false;
            end_time = w.end_time;
            return true;
        }
        const double lambda = w.time_at(0, q + period) - w.time_at(0, q);
        bool periodic = lambda > 0;
        for (int s = 0; s < w.p && periodic; ++s)
            for (int pos = q + period; pos < q + 2 * period; ++pos) {
                const double* t = &w.end_of(w.orders[size_t(s)].at(pos), s);  // pos - U: G micro-batches back
                if (std::fabs(*t - t[-back] - lambda) > kPeriodTolerance * *t) {
                    periodic = false;
                    break;
                }
            }
        if (periodic) break;
        if (!w.advance(q + 3 * period, nullptr)) return false;
    }
    // Skip n periods: the verified period [q + U, q + 2U) moves to [q + U + n U, q + 2U + n U), i.e.
    // n G micro-batches on. Every unit after it belongs to a group at or after the groups it holds,
    // the first of which is on stage 0 (the longest warm-up: the oldest backward).
    const int n = (steady_end - (q + 2 * period)) / period;
    const double shift = double(n) * (w.time_at(0, q + period) - w.time_at(0, q));
    int first_mb = w.m;
    for (int pos = q + period; pos < q + 2 * period; ++pos)
        first_mb = std::min(first_mb, w.orders[0].at(pos).micro_batch + n * groups_size);
    first_mb = std::max(w.cleared, first_mb / groups_size * groups_size);
    w.clear(first_mb, w.m);
    w.cleared = w.m;
    const int ahead = n * back;
    for (int s = 0; s < w.p; ++s) {
        const StageOrder& order = w.orders[size_t(s)];
        for (int pos = q + period; pos < q + 2 * period; ++pos) {
            double* t = &w.end_of(order.at(pos), s);
            t[ahead] = *t + shift;
        }
        w.next[s] = q + 2 * period + n * period;
        w.free_at[s] = w.time_at(s, w.next[s] - 1);
        w.end_time = std::max(w.end_time, w.free_at[s]);
    }
    if (!w.advance(w.units, nullptr)) return false;
    end_time = w.end_time;
    return true;
}

// =====================================================================================
// [SECTION] GPipe closed form
// =====================================================================================
// GPipe is two tandem lines. Forwards: F(s, k) = max(F(s, k-1), F(s-1, k)) + f_s, so F(s, k) is the
// heaviest lattice path from (0, 0) to (s, k): sum_{r<=s} f_r + k max_{r<=s} f_r. Backwards (same
// micro-batch order) start on stage s at a_s = F(s, M-1) and go down the stages:
// B(s, k) = max(B(s, k-1), B(s+1, k)) + b_s (the last stage's own forwards are done by a_{PP-1}), so
// the step ends at B(0, M-1) = max_s' a_s' + sum_{r<=s'} b_r + (M-1) max_{r<=s'} b_r
// (tandem queues as max-plus recurrences: Baccelli et al. 1992 sec. 7.2).
double gpipe_time_s(int p, int m, const double* fwd_s, const double* bwd_s) {
    double sum_f = 0, max_f = 0, sum_b = 0, max_b = 0, end = 0;
    for (int s = 0; s < p; ++s) {
        sum_f += fwd_s[s];
        max_f = std::max(max_f, fwd_s[s]);
        sum_b += bwd_s[s];
        max_b = std::max(max_b, bwd_s[s]);
        const double forwards_done = sum_f + double(m - 1) * max_f;
        end = std::max(end, forwards_done + sum_b + double(m - 1) * max_b);
    }
    return end;
}

// =====================================================================================
// [SECTION] Memo: the last results by their exact inputs
// =====================================================================================
// A layout search predicts many layouts whose stages cost the same (e.g. ZeRO 0-2 only change the
// gradient sync and the optimizer step): a small direct-mapped, thread-local table keyed by the
// exact inputs (shape and the bits of every duration) returns the same double the walk returned.

struct MemoSlot {
    int schedule = -1, p = 0, m = 0, v = 0;
    std::vector<double> durations;  // fwd_s then bwd_s
    double end_s = 0;
};
constexpr size_t kMemoSlots = 1024;

MemoSlot& memo_slot(int schedule, int p, int m, int v, const double* fwd_s, const double* bwd_s, bool& hit) {
    thread_local std::vector<MemoSlot> memo(kMemoSlots);
    const int n = p * v;
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the shape and the duration bits
    auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
    mix(uint64_t(schedule));
    mix(uint64_t(p));
    mix(uint64_t(m));
    mix(uint64_t(v));
    for (const double* d : {fwd_s, bwd_s})
        for (int i = 0; i < n; ++i) {
            uint64_t bits;
            std::memcpy(&bits, d + i, sizeof bits);
            mix(bits);
        }
    MemoSlot& slot = memo[(h ^ (h >> 29)) % kMemoSlots];
    hit = slot.schedule == schedule && slot.p == p && slot.m == m && slot.v == v &&
          std::memcmp(slot.durations.data(), fwd_s, sizeof(double) * size_t(n)) == 0 &&
          std::memcmp(slot.durations.data() + n, bwd_s, sizeof(double) * size_t(n)) == 0;
    if (!hit) {
        slot.schedule = schedule;
        slot.p = p;
        slot.m = m;
        slot.v = v;
        slot.durations.assign(fwd_s, fwd_s + n);
        slot.durations.insert(slot.durations.end(), bwd_s, bwd_s + n);
    }
    return slot;
}

}  // namespace

// =====================================================================================
// [SECTION] Public functions
// =====================================================================================

int64_t stage0_units_in_flight(const PipelineShape& sh) {
    const int64_t p = std::max<int64_t>(sh.stages, 1), m = std::max<int64_t>(sh.micro_batches, 1);
    switch (sh.schedule) {
    case PipelineSchedule::gpipe: return m;
    case PipelineSchedule::one_f_one_b: return std::min(p, m);
    case PipelineSchedule::interleaved: {
        const int64_t v = std::max<int64_t>(sh.chunks, 1);
        return std::min(2 * (p - 1) + (v - 1) * p + 1, m * v);
    }
    }
    return m;
}

bool interleaving_possible(const PipelineShape& sh) { return sh.stages > 1 && sh.chunks > 1 && sh.micro_batches % sh.stages == 0; }

namespace {

// simulate_pipeline's work: with a timeline every event is walked (and recorded); without, the
// memo, the GPipe closed form or the steady-state skip answer when they can.
double run_schedule(const PipelineShape& shape, const double* fwd_s, const double* bwd_s, std::vector<TimelineSpan>* timeline) {
    const int p = int(std::max<int64_t>(shape.stages, 1)), m = int(std::max<int64_t>(shape.micro_batches, 1));
    const bool gpipe = shape.schedule == PipelineSchedule::gpipe;
    if (gpipe && !timeline) return gpipe_time_s(p, m, fwd_s, bwd_s);
    const int v = shape.schedule == PipelineSchedule::interleaved ? int(std::max<int64_t>(shape.chunks, 1)) : 1;
    MemoSlot* memo = nullptr;
    if (!timeline) {
        bool hit = false;
        memo = &memo_slot(int(shape.schedule), p, m, v, fwd_s, bwd_s, hit);
        if (hit) return memo->end_s;
    }
    const int vs = p * v, total = m * v, units = 2 * total;
    thread_local std::vector<double> scratch;
    thread_local std::vector<int> next_unit;
    thread_local std::vector<StageOrder> orders;
    thread_local std::vector<int> in_group;
    in_group.resize(size_t(2 * vs));
    for (int i = 0; i < vs; ++i) {
        in_group[size_t(i)] = i / p;
        in_group[size_t(vs + i)] = i % p;
    }
    orders.resize(size_t(p));
    for (int s = 0; s < p; ++s) {
        const int warm = v == 1 ? std::min(p - s - 1, total) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
        orders[size_t(s)] = {p, v, total, warm, gpipe, in_group.data(), in_group.data() + vs};
    }
    if (scratch.size() < size_t(2 * vs * m + p)) scratch.resize(size_t(2 * vs * m + p));
    auto fresh_walk = [&]() {
        next_unit.assign(size_t(p), 0);
        double* fend = scratch.data();
        std::fill(fend + 2 * vs * m, fend + 2 * vs * m + p, 0.0);
        return Walk{p, v, vs, m, total, units, fwd_s, bwd_s, orders, fend, fend + vs * m, fend + 2 * vs * m, next_unit.data()};
    };
    if (!timeline) {
        Walk w = fresh_walk();
        double end_time;
        if (fast_forward(w, end_time)) return memo->end_s = end_time;
    }
    Walk w = fresh_walk();
    w.advance(units, timeline);
    if (memo) memo->end_s = w.end_time;
    return w.end_time;
}

}  // namespace

double simulate_pipeline(const PipelineShape& shape, const double* fwd_s, const double* bwd_s, std::vector<TimelineSpan>* timeline) {
    // The step time must not depend on whether the spans are asked for (the page asks, the CLI does
    // not): the spans come from the full walk, the time always from the fast path.
    if (timeline) run_schedule(shape, fwd_s, bwd_s, timeline);
    return run_schedule(shape, fwd_s, bwd_s, nullptr);
}

double uniform_pipeline_time_s(const PipelineShape& sh, double f, double b) {
    const double p = double(std::max<int64_t>(sh.stages, 1)), m = double(std::max<int64_t>(sh.micro_batches, 1));
    const double v = sh.schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(sh.chunks, 1)) : 1.0;
    return (m * v + p - 1.0) * (f + b);
}

}  // namespace trainclock
