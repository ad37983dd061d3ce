// `trainclock predict`: one prediction as a readable table, the result JSON or a CSV row.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/catalogue/intervals.hpp"
#include "trainclock/model/model.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock::cli {
namespace {

std::string layout_line(const Config& c) {
    const ParallelSpec& p = c.parallel;
    const TrainingSpec& t = c.training;
    const int64_t micro_batches = t.global_batch / (t.micro_batch * p.dp);
    std::string line =
        "tp " + std::to_string(p.tp) + " x pp " + std::to_string(p.pp) + " x cp " + std::to_string(p.cp) + " x dp " + std::to_string(p.dp);
    if (p.ep > 1 || p.etp() != p.tp)
        line += " (ep " + std::to_string(p.ep) + (p.etp() != p.tp ? ", expert tp " + std::to_string(p.etp()) : std::string()) + ")";
    line += ", sp " + std::string(p.sequence_parallel ? "on" : "off") + ", zero " + std::to_string(p.zero);
    line += ", " + std::string(p.schedule == PipelineSchedule::gpipe         ? "gpipe"
                               : p.schedule == PipelineSchedule::interleaved ? "interleaved"
                                                                             : "1f1b");
    if (p.virtual_stages > 1) line += " x" + std::to_string(p.virtual_stages) + " virtual";
    if (!p.stage_split.pipeline_layout.empty()) line += ", stages " + p.stage_split.pipeline_layout;  // only when set
    line += "\nbatch: " + std::to_string(t.global_batch) + " x " + std::to_string(t.seq_len) +
            " tokens per step = " + std::to_string(micro_batches) + " micro-batches of " + std::to_string(t.micro_batch) + " per replica" +
            ", recompute " +
            (t.recompute == Recompute::none        ? "none"
             : t.recompute == Recompute::selective ? "selective"
                                                   : "full") +
            ", flash attention " +
            (!t.flash_attention                              ? "off"
             : t.attention_kernel == AttentionKernel::flash3 ? "on (flash3 kernels)"
                                                             : "on");
    // Only when set, so the usual layout line keeps its text.
    if (t.cuda_graphs != CudaGraphs::none) line += ", CUDA graphs " + std::string(enum_name(t.cuda_graphs));
    if (t.compile) line += ", torch.compile";
    return line;
}

void print_table(const Config& c, const Prediction& r) {
    // Fit second, before any time (issue 25 item 9): a layout that does not fit has no step time to
    // run, said in the first line too.
    const MemoryBreakdown& fit = r.memory;
    std::cout << c.model.name << " (" << format_count(r.params_total, "params")
              << (r.params_active < r.params_total ? ", " + format_count(r.params_active, "active per token") : std::string()) << ") on "
              << c.num_gpus << " x " << c.gpu.name << " (" << c.node.name << "), precision " << c.precision.name << ", framework "
              << framework_text(c) << (fit.fits ? "" : ": DOES NOT FIT in memory") << "\n";
    std::cout << "memory: " << format_fixed(fit.per_gpu_gib, 1) << " GiB per GPU of " << format_fixed(fit.capacity_gib, 0) << " GiB"
              << (fit.headroom_gib > 0 ? " with " + format_fixed(fit.headroom_gib, 1) + " GiB headroom" : std::string()) << ": "
              << (fit.fits ? "fits" : "DOES NOT FIT (the times below are for a run that cannot start)") << "\n"
              << calibration_summary(c) << "\n"
              << "layout: " << layout_line(c) << "\n\n";

    TextTable speed({"throughput", ""});
    speed.add({"step time", format_seconds(r.iteration_time_s)});
    const std::optional<LikelyInterval> interval = likely_interval(c);
    auto band = [&](double value) { return format_seconds(value * interval->low) + " .. " + format_seconds(value * interval->high); };
    if (interval) speed.add({"  likely range", band(r.iteration_time_s)});
    speed.add({"tokens/s", format_count(r.tokens_per_s, "tokens/s")});
    speed.add({"tokens/s per GPU", format_count(r.tokens_per_s_per_gpu, "tokens/s")});
    speed.add({"samples/s", format_fixed(r.samples_per_s, 2) + " samples/s"});
    speed.add({"model TFLOP/s per GPU", format_fixed(r.model_tflops_per_gpu, 1) + " TFLOP/s"});
    speed.add({"hardware TFLOP/s per GPU", format_fixed(r.hardware_tflops_per_gpu, 1) + " TFLOP/s"});
    speed.add({"MFU (dense BF16 peak)", format_percent(r.mfu)});
    speed.add({"MFU (" + std::string(dtype_name(c.precision.gemm)) + " peak)", format_percent(r.mfu_precision_peak)});
    std::cout << speed.render();
    if (interval) std::cout << "likely range: " << interval->reason << " (trainclock validate --cross-source)\n";
    std::cout << "\n";

    if (c.training.tokens > 0) {
        const double price = c.training.price_per_gpu_hour_usd >= 0 ? c.training.price_per_gpu_hour_usd : c.gpu.price_per_gpu_hour_usd;
        TextTable run({"run of " + format_count(c.training.tokens, "tokens"), ""});
        run.add({"steps", format_fixed(r.steps, 0)});
        run.add({"total time", format_seconds(r.total_time_s)});
        if (!r.run.ideal) {  // wall time with checkpoints and interruptions (the warnings name the defaults)
            run.add({"ideal time (--ideal)", format_seconds(r.run.ideal_time_s)});
            run.add({"goodput", format_percent(r.run.goodput)});
            run.add({"expected interruptions", format_fixed(r.run.expected_interruptions, 1)});
        }
        if (interval) run.add({"  likely range", band(r.total_time_s)});
        run.add({"GPU-hours", format_count(r.gpu_hours, "GPU-h")});
        run.add({"cost", r.cost_known ? format_usd(r.cost_usd) + " at $" + format_fixed(price, 2) + "/GPU-h"
                                      : "n/a (no price for " + c.gpu.name + ": give --price USD per GPU-hour)"});
        if (interval && r.cost_known)
            run.add({"  likely range", format_usd(r.cost_usd * interval->low) + " .. " + format_usd(r.cost_usd * interval->high)});
        run.add({"energy", format_si(r.energy_kwh * 1e3, "Wh")});
        std::cout << run.render() << "\n";
    } else {
        std::cout << "run: give --tokens for total time, GPU-hours, cost and energy\n\n";
    }

    const MemoryBreakdown& m = r.memory;
    TextTable memory({"memory per GPU", "GiB", "% of capacity"});
    const std::pair<const char*, double> parts[] = {
        {"weights", m[MemoryPart::weights]},         {"gradients", m[MemoryPart::grads]},
        {"master weights", m[MemoryPart::master]},   {"optimizer states", m[MemoryPart::optimizer]},
        {"activations", m[MemoryPart::activations]}, {"other", m[MemoryPart::other]}};
    for (const auto& [name, gib] : parts) {
        memory.add({name, format_fixed(gib, 2), m.capacity_gib > 0 ? format_percent(gib / m.capacity_gib) : "n/a"});
    }
    memory.add({"total", format_fixed(m.per_gpu_gib, 2), m.capacity_gib > 0 ? format_percent(m.per_gpu_gib / m.capacity_gib) : "n/a"});
    memory.add({"capacity", format_fixed(m.capacity_gib, 2), m.fits ? "fits" : "DOES NOT FIT"});
    if (m.host_gib > 0) memory.add({"offloaded to CPU", format_fixed(m.host_gib, 2), "host memory"});
    std::cout << memory.render() << "\n";

    const StepBreakdown& b = r.breakdown_s;
    TextTable breakdown({"step breakdown", "time", "% of step"});
    for (size_t part = 0; part < kStepPartCount; ++part) {
        std::string name(kStepPartKeys[part]);  // the result key, spaced: "pipeline bubble"
        std::replace(name.begin(), name.end(), '_', ' ');
        const double seconds = b.seconds[part];
        breakdown.add({name, format_seconds(seconds), r.iteration_time_s > 0 ? format_percent(seconds / r.iteration_time_s) : "n/a"});
        // Host work inside a part, on its own line (only when there is some).
        const double host_s = StepPart(part) == StepPart::optimizer  ? r.cpu_optimizer_s
                              : StepPart(part) == StepPart::overhead ? r.activation_offload_s
                                                                     : 0.0;
        const char* host_name = StepPart(part) == StepPart::optimizer ? "  of which CPU step" : "  of which activation offload";
        if (host_s > 0)
            breakdown.add(
                {host_name, format_seconds(host_s), r.iteration_time_s > 0 ? format_percent(host_s / r.iteration_time_s) : "n/a"});
    }
    breakdown.add({"step", format_seconds(r.iteration_time_s), "100.0 %"});
    std::cout << breakdown.render();

    if (!r.warnings.empty()) {
        std::cout << "\nwarnings:\n";
        for (const auto& warning : r.warnings) std::cout << "  - " << warning << "\n";
    }
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    if (args.has("--json") && args.has("--csv")) return report_error({"--csv", "choose one of --json and --csv"});
    if (args.has("--timeline") && !args.has("--json")) return report_error({"--timeline", "needs --json (the timeline is a JSON array)"});
    auto config = config_from_args(args);
    if (!config) return report_error(config.error());
    PredictOptions options;
    options.timeline = args.has("--timeline");
    const Prediction prediction = predict(config.value(), options);
    if (prediction.run.stalls) {  // a run that never finishes has no total time to print (issue 25 item 10)
        const WholeRun& w = prediction.run;
        char text[400];
        std::snprintf(text, sizeof text,
                      "%.3g interruptions per GPU-hour on %lld GPUs (one every %.3g min) outpace the %.3g s each costs (restart, "
                      "checkpoint load, half an interval): the run would not finish; lower it, or --restart / raise --storage-bw",
                      w.failure_rate_per_gpu_hour, static_cast<long long>(config.value().num_gpus),
                      60.0 / (w.failure_rate_per_gpu_hour * double(config.value().num_gpus)),
                      w.restart_s + w.checkpoint_write_s + 0.5 * (w.checkpoint_interval_s + w.checkpoint_write_s));
        return report_error({"training.failure_rate_per_gpu_hour", text});
    }
    if (args.has("--json")) {
        std::cout << prediction_to_json(prediction, &config.value());
    } else if (args.has("--csv")) {
        std::cout << prediction_csv_header() << "\n" << prediction_to_csv_row(prediction, config.value()) << "\n";
    } else {
        print_table(config.value(), prediction);
    }
    return kExitOk;
}

const CommandRegistrar registrar({
    "predict",
    "predict one training step and the whole run",
    "trainclock predict [config flags] [--json | --csv]",
    "Prints step time, throughput, MFU, total time, GPU-hours, cost, energy, memory per GPU and the\n"
    "breakdown of the step by cause. Defaults: dp = gpus / (tp*pp*cp), node = the GPU's default,\n"
    "precision = bf16-mixed (fp16-mixed or fp32 where the GPU lacks bf16).",
    {{"--json", "", "print the result JSON (schema trainclock/result/v1, with the config)"},
     {"--csv", "", "print a CSV header and one row"},
     {"--timeline", "", "with --json: include the per-stage pipeline timeline"}},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
