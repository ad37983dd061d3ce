// `trainclock search`: the fastest (or cheapest) parallel layouts that fit, over every layout of
// the GPUs given (core: search.hpp; threads: host/search_threads.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <vector>
#include <string>

#include "cli_common.hpp"
#include "search_threads.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/formats/link.hpp"
#include "trainclock/base/names.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/model/spellings.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/search/search.hpp"

namespace trainclock::cli {
namespace {

std::string grouped(int64_t n) {  // 402828 -> "402,828"
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

Result<int64_t> positive_integer(const Args& args, std::string_view flag, int64_t fallback) {
    const auto text = args.value(flag);
    if (!text) return fallback;
    char* end = nullptr;
    const long long value = std::strtoll(text->c_str(), &end, 10);
    if (text->empty() || *end != '\0' || value < 1) return Error{std::string(flag), "expected a positive integer, got '" + *text + "'"};
    return int64_t(value);
}

// The searched dimensions that a flag or the --config file pins (--widen NAME frees a file's pin):
// the config keys of search.hpp's kSearchDimensionPaths, by their CLI flag (names.hpp), in flag order.
struct Dimension {
    std::string_view name;  // as --widen spells it: the flag without "--"
    std::string_view flag;
    SearchDimension dimension;
};
const std::vector<Dimension>& dimensions() {
    static const std::vector<Dimension> table = [] {
        std::vector<Dimension> out;
        for (const ConfigField& field : config_fields()) {
            const auto path = std::find(std::begin(kSearchDimensionPaths), std::end(kSearchDimensionPaths), field.path);
            if (path == std::end(kSearchDimensionPaths)) continue;
            out.push_back({field.flag.substr(2), field.flag, static_cast<SearchDimension>(path - std::begin(kSearchDimensionPaths))});
        }
        return out;
    }();
    return table;
}
const Dimension* find_dimension(std::string_view name) {
    for (const Dimension& d : dimensions())
        if (d.name == name) return &d;
    return nullptr;
}
std::string dimension_names() {  // "tp,pp,cp,ep,sp,zero,vpp,schedule,mbs,recompute"
    std::string out;
    for (const Dimension& d : dimensions()) out += (out.empty() ? "" : ",") + std::string(d.name);
    return out;
}

// An enum-valued key's value as the config spells it (spellings.hpp: names in enum order).
template <class E>
std::string spelled(std::string_view path, E value) {
    return std::string(enum_names(path)[static_cast<size_t>(value)]);
}

// The value a dimension has in `c`, as text ("8", "on", "1f1b", "selective").
std::string dimension_value(const Config& c, SearchDimension dimension) {
    const ParallelSpec& p = c.parallel;
    switch (dimension) {
    case SearchDimension::tp: return std::to_string(p.tp);
    case SearchDimension::pp: return std::to_string(p.pp);
    case SearchDimension::cp: return std::to_string(p.cp);
    case SearchDimension::ep: return std::to_string(p.ep);
    case SearchDimension::zero: return std::to_string(p.zero);
    case SearchDimension::virtual_stages: return std::to_string(p.virtual_stages);
    case SearchDimension::schedule: return spelled("parallel.schedule", p.schedule);
    case SearchDimension::sequence_parallel: return p.sequence_parallel ? "on" : "off";
    case SearchDimension::micro_batch: return std::to_string(c.training.micro_batch);
    case SearchDimension::recompute: return spelled("training.recompute", c.training.recompute);
    }
    return "";
}

// The dimensions the config file sets (search.hpp dimensions_set_by), by their --widen name.
std::vector<std::string_view> dimensions_in_file(const std::optional<std::string>& text) {
    std::vector<std::string_view> set;
    if (!text) return set;
    const std::vector<SearchDimension> in_file = dimensions_set_by(*text);
    for (const Dimension& d : dimensions())
        if (std::find(in_file.begin(), in_file.end(), d.dimension) != in_file.end()) set.push_back(d.name);
    return set;
}

// Layout flags on the command line and layout keys of the --config file pin their dimension
// (minus those --widen names); the others are searched. `pinned_by_file` gets "tp 8", ...
Result<SearchOptions> options_from_args(const Args& args, const Config& draft, const std::optional<std::string>& file_text,
                                        std::vector<std::string>& pinned_by_file) {
    SearchOptions o;
    if (args.has("--dp")) return Error{"--dp", "is derived by the search (num_gpus / (tp*pp*cp)); pin --tp, --pp or --cp instead"};
    std::vector<std::string_view> widened;
    if (const auto widen = args.value("--widen")) {
        std::vector<std::string> names;
        for (const Dimension& d : dimensions()) names.emplace_back(d.name);
        std::string list = *widen == "all" ? dimension_names() : *widen;
        size_t start = 0;
        while (start <= list.size()) {
            const size_t comma = std::min(list.find(',', start), list.size());
            const std::string name = list.substr(start, comma - start);
            start = comma + 1;
            const Dimension* d = find_dimension(name);
            if (!d) {
                const std::string guess = did_you_mean(name, names);
                return Error{"--widen",
                             "unknown dimension '" + name + "'; " +
                                 (guess.empty() ? "expected all or a list of " + dimension_names() : "did you mean " + guess + "?")};
            }
            if (args.has(d->flag) && *widen != "all")
                return Error{"--widen",
                             std::string(name) + " is pinned by " + std::string(d->flag) + " on the command line; drop one of the two"};
            widened.push_back(d->name);
        }
    }
    auto pinned = [&](const Dimension& d) {
        return args.has(d.flag) || (std::find(pinned_by_file.begin(), pinned_by_file.end(), std::string(d.name)) != pinned_by_file.end());
    };
    const std::vector<std::string_view> in_file = dimensions_in_file(file_text);
    std::vector<std::string> file_pins;
    for (const std::string_view name : in_file) {
        const Dimension* d = find_dimension(name);
        if (args.has(d->flag) || std::find(widened.begin(), widened.end(), name) != widened.end()) continue;
        file_pins.emplace_back(name);
    }
    pinned_by_file = file_pins;  // names first (for `pinned`), then "name value" for the output
    for (const Dimension& d : dimensions())
        if (pinned(d)) pin_dimension(o, draft, d.dimension);
    for (std::string& name : pinned_by_file) name += " " + dimension_value(draft, find_dimension(name)->dimension);
    const auto objective = args.value("--objective");
    if (objective && *objective != "time" && *objective != "cost")
        return Error{"--objective", "expected time or cost, got '" + *objective + "'"};
    o.objective = objective && *objective == "cost" ? SearchObjective::cost : SearchObjective::time;
    Result<int64_t> top = positive_integer(args, "--top", 10);
    if (!top) return top.error();
    o.top_k = top.value();
    return o;
}

// The base must be valid apart from its layout: check it with a one-GPU layout, so a bad model,
// GPU, precision or sequence is bad input (exit 2) and not "no layout".
std::optional<Error> check_base(const Config& draft) {
    Config probe = draft;
    probe.num_gpus = 1;
    probe.parallel = ParallelSpec{};
    probe.training.global_batch = 1;
    probe.training.micro_batch = 1;
    Result<Config> valid = validate_config(probe);
    if (valid.ok()) return std::nullopt;
    return valid.error();
}

// "llama2-7b on 64 x h100-sxm, seq 4096, global batch 512, framework megatron-core".
std::string base_line(const Config& c) {
    return c.model.name + " on " + std::to_string(c.num_gpus) + " x " + c.gpu.name + ", seq " + std::to_string(c.training.seq_len) +
           ", global batch " + std::to_string(c.training.global_batch) + ", framework " + framework_text(c) +
           (c.training.memory_headroom_gib > 0   ? ", fit with " + format_fixed(c.training.memory_headroom_gib, 1) + " GiB free"
            : c.training.memory_headroom_pct > 0 ? ", fit with " + format_fixed(c.training.memory_headroom_pct, 1) + " % free"
                                                 : "");
}

void print_table(const SearchSpace& space, const SearchReport& report) {
    const Config& base = space.base();
    const bool run_length = base.training.tokens > 0;
    // Megatron's uneven splits, where search enumerated them (the layers do not divide): a column
    // "first/last" of parallel.first_stage_layers / last_stage_layers ("-" = even), "+e+l" when the
    // embedding and the loss count as layers of the split, "layout" for the base's pipeline layout.
    const bool any_split =
        std::any_of(report.top.begin(), report.top.end(), [](const SearchHit& h) { return h.layout.parallel.stage_split.any(); });
    std::vector<std::string> header = {"#",   "precision", "TP",     "PP",    "CP",
                                       "DP",  "EP",        "SP",     "ZeRO",  "schedule",
                                       "mbs", "recompute", "step",   "total", run_length ? "cost" : "cost/step",
                                       "MFU", "tokens/s",  "mem/GPU"};
    if (any_split) header.insert(header.begin() + 10, "first/last");
    TextTable table(header);
    for (size_t i = 0; i < report.top.size(); ++i) {
        const SearchHit& h = report.top[i];
        const ParallelSpec& p = h.layout.parallel;
        const Prediction& r = h.prediction;
        std::string schedule = p.pp == 1 ? "-" : spelled("parallel.schedule", p.schedule);
        if (p.pp > 1 && p.schedule == PipelineSchedule::interleaved) schedule += " v" + std::to_string(p.virtual_stages);
        const StageSplit& split = p.stage_split;
        std::string first_last = !split.pipeline_layout.empty() ? "layout"
                                 : split.first_stage_layers > 0 || split.last_stage_layers > 0
                                     ? std::to_string(split.first_stage_layers) + "/" + std::to_string(split.last_stage_layers)
                                     : "-";
        if (split.embedding_in_stage_split || split.loss_in_stage_split)
            first_last += std::string(" +") + (split.embedding_in_stage_split ? "e" : "") + (split.loss_in_stage_split ? "l" : "");
        const std::string recompute = spelled("training.recompute", h.layout.recompute);
        // Without a run length the objective pair holds the cost of one step (search.hpp).
        const double cost = run_length ? r.cost_usd : space.options().objective == SearchObjective::cost ? h.objective : h.secondary;
        const bool priced = base.training.price_per_gpu_hour_usd >= 0 || base.gpu.price_per_gpu_hour_usd > 0;  // 0 = unknown
        const std::string cost_text = !priced || !std::isfinite(cost) ? "n/a" : format_usd(cost);
        std::vector<std::string> row = {std::to_string(i + 1),
                                        space.precisions()[size_t(h.layout.precision)].name,
                                        std::to_string(p.tp),
                                        std::to_string(p.pp),
                                        std::to_string(p.cp),
                                        std::to_string(p.dp),
                                        std::to_string(p.ep),
                                        p.sequence_parallel ? "on" : "off",
                                        std::to_string(p.zero),
                                        schedule,
                                        std::to_string(h.layout.micro_batch),
                                        recompute,
                                        format_seconds(r.iteration_time_s),
                                        run_length ? format_seconds(r.total_time_s) : "-",
                                        cost_text,
                                        format_percent(r.mfu),
                                        format_count(r.tokens_per_s, ""),
                                        format_fixed(r.memory.per_gpu_gib, 1) + " GiB"};
        if (any_split) row.insert(row.begin() + 10, first_last);
        table.add(row);
    }
    std::cout << table.render();
}

void print_summary(const SearchSpace& space, const SearchReport& report) {
    const SearchStats& s = report.stats;
    const Config& base = space.base();
    std::cout << "\n"
              << grouped(s.layouts) << " layouts of " << base.model.name << " on " << base.num_gpus << " x " << base.gpu.name << " ("
              << space.precisions().size() << " precision" << (space.precisions().size() == 1 ? "" : "s") << ", seq "
              << base.training.seq_len << ", global batch " << base.training.global_batch << ") searched in "
              << format_seconds(report.wall_s) << " on " << report.threads << " thread" << (report.threads == 1 ? "" : "s") << ": "
              << grouped(s.feasible) << " fit, " << grouped(s.rejected_total()) << " rejected\n";
    // Pruned layouts are counted where an exhaustive search counts them (fit or memory); see --help.
    std::cout << grouped(s.predicted) << " predicted in full; " << grouped(s.pruned) << " pruned: " << grouped(s.cannot_beat_top_k)
              << " fit but cannot beat the top " << space.options().top_k << ", " << grouped(s.pruned - s.cannot_beat_top_k)
              << " do not fit\n";
    std::vector<int> order;
    for (int r = 0; r < kRejectReasonCount; ++r)
        if (s.rejected[size_t(r)] > 0) order.push_back(r);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return s.rejected[size_t(a)] > s.rejected[size_t(b)]; });
    if (!order.empty()) std::cout << "rejected:\n";
    for (int r : order)
        std::cout << "  " << grouped(s.rejected[size_t(r)]) << "  " << reject_reason_text(RejectReason(r)) << " ("
                  << reject_reason_name(RejectReason(r)) << ")\n";
    if (s.rejected[size_t(RejectReason::rule)] > 0) std::cout << "  e.g. " << s.first_rule_message << "\n";
}

int run(const Args& args) {
    if (!args.positionals().empty()) return report_error({args.positionals()[0], "unexpected argument"});
    // --precision all is the search's own value; any other --precision is a preset or inline object.
    Args config_args;
    bool all_precisions = false;
    for (const auto& [flag, value] : args.flags()) {
        if (flag == "--precision" && value == "all")
            all_precisions = true;
        else
            config_args.add_flag(flag, value);
    }
    if (all_precisions && args.value("--precision") != "all") return report_error({"--precision", "give either 'all' or one precision"});
    const Result<std::optional<std::string>> file_text = config_text_from_args(config_args);
    if (!file_text) return report_error(file_text.error());
    Result<Config> draft = config_draft_from_args(config_args, file_text.value());
    if (!draft) return report_error(draft.error());
    if (draft.value().num_gpus < 1) return report_error({"--gpus", "required: the number of GPUs to lay out"});
    if (const std::optional<Error> bad = check_base(draft.value())) return report_error(*bad);
    std::vector<std::string> pinned_by_file;
    Result<SearchOptions> options = options_from_args(args, draft.value(), file_text.value(), pinned_by_file);
    if (!options) return report_error(options.error());
    if (options.value().objective == SearchObjective::cost && draft.value().training.price_per_gpu_hour_usd < 0 &&
        !(draft.value().gpu.price_per_gpu_hour_usd > 0)) {
        return report_error({"--objective", "cost needs a price: gpu " + draft.value().gpu.name +
                                                " has none (0 = unknown); give --price USD per GPU-hour"});
    }
    std::string pin_note;  // the config file's layout keys that pin the search
    for (const std::string& pin : pinned_by_file) pin_note += (pin_note.empty() ? "" : ", ") + pin;
    if (!pin_note.empty()) {
        pin_note = "pinned by " + *args.value("--config") + ": " + pin_note + " (--widen NAME[,NAME] or --widen all searches them)";
    }
    // No --precision: the recipes used to pretrain (search.hpp); --precision all: every preset.
    const bool default_precisions = !all_precisions && draft.value().precision.name.empty();
    if (all_precisions) options.value().precisions = precisions_for_gpu(draft.value().gpu);
    if (default_precisions) options.value().precisions = pretraining_precisions_for_gpu(draft.value().gpu);
    Result<int64_t> threads = positive_integer(args, "--threads", 0);
    if (!threads) return report_error(threads.error());
    // std::thread throws when the system refuses a thread; a bound keeps --threads 100000 bad input.
    if (threads.value() > 1024) return report_error({"--threads", "must be at most 1024, got " + std::to_string(threads.value())});

    const auto start = std::chrono::steady_clock::now();
    // --smallest: the fewest GPUs (1, 2, 4, ... up to --gpus, then --gpus itself) with a layout that fits.
    const int64_t max_gpus = draft.value().num_gpus;
    std::vector<int64_t> counts;
    if (args.has("--smallest"))
        for (int64_t n = 1; n < max_gpus; n *= 2) counts.push_back(n);
    counts.push_back(max_gpus);
    Result<SearchSpace> space = Error{"--gpus", "no GPU count to search"};
    SearchReport report;
    for (const int64_t n : counts) {
        draft.value().num_gpus = n;
        space = SearchSpace::create(draft.value(), options.value());
        if (!space && n < max_gpus) continue;  // this count breaks a rule (e.g. the node's allocation unit)
        if (!space) return report_error(space.error());
        report = run_search_threads(space.value(), int(threads.value()));
        if (!report.top.empty()) break;
    }
    report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool table = !args.has("--json") && !args.has("--csv");
    if (table)  // the stack and calibration first (issue 25 items 4, 9), as predict's table names them
        std::cout << base_line(draft.value()) << "\n" << calibration_lines(draft.value());
    if (args.has("--smallest") && !report.top.empty() && table)
        std::cout << "smallest setup that fits: " << draft.value().num_gpus << " x " << draft.value().gpu.name << "\n";

    const int exit_code = report.top.empty() ? kExitInternal : kExitOk;  // 1: nothing fits or passes the rules
    if (!pin_note.empty()) (args.has("--json") || args.has("--csv") ? std::cerr << "trainclock: search: " : std::cout) << pin_note << "\n";
    if (args.has("--csv"))  // the JSON carries them in "notes"
        for (const std::string& note : report.notes) std::cerr << "trainclock: search: " << note << "\n";
    else if (table)
        for (const std::string& note : report.notes) std::cout << note << "\n";
    if (args.has("--json")) {
        std::cout << search_report_to_json(space.value(), report) << "\n";
    } else if (args.has("--csv")) {
        std::cout << search_csv_header() << "\n" << search_to_csv_rows(space.value(), report);
    } else {
        if (!report.top.empty()) print_table(space.value(), report);
        print_summary(space.value(), report);
        if (default_precisions) std::cout << "precisions: the pretraining recipes the GPU runs; " << kNotPretrainingNote << "\n";
    }
    if (!report.explanation.empty()) std::cerr << "trainclock: search: " << report.explanation << "\n";
    return exit_code;
}

const CommandRegistrar registrar({
    "search",
    "fastest (or cheapest) parallel layouts that fit",
    "trainclock search --model M --gpu G --gpus N [--precision P|all] [--seq S --gbs B] [--objective time|cost]\n"
    "                  [--top K] [--json | --csv] [--threads T]",
    "Enumerates every layout of N GPUs (TP, PP, CP, DP, EP, SP, ZeRO, schedule, virtual stages,\n"
    "micro-batch, recompute, and the precision: without --precision every pretraining recipe the GPU\n"
    "runs (pure fp16/bf16 without fp32 master weights left out), with --precision all every one), drops those that\n"
    "break a rule or do not fit in memory, and ranks the rest by step time (or cost). Layout flags\n"
    "(--tp, --pp, --cp, --ep, --sp, --zero, --vpp, --schedule, --mbs, --recompute) pin that dimension,\n"
    "and so do the same keys of a --config file (parallel.tp ... parallel.schedule, training.micro_batch,\n"
    "training.recompute; parallel.dp is derived): --widen NAME[,NAME] (or all) searches them anyway.\n"
    "The pins a file sets are listed before the table (on stderr with --json or --csv).\n"
    "Ties: time, cost, memory, then TP, PP, CP, EP, SP, ZeRO, schedule, v, mbs, recompute ascending.\n"
    "Pruning: a layout is 'pruned' when it is decided without a full prediction: it does not fit\n"
    "(a smaller micro-batch already did not, or its memory alone says so), or it fits but 'cannot\n"
    "beat the top K': a lower bound of its step time (the busiest stage's compute and exposed\n"
    "TP/EP/CP collectives x micro-batches) already ranks after the K-th best layout of a pilot\n"
    "search of the most promising layouts. Pruned layouts still count as fit or rejected exactly as\n"
    "an exhaustive search counts them; the top K, every count and the output are the same on any\n"
    "number of threads.\n"
    "Exit code 1 when no layout fits or passes the rules (the reason is printed on stderr).",
    {{"--objective", "time|cost", "rank by step time (default) or by cost (needs a price)"},
     {"--widen", "DIMS", "search dimensions the --config file pins: tp,pp,cp,ep,sp,zero,vpp,schedule,mbs,recompute or all"},
     {"--top", "K", "how many layouts to list (default 10)"},
     {"--threads", "T", "worker threads (default: every hardware thread)"},
     {"--json", "", "print the trainclock/search/v1 JSON"},
     {"--csv", "", "print the top layouts as CSV"},
     {"--smallest", "", "the fewest GPUs that fit: search 1, 2, 4, ... up to --gpus and stop at the first count with a layout"}},
    true,
    run,
});

}  // namespace
}  // namespace trainclock::cli
