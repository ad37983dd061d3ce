// `trainclock plan`: which GPUs, how many, in which precision, how long and at what cost (core:
// search/plan.hpp, issue 24).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/search/plan.hpp"

namespace trainclock::cli {
namespace {

Result<double> number_flag(const Args& args, std::string_view flag, double fallback) {
    const auto text = args.value(flag);
    if (!text) return fallback;
    char* end = nullptr;
    const double value = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(value) || !(value > 0))
        return Error{std::string(flag), "expected a positive number, got '" + *text + "'"};
    return value;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

std::string layout_text(const Config& c) {
    const ParallelSpec& p = c.parallel;
    std::string out = "TP" + std::to_string(p.tp) + " PP" + std::to_string(p.pp);
    if (p.cp > 1) out += " CP" + std::to_string(p.cp);
    out += " DP" + std::to_string(p.dp);
    if (p.ep > 1) out += " EP" + std::to_string(p.ep);
    if (p.pp > 1 && p.schedule == PipelineSchedule::interleaved) out += " v" + std::to_string(p.virtual_stages);
    out += " Z" + std::to_string(p.zero) + " mbs" + std::to_string(c.training.micro_batch);
    if (c.training.recompute != Recompute::none) out += " rc-" + std::string(enum_name(c.training.recompute));
    return out;
}

void print_table(const PlanOptions& o, const PlanReport& r, const Config& base) {
    std::cout << "plan for " << base.model.name << ", " << format_count(o.tokens, "tokens");
    if (o.deadline_days > 0) std::cout << ", deadline " << format_fixed(o.deadline_days, o.deadline_days < 10 ? 1 : 0) << " days";
    if (o.budget_usd > 0) std::cout << ", budget $" << format_count(o.budget_usd, "");
    std::cout << ": " << r.gpus.size() << " GPU type" << (r.gpus.size() == 1 ? "" : "s") << ", up to " << o.max_gpus << " GPUs, framework "
              << framework_text(base) << "\n"
              << calibration_lines(base);
    if (!r.options.empty()) {
        TextTable table({"#", "gpu", "GPUs", "precision", "gbs", "days", "cost", "GPU-h", "energy", "MFU", "layout", "front"});
        for (size_t i = 0; i < r.options.size(); ++i) {
            const PlanOption& f = r.options[i];
            std::string mark = f.pareto ? "*" : "";
            if (r.fastest_within_budget == i) mark += " fastest";
            if (r.cheapest_within_deadline == i) mark += " cheapest";
            table.add({std::to_string(i + 1), f.gpu, std::to_string(f.num_gpus), f.precision,
                       std::to_string(f.config.training.global_batch), format_fixed(f.days, f.days < 10 ? 2 : 1), format_usd(f.cost_usd),
                       format_count(f.gpu_hours, ""), f.prediction.energy_known ? format_si(f.energy_kwh * 1e3, "Wh") : "n/a",
                       format_percent(f.prediction.mfu), layout_text(f.config), mark});
        }
        std::cout << table.render();
        std::cout << "* on the Pareto front of days vs cost";
        if (r.fastest_within_budget)
            std::cout << "; fastest" << (o.budget_usd > 0 ? " within the budget" : "") << ": #" << *r.fastest_within_budget + 1;
        if (r.cheapest_within_deadline)
            std::cout << "; cheapest" << (o.deadline_days > 0 ? " within the deadline" : "") << ": #" << *r.cheapest_within_deadline + 1;
        std::cout << "\n";
    }
    std::cout << "batch: " << plan_batch_rule(base, o) << (o.fixed_batch ? "" : "; --fixed-batch keeps it") << "\n";
    std::cout << r.candidates << " candidates (GPU x count x precision), " << r.searched << " searched";
    if (r.wall_s >= 0) std::cout << " in " << format_seconds(r.wall_s);
    std::string dropped;
    for (int d = 0; d < kPlanDropCount; ++d)
        if (r.dropped[size_t(d)] > 0)
            dropped += (dropped.empty() ? "" : ", ") + std::to_string(r.dropped[size_t(d)]) + " " + plan_drop_text(PlanDrop(d));
    if (!dropped.empty()) std::cout << "; dropped: " << dropped;
    if (r.listed_out > 0) std::cout << "; " << r.listed_out << " more options not listed (--top)";
    std::cout << "\n";
    if (!r.unpriced.empty()) {
        std::string names;
        for (const std::string& g : r.unpriced) names += (names.empty() ? "" : ", ") + g;
        std::cout << "left out (no price; --price ID=USD adds one): " << names << "\n";
    }
    std::cout << "each option's config reproduces with `trainclock predict --config` (plan --json: options[i].config)\n";
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    PlanOptions o;
    Args config_args;
    std::vector<std::string> gpu_names;
    for (const auto& [flag, value] : args.flags()) {
        if (flag == "--gpu") {
            gpu_names = value == "all" ? std::vector<std::string>{} : split_list(value);  // all: every priced preset
        } else if (flag == "--price") {
            const size_t eq = value.find('=');
            const std::string id = eq == std::string::npos ? "" : value.substr(0, eq);
            const std::string usd = eq == std::string::npos ? value : value.substr(eq + 1);
            char* end = nullptr;
            const double price = std::strtod(usd.c_str(), &end);
            if (usd.empty() || *end != '\0' || !(price > 0) || price > 1e6)
                return report_error({"--price", "expected ID=USD per GPU-hour (or USD for every GPU), got '" + value + "'"});
            if (!id.empty() && !gpu_preset(id)) return report_error({"--price", gpu_preset(id).error().message});
            o.prices.emplace_back(id, price);
        } else if (flag == "--precision") {
            o.precisions.clear();
            o.all_precisions = value == "all";
            if (!o.all_precisions)
                for (const std::string& name : split_list(value)) {
                    Result<PrecisionSpec> p = precision_preset(name);
                    if (!p) return report_error({"--precision", p.error().message});
                    o.precisions.push_back(p.value());
                }
        } else if (flag == "--fixed-batch") {
            o.fixed_batch = true;
        } else if (flag == "--gpus" || flag == "--num-gpus") {
            return report_error({flag, "plan chooses the GPU count: give --max-gpus N instead"});
        } else {
            config_args.add_flag(flag, value);
        }
    }
    for (const std::string& name : gpu_names) {
        Result<GpuSpec> g = gpu_preset(name);
        if (!g) return report_error({"--gpu", g.error().message});
        o.gpus.push_back(g.value());
    }
    const Result<std::optional<std::string>> file_text = config_text_from_args(config_args);
    if (!file_text) return report_error(file_text.error());
    Result<Config> draft = config_draft_from_args(config_args, file_text.value());
    if (!draft) return report_error(draft.error());
    Config& base = draft.value();
    if (base.model.name.empty()) return report_error({"--model", "required: the model to plan for"});
    o.tokens = base.training.tokens;
    if (!(o.tokens > 0)) return report_error({"--tokens", "required: the training tokens (e.g. 15e12)"});
    if (base.training.price_per_gpu_hour_usd >= 0) {  // a --config file's training.price_per_gpu_hour: every GPU
        o.prices.insert(o.prices.begin(), {"", base.training.price_per_gpu_hour_usd});
        base.training.price_per_gpu_hour_usd = -1;
    }
    Result<double> days = number_flag(args, "--days", 0);
    if (!days) return report_error(days.error());
    Result<double> budget = number_flag(args, "--budget", 0);
    if (!budget) return report_error(budget.error());
    Result<double> max_gpus = number_flag(args, "--max-gpus", double(o.max_gpus));
    if (!max_gpus) return report_error(max_gpus.error());
    Result<double> top = number_flag(args, "--top", double(o.top));
    if (!top) return report_error(top.error());
    if (max_gpus.value() != std::floor(max_gpus.value()) || max_gpus.value() > double(int64_t(1) << 20))
        return report_error({"--max-gpus", "expected a whole number of GPUs up to 1048576"});
    if (top.value() != std::floor(top.value()) || top.value() > 1e6) return report_error({"--top", "expected a whole number"});
    o.deadline_days = days.value();
    o.budget_usd = budget.value();
    o.max_gpus = int64_t(max_gpus.value());
    o.top = int64_t(top.value());
    // The base must be valid apart from GPU, count and layout: checked on one GPU of the plan.
    {
        Config probe = base;
        probe.gpu = o.gpus.empty() ? gpu_preset("h100-sxm").value() : o.gpus.front();
        probe.node = NodeSpec{};
        probe.num_gpus = 1;
        probe.parallel = ParallelSpec{};
        probe.training.global_batch = 1;
        probe.training.micro_batch = 1;
        probe.precision = PrecisionSpec{};
        Result<Config> valid = validate_config(probe);
        if (!valid) return report_error(valid.error());
    }

    const auto start = std::chrono::steady_clock::now();
    Result<PlanReport> report = plan(base, o);
    if (!report) return report_error(report.error());
    report.value().wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const PlanReport& r = report.value();
    if (args.has("--json")) {
        std::cout << plan_report_to_json(base, o, r) << "\n";
    } else if (args.has("--csv")) {
        // Numbers as %.17g: each reads back as the very double of the JSON.
        auto num = [](double v) {
            char buffer[40];
            std::snprintf(buffer, sizeof buffer, "%.17g", v);
            return std::string(buffer);
        };
        std::cout << "index,gpu,num_gpus,precision,days,cost_usd,gpu_hours,energy_kwh,pareto,fastest_within_budget,"
                     "cheapest_within_deadline,tp,pp,cp,dp,ep,sequence_parallel,zero,schedule,virtual_stages,micro_batch,recompute,"
                     "global_batch\n";  // global_batch: appended (CSV readers by position)
        for (size_t i = 0; i < r.options.size(); ++i) {
            const PlanOption& f = r.options[i];
            const ParallelSpec& p = f.config.parallel;
            std::cout << i << "," << f.gpu << "," << f.num_gpus << "," << f.precision << "," << num(f.days) << "," << num(f.cost_usd) << ","
                      << num(f.gpu_hours) << "," << (f.prediction.energy_known ? num(f.energy_kwh) : "") << ","
                      << (f.pareto ? "true" : "false") << "," << (r.fastest_within_budget == i ? "true" : "false") << ","
                      << (r.cheapest_within_deadline == i ? "true" : "false") << "," << p.tp << "," << p.pp << "," << p.cp << "," << p.dp
                      << "," << p.ep << "," << (p.sequence_parallel ? "true" : "false") << "," << p.zero << "," << enum_name(p.schedule)
                      << "," << p.virtual_stages << "," << f.config.training.micro_batch << "," << enum_name(f.config.training.recompute)
                      << "," << f.config.training.global_batch << "\n";
        }
    } else {
        print_table(o, r, base);
    }
    if (!r.explanation.empty()) std::cerr << "trainclock: plan: " << r.explanation << "\n";
    return r.options.empty() ? kExitInternal : kExitOk;
}

const CommandRegistrar registrar({
    "plan",
    "which GPUs, how many and in which precision: days vs cost for a token budget",
    "trainclock plan --model M --tokens T [--days D] [--budget USD] [--gpu ID[,ID...] | all] [--max-gpus N]\n"
    "                [--precision P[,P...] | all] [--framework F] [--seq S --gbs B] [--price ID=USD ...]\n"
    "                [--fixed-batch] [--top K] [--json | --csv]",
    "For every GPU preset with a price (or those of --gpu), every GPU count its node allows up to\n"
    "--max-gpus (powers of two within a node, then whole nodes times powers of two) and every\n"
    "pretraining precision the GPU runs, the fastest layout (search's rules and pruning) and its whole\n"
    "run: days with goodput (checkpoints, failures, restarts), GPU-hours, cost and energy. Lists the\n"
    "Pareto front of days vs cost (*), the fastest option within --budget and the cheapest within\n"
    "--days, and why the other candidates were dropped. A candidate whose compute-only bound (model\n"
    "FLOPs at the GPU's peak) misses the deadline or the budget, or is dominated by an option already\n"
    "found, is not searched. The global batch (--gbs, default 512) is doubled with the count until a\n"
    "step holds 1024 tokens per GPU, up to 16M tokens per step (Llama 3 405B's batch on 16K GPUs);\n"
    "--fixed-batch keeps it at every count. Each option's config (--json: options[i].config) reproduces with\n"
    "`trainclock predict --config`. Exit code 1 when no option is left (the reason on stderr).",
    {{"--days", "D", "deadline in days (wall clock with goodput)"},
     {"--budget", "USD", "budget in US dollars"},
     {"--max-gpus", "N", "the largest GPU count to consider (default 16384)"},
     {"--fixed-batch", "", "the global batch of --gbs at every count (default: scaled with the count)"},
     {"--top", "K", "options listed: the whole Pareto front, then the cheapest others up to K (default 20)"},
     {"--json", "", "print the trainclock/plan/v1 JSON"},
     {"--csv", "", "print the options as CSV"}},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
