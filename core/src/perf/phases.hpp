// trainclock: the phase costs predict() sums (predict.cpp), shared with the search's lower bounds
// (search.cpp) so that a bound is the same function minus its non-negative terms, not a copy.
#pragma once

#include <array>
#include <cstdint>

#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/operators.hpp"

namespace trainclock::phases {

// The link and size of every process group of the execution's layout.
struct Network {
    std::array<Link, kGroupCount> link{};
    std::array<int64_t, kGroupCount> ranks{};
};
Network make_network(const Execution& x);

// Floor of one phase's cost in predict(): the ops' roofline time and launches (cost_ops), plus the
// collectives predict() exposes before slowdowns: TP when TP comm overlap is off, EP all-to-all
// beyond the compute it may hide behind, and the CP ring's exposed part (communication.hpp cp_exposed_s). Its other terms (ZeRO-3 gathers beyond the compute,
// comm-SM slowdown, comm launches, host-bound excess) are non-negative and left out.
double phase_floor_s(const OpList& ops, const CommList& comm, const Execution& x, const Network& net);
double piece_floor_s(const PieceOps& ops, const Execution& x, const Network& net);  // forward + backward

// Price of one step of `iteration_time_s`: GPUs x hours x price (the cost of one step when the run
// length is unknown).
double step_cost_usd(const Config& config, double iteration_time_s);
// Price of a run of `total_time_s` wall seconds: GPUs x hours x price (predict()'s cost_usd, and the
// search's and the plan's cost bounds).
double run_cost_usd(const Config& config, double total_time_s);

// The fitted per-step remainder (constants.json step_overhead_s) for a stack whose per-step host work is
// not derived from its code (framework step_overhead_fitted), else 0: predict()'s step_host_s less
// its non-negative derived terms, which the search's bound leaves out.
double fitted_step_overhead_s(const Config& config, const Calibration& cal);

// Seconds of the optimizer step on the host's CPUs (training.offload_optimizer) for `shard` weights
// updated per GPU; 0 without offload or when the node has no host_memory_bw_gbps.
double cpu_optimizer_step_s(const Execution& x, double shard);

}  // namespace trainclock::phases
