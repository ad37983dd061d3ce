// trainclock: pipeline schedule simulation (pipeline.hpp).
#include "trainclock/pipeline.hpp"

#include <algorithm>

namespace trainclock {
namespace {

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
    const int* chunk_of;  // unit index k -> forward chunk and micro-batch (the same on every stage)
    const int* mb_of;
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
        const int chunk = chunk_of[k];
        return {forward, forward ? chunk : v - 1 - chunk, mb_of[k]};
    }
};

} // namespace

LayerRange virtual_stage_layers(int64_t layers, int64_t virtual_stages, int64_t j) {
    const int64_t n = std::max<int64_t>(virtual_stages, 1);
    const int64_t base = layers / n, extra = layers % n;
    return {j * base + std::min(j, extra), base + (j < extra ? 1 : 0)};
}

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

bool interleaving_possible(const PipelineShape& sh) {
    return sh.stages > 1 && sh.chunks > 1 && sh.micro_batches % sh.stages == 0;
}

double simulate_pipeline(const PipelineShape& shape, const double* fwd_s, const double* bwd_s,
                         std::vector<TimelineSpan>* timeline) {
    const int p = int(std::max<int64_t>(shape.stages, 1)), m = int(std::max<int64_t>(shape.micro_batches, 1));
    const int v = shape.schedule == PipelineSchedule::interleaved ? int(std::max<int64_t>(shape.chunks, 1)) : 1;
    const int vs = p * v, total = m * v, units = 2 * total;
    // Reused scratch (no allocation per prediction once warm): finish times per micro-batch x virtual
    // stage (< 0: not yet run; micro-batch-major so the moving wavefront stays in cache), per-stage
    // next unit and free time.
    thread_local std::vector<double> scratch;
    thread_local std::vector<int> next_unit;
    thread_local std::vector<StageOrder> orders;
    thread_local std::vector<int> unit_map;
    unit_map.resize(size_t(2 * total));
    int* chunk_of = unit_map.data();
    int* mb_of = chunk_of + total;
    if (v > 1)
        for (int k = 0; k < total; ++k) {
            const int group = k / (p * v), in_group = k - group * p * v, chunk = in_group / p;
            chunk_of[k] = chunk;
            mb_of[k] = group * p + (in_group - chunk * p);
        }
    scratch.assign(size_t(2 * vs * m + p), -1.0);
    next_unit.assign(size_t(p), 0);
    orders.resize(size_t(p));
    double* fend = scratch.data();
    double* bend = fend + vs * m;
    double* free_at = bend + vs * m;
    for (int s = 0; s < p; ++s) {
        free_at[s] = 0;
        const int warm = v == 1 ? std::min(p - s - 1, total) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
        orders[size_t(s)] = {p, v, total, warm, shape.schedule == PipelineSchedule::gpipe, chunk_of, mb_of};
    }
    int* next = next_unit.data();
    double end_time = 0;
    // Run a stage until a unit waits on another stage, then switch to the stage that owes the missing
    // result (the previous virtual stage for a forward, the next for a backward). Dependencies form a
    // DAG, so following them always reaches a stage that can run: O(units) work in total.
    int remaining = units * p, s = 0, idle_hops = 0;
    while (remaining > 0 && idle_hops <= p) {
        const StageOrder& order = orders[size_t(s)];
        double t = free_at[s];
        int pos = next[s], owner = -1;
        for (; pos < units; ++pos) {
            const Unit u = order.at(pos);
            const int j = u.chunk * p + s;  // virtual stage
            double ready;
            if (u.forward) ready = j == 0 ? 0.0 : fend[u.micro_batch * vs + j - 1];
            else ready = j == vs - 1 ? fend[u.micro_batch * vs + j] : bend[u.micro_batch * vs + j + 1];
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
        idle_hops = pos == next[s] ? idle_hops + 1 : 0;  // guards a malformed order (cannot happen)
        remaining -= pos - next[s];
        next[s] = pos;
        free_at[s] = t;
        end_time = std::max(end_time, t);
        if (owner >= 0) s = owner;
        else if (remaining > 0) s = int(std::find_if(next, next + p, [units](int n) { return n < units; }) - next);
    }
    return end_time;
}

double uniform_pipeline_time_s(const PipelineShape& sh, double f, double b) {
    const double p = double(std::max<int64_t>(sh.stages, 1)), m = double(std::max<int64_t>(sh.micro_batches, 1));
    const double v = sh.schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(sh.chunks, 1)) : 1.0;
    return (m * v + p - 1.0) * (f + b);
}

} // namespace trainclock
