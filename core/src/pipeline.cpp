// trainclock: pipeline schedule simulation (pipeline.hpp).
#include "trainclock/pipeline.hpp"

#include <algorithm>

namespace trainclock {
namespace {

struct Unit {
    bool forward;
    int64_t chunk;
    int64_t micro_batch;
};

// The pos-th unit stage s executes. Orders follow Megatron-LM schedules.py:
// GPipe: all forwards, then all backwards. 1F1B: min(PP - s - 1, M) warm-up forwards, then one
// forward / one backward, then the remaining backwards. Interleaved: warm-up (PP - s - 1) 2 + (v - 1) PP
// units; unit k runs chunk (k / PP) mod v (backwards in reverse chunk order) of micro-batch
// (k / (PP v)) PP + k mod PP.
Unit unit_at(const PipelineShape& sh, int64_t s, int64_t pos) {
    const int64_t p = sh.stages, v = sh.chunks, total = sh.micro_batches * v;
    bool forward;
    int64_t k;
    if (sh.schedule == PipelineSchedule::gpipe) {
        forward = pos < total;
        k = forward ? pos : pos - total;
    } else {
        const int64_t warm = v == 1 ? std::min(p - s - 1, total) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
        const int64_t steady = total - warm;
        if (pos < warm) {
            forward = true;
            k = pos;
        } else if (pos < warm + 2 * steady) {
            const int64_t i = pos - warm;
            forward = i % 2 == 0;
            k = forward ? warm + i / 2 : i / 2;
        } else {
            forward = false;
            k = steady + (pos - warm - 2 * steady);
        }
    }
    const int64_t group = k / (p * v), in_group = k % (p * v);
    int64_t chunk = in_group / p;
    if (!forward) chunk = v - 1 - chunk;
    return {forward, chunk, group * p + in_group % p};
}

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
    PipelineShape sh = shape;
    sh.stages = std::max<int64_t>(sh.stages, 1);
    sh.micro_batches = std::max<int64_t>(sh.micro_batches, 1);
    if (sh.schedule != PipelineSchedule::interleaved) sh.chunks = 1;
    const int64_t p = sh.stages, v = sh.chunks, m = sh.micro_batches, vs = p * v;
    // Reused scratch (no allocation per prediction once warm): finish times per virtual stage x micro-batch.
    thread_local std::vector<double> fend, bend, free_at;
    thread_local std::vector<int64_t> next;
    fend.assign(size_t(vs * m), -1.0);
    bend.assign(size_t(vs * m), -1.0);
    free_at.assign(size_t(p), 0.0);
    next.assign(size_t(p), 0);
    const int64_t units = 2 * m * v;
    int64_t done = 0;
    double end_time = 0;
    while (done < units * p) {
        bool progress = false;
        for (int64_t s = 0; s < p; ++s) {
            while (next[size_t(s)] < units) {
                const Unit u = unit_at(sh, s, next[size_t(s)]);
                const int64_t j = u.chunk * p + s;  // virtual stage
                double ready;
                if (u.forward) {
                    ready = j == 0 ? 0.0 : fend[size_t((j - 1) * m + u.micro_batch)];
                } else {
                    ready = j == vs - 1 ? fend[size_t(j * m + u.micro_batch)] : bend[size_t((j + 1) * m + u.micro_batch)];
                }
                if (ready < 0) break;  // dependency not finished yet: another stage must advance
                const double start = std::max(free_at[size_t(s)], ready);
                const size_t d = size_t(s * v + u.chunk);
                const double end = start + (u.forward ? fwd_s[d] : bwd_s[d]);
                (u.forward ? fend : bend)[size_t(j * m + u.micro_batch)] = end;
                free_at[size_t(s)] = end;
                end_time = std::max(end_time, end);
                if (timeline)
                    timeline->push_back({int(s), int(u.micro_batch), int(u.chunk), u.forward, start, end});
                ++next[size_t(s)];
                ++done;
                progress = true;
            }
        }
        if (!progress) break;  // cannot happen for the orders above; guards against a malformed shape
    }
    return end_time;
}

double uniform_pipeline_time_s(const PipelineShape& sh, double f, double b) {
    const double p = double(std::max<int64_t>(sh.stages, 1)), m = double(std::max<int64_t>(sh.micro_batches, 1));
    const double v = sh.schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(sh.chunks, 1)) : 1.0;
    return (m * v + p - 1.0) * (f + b);
}

} // namespace trainclock
