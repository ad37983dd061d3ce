// trainclock: the whole run (run.hpp).
#include "trainclock/perf/run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "trainclock/perf/memory.hpp"

namespace trainclock {

WholeRun whole_run(const Config& c, double step_s, double steps) { return whole_run(c, step_s, steps, checkpoint_bytes(c)); }

WholeRun whole_run(const Config& c, double step_s, double steps, double checkpoint_bytes) {
    WholeRun r;
    const TrainingSpec& t = c.training;
    r.ideal_time_s = steps * step_s;
    const double gpus = double(std::max<int64_t>(c.num_gpus, 1));
    r.failure_rate_per_gpu_hour = t.failure_rate_per_gpu_hour >= 0 ? t.failure_rate_per_gpu_hour : kLlama3FailuresPerGpuHour;
    // Default storage: one host writes to its local disk; more than one share a cluster file system.
    r.storage_local = t.storage_bw_gbps <= 0 && c.num_gpus <= c.node.host_gpus();
    r.storage_bw_gbps = t.storage_bw_gbps > 0 ? t.storage_bw_gbps : r.storage_local ? kLocalNvmeWriteGbps : kLlama3StorageGbpsPerGpu * gpus;
    r.restart_s = t.restart_s >= 0 ? t.restart_s : kDefaultRestartS;
    r.checkpoint_bytes = checkpoint_bytes;
    r.checkpoint_write_s = r.checkpoint_bytes / (r.storage_bw_gbps * 1e9);
    // One step (no training.tokens) or training.ideal: today's figure, steps x step time.
    if (t.ideal || t.tokens <= 0 || r.ideal_time_s <= 0) return r;
    r.ideal = false;
    const double lambda = r.failure_rate_per_gpu_hour * gpus / 3600.0;  // interruptions per wall second
    if (t.failure_rate_per_gpu_hour < 0) r.defaults.push_back("training.failure_rate_per_gpu_hour");
    if (t.storage_bw_gbps <= 0) r.defaults.push_back("training.storage_bw_gbps");
    if (t.restart_s < 0) r.defaults.push_back("training.restart_s");
    // Checkpoint interval: given in seconds or steps, else Young's optimum sqrt(2 C / lambda) (Young
    // 1974, CACM 17(9); Daly 2006 eq. 37 to first order), at least one step and at most the run.
    if (t.checkpoint_interval_s > 0)
        r.checkpoint_interval_s = t.checkpoint_interval_s;
    else if (t.checkpoint_interval_steps > 0)
        r.checkpoint_interval_s = double(t.checkpoint_interval_steps) * step_s;
    else {
        r.defaults.push_back("training.checkpoint_interval_s");
        r.checkpoint_interval_s = lambda > 0 ? std::sqrt(2.0 * r.checkpoint_write_s / lambda) : r.ideal_time_s;
    }
    r.checkpoint_interval_s = std::clamp(r.checkpoint_interval_s, step_s, r.ideal_time_s);
    r.checkpoints = std::floor(r.ideal_time_s / r.checkpoint_interval_s);
    // Each interruption costs the restart, the checkpoint load and on average half a segment of
    // work since the last checkpoint; interruptions arrive at lambda over the whole wall time W:
    // W = T + K C + lambda W (R + C + (tau + C) / 2)  =>  W = (T + K C) / (1 - lambda (...)).
    const double per_interruption = r.restart_s + r.checkpoint_write_s + 0.5 * (r.checkpoint_interval_s + r.checkpoint_write_s);
    const double busy = lambda * per_interruption;
    const double useful = r.ideal_time_s + r.checkpoints * r.checkpoint_write_s;
    constexpr double kMinProgress = 0.01;  // below 1 % progress the run does not finish: reported, capped
    r.stalls = 1.0 - busy < kMinProgress;
    const double wall = useful / std::max(1.0 - busy, kMinProgress);
    r.goodput = r.ideal_time_s / wall;
    r.expected_interruptions = lambda * wall;
    return r;
}

std::string whole_run_note(const WholeRun& r) {
    if (r.ideal) return "";
    char buf[512];
    std::string defaults;
    for (const std::string& key : r.defaults) {
        if (!defaults.empty()) defaults += ", ";
        if (key == "training.failure_rate_per_gpu_hour") {
            std::snprintf(buf, sizeof buf, "%.3g interruptions per GPU-hour (Llama 3: 419 in 54 days on 16,384 GPUs)",
                          r.failure_rate_per_gpu_hour);
            defaults += buf;
        } else if (key == "training.storage_bw_gbps") {
            if (r.storage_local)
                std::snprintf(buf, sizeof buf, "checkpoint storage %.4g GB/s (one host: a local PCIe 4.0 NVMe SSD's sequential write)",
                              r.storage_bw_gbps);
            else
                std::snprintf(buf, sizeof buf, "checkpoint storage %.4g GB/s (Llama 3's 2 TB/s over 16K GPUs, per GPU)", r.storage_bw_gbps);
            defaults += buf;
        } else if (key == "training.restart_s") {
            std::snprintf(buf, sizeof buf, "restart %.0f s (assumed)", r.restart_s);
            defaults += buf;
        } else if (key == "training.checkpoint_interval_s") {
            std::snprintf(buf, sizeof buf, "a checkpoint every %.3g h (Young's optimum)", r.checkpoint_interval_s / 3600.0);
            defaults += buf;
        }
    }
    std::snprintf(buf, sizeof buf, "whole run: goodput %.1f %%, %.1f expected interruptions, %.0f checkpoints of %.3g s", 100.0 * r.goodput,
                  r.expected_interruptions, r.checkpoints, r.checkpoint_write_s);
    std::string out = buf;
    if (r.stalls) out += " (interruptions outpace checkpoint + restart: the run would not finish; capped at 1 % progress)";
    if (!defaults.empty()) out += "; defaults: " + defaults;
    return out + " (training.ideal / --ideal for steps x step time)";
}

}  // namespace trainclock
