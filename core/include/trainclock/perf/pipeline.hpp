// trainclock: event simulation of one iteration's pipeline schedule (DESIGN.md 2.4).
// GPipe, 1F1B and interleaved 1F1B (virtual stages) over PP stages x M micro-batches, with
// per-(stage, chunk) forward and backward durations (non-uniform first/last stages, P2P included).
#pragma once

#include <cstdint>
#include <vector>

#include "trainclock/model/config.hpp"

namespace trainclock {

// One span of the pipeline timeline of one iteration (what the UI draws).
struct TimelineSpan {
    int stage = 0;  // pipeline stage (0 = first)
    int micro_batch = 0;
    int chunk = 0;  // virtual stage (interleaved schedule)
    bool forward = true;
    double start_s = 0;
    double end_s = 0;
};

struct PipelineShape {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int64_t stages = 1;         // PP
    int64_t micro_batches = 1;  // M
    int64_t chunks = 1;         // virtual stages per stage (interleaved only; 1 otherwise)
};

// Layers per (virtual) stage: stage_split.hpp (virtual_stage_layers, stage_layer_range).

// Units (forward micro-batch chunks) stage 0 holds activations for at the peak of the schedule:
// M (GPipe), min(PP, M) (1F1B), min(2 (PP - 1) + (v - 1) PP + 1, M v) chunks (interleaved)
// (Narayanan et al. SC'21 sec. 2.2; Korthikanti et al. 2022 sec. 4.2.3).
int64_t stage0_units_in_flight(const PipelineShape& shape);

// Interleaved 1F1B as in Megatron-LM needs M to be a multiple of PP (schedules.py asserts it).
bool interleaving_possible(const PipelineShape& shape);

// Simulates every forward and backward unit in schedule order, each starting when its stage is free
// and its dependency (previous virtual stage forward, next virtual stage backward) has finished.
// fwd_s / bwd_s hold stages x chunks durations, index stage * chunks + chunk (virtual stage
// chunk * stages + stage). Returns the time until the last backward ends; fills `timeline` if given.
// Without a timeline the walk stops once the schedule is periodic and skips whole periods (GPipe:
// closed form; pipeline.cpp [SECTION] Steady state), equal to the full walk to ~1e-12 relative; the
// returned time is that one with or without a timeline (the spans are the full walk's).
double simulate_pipeline(const PipelineShape& shape, const double* fwd_s, const double* bwd_s, std::vector<TimelineSpan>* timeline);

// Closed form for identical stages (no P2P asymmetry): (M + PP - 1)(f + b) for GPipe and 1F1B
// (Huang et al. 2019; Narayanan et al. SC'21 sec. 2.2.1) and (M v + PP - 1)(f_c + b_c) for
// interleaving, i.e. a bubble of (PP - 1)(f + b) / v (SC'21 sec. 2.2.2). f, b: one chunk.
double uniform_pipeline_time_s(const PipelineShape& shape, double fwd_chunk_s, double bwd_chunk_s);

}  // namespace trainclock
