// trainclock: the whole run around the steps: checkpoint saves, unexpected interruptions, restarts
// and the work lost to them, giving the wall time and the goodput (the share of it spent on steps
// that count). First-order checkpoint/restart model of Young (1974) and Daly (2006).
#pragma once

#include <string>
#include <vector>

#include "trainclock/model/config.hpp"

namespace trainclock {

// The whole run around the steps: wall time with checkpoints, interruptions and restarts.
struct WholeRun {
    bool ideal = true;                  // no overheads (training.ideal, or one step only)
    double ideal_time_s = 0;            // steps x step time
    double goodput = 1;                 // ideal_time_s / total_time_s
    double expected_interruptions = 0;  // unexpected interruptions over the wall time
    double checkpoint_bytes = 0;        // model + optimizer state of the whole model
    double checkpoint_write_s = 0;      // one checkpoint save (training waits), also its load on restart
    double checkpoint_interval_s = 0;   // training seconds between checkpoints
    double checkpoints = 0;             // checkpoints written over the run
    double restart_s = 0;               // per interruption, without the checkpoint load and the lost work
    double failure_rate_per_gpu_hour = 0;
    double storage_bw_gbps = 0;
    bool storage_local = false;         // the default bandwidth is one host's local NVMe (kLocalNvmeWriteGbps)
    bool stalls = false;                // interruptions outpace checkpoint + restart: the run would not finish (capped at 1 % progress)
    std::vector<std::string> defaults;  // training.* keys that took their default (stated in the warnings)
};

// Defaults, each stated in the output when used.
// Llama 3 405B pre-training: 419 unexpected interruptions in a 54-day snapshot on 16,384 H100 GPUs
// (Dubey et al. 2024, arXiv 2407.21783, sec. 3.3.4): 419 / (16384 x 54 x 24 GPU-hours).
inline constexpr double kLlama3FailuresPerGpuHour = 419.0 / (16384.0 * 54.0 * 24.0);  // 1.97e-5
// Llama 3's checkpoint storage, Tectonic: 2 TB/s sustained for the 16K-GPU cluster (Dubey et al.
// 2024 sec. 3.3.1), 122 MB/s per GPU; a job of more than one host gets its GPUs' share.
inline constexpr double kLlama3StorageGbpsPerGpu = 2000.0 / 16384.0;
// A job on one host (a workstation, one server) writes its checkpoints to a local NVMe SSD: one PCIe 4.0
// x4 drive's sequential write, 6.9 GB/s (Samsung 990 PRO, Samsung's launch specification of Aug. 2022:
// up to 7,450 MB/s read, 6,900 MB/s write); a peak figure, what torch.save reaches is lower.
inline constexpr double kLocalNvmeWriteGbps = 6.9;
// Interruption -> training again (detect, reschedule, start processes, NCCL init), before loading the
// checkpoint: an ASSUMED default (no published figure transcribed), 10 minutes.
inline constexpr double kDefaultRestartS = 600.0;

// The whole run of `steps` steps of `iteration_time_s` under the config's training.* keys.
WholeRun whole_run(const Config& config, double iteration_time_s, double steps);
// The same with checkpoint_bytes(config) given (a caller that evaluates many step times of one config).
WholeRun whole_run(const Config& config, double iteration_time_s, double steps, double checkpoint_bytes);

// The warning that states the defaults used and the goodput ("" when nothing to say).
std::string whole_run_note(const WholeRun& run);

}  // namespace trainclock
