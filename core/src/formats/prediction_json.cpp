// trainclock: the result JSON of DESIGN.md 3 ("trainclock/result/v1") and its CSV form.
// The key lists (kScalars here, kMemoryPartKeys and kStepPartKeys in the public headers) drive both,
// so the two never disagree on names or order.
#include <string>
#include <string_view>

#include "formats/config_json.hpp"
#include "formats/prediction_json.hpp"
#include "catalogue/spec_json.hpp"
#include "trainclock/formats/prediction_json.hpp"
#include "trainclock/catalogue/intervals.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {
namespace {

// One top-level number of the result: its key and where it sits in Prediction.
struct Field {
    std::string_view key;
    double Prediction::*member;
};
constexpr Field kScalars[] = {
    {"iteration_time_s", &Prediction::iteration_time_s},
    {"tokens_per_s", &Prediction::tokens_per_s},
    {"tokens_per_s_per_gpu", &Prediction::tokens_per_s_per_gpu},
    {"samples_per_s", &Prediction::samples_per_s},
    {"model_tflops_per_gpu", &Prediction::model_tflops_per_gpu},
    {"hardware_tflops_per_gpu", &Prediction::hardware_tflops_per_gpu},
    {"mfu", &Prediction::mfu},
    {"mfu_precision_peak", &Prediction::mfu_precision_peak},
    {"steps", &Prediction::steps},
    {"total_time_s", &Prediction::total_time_s},
    {"gpu_hours", &Prediction::gpu_hours},
    {"cost_usd", &Prediction::cost_usd},
    {"energy_kwh", &Prediction::energy_kwh},
    {"params_total", &Prediction::params_total},
    {"params_active", &Prediction::params_active},
};

// Unknown cost or energy (a preset without a price or TDP) is null in JSON and an empty CSV cell, never 0.
bool known(const Prediction& p, double Prediction::*member) {
    return !(member == &Prediction::cost_usd && !p.cost_known) && !(member == &Prediction::energy_kwh && !p.energy_known);
}

void write_scalars(JsonWriter& out, const Prediction& p) {
    for (const Field& field : kScalars) {
        if (known(p, field.member))
            out.field(field.key, p.*field.member);
        else
            out.key(field.key).null();
    }
}

// The numbers of the result's "memory" in order (the parts between the totals and the host share).
template <class Visit>
void for_each_memory_number(const MemoryBreakdown& memory, Visit&& visit) {
    visit("per_gpu_gib", memory.per_gpu_gib);
    visit("capacity_gib", memory.capacity_gib);
    for (size_t part = 0; part < kMemoryPartCount; ++part) visit(kMemoryPartKeys[part], memory.gib[part]);
    visit("host_gib", memory.host_gib);
}

// RFC 4180: quote a cell holding a comma, quote or line break.
std::string csv_cell(std::string_view text) {
    if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (const char c : text) {
        out += c;
        if (c == '"') out += '"';
    }
    return out + "\"";
}

const char* const kConfigColumns[] = {"model",
                                      "gpu",
                                      "node",
                                      "num_gpus",
                                      "precision",
                                      "tp",
                                      "pp",
                                      "dp",
                                      "cp",
                                      "ep",
                                      "sequence_parallel",
                                      "zero",
                                      "virtual_stages",
                                      "schedule",
                                      "seq_len",
                                      "global_batch",
                                      "micro_batch",
                                      "recompute",
                                      "flash_attention",
                                      "attention_kernel"};

}  // namespace

void write_prediction_members(JsonWriter& out, const Prediction& p, const Config* config) {
    out.field("schema", kResultSchema);
    write_scalars(out, p);
    out.field("goodput", p.run.goodput).field("expected_interruptions", p.run.expected_interruptions);
    const WholeRun& r = p.run;
    out.key("whole_run").begin_object();
    out.field("ideal", r.ideal).field("ideal_time_s", r.ideal_time_s).field("checkpoint_bytes", r.checkpoint_bytes);
    out.field("checkpoint_write_s", r.checkpoint_write_s).field("checkpoint_interval_s", r.checkpoint_interval_s);
    out.field("checkpoints", r.checkpoints).field("restart_s", r.restart_s);
    out.field("failure_rate_per_gpu_hour", r.failure_rate_per_gpu_hour).field("storage_bw_gbps", r.storage_bw_gbps);
    out.field("stalls", r.stalls);
    out.key("defaults").begin_array();
    for (const std::string& key : r.defaults) out.value(key);
    out.end_array();
    out.end_object();
    out.key("memory").begin_object();
    for_each_memory_number(p.memory, [&](std::string_view key, double gib) { out.field(key, gib); });
    out.field("fits", p.memory.fits);
    out.end_object();
    out.key("breakdown_s").begin_object();
    for (size_t part = 0; part < kStepPartCount; ++part) out.field(kStepPartKeys[part], p.breakdown_s.seconds[part]);
    out.end_object();
    if (p.memory.host_gib > 0 || p.cpu_optimizer_s > 0 || p.activation_offload_s > 0) {
        // Only when something lives in CPU memory: the parts of the breakdown that are host work.
        out.key("offload").begin_object();
        out.field("cpu_optimizer_s", p.cpu_optimizer_s).field("activation_offload_s", p.activation_offload_s);
        out.field("paged_optimizer_gib", p.memory.paged_gib).field("activations_gib", p.memory.activations_offloaded_gib);
        out.end_object();
    }
    out.key("warnings").begin_array();
    for (const auto& warning : p.warnings) out.value(warning);
    out.end_array();
    if (config) {
        // Likely range from the cross-source residuals of the config's group, widened by its distance
        // to the validated cases (intervals.hpp).
        if (const std::optional<LikelyInterval> interval = likely_interval(*config)) {
            const LikelyRange step = likely_range(*interval, p.iteration_time_s), total = likely_range(*interval, p.total_time_s),
                              cost = likely_range(*interval, p.cost_usd);
            out.field("iteration_time_s_low", step.low).field("iteration_time_s_high", step.high);
            out.field("total_time_s_low", total.low).field("total_time_s_high", total.high);
            out.field("cost_usd_low", cost.low).field("cost_usd_high", cost.high);
            out.field("interval_cases", interval->row.cases).field("interval_group", interval->row.group);
            out.field("interval_families", interval->row.families).field("interval_widening", interval->widening);
            out.key("interval_widened_by").begin_array();
            for (const std::string& axis : interval->widened_by) out.value(axis);
            out.end_array();
            out.field("interval_nearest_cases", interval->nearest_cases);
            out.key("interval_nearest_families").begin_array();
            for (const std::string& family : interval->nearest_families) out.value(family);
            out.end_array();
            out.field("interval_reason", interval->reason);
        }
        out.key("config");
        write_config(out, *config);
    }
    if (!p.timeline.empty()) {
        out.object_array("timeline", p.timeline, [&](const TimelineSpan& span) {
            out.field("stage", span.stage).field("micro_batch", span.micro_batch).field("chunk", span.chunk);
            out.field("forward", span.forward).field("start_s", span.start_s).field("end_s", span.end_s);
        });
    }
}

std::string prediction_to_json(const Prediction& prediction, const Config* config) {
    JsonWriter out(2);
    out.begin_object();
    write_prediction_members(out, prediction, config);
    out.end_object();
    return out.take() + "\n";
}

std::string prediction_csv_header() {
    std::string header;
    for (size_t i = 0; i < std::size(kConfigColumns); ++i) header += std::string(i ? "," : "") + kConfigColumns[i];
    for (const auto& field : kScalars) header += "," + std::string(field.key);
    for_each_memory_number(MemoryBreakdown{}, [&](std::string_view key, double) { header += ",memory_" + std::string(key); });
    header += ",memory_fits";
    for (const std::string_view key : kStepPartKeys) header += "," + std::string(key) + "_s";
    return header + ",warnings,goodput,expected_interruptions";  // later columns appended after warnings
}

std::string prediction_to_csv_row(const Prediction& p, const Config& c) {
    const ParallelSpec& q = c.parallel;
    const TrainingSpec& t = c.training;
    const std::string cells[] = {csv_cell(c.model.name),
                                 csv_cell(c.gpu.name),
                                 csv_cell(c.node.name),
                                 std::to_string(c.num_gpus),
                                 csv_cell(c.precision.name),
                                 std::to_string(q.tp),
                                 std::to_string(q.pp),
                                 std::to_string(q.dp),
                                 std::to_string(q.cp),
                                 std::to_string(q.ep),
                                 q.sequence_parallel ? "true" : "false",
                                 std::to_string(q.zero),
                                 std::to_string(q.virtual_stages),
                                 std::string(enum_name(q.schedule)),
                                 std::to_string(t.seq_len),
                                 std::to_string(t.global_batch),
                                 std::to_string(t.micro_batch),
                                 std::string(enum_name(t.recompute)),
                                 t.flash_attention ? "true" : "false",
                                 std::string(enum_name(t.attention_kernel))};
    static_assert(std::size(cells) == std::size(kConfigColumns), "one cell per config column");
    std::string row;
    for (size_t i = 0; i < std::size(cells); ++i) row += (i ? "," : "") + cells[i];
    for (const Field& field : kScalars) row += "," + (known(p, field.member) ? json_number(p.*field.member) : std::string());
    for_each_memory_number(p.memory, [&](std::string_view, double gib) { row += "," + json_number(gib); });
    row += p.memory.fits ? ",true" : ",false";
    for (const double seconds : p.breakdown_s.seconds) row += "," + json_number(seconds);
    std::string warnings;
    for (const auto& warning : p.warnings) warnings += (warnings.empty() ? "" : "; ") + warning;
    return row + "," + csv_cell(warnings) + "," + json_number(p.run.goodput) + "," + json_number(p.run.expected_interruptions);
}

}  // namespace trainclock
