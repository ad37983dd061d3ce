// trainclock: layout search (search.hpp, issue 5).
//
// Index
//   [SECTION] Names and small helpers
//   [SECTION] Ranking
//   [SECTION] Enumeration (SearchSpace::create): groups that pass the cheap rules
//   [SECTION] Evaluation (SearchState): rules, pruning, predict, top K
//   [SECTION] Pruning
//   [SECTION] Report and explanation
//   [SECTION] JSON and CSV
//
// The enumeration is ordered so the cheap rejections happen first: the integer rules on (TP, PP,
// CP, EP, schedule) are checked once per group and reject a whole subtree of layouts at once,
// counted by the subtree's size. The rest of the cost is memory_per_gpu (rule 1 needs it on a few
// micro-batches per level), validate_config once per (SP, micro-batch), and predict() for the few
// layouts whose lower bounds do not rule them out ([SECTION] Pruning).
#include "trainclock/search/search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "base/json_writer.hpp"
#include "catalogue/spec_json.hpp"
#include "perf/phases.hpp"
#include "formats/prediction_json.hpp"
#include "search/search_internal.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/catalogue/resolve.hpp"
#include "trainclock/formats/config_json.hpp"
#include "trainclock/model/framework.hpp"
#include "trainclock/model/stage_split.hpp"
#include "trainclock/perf/communication.hpp"
#include "trainclock/perf/execution.hpp"
#include "trainclock/perf/memory.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/pipeline.hpp"
#include "trainclock/perf/run.hpp"

namespace trainclock {

// -----------------------------------------------------------------------------------------------
// [SECTION] Names and small helpers
// -----------------------------------------------------------------------------------------------

std::string_view reject_reason_name(RejectReason reason) {
    switch (reason) {
    case RejectReason::precision: return "precision";
    case RejectReason::tp_split: return "tp_split";
    case RejectReason::pp_layers: return "pp_layers";
    case RejectReason::seq_split: return "seq_split";
    case RejectReason::ep_experts: return "ep_experts";
    case RejectReason::virtual_stages: return "virtual_stages";
    case RejectReason::gemm_shape: return "gemm_shape";
    case RejectReason::batch: return "batch";
    case RejectReason::micro_batches: return "micro_batches";
    case RejectReason::node_fill: return "node_fill";
    case RejectReason::rule: return "rule";
    case RejectReason::memory: return "memory";
    }
    return "unknown";
}

std::string_view reject_reason_text(RejectReason reason) {
    switch (reason) {
    case RejectReason::precision: return "the GPU cannot run a dtype of the precision";
    case RejectReason::tp_split: return "TP does not divide the heads, KV heads or MLP width";
    case RejectReason::pp_layers: return "more pipeline stages than layers";
    case RejectReason::seq_split: return "CP or SP cannot split the sequence evenly";
    case RejectReason::ep_experts: return "EP does not divide the experts and DP (or EP > 1 on a dense model)";
    case RejectReason::virtual_stages: return "the layers do not split into PP x virtual stages equal chunks";
    case RejectReason::gemm_shape: return "FP8/FP4 GEMMs need hidden and MLP width / TP multiples of 16";
    case RejectReason::batch: return "micro-batch x DP does not divide the global batch";
    case RejectReason::micro_batches: return "interleaved schedule needs a micro-batch count that is a multiple of PP";
    case RejectReason::node_fill: return "the GPU count does not fill whole nodes";
    case RejectReason::rule: return "another rule of the config validation";
    case RejectReason::memory: return "does not fit in GPU memory";
    }
    return "unknown";
}

int64_t SearchStats::rejected_total() const {
    int64_t total = 0;
    for (int64_t n : rejected) total += n;
    return total;
}

namespace {

// Divisors of n > 0, ascending.
std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> low, high;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d != 0) continue;
        low.push_back(d);
        if (d != n / d) high.push_back(n / d);
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

std::string format_gib(double gib) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", gib);
    return buffer;
}

std::string join(const std::vector<int64_t>& values) {
    std::string out;
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
    return out;
}

}  // namespace

namespace {

// The GPU has a unit for every dtype the precision computes in (validate_config's rule).
bool gpu_runs(const GpuSpec& gpu, const PrecisionSpec& p) { return !precision_support_error(p, gpu); }

}  // namespace

void pin_dimension(SearchOptions& o, const Config& c, SearchDimension dimension) {
    const ParallelSpec& p = c.parallel;
    switch (dimension) {
    case SearchDimension::tp: o.tp = {p.tp}; break;
    case SearchDimension::pp: o.pp = {p.pp}; break;
    case SearchDimension::cp: o.cp = {p.cp}; break;
    case SearchDimension::ep: o.ep = {p.ep}; break;
    case SearchDimension::zero: o.zero = {p.zero}; break;
    case SearchDimension::virtual_stages: o.virtual_stages = {p.virtual_stages}; break;
    case SearchDimension::schedule: o.schedules = {p.schedule}; break;
    case SearchDimension::sequence_parallel: o.sequence_parallel = {p.sequence_parallel ? 1 : 0}; break;
    case SearchDimension::micro_batch: o.micro_batch = {c.training.micro_batch}; break;
    case SearchDimension::recompute: o.recompute = {c.training.recompute}; break;
    }
}

namespace {
// A dimension's value in a config, comparable across configs.
int64_t dimension_key(const Config& c, SearchDimension dimension) {
    const ParallelSpec& p = c.parallel;
    switch (dimension) {
    case SearchDimension::tp: return p.tp;
    case SearchDimension::pp: return p.pp;
    case SearchDimension::cp: return p.cp;
    case SearchDimension::ep: return p.ep;
    case SearchDimension::zero: return p.zero;
    case SearchDimension::virtual_stages: return p.virtual_stages;
    case SearchDimension::schedule: return int64_t(p.schedule);
    case SearchDimension::sequence_parallel: return p.sequence_parallel ? 1 : 0;
    case SearchDimension::micro_batch: return c.training.micro_batch;
    case SearchDimension::recompute: return int64_t(c.training.recompute);
    }
    return 0;
}
}  // namespace

std::vector<SearchDimension> dimensions_set_by(std::string_view config_json) {
    // Merged over two drafts that differ in every dimension, exactly those the text sets come out
    // equal (no second reader of the config keys).
    Config a = config_draft(), b = config_draft();
    ParallelSpec& q = b.parallel;
    q.tp = q.pp = q.cp = q.ep = 2;
    q.sequence_parallel = !a.parallel.sequence_parallel;
    q.zero = a.parallel.zero == 1 ? 2 : 1;
    q.virtual_stages = 2;
    q.schedule = a.parallel.schedule == PipelineSchedule::gpipe ? PipelineSchedule::interleaved : PipelineSchedule::gpipe;
    b.training.micro_batch = 2;
    b.training.recompute = a.training.recompute == Recompute::full ? Recompute::none : Recompute::full;
    const Result<Config> from_a = merge_config_json(a, config_json), from_b = merge_config_json(b, config_json);
    std::vector<SearchDimension> set;
    if (!from_a || !from_b) return set;  // parsing the config reports its error
    for (size_t d = 0; d < std::size(kSearchDimensionPaths); ++d)
        if (dimension_key(from_a.value(), SearchDimension(d)) == dimension_key(from_b.value(), SearchDimension(d)))
            set.push_back(SearchDimension(d));
    return set;
}

std::vector<PrecisionSpec> precisions_for_gpu(const GpuSpec& gpu) {
    std::vector<PrecisionSpec> out;
    for (const std::string& name : preset_names(PresetKind::precision)) {
        Result<PrecisionSpec> precision = precision_preset(name);
        if (precision.ok() && gpu_runs(gpu, precision.value())) out.push_back(std::move(precision).value());
    }
    return out;
}

// Updates smaller than half a weight's ulp vanish when the weights themselves are 16-bit: an fp32
// master copy keeps them (Micikevicius et al. 2018, arXiv 1710.03740, sec. 3.1), and pure bf16
// needs stochastic rounding or Kahan summation to match it (Zamirai et al. 2020, arXiv 2010.06192).
// Every recipe that pretrained a published LLM keeps fp32 masters (or fp32 weights under autocast).
const char* const kNotPretrainingNote = "pure fp16/bf16 (no fp32 master weights) left out: updates below half a weight's ulp are lost "
                                        "(Micikevicius et al. 2018 sec. 3.1); --precision all includes them";

bool used_to_pretrain(const PrecisionSpec& p) { return p.master_weights == MasterWeights::fp32 || p.params == DType::fp32; }

std::vector<PrecisionSpec> pretraining_precisions_for_gpu(const GpuSpec& gpu) {
    std::vector<PrecisionSpec> out = precisions_for_gpu(gpu);
    out.erase(std::remove_if(out.begin(), out.end(), [](const PrecisionSpec& p) { return !used_to_pretrain(p); }), out.end());
    return out;
}

// -----------------------------------------------------------------------------------------------
// [SECTION] Ranking
// -----------------------------------------------------------------------------------------------

namespace {

auto layout_key(const SearchLayout& l) {
    return std::make_tuple(l.precision, l.parallel.tp, l.parallel.pp, l.parallel.cp, l.parallel.ep, l.parallel.expert_tp,
                           l.parallel.sequence_parallel, l.parallel.zero, static_cast<int>(l.parallel.schedule), l.parallel.virtual_stages,
                           l.parallel.stage_split.first_stage_layers, l.parallel.stage_split.last_stage_layers,
                           l.parallel.stage_split.embedding_in_stage_split, l.parallel.stage_split.loss_in_stage_split,
                           std::string_view(l.parallel.stage_split.pipeline_layout), l.micro_batch, static_cast<int>(l.recompute));
}

// (objective, secondary) of a, strictly before that of b.
bool key_before(double a_objective, double a_secondary, double b_objective, double b_secondary) {
    if (a_objective != b_objective) return a_objective < b_objective;
    return a_secondary < b_secondary;
}

}  // namespace

bool ranks_before(const SearchHit& a, const SearchHit& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    if (a.secondary != b.secondary) return a.secondary < b.secondary;
    const double ma = a.prediction.memory.per_gpu_gib, mb = b.prediction.memory.per_gpu_gib;
    if (ma != mb) return ma < mb;
    return layout_key(a.layout) < layout_key(b.layout);
}

// -----------------------------------------------------------------------------------------------
// [SECTION] Enumeration (SearchSpace::create): groups that pass the cheap rules
// -----------------------------------------------------------------------------------------------
// The cheap rules below mirror validate_config (config.cpp check_layout and check_training;
// tests/core/search/test_search.cpp checks that they agree on every layout of several spaces);
// validate_config itself still runs on every layout that reaches predict(), so a rule missing
// here costs time and shows as `rule`, never as a wrong result.

namespace {

// The rules a (precision, TP, PP, CP, DP, EP, schedule, V) group must pass, cheapest first: precision,
// TP, PP, virtual stages, EP, CP, GEMM shape; the first violated names the rejection. The enumeration
// asks them in three parts: before the schedule (precision, TP: tp_fails keeps tp_rule's verdicts by
// (TP, expert TP)), the schedule's own (PP and virtual stages, once per PP), and after it (EP, CP, GEMM).
std::optional<RejectReason> rules_before_schedule(const Config& base, const PrecisionSpec& precision, int64_t tp, int64_t etp,
                                                  std::map<std::pair<int64_t, int64_t>, bool>& tp_fails) {
    if (!gpu_runs(base.gpu, precision)) return RejectReason::precision;
    auto [tp_verdict, fresh] = tp_fails.try_emplace({tp, etp});
    if (fresh) tp_verdict->second = bool(tp_rule(base.model, tp, etp));
    if (tp_verdict->second) return RejectReason::tp_split;
    return std::nullopt;
}

std::optional<RejectReason> schedule_rule(const Config& base, int64_t pp, int64_t v, const StageSplit& split) {
    const ModelSpec& m = base.model;
    if (pp_rule(m, pp, split)) return RejectReason::pp_layers;
    if (virtual_stages_rule(m, pp, v, v > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b, split))
        return RejectReason::virtual_stages;
    return std::nullopt;
}

std::optional<RejectReason> rules_after_schedule(const Config& base, const PrecisionSpec& precision, int64_t tp, int64_t cp, int64_t dp,
                                                 int64_t ep, int64_t etp) {
    const ModelSpec& m = base.model;
    if (ep_rule(m, tp, cp, dp, ep, etp)) return RejectReason::ep_experts;
    if (cp_rule(base.training.seq_len, cp)) return RejectReason::seq_split;
    if (gemm_shape_rule(m, precision.gemm, tp)) return RejectReason::gemm_shape;
    return std::nullopt;
}

// validate_config's micro-batch rules (slots simulated, interleaving) on M of one micro-batch size.
bool micro_batches_ok(const SearchGroup& g, int64_t global_batch, int64_t micro_batch) {
    return micro_batch_rule_passes(global_batch / (micro_batch * g.dp), g.pp, g.virtual_stages, g.schedule);
}

// Node, precision and framework defaults as check_config fills them, so every layout, the pilot's
// floors and the calibration see the config predict() sees. Without the framework's (CUDA graphs,
// compile, TP overlap, attention kernel), the floors were those of another stack: above the
// predictions, and the search pruned every layout (issue 25 item 1).
Config resolved_base(Config base) {
    fill_node_default(base);
    fill_precision_default(base);
    apply_framework_defaults(base);
    return base;
}

}  // namespace

Result<SearchSpace> SearchSpace::create(const Config& base_config, const SearchOptions& options) {
    // Bounds of config.cpp (kMaxGpus, training.global_batch, micro_batch, virtual_stages): the base's
    // layout is not validated before the search, and the enumeration multiplies these in int64.
    auto in_range = [](std::string_view key, int64_t value, int64_t low, int64_t high) -> std::optional<Error> {
        if (value >= low && value <= high) return std::nullopt;
        return Error{std::string(key),
                     "must be between " + std::to_string(low) + " and " + std::to_string(high) + ", got " + std::to_string(value)};
    };
    if (auto bad = in_range("num_gpus", base_config.num_gpus, 1, int64_t(1) << 20)) return *bad;
    if (auto bad = in_range("training.global_batch", base_config.training.global_batch, 1, int64_t(1) << 26)) return *bad;
    for (int64_t m : options.micro_batch)
        if (auto bad = in_range("training.micro_batch", m, 1, int64_t(1) << 20)) return *bad;
    for (int64_t v : options.virtual_stages)
        if (auto bad = in_range("parallel.virtual_stages", v, 1, 1024)) return *bad;
    for (int64_t z : options.zero)  // (run_cell reuses validate_config's verdict across ZeRO stages)
        if (auto bad = in_range("parallel.zero", z, 0, 3)) return *bad;
    if (options.top_k < 1) return Error{"top", "must be at least 1"};
    if (base_config.model.layers < 1 || base_config.model.heads < 1) return Error{"model", "has no layers or heads"};

    SearchSpace space;
    SearchSpaceData& d = *space.data_;
    d.base_ = resolved_base(base_config);
    d.options_ = options;
    d.precisions_ = options.precisions.empty() ? std::vector<PrecisionSpec>{d.base_.precision} : options.precisions;
    d.recompute_ =
        options.recompute.empty() ? std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full} : options.recompute;
    std::sort(d.recompute_.begin(), d.recompute_.end());
    d.recompute_.erase(std::unique(d.recompute_.begin(), d.recompute_.end()), d.recompute_.end());

    const Config& base = d.base_;
    const int64_t n = base.num_gpus;
    const int64_t layers = base.model.layers + base.model.decoder_layers;
    const int64_t gbs = base.training.global_batch;
    const int64_t n_rec = int64_t(d.recompute_.size());
    // The base's pipeline layout fixes its own stage count S = PP x VP (Megatron-Core's
    // --pipeline-model-parallel-layout): it is the split of every (PP, VP) with PP x VP = S; other
    // depths take Megatron-Core's splits, and the report says which applied (issue 22).
    const StageSplit& base_split = base.parallel.stage_split;
    int64_t layout_stages = 0, layout_groups = 0;
    if (!base_split.pipeline_layout.empty()) {
        const auto parsed = parse_pipeline_layout(base_split.pipeline_layout);
        if (!parsed) return parsed.error();
        layout_stages = int64_t(parsed.value().size());
    }
    const std::vector<int64_t> n_divisors = divisors(n);
    const std::vector<int64_t>& tps = options.tp.empty() ? n_divisors : options.tp;
    const std::vector<int64_t>& pps = options.pp.empty() ? n_divisors : options.pp;
    const std::vector<int64_t>& cps = options.cp.empty() ? n_divisors : options.cp;
    const std::vector<PipelineSchedule> schedules =
        options.schedules.empty()
            ? std::vector<PipelineSchedule>{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}
            : options.schedules;
    // A GPU count beyond one node must fill whole nodes: then no layout passes.
    const bool node_ok = base.node.host_gpus() <= 0 || !node_fill_rule(n, base.node);
    auto reject = [&d](RejectReason reason, int64_t count) {
        d.enumeration_.rejected[size_t(reason)] += count;
        d.layouts_ += count;
    };

    // Found once per enumeration: the schedules by PP, the micro-batches by DP, tp_rule by (TP, expert TP).
    std::map<int64_t, std::vector<std::tuple<PipelineSchedule, int64_t, StageSplit>>> schedules_by_pp;
    std::map<int64_t, std::vector<std::optional<RejectReason>>> schedule_rules_by_pp;  // schedule_rule of each
    std::map<int64_t, std::vector<int64_t>> micro_batches_by_dp;
    std::map<std::pair<int64_t, int64_t>, bool> tp_fails;
    for (int32_t precision = 0; precision < int32_t(d.precisions_.size()); ++precision) {
        for (int64_t tp : tps) {
            for (int64_t pp : pps) {
                for (int64_t cp : cps) {
                    // Not a split of n GPUs (each <= n first, so the product cannot overflow).
                    if (tp < 1 || pp < 1 || cp < 1 || tp > n || pp > n || cp > n || n % (tp * pp * cp) != 0) continue;
                    const int64_t dp = n / (tp * pp * cp);

                    SearchGroup group;
                    group.precision = precision;
                    group.tp = tp;
                    group.pp = pp;
                    group.cp = cp;
                    group.dp = dp;
                    // SP only means something with TP > 1, ZeRO only over several weight replicas (DP x CP,
                    // ParallelSpec::weight_replicas): one canonical value otherwise.
                    group.sequence_parallel = tp == 1                             ? std::vector<int>{0}
                                              : options.sequence_parallel.empty() ? std::vector<int>{0, 1}
                                                                                  : options.sequence_parallel;
                    group.zero = !options.zero.empty() ? options.zero
                                 : dp * cp > 1         ? std::vector<int64_t>{0, 1, 2, 3}
                                                       : std::vector<int64_t>{0};
                    int64_t batch_rejected = 0;  // micro-batch values that do not divide
                    if (!options.micro_batch.empty()) {
                        for (int64_t m : options.micro_batch) {
                            if (m >= 1 && gbs % (m * dp) == 0)
                                group.micro_batch.push_back(m);
                            else
                                ++batch_rejected;
                        }
                        std::sort(group.micro_batch.begin(), group.micro_batch.end());
                    } else if (gbs % dp == 0) {
                        auto [known, fresh] = micro_batches_by_dp.try_emplace(dp);
                        if (fresh)
                            for (int64_t m : divisors(gbs / dp))
                                if (options.max_micro_batch <= 0 || m <= options.max_micro_batch) known->second.push_back(m);
                        group.micro_batch = known->second;
                    } else {
                        batch_rejected = 1;
                    }
                    const int64_t per_sp = int64_t(group.zero.size()) * n_rec;  // layouts per (SP, micro-batch)
                    const int64_t per_mbs = int64_t(group.sequence_parallel.size()) * per_sp;
                    const int64_t subtree = per_mbs * (int64_t(group.micro_batch.size()) + batch_rejected);

                    // EP (MoE only) out of CP x DP with expert TP = TP; with expert TP 1 (Megatron-Core
                    // MoE parallel folding) out of the TP x CP x DP ranks. A base's own expert_tp is kept.
                    std::vector<std::pair<int64_t, int64_t>> expert_layouts;  // (expert_tp, ep), expert_tp 0 = tp
                    const int64_t base_etp = base.parallel.expert_tp;
                    for (int64_t etp : {int64_t(0), int64_t(1)}) {
                        if (base_etp != 0 && etp != 0) break;
                        if (etp == 1 && (tp == 1 || !base.model.is_moe())) break;
                        const int64_t e = etp == 0 ? base_etp : etp;
                        const std::vector<int64_t> eps = !options.ep.empty()    ? options.ep
                                                         : !base.model.is_moe() ? std::vector<int64_t>{1}
                                                         : e == 0               ? divisors(cp * dp)
                                                                                : divisors(tp * cp * dp / std::min(e, tp * cp * dp));
                        for (int64_t ep : eps) expert_layouts.push_back({e, ep});
                    }
                    // Schedules: without a pipeline there is nothing to schedule (one canonical entry).
                    // They depend on PP alone: found once per PP (schedules_by_pp).
                    auto [cached, first_time] = schedules_by_pp.try_emplace(pp);
                    std::vector<std::tuple<PipelineSchedule, int64_t, StageSplit>>& schedule_v = cached->second;
                    // Where the layers do not divide into pp x v, the splits Megatron-Core makes
                    // instead (stage_split.hpp); none found: the even split (rejected for v > 1,
                    // trainclock's balanced one for v = 1).
                    auto add_splits = [&](PipelineSchedule schedule, int64_t v) {
                        if (pp * v == layout_stages) {
                            schedule_v.push_back({schedule, v, base_split});
                            return;
                        }
                        const std::vector<StageSplit> splits = megatron_stage_splits(layers, pp, v);
                        if (splits.empty()) schedule_v.push_back({schedule, v, StageSplit{}});
                        for (const StageSplit& split : splits) schedule_v.push_back({schedule, v, split});
                    };
                    if (!first_time) {
                    } else if (pp == 1) {
                        schedule_v.push_back({PipelineSchedule::one_f_one_b, 1, StageSplit{}});
                    } else {
                        for (PipelineSchedule schedule : schedules) {
                            if (schedule != PipelineSchedule::interleaved) {
                                add_splits(schedule, 1);
                                continue;
                            }
                            // Virtual stages >= 2 that split the layers into equal chunks, or that
                            // one of Megatron's uneven splits fits (v <= (layers + 2) / pp).
                            if (!options.virtual_stages.empty()) {
                                for (int64_t v : options.virtual_stages)
                                    if (v >= 2) add_splits(schedule, v);
                                continue;
                            }
                            for (int64_t v = 2; v * pp <= std::max(layers + 2, layout_stages); ++v)
                                if (pp * v == layout_stages || layers % (pp * v) == 0 || !megatron_stage_splits(layers, pp, v).empty())
                                    add_splits(schedule, v);
                        }
                    }

                    std::vector<std::optional<RejectReason>>& schedule_rules = schedule_rules_by_pp[pp];
                    if (first_time)
                        for (const auto& [schedule, v, split] : schedule_v) schedule_rules.push_back(schedule_rule(base, pp, v, split));

                    const PrecisionSpec& spec = d.precisions_[size_t(precision)];
                    for (const auto& [etp, ep] : expert_layouts) {
                        const int64_t group_etp = etp == 0 ? tp : etp;
                        const std::optional<RejectReason> before =
                            node_ok ? rules_before_schedule(base, spec, tp, group_etp, tp_fails) : RejectReason::node_fill;
                        if (before) {  // every schedule: the same first violation
                            reject(*before, subtree * int64_t(schedule_v.size()));
                            continue;
                        }
                        const std::optional<RejectReason> after = rules_after_schedule(base, spec, tp, cp, dp, ep, group_etp);
                        for (size_t si = 0; si < schedule_v.size(); ++si) {
                            const auto& [schedule, v, split] = schedule_v[si];
                            std::optional<RejectReason> reason = schedule_rules[si] ? schedule_rules[si] : after;
                            if (!reason && group.micro_batch.empty()) reason = RejectReason::batch;
                            if (reason) {
                                reject(*reason, subtree);
                                continue;
                            }
                            reject(RejectReason::batch, per_mbs * batch_rejected);
                            SearchGroup g = group;
                            g.ep = ep;
                            g.expert_tp = etp == tp ? 0 : etp;
                            g.schedule = schedule;
                            g.virtual_stages = v;
                            g.stage_split = split;
                            if (!split.pipeline_layout.empty()) ++layout_groups;
                            if (tp > 1 && sp_rule(base.training.seq_len, tp, cp)) {
                                const auto on = std::find(g.sequence_parallel.begin(), g.sequence_parallel.end(), 1);
                                if (on != g.sequence_parallel.end()) {
                                    g.sequence_parallel.erase(on);
                                    reject(RejectReason::seq_split, per_sp * int64_t(g.micro_batch.size()));
                                }
                                if (g.sequence_parallel.empty()) continue;
                            }
                            g.first_cell = d.cells_;
                            d.cells_ += 1;
                            d.layouts_ += int64_t(g.sequence_parallel.size()) * per_sp * int64_t(g.micro_batch.size());
                            d.groups_.push_back(std::move(g));
                        }
                    }
                }
            }
        }
    }
    d.enumeration_.layouts = d.layouts_;
    if (layout_stages > 0) {
        const std::string layout =
            "pipeline layout '" + base_split.pipeline_layout + "' (" + std::to_string(layout_stages) + " virtual stages)";
        d.notes_.push_back(layout_groups > 0 ? layout + " is the stage split where PP x VP = " + std::to_string(layout_stages) +
                                                   "; other pipeline depths use Megatron-Core's splits"
                                             : layout + " fits no searched layout (PP x VP = " + std::to_string(layout_stages) +
                                                   " is not searched or breaks a rule): every depth uses Megatron-Core's splits");
    }
    d.cal_ = resolve_calibration(base.gpu, base.calibration, base.training.attention_kernel, &base.framework);
    if (options.prune) {
        d.pilot_ = std::make_shared<SearchSpaceData::Pilot>();
        if (!options.deferred_pilot) d.run_pilot(std::numeric_limits<int64_t>::max());
    }
    return space;
}

Config SearchSpaceData::config_for(const SearchLayout& layout) const {
    Config config = base_;
    config.precision = precisions_[size_t(layout.precision)];
    config.parallel = layout.parallel;
    config.training.micro_batch = layout.micro_batch;
    config.training.recompute = layout.recompute;
    return config;
}

// -----------------------------------------------------------------------------------------------
// [SECTION] Evaluation (SearchState): rules, pruning, predict, top K
// -----------------------------------------------------------------------------------------------

namespace {

// A lower bound of the objective's cost (search.hpp: the run's cost_usd with training.tokens, else one
// step's) of a layout whose step takes at least `step_s`: the same functions predict() prices with
// (whole_run, phases::run_cost_usd), non-decreasing in the step time at a fixed precision and GPU
// count. One checkpoint write is taken off the wall time: whole_run counts checkpoints with a floor
// of (steps x step) / interval, which can drop by one as the step grows when the interval is given
// in steps.
double cost_lower_bound_usd(const Config& c, double step_s) {
    if (c.training.tokens <= 0) return phases::step_cost_usd(c, step_s);
    const double steps = std::ceil(c.training.tokens / (double(c.training.global_batch) * double(c.training.seq_len)));
    const WholeRun run = whole_run(c, step_s, steps);
    double wall_s = run.ideal_time_s / run.goodput;
    const double useful_s = run.ideal_time_s + run.checkpoints * run.checkpoint_write_s;
    if (!run.ideal && useful_s > 0) wall_s -= wall_s * run.checkpoint_write_s / useful_s;
    return phases::run_cost_usd(c, wall_s * (1.0 - 1e-9));
}

}  // namespace

SearchStateData::SearchStateData(const SearchSpaceData& space)
    : space_(&space), floor_cache_(space.shared_floors_ ? FloorCache{} : space.floors()), scratch_(space.base()),
      base_checked_(space.precisions().size(), 0) {
    if (space.pilot_cutoff()) {
        fixed_ = true;
        fixed_cutoff_ = *space.pilot_cutoff();
    }
    const SearchOptions& options = space.options();
    if (options.objective == SearchObjective::time && options.max_step_s < std::numeric_limits<double>::infinity()) {
        external_ = true;  // ranks after every layout of step time max_step_s, before any slower one
        external_cutoff_.objective = options.max_step_s;
        external_cutoff_.secondary = std::numeric_limits<double>::infinity();
    }
}

void SearchStateData::run(int64_t begin_cell, int64_t end_cell) {
    const std::vector<SearchGroup>& groups = space_->groups();
    begin_cell = std::max<int64_t>(begin_cell, 0);
    end_cell = std::min(end_cell, space_->cells());
    if (begin_cell >= end_cell) return;
    // The group holding begin_cell: the last one whose first cell is <= begin_cell.
    auto it =
        std::upper_bound(groups.begin(), groups.end(), begin_cell, [](int64_t cell, const SearchGroup& g) { return cell < g.first_cell; });
    size_t gi = size_t(it - groups.begin()) - 1;
    for (int64_t cell = begin_cell; cell < end_cell; ++cell) {
        while (gi + 1 < groups.size() && groups[gi + 1].first_cell <= cell) ++gi;
        const SearchGroup& g = groups[gi];
        run_cell(g);
    }
}

void SearchStateData::load(const SearchLayout& layout) {
    if (scratch_precision_ != layout.precision) {
        scratch_.precision = space_->precisions()[size_t(layout.precision)];
        scratch_precision_ = layout.precision;
    }
    scratch_.parallel = layout.parallel;
    scratch_.training.micro_batch = layout.micro_batch;
    scratch_.training.recompute = layout.recompute;
}

const SearchHit* SearchStateData::cutoff() const {
    const SearchHit* cut = fixed_ ? &fixed_cutoff_ : top_.size() == size_t(space_->options().top_k) ? &top_.back() : nullptr;
    // The caller's bound (SearchOptions::max_step_s) where it is tighter: a layout above it is of no interest.
    if (external_ && (!cut || key_before(external_cutoff_.objective, external_cutoff_.secondary, cut->objective, cut->secondary)))
        return &external_cutoff_;
    return cut;
}

// Rules 4 and 5 by cost: a step time b such that every layout of the loaded precision whose step
// takes more than b ranks after the K-th best `cut`, and cost_cut_usd_ a lower bound of such a
// layout's cost. With a price, b is found by bisection where cost_lower_bound_usd, non-decreasing in
// the step time, first exceeds the cut's cost; without one every cost is 0 and time decides (b is
// the cut's time). Cached per (precision, cut).
double SearchStateData::cost_time_cutoff_s(const SearchHit& cut) {
    if (cost_cut_precision_ == scratch_precision_ && cost_cut_objective_ == cut.objective && cost_cut_secondary_ == cut.secondary)
        return cost_cut_s_;
    double lo = 0, hi = std::max(cut.secondary, 1e-9);
    if (price_per_gpu_hour_usd(scratch_) <= 0) {
        hi = cut.objective == 0 ? cut.secondary : std::numeric_limits<double>::infinity();
        cost_cut_usd_ = 0;
    } else {
        for (int i = 0; i < 200 && !(cost_lower_bound_usd(scratch_, hi) > cut.objective); ++i) hi *= 2;
        for (int i = 0; i < 64 && hi - lo > 1e-12 * hi; ++i) {
            const double mid = lo + (hi - lo) / 2;
            (cost_lower_bound_usd(scratch_, mid) > cut.objective ? hi : lo) = mid;
        }
        cost_cut_usd_ = cost_lower_bound_usd(scratch_, hi);
        if (!(cost_cut_usd_ > cut.objective)) hi = std::numeric_limits<double>::infinity();  // (never: the bound grows with the step)
    }
    cost_cut_precision_ = scratch_precision_;
    cost_cut_objective_ = cut.objective;
    cost_cut_secondary_ = cut.secondary;
    cost_cut_s_ = hi;
    return hi;
}

std::optional<Error> SearchStateData::rule_violation(const SearchLayout& layout) {
    load(layout);
    // In place: the base already holds node and precision, and layouts give dp and num_gpus, so
    // check_config fills nothing in and predict() sees the same config as after validate_config.
    // Model, GPU, node, precision and calibration are checked until they pass once per precision.
    char& base_checked = base_checked_[size_t(layout.precision)];
    std::optional<Error> violation = base_checked ? check_layout_rules(scratch_) : check_config(scratch_);
    if (!violation) base_checked = 1;
    return violation;
}

const SearchHit& SearchStateData::evaluate(const SearchLayout& layout) {
    last_.layout = layout;
    // Pruning rule 4: by time, a layout whose step-time lower bound exceeds the K-th best cannot enter.
    // By cost: a step time above which the cost bound exceeds the K-th best cost (cost_time_cutoff_s).
    PredictOptions predict_options;
    const SearchOptions& options = space_->options();
    const bool by_time = options.objective == SearchObjective::time;
    if (options.prune && cutoff()) predict_options.bound_above_s = by_time ? cutoff()->objective : cost_time_cutoff_s(*cutoff());
    last_.prediction = predict(scratch_, predict_options);
    if (last_.prediction.bounded) {  // rule 3 already noted its memory and found that it fits
        const double bound_s = last_.prediction.iteration_time_s;
        last_.objective = by_time ? bound_s : cost_cut_usd_;
        last_.secondary = by_time ? -std::numeric_limits<double>::infinity() : bound_s;  // by time: after the K-th by objective alone
        return last_;
    }
    ++stats_.predicted;
    const double time_s = last_.prediction.iteration_time_s;
    const double cost = scratch_.training.tokens > 0 ? last_.prediction.cost_usd : phases::step_cost_usd(scratch_, time_s);
    last_.objective = by_time ? time_s : cost;
    last_.secondary = by_time ? cost : time_s;
    note_memory(layout, last_.prediction.memory);
    return last_;
}

namespace {

// Least memory first, then the layout order (deterministic under merging).
bool less_memory(const MemoryNeed& a, const MemoryNeed& b) {
    if (a.memory.per_gpu_gib != b.memory.per_gpu_gib) return a.memory.per_gpu_gib < b.memory.per_gpu_gib;
    return layout_key(a.layout) < layout_key(b.layout);
}

}  // namespace

void SearchStateData::note_memory(const SearchLayout& layout, const MemoryBreakdown& memory) {
    MemoryNeed need{layout, memory};
    if (!smallest_memory_ || less_memory(need, *smallest_memory_)) smallest_memory_ = std::move(need);
}

// Keeps the top K, best first. Layouts the model cannot tell apart (equal objective, secondary
// and memory, e.g. selective recompute where flash attention already stores no scores) are kept
// once: the first in layout order, so the list stays deterministic under slicing and merging.
void SearchStateData::offer(const SearchHit& hit) {
    if (external_ && hit.objective > external_cutoff_.objective) return;  // of no interest (SearchOptions::max_step_s)
    const size_t k = size_t(space_->options().top_k);
    if (top_.size() == k && !ranks_before(hit, top_.back())) return;
    auto equivalent = [&hit](const SearchHit& other) {
        return other.objective == hit.objective && other.secondary == hit.secondary &&
               other.prediction.memory.per_gpu_gib == hit.prediction.memory.per_gpu_gib;
    };
    auto at = std::upper_bound(top_.begin(), top_.end(), hit, ranks_before);
    if (at != top_.begin() && equivalent(*(at - 1))) return;  // an equivalent layout ranks first
    if (at != top_.end() && equivalent(*at)) {
        *at = hit;  // hit is the first of its kind
        return;
    }
    top_.insert(at, hit);
    if (top_.size() > k) top_.pop_back();
}

// -----------------------------------------------------------------------------------------------
// [SECTION] Pruning
// -----------------------------------------------------------------------------------------------
// A cell fixes everything but recompute and micro-batch; it walks recompute from none to full and,
// for each, the micro-batches ascending. Two physical monotonicities let it skip predict() with
// SearchOptions::prune (tests compare against prune = false, which predicts every layout):
//  1. Activation memory grows with the micro-batch (Korthikanti et al. 2022, arXiv 2205.05198,
//     eq. 2: activations are linear in the micro-batch b, and b x in-flight micro-batches
//     min(b PP, B/DP) never falls as b grows). So the micro-batches that fit at a level (SP, ZeRO,
//     recompute) of a cell are a prefix: level_fits bisects for its end with memory_per_gpu,
//     between the ends of levels that need no more / no less memory (SP on, ZeRO 0 -> 1 -> 2,
//     recompute none -> selective). The rest count as memory rejections.
//  2. Recompute only adds forward work (Chen et al. 2016, arXiv 1604.06174; Korthikanti et al.
//     sec. 5): at equal layout, selective is no faster than none, full no faster than selective.
//     So when a lighter recompute level already ranks strictly after the current K-th best, a
//     heavier one that fits (rule 1) cannot enter the top K: counted as feasible without a
//     prediction.
//  3. predict() takes its memory from memory_per_gpu (memory.hpp); calling that alone first
//     rejects layouts that do not fit without simulating their pipeline.
//  4. Objective time with K layouts ranked: predict() gets the K-th best time as
//     PredictOptions::bound_above_s and skips the pipeline simulation when a lower bound of the step
//     (the busiest stage's M micro-batches run serially, plus the DP sync and optimizer step) exceeds
//     it: such a layout ranks strictly after the K-th best, now and later (the K-th only improves).
//     Counted as feasible and pruned; as a rule-2 bound it prunes heavier recompute levels too.
//  5. Objective time, before predict(): a cheaper lower bound from compute alone. predict() costs
//     every phase as its ops' roofline time (cost_ops) plus non-negative communication, launch and
//     host terms, so a stage's micro-batch takes at least the compute of its layers; the busiest
//     stage at least the average, (one micro-batch through every layer, the embedding and the
//     head) / PP; and the step at least M times that (the rule-4 bound without the terms that need
//     the network) plus the fixed step overhead. The compute of a micro-batch depends only on
//     (precision, TP, CP, SP, EP, micro-batch, recompute) (operators.cpp make_ctx), so it is
//     computed once per such key and shared by every PP, DP, schedule, virtual stages and ZeRO
//     stage. A layout whose bound exceeds the K-th best time (memory already checked by rule 3)
//     counts as feasible and pruned, as under rule 4, and bounds heavier recompute levels too.
//  Objective cost: rules 4 and 5 compare the step-time bound with the step time beyond which the
//     cost bound (the run's cost from whole_run and phases::run_cost_usd, the functions predict()
//     prices with, non-decreasing in the step time at one precision and GPU count) exceeds the
//     K-th best cost (SearchStateData::cost_time_cutoff_s): with a fixed count cost ranks as time,
//     and prunes as much (issue 25 item 2: 13 s -> under 1 s).
// "The K-th best" is the pilot's (SearchSpace::run_pilot, below) when it found K layouts: fixed for
// the whole search, so each layout's fate depends on nothing else and every count is the same
// however the cells are sliced, ordered or threaded.

namespace {}  // namespace

// The floors of predict()'s phases (phases.hpp phase_floor_s) of one micro-batch through each
// piece of the model.
MicroBatchFloor micro_batch_floor(const Config& c, const Calibration& cal) {
    MicroBatchFloor f;
    if (cal.precision_blind) return f;  // predict() then costs another precision: no bound
    const Execution x = make_execution(c, cal);
    const phases::Network net = phases::make_network(x);
    f.embedding_s = phases::piece_floor_s(embedding_ops(x), x, net);
    f.head_s = phases::piece_floor_s(head_ops(x), x, net);
    f.all_s = f.embedding_s + f.head_s;
    for (int64_t i = 0; i < x.layers;) {
        const LayerKind kind = layer_kind_at(c, i);
        const int64_t end = layer_kind_run_end(c, i, x.layers);
        double& layer_s = f.layer_s[size_t(kind_slot(kind))];
        if (layer_s == 0) layer_s = phases::piece_floor_s(layer_ops(x, kind), x, net);
        f.all_s += double(end - i) * layer_s;
        i = end;
    }
    return f;
}

namespace {

// M x (floor of the busiest stage's micro-batch), less 1e-6 relative (the summation order differs
// from predict()'s, and its own pipeline bound is exact to 1e-9), plus the step overhead. `exact`:
// walk the stages as predict() does; else the average stage (a weaker bound, O(1)).
// `exact` needs the execution (its stages' layers); the average needs the config alone (a search
// bounds most layouts with it, so it derives nothing else).
// Without interleaving (one chunk per stage) a stage s cannot start before the first micro-batch's
// forward has passed the stages before it, nor finish before its last backward has gone back through
// them: the makespan is at least (the floors of stages 0..s-1) + M x (the floor of stage s), for every
// s (the (M + PP - 1) stage times of 1F1B and GPipe, Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2).
// `runs`: the config's stages (stage_runs), found here when not given.
StageRuns stage_runs(const Config& c, const Calibration& cal) {
    StageRuns out;
    const int64_t p = std::max<int64_t>(c.parallel.pp, 1);
    const Execution x = make_execution(c, cal);
    out.chunks = x.chunks;
    for (int64_t stage = 0; stage < p; ++stage) {
        out.begin.push_back(out.runs.size());
        for (int64_t chunk = 0; chunk < x.chunks; ++chunk)
            for_each_layer_run(x, chunk * p + stage, [&](int64_t, int64_t n, LayerKind kind) {
                out.runs.push_back({double(n), size_t(kind_slot(kind))});
            });
    }
    out.begin.push_back(out.runs.size());
    return out;
}

double bound_from_floor_s(const Config& c, const Calibration& cal, const MicroBatchFloor& f, bool exact, const StageRuns* runs = nullptr) {
    const int64_t p = std::max<int64_t>(c.parallel.pp, 1);
    const double m = double(micro_batch_count(c));
    double bound_s = m * f.all_s / double(p);
    if (exact && p > 1) {
        StageRuns found;
        if (!runs) found = stage_runs(c, cal), runs = &found;
        double before_s = 0;  // floors of the stages before this one (one chunk each)
        for (int64_t stage = 0; stage < p; ++stage) {
            double s = (stage == 0 ? f.embedding_s : 0) + (stage == p - 1 ? f.head_s : 0);
            for (size_t i = runs->begin[size_t(stage)]; i < runs->begin[size_t(stage) + 1]; ++i)
                s += runs->runs[i].first * f.layer_s[runs->runs[i].second];
            bound_s = std::max(bound_s, (runs->chunks == 1 ? before_s : 0.0) + m * s);
            before_s += s;
        }
    }
    return bound_s * (1.0 - 1e-6) + phases::fitted_step_overhead_s(c, cal);
}

}  // namespace

namespace {

// Whether the TP, CP, EP and expert-TP groups each stay within one node (group_link's first case):
// the links of the floor's collectives depend on the GPU count through this alone (communication.cpp
// group_placement's world reaches only group_in_one_domain). Bit 0 marks the key as shared.
uint64_t floor_domains(const SearchSpaceData& space, const ParallelSpec& p) {
    if (!space.shared_floors_) return 0;
    const int64_t per_node = std::max<int64_t>(space.base().node.gpus_per_node, 1);
    uint64_t bits = 1, bit = 2;
    for (Group g : {Group::tp, Group::cp, Group::ep, Group::etp}) {
        if (group_in_one_domain(group_placement(p, g), per_node)) bits |= bit;
        bit <<= 1;
    }
    return bits;
}

// Bounds of SearchSpace::create: TP, CP, EP <= num_gpus <= 2^20, micro-batch <= global batch <= 2^26.
FloorKey floor_key(const SearchLayout& l, uint64_t domains) {
    return {(domains << 16) | (uint64_t(l.precision) << 3) | (uint64_t(l.recompute) << 1) | (l.parallel.sequence_parallel ? 1u : 0u),
            (uint64_t(l.parallel.tp) << 32) | uint64_t(l.micro_batch),
            (uint64_t(l.parallel.cp) << 40) | (uint64_t(l.parallel.expert_tp) << 20) | uint64_t(l.parallel.ep)};
}

}  // namespace

double step_time_lower_bound_s(const Config& config) {
    const Calibration cal = make_execution(config).cal;
    return bound_from_floor_s(config, cal, micro_batch_floor(config, cal), true);
}

size_t FloorKeyHash::operator()(const FloorKey& k) const {
    uint64_t h = k.precision_recompute_sp * 0x9E3779B97F4A7C15ull;  // Fibonacci hashing of each word
    h = (h ^ (h >> 29)) + k.tp_micro_batch * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 31)) + k.cp_ep * 0x94D049BB133111EBull;
    return size_t(h ^ (h >> 32));
}

uint64_t SearchStateData::floor_domains(const ParallelSpec& p) {
    if (!space_->shared_floors_) return 0;
    const std::array<int64_t, 4> of{p.tp, p.cp, p.ep, p.expert_tp};  // (the count is the space's)
    if (of != domains_of_) {
        domains_of_ = of;
        domains_ = trainclock::floor_domains(*space_, p);
    }
    return domains_;
}

const MicroBatchFloor& SearchStateData::floor_of(const SearchLayout& l) {
    auto [it, inserted] = floors().try_emplace(floor_key(l, floor_domains(l.parallel)));
    if (inserted) it->second = micro_batch_floor(scratch_, space_->calibration());
    return it->second;
}

const StageRuns& SearchStateData::stage_runs() {
    if (runs_cell_ != cell_ || cell_ < 0) {
        runs_ = trainclock::stage_runs(scratch_, space_->calibration());
        runs_cell_ = cell_;
    }
    return runs_;
}

double cost_lower_bound_for_search_usd(const Config& config, double step_s) { return cost_lower_bound_usd(config, step_s); }

bool SearchStateData::below_cutoff(const SearchLayout& layout, const SearchHit& cut, double* bound_objective, double* bound_secondary) {
    const MicroBatchFloor& f = floor_of(layout);
    const Calibration& cal = space_->calibration();
    const bool by_time = space_->options().objective == SearchObjective::time;
    // (objective, secondary) bounds of the layout; by time the secondary is left unbounded (-inf:
    // after the K-th by objective alone), by cost it is the step-time bound.
    // By cost, a step bound above cost_time_cutoff_s costs at least cost_cut_usd_, more than the cut.
    const double cutoff_s = by_time ? cut.objective : cost_time_cutoff_s(cut);
    auto bounds = [&](bool exact) {
        const double step_s = bound_from_floor_s(scratch_, cal, f, exact, exact && scratch_.parallel.pp > 1 ? &stage_runs() : nullptr);
        *bound_objective = by_time ? step_s : cost_cut_usd_;
        *bound_secondary = by_time ? -std::numeric_limits<double>::infinity() : step_s;
        return step_s <= cutoff_s;
    };
    return bounds(false) && bounds(true);
}

// The pilot: a pruning cutoff fixed before the search, so that which layouts are pruned depends
// on nothing but the layout (not on the thread count, the slicing or the order of the cells) and
// is tight from the first cell on. Each cell gets an estimate of its best step: rule 5's bound
// (average stage, no recompute) of each micro-batch, times a 1F1B bubble factor 1 + (PP-1)/(v M)
// (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2). The estimate only orders the cells: the
// kPilotCells best are searched in full on a state of their own, and the K-th best layout found
// becomes the cutoff. It is a real layout of the space, so the final K-th best is never worse and
// nothing the exact search would report ranks after it. With fewer than K layouts found, states
// prune with their own K-th best as it comes (counts then depend on the slicing). It runs in steps
// (one group estimated or one pilot cell searched each) so that a UI can spread it over frames.
struct SearchSpaceData::Pilot {
    std::vector<std::pair<double, int64_t>> estimates;  // (estimate of the best step, first cell) per group
    size_t next = 0;                                    // groups estimated, then pilot cells searched
    std::unique_ptr<SearchStateData> state;             // searches the pilot cells once all are estimated
    // The bounds of the last group estimated, per (SP, micro-batch) index (NaN: not computed). The next
    // groups of the same (precision, TP, PP, CP, EP, expert TP) differ in schedule, virtual stages and
    // stage split alone, which the average-stage bound does not read (bound_from_floor_s): they reuse them.
    const SearchGroup* last = nullptr;
    std::vector<double> bounds;
};

void SearchSpaceData::run_pilot(int64_t steps) {
    if (!pilot_) return;
    Pilot& pilot = *pilot_;
    std::optional<Config> scratch;  // the estimates' config, made on the first (the pilot cells need none)
    SearchLayout l;
    l.recompute = Recompute::none;
    for (;;) {
        if (!pilot.state && pilot.next == groups_.size()) {  // estimates complete: the best cells
            pilot_cells_estimated_ = true;
            const size_t n = std::min(pilot.estimates.size(), kPilotCells);
            std::partial_sort(pilot.estimates.begin(), pilot.estimates.begin() + std::ptrdiff_t(n), pilot.estimates.end());
            pilot.estimates.resize(n);
            pilot.state = std::make_unique<SearchStateData>(*this);
            pilot.next = 0;
        }
        if (pilot.state && pilot.next == pilot.estimates.size()) {
            if (pilot.state->top_.size() == size_t(options_.top_k)) pilot_cutoff_ = pilot.state->top_.back();
            floors_ = std::move(pilot.state->floor_cache_);  // every state starts with the floors found so far
            for (const auto& estimate : pilot.estimates) pilot_cells_.push_back(estimate.second);
            std::sort(pilot_cells_.begin(), pilot_cells_.end());
            pilot_state_ = std::shared_ptr<const SearchStateData>(std::move(pilot.state));
            pilot_.reset();
            return;
        }
        if (steps-- <= 0) return;
        if (pilot.state) {
            const int64_t cell = pilot.estimates[pilot.next++].second;
            pilot.state->run(cell, cell + 1);
            continue;
        }
        if (!scratch) {
            scratch.emplace(base_);
            scratch->training.recompute = Recompute::none;
        }
        Config& c = *scratch;
        const SearchGroup& g = groups_[pilot.next++];
        const SearchGroup* last = pilot.last;
        const bool same = last && last->precision == g.precision && last->tp == g.tp && last->pp == g.pp && last->cp == g.cp &&
                          last->dp == g.dp && last->ep == g.ep && last->expert_tp == g.expert_tp &&
                          last->sequence_parallel == g.sequence_parallel && last->micro_batch == g.micro_batch;
        pilot.last = &g;
        if (!same) pilot.bounds.assign(g.sequence_parallel.size() * g.micro_batch.size(), std::numeric_limits<double>::quiet_NaN());
        l.precision = g.precision;
        c.precision = precisions_[size_t(g.precision)];
        l.parallel.tp = c.parallel.tp = g.tp;
        l.parallel.pp = c.parallel.pp = g.pp;
        l.parallel.dp = c.parallel.dp = g.dp;
        l.parallel.cp = c.parallel.cp = g.cp;
        l.parallel.ep = c.parallel.ep = g.ep;
        l.parallel.expert_tp = c.parallel.expert_tp = g.expert_tp;
        l.parallel.stage_split = c.parallel.stage_split = g.stage_split;
        FloorCache& floors = shared_floors_ ? *shared_floors_ : floors_;
        uint64_t domains = 0;
        bool domains_known = false;
        const double chunks = g.schedule == PipelineSchedule::interleaved ? double(g.virtual_stages) : 1.0;
        double best = std::numeric_limits<double>::infinity(), least = best;
        const size_t n_mbs = g.micro_batch.size();
        for (size_t si = 0; si < g.sequence_parallel.size(); ++si) {
            l.parallel.sequence_parallel = c.parallel.sequence_parallel = g.sequence_parallel[si] != 0;
            for (size_t i = 0; i < n_mbs; ++i) {
                const int64_t mbs = g.micro_batch[i];
                if (!micro_batches_ok(g, c.training.global_batch, mbs)) continue;
                l.micro_batch = c.training.micro_batch = mbs;
                double& bound_s = pilot.bounds[si * n_mbs + i];
                if (std::isnan(bound_s)) {
                    if (!domains_known) domains = floor_domains(*this, l.parallel), domains_known = true;
                    auto [it, inserted] = floors.try_emplace(floor_key(l, domains));
                    if (inserted) it->second = micro_batch_floor(c, cal_);
                    bound_s = bound_from_floor_s(c, cal_, it->second, false);
                    min_bound_s_ = std::min(min_bound_s_, bound_s);
                }
                const double m = double(micro_batch_count(c));
                least = std::min(least, bound_s);
                best = std::min(best, bound_s * (1.0 + double(g.pp - 1) / (chunks * m)));
            }
        }
        pilot.estimates.push_back({best, g.first_cell});
        group_bound_s_.push_back(least);
        max_group_bound_s_ = std::max(max_group_bound_s_, least);
    }
}

// Rule 1: how many of the micro-batches `ok` fit at level (si, zi, ri) of the cell, a prefix as
// memory grows with the micro-batch. Across levels, at every micro-batch: SP on stores the
// activations outside the TP regions split over TP (Korthikanti et al. 2022, arXiv 2205.05198,
// sec. 4.2.2), so it needs no more than SP off; ZeRO 1 and 2 shard the optimizer states, then the
// gradients too, and hold nothing more (Rajbhandari et al. 2020, arXiv 1910.02054, fig. 1), so
// 0 -> 1 -> 2 need no more (stage 3 adds gathered-layer buffers: compared with itself only);
// selective recompute stores what none stores minus the attention scores (Korthikanti et al.
// sec. 5), so it needs no more than none (full keeps one layer's full activations besides the
// layer inputs: compared with itself only). Bounded by the levels already known (one needing no more
// memory fits at least as many, one needing no less at most as many), then found with
// memory_per_gpu on the first unknown micro-batch and, if it fits, by bisection. Probes of rule-passing layouts note their memory: a level that fits nothing
// has probed its first micro-batch, or is bounded by a level needing no more memory that did.
size_t SearchStateData::level_fits(const SearchGroup& g, SearchLayout layout, const std::vector<size_t>& ok, std::vector<char>& rules,
                                   std::vector<int64_t>& fits, size_t si, size_t zi, size_t ri) {
    const std::vector<Recompute>& recomputes = space_->recompute();
    const size_t n_zero = g.zero.size(), n_rec = recomputes.size();
    int64_t& known = fits[(si * n_zero + zi) * n_rec + ri];
    if (known >= 0) return size_t(known);
    const int sp = g.sequence_parallel[si];
    const int64_t zero = g.zero[zi];
    const Recompute recompute = recomputes[ri];
    // Bounds: from below, the levels met just before this one (SP off, the ZeRO stage below, no
    // recompute before selective), which need no less memory; from above, the lightest level of
    // this recompute (run_cell knows it first), which needs no more.
    const size_t n_sp = g.sequence_parallel.size();
    size_t lo = 0, hi = ok.size();
    auto at = [&](size_t s2, size_t z2, size_t r2) { return fits[(s2 * n_zero + z2) * n_rec + r2]; };
    auto raise = [&lo](int64_t known_below) {
        if (known_below > 0) lo = std::max(lo, size_t(known_below));
    };
    if (si > 0 && g.sequence_parallel[si - 1] < sp) raise(at(si - 1, zi, ri));
    if (zi > 0 && zero <= 2 && g.zero[zi - 1] < zero) raise(at(si, zi - 1, ri));
    if (ri > 0 && recompute == Recompute::selective && recomputes[ri - 1] == Recompute::none) raise(at(si, zi, ri - 1));
    if (zero <= 2) {
        size_t light = n_zero;  // the highest ZeRO stage up to 2
        while (light-- > 0 && g.zero[light] > 2) {}
        const int64_t above = at(n_sp - 1, light, ri);
        if (above >= 0 && g.zero[light] >= zero && g.sequence_parallel[n_sp - 1] >= sp) hi = std::min(hi, size_t(above));
    }
    layout.parallel.sequence_parallel = sp != 0;
    layout.parallel.zero = zero;
    layout.recompute = recompute;
    const size_t n_mbs = g.micro_batch.size();
    bool first = true;  // probe the first unknown micro-batch first: often nothing fits
    while (lo < hi) {
        const size_t mid = first ? lo : lo + (hi - lo) / 2;
        first = false;
        const size_t i = ok[mid];
        layout.micro_batch = g.micro_batch[i];
        char& verdict = rules[si * n_mbs + i];
        if (verdict == 0) verdict = rule_violation(layout) ? 2 : 1;
        load(layout);
        const MemoryBreakdown memory = memory_per_gpu(make_execution(scratch_, space_->calibration()));
        if (verdict == 1) note_memory(layout, memory);
        if (memory.fits)
            lo = mid + 1;
        else
            hi = mid;
    }
    known = int64_t(lo);
    return lo;
}

void SearchStateData::run_cell(const SearchGroup& g) {
    cell_ = g.first_cell;
    const SearchOptions& options = space_->options();
    const std::vector<Recompute>& recomputes = space_->recompute();
    const size_t n_mbs = g.micro_batch.size(), n_sp = g.sequence_parallel.size(), n_zero = g.zero.size();
    const size_t n_rec = recomputes.size();
    // With the caller's bound (SearchOptions::max_step_s, the plan): a cell whose every micro-batch's
    // rule-5 bound (average stage, no recompute: the least work) exceeds the cutoff is skipped whole,
    // before any memory check; its layouts are not counted (the caller wants the top, not the counts).
    // The space's estimates found that least bound already (group_bound_s_); else it is found below.
    const bool estimated = options.prune && external_ && space_->estimates_done() && recomputes[0] == Recompute::none &&
                           size_t(g.first_cell) < space_->group_bound_s_.size();
    auto skip = [&] {  // counted as fitting layouts that cannot beat the cutoff (memory unchecked)
        const int64_t layouts = int64_t(n_mbs * n_sp * n_zero * n_rec);
        stats_.layouts += layouts;
        stats_.feasible += layouts;
        stats_.pruned += layouts;
        stats_.cannot_beat_top_k += layouts;
    };
    if (estimated && space_->group_bound_s_[size_t(g.first_cell)] > cutoff()->objective) return skip();
    // Micro-batches that pass the schedule rules (the memory boundary is searched among them).
    std::vector<size_t> ok;
    for (size_t i = 0; i < n_mbs; ++i)
        if (micro_batches_ok(g, space_->base().training.global_batch, g.micro_batch[i])) ok.push_back(i);
    // validate_config's verdict per (SP, micro-batch), found once for every ZeRO stage and recompute
    // level (its rules read neither, ZeRO being 0-3; tests/core/search/test_search.cpp pins that): 0 unknown, 1 pass, 2 fail.
    std::vector<char> rules(n_sp * n_mbs, 0);
    // Per level (SP, ZeRO, recompute): how many of `ok` fit (level_fits); -1 not known yet.
    std::vector<int64_t> fits(n_sp * n_zero * n_rec, -1);

    SearchLayout layout;
    layout.precision = g.precision;
    layout.parallel.tp = g.tp;
    layout.parallel.pp = g.pp;
    layout.parallel.dp = g.dp;
    layout.parallel.cp = g.cp;
    layout.parallel.ep = g.ep;
    layout.parallel.expert_tp = g.expert_tp;
    layout.parallel.virtual_stages = g.virtual_stages;
    layout.parallel.stage_split = g.stage_split;
    layout.parallel.schedule = g.schedule;
    layout.parallel.overlap_dp_comm = space_->base().parallel.overlap_dp_comm;
    layout.parallel.overlap_tp_comm = space_->base().parallel.overlap_tp_comm;

    if (options.prune && external_ && !estimated) {
        const double cutoff_s = cutoff()->objective;
        double best_s = std::numeric_limits<double>::infinity();
        for (size_t si = 0; si < n_sp && best_s > cutoff_s; ++si) {
            layout.parallel.sequence_parallel = g.sequence_parallel[si] != 0;
            layout.recompute = recomputes[0];
            for (size_t i : ok) {
                layout.micro_batch = g.micro_batch[i];
                load(layout);
                best_s = std::min(best_s, bound_from_floor_s(scratch_, space_->calibration(), floor_of(layout), false));
            }
        }
        if (best_s > cutoff_s) return skip();
    }
    // The same with the exact walk of the stages (rule 5's second bound, no recompute), when some
    // group's least bound already exceeds the caller's bound: that group is skipped whatever the
    // cutoff, so counting these layouts as fitting cannot turn "nothing fits" into "nothing beats it".
    if (estimated && g.pp > 1 && space_->max_group_bound_s_ > options.max_step_s) {
        const double cutoff_s = cutoff()->objective;
        double best_s = std::numeric_limits<double>::infinity();
        layout.recompute = recomputes[0];
        for (size_t si = 0; si < n_sp && best_s > cutoff_s; ++si) {
            layout.parallel.sequence_parallel = g.sequence_parallel[si] != 0;
            for (size_t i : ok) {
                layout.micro_batch = g.micro_batch[i];
                load(layout);
                best_s = std::min(best_s, bound_from_floor_s(scratch_, space_->calibration(), floor_of(layout), true, &stage_runs()));
                if (best_s <= cutoff_s) break;
            }
        }
        if (best_s > cutoff_s) return skip();
    }
    if (options.prune) {
        // The lightest level of each recompute first (SP on, the highest ZeRO up to 2): it bounds
        // the heavier ones from above, as the heaviest (met first below) bound the rest from below.
        for (size_t ri = 0; ri < n_rec; ++ri)
            for (size_t zi = n_zero; zi-- > 0;)
                if (g.zero[zi] <= 2) {
                    level_fits(g, layout, ok, rules, fits, n_sp - 1, zi, ri);
                    break;
                }
    }
    // Per micro-batch, at one (SP, ZeRO): the (objective, secondary) of the lightest recompute level that fit.
    std::vector<double> bound_objective(n_mbs), bound_secondary(n_mbs);
    std::vector<char> fits_known(n_mbs);
    for (size_t si = 0; si < n_sp; ++si) {
        layout.parallel.sequence_parallel = g.sequence_parallel[si] != 0;
        for (size_t zi = 0; zi < n_zero; ++zi) {
            layout.parallel.zero = g.zero[zi];
            std::fill(fits_known.begin(), fits_known.end(), 0);
            for (size_t ri = 0; ri < n_rec; ++ri) {
                layout.recompute = recomputes[ri];
                stats_.rejected[size_t(RejectReason::micro_batches)] += int64_t(n_mbs - ok.size());
                const size_t fit = options.prune ? level_fits(g, layout, ok, rules, fits, si, zi, ri) : ok.size();
                for (size_t o = 0; o < ok.size(); ++o) {
                    const size_t i = ok[o];
                    layout.micro_batch = g.micro_batch[i];
                    char& verdict = rules[si * n_mbs + i];
                    if (verdict == 0) verdict = rule_violation(layout) ? 2 : 1;
                    if (verdict == 2) {
                        if (stats_.first_rule_message.empty()) stats_.first_rule_message = rule_violation(layout)->to_string();
                        ++stats_.rejected[size_t(RejectReason::rule)];
                        continue;
                    }
                    if (o >= fit) {  // rule 1 (level_fits)
                        ++stats_.rejected[size_t(RejectReason::memory)];
                        ++stats_.pruned;
                        continue;
                    }
                    const SearchHit* cut = cutoff();
                    if (options.prune && fits_known[i] && cut &&  // rule 2
                        key_before(cut->objective, cut->secondary, bound_objective[i], bound_secondary[i])) {
                        ++stats_.feasible;
                        ++stats_.pruned;
                        ++stats_.cannot_beat_top_k;
                        continue;
                    }
                    load(layout);
                    double objective_bound = 0, secondary_bound = 0;
                    if (options.prune && cut && !below_cutoff(layout, *cut, &objective_bound, &secondary_bound)) {  // rule 5
                        ++stats_.feasible;
                        ++stats_.pruned;
                        ++stats_.cannot_beat_top_k;
                        if (!fits_known[i]) {
                            fits_known[i] = 1;
                            bound_objective[i] = objective_bound;
                            bound_secondary[i] = secondary_bound;
                        }
                        continue;
                    }
                    const SearchHit& hit = evaluate(layout);
                    if (!hit.prediction.bounded && !hit.prediction.memory.fits) {  // (prune off: rule 1 did not run)
                        ++stats_.rejected[size_t(RejectReason::memory)];
                        continue;
                    }
                    ++stats_.feasible;
                    if (!fits_known[i]) {
                        fits_known[i] = 1;
                        bound_objective[i] = hit.objective;
                        bound_secondary[i] = hit.secondary;
                    }
                    if (hit.prediction.bounded) {
                        ++stats_.pruned;
                        ++stats_.cannot_beat_top_k;
                    } else {
                        offer(hit);
                    }
                }
            }
        }
    }
    stats_.layouts += int64_t(n_mbs * n_sp * n_zero * n_rec);
}

void SearchStateData::merge(const SearchStateData& other) {
    for (const SearchHit& hit : other.top_) offer(hit);
    stats_.layouts += other.stats_.layouts;
    stats_.predicted += other.stats_.predicted;
    stats_.feasible += other.stats_.feasible;
    stats_.pruned += other.stats_.pruned;
    stats_.cannot_beat_top_k += other.stats_.cannot_beat_top_k;
    for (int r = 0; r < kRejectReasonCount; ++r) stats_.rejected[size_t(r)] += other.stats_.rejected[size_t(r)];
    if (stats_.first_rule_message.empty()) stats_.first_rule_message = other.stats_.first_rule_message;
    if (other.smallest_memory_) note_memory(other.smallest_memory_->layout, other.smallest_memory_->memory);
}

// The public classes hold their data behind a pointer (search_internal.hpp) and forward to it.
SearchSpace::SearchSpace() : data_(Indirect<SearchSpaceData>::make()) {}
int64_t SearchSpace::cells() const { return data_->cells_; }
int64_t SearchSpace::layouts() const { return data_->layouts_; }
const Config& SearchSpace::base() const { return data_->base_; }
const SearchOptions& SearchSpace::options() const { return data_->options_; }
const std::vector<PrecisionSpec>& SearchSpace::precisions() const { return data_->precisions_; }
Config SearchSpace::config_for(const SearchLayout& layout) const { return data_->config_for(layout); }
bool SearchSpace::pilot_done() const { return !data_->pilot_; }
void SearchSpace::run_pilot(int64_t steps) { data_->run_pilot(steps); }

SearchState::SearchState(const SearchSpace& space) : data_(Indirect<SearchStateData>::make(space.data())) {}
void SearchState::run(int64_t begin_cell, int64_t end_cell) { data_->run(begin_cell, end_cell); }
void SearchState::merge(const SearchState& other) { data_->merge(*other.data_); }
const std::vector<SearchHit>& SearchState::top() const { return data_->top_; }
const SearchStats& SearchState::stats() const { return data_->stats_; }
const std::optional<MemoryNeed>& SearchState::smallest_memory() const { return data_->smallest_memory_; }

// -----------------------------------------------------------------------------------------------
// [SECTION] Report and explanation
// -----------------------------------------------------------------------------------------------

std::string describe_layout(const SearchSpace& space, const SearchLayout& l) {
    const ParallelSpec& p = l.parallel;
    std::string out =
        "TP=" + std::to_string(p.tp) + " PP=" + std::to_string(p.pp) + " CP=" + std::to_string(p.cp) + " DP=" + std::to_string(p.dp);
    if (p.ep > 1 || space.base().model.is_moe()) out += " EP=" + std::to_string(p.ep);
    if (p.etp() != p.tp) out += " ETP=" + std::to_string(p.etp());
    if (p.sequence_parallel) out += " SP";
    out += " ZeRO-" + std::to_string(p.zero);
    if (p.pp > 1) {
        out += " " + std::string(enum_name(p.schedule));
        if (p.schedule == PipelineSchedule::interleaved) out += "(v=" + std::to_string(p.virtual_stages) + ")";
        const StageSplit& split = p.stage_split;
        if (split.first_stage_layers > 0 || split.last_stage_layers > 0)
            out += " stages " + std::to_string(split.first_stage_layers) + "/.../" + std::to_string(split.last_stage_layers);
        if (split.embedding_in_stage_split) out += " +embedding";
        if (split.loss_in_stage_split) out += " +loss";
        if (!split.pipeline_layout.empty()) out += " layout " + split.pipeline_layout;
    }
    out += " mbs=" + std::to_string(l.micro_batch) + " recompute=" + std::string(enum_name(l.recompute));
    out += " " + space.precisions()[size_t(l.precision)].name;
    return out;
}

namespace {

std::string explain(const SearchSpace& space, const SearchReport& report) {
    const Config& base = space.base();
    const SearchOptions& o = space.options();
    const std::string gpus = std::to_string(base.num_gpus) + " GPUs";
    if (report.stats.layouts == 0) {
        const std::vector<int64_t> all = divisors(base.num_gpus);
        return gpus + " cannot be split as TP x PP x CP x DP with TP in {" + join(o.tp.empty() ? all : o.tp) + "}, PP in {" +
               join(o.pp.empty() ? all : o.pp) + "}, CP in {" + join(o.cp.empty() ? all : o.cp) + "}: no product of them divides " +
               std::to_string(base.num_gpus);
    }
    if (report.smallest_memory) {
        const MemoryNeed& m = *report.smallest_memory;
        return "no layout fits in memory: the smallest memory need is " + format_gib(m.memory.per_gpu_gib) + " GiB per GPU at " +
               describe_layout(space, m.layout) + "; " + base.gpu.name + " has " + format_gib(base.gpu.memory_gib) + " GiB" +
               (m.memory.headroom_gib > 0 ? " less the " + format_gib(m.memory.headroom_gib) + " GiB headroom asked" : "");
    }
    if (report.stats.rejected[size_t(RejectReason::node_fill)] == report.stats.layouts)
        return std::to_string(base.num_gpus) + " GPUs is not a multiple of the " + std::to_string(base.node.host_gpus()) +
               " GPUs per host of node " + base.node.name + " (use whole hosts, or at most one host)";
    const int64_t unsupported = report.stats.rejected[size_t(RejectReason::precision)];
    if (unsupported == report.stats.layouts) {
        std::string names;
        for (const PrecisionSpec& p : space.precisions()) names += (names.empty() ? "" : ", ") + p.name;
        return "gpu " + base.gpu.name + " cannot run precision " + names + " (no unit for its gemm, activation or weight dtype)";
    }
    // Every layout broke a rule: list the reasons, most frequent first.
    std::vector<int> order;
    for (int r = 0; r < kRejectReasonCount; ++r)
        if (report.stats.rejected[size_t(r)] > 0) order.push_back(r);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return report.stats.rejected[size_t(a)] > report.stats.rejected[size_t(b)]; });
    std::string out = "no layout of " + gpus + " passes the rules (" + std::to_string(report.stats.layouts) + " tried):";
    for (size_t i = 0; i < order.size(); ++i) {
        const RejectReason reason = RejectReason(order[i]);
        out += (i ? "; " : " ") + std::string(reject_reason_text(reason)) + " (" + std::to_string(report.stats.rejected[size_t(order[i])]) +
               ")";
        if (reason == RejectReason::rule && !report.stats.first_rule_message.empty()) out += ", e.g. " + report.stats.first_rule_message;
    }
    return out;
}

}  // namespace

SearchReport finish(const SearchSpace& space, const SearchState& state) {
    SearchReport report;
    report.top = state.top();
    report.smallest_memory = state.smallest_memory();
    const SearchStats& e = space.data().enumeration_;
    const SearchStats& s = state.stats();
    report.stats = s;
    report.stats.layouts = e.layouts;  // the enumeration counts every layout, evaluated or not
    report.notes = space.data().notes_;
    for (int r = 0; r < kRejectReasonCount; ++r) report.stats.rejected[size_t(r)] += e.rejected[size_t(r)];
    if (report.stats.feasible == 0) report.explanation = explain(space, report);
    return report;
}

Result<SearchReport> search(const Config& base, const SearchOptions& options) {
    Result<SearchSpace> space = SearchSpace::create(base, options);
    if (!space.ok()) return space.error();
    SearchState state(space.value());
    state.run(0, space.value().cells());
    return finish(space.value(), state);
}

// -----------------------------------------------------------------------------------------------
// [SECTION] JSON and CSV
// -----------------------------------------------------------------------------------------------

std::string search_report_to_json(const SearchSpace& space, const SearchReport& report) {
    const SearchStats& s = report.stats;
    JsonWriter out;
    out.begin_object();
    out.field("schema", "trainclock/search/v1");
    out.field("objective", space.options().objective == SearchObjective::time ? "time" : "cost");
    out.field("framework", framework_id(space.base().framework));  // every layout runs it (issue 25 item 9)
    out.key("calibration");                                        // the calibration every layout predicts with (issue 25 item 4)
    write_calibration_use(out, space.base());
    if (const double headroom = space.base().training.memory_headroom_gib) out.field("memory_headroom_gib", headroom);
    if (const double headroom = space.base().training.memory_headroom_pct) out.field("memory_headroom_pct", headroom);
    out.key("stats").begin_object();
    out.field("layouts", s.layouts).field("predicted", s.predicted).field("feasible", s.feasible);
    out.field("pruned", s.pruned).field("cannot_beat_top_k", s.cannot_beat_top_k).field("rejected", s.rejected_total());
    if (report.wall_s >= 0) out.field("wall_s", report.wall_s).field("threads", int64_t(report.threads));
    out.end_object();
    out.key("rejected").begin_object();
    for (int r = 0; r < kRejectReasonCount; ++r) out.field(reject_reason_name(RejectReason(r)), s.rejected[size_t(r)]);
    out.end_object();
    out.key("top").begin_array();
    for (size_t i = 0; i < report.top.size(); ++i) {
        const SearchHit& h = report.top[i];
        const ParallelSpec& p = h.layout.parallel;
        const Prediction& r = h.prediction;
        out.begin_object();
        out.field("rank", int64_t(i + 1));
        out.field("precision", space.precisions()[size_t(h.layout.precision)].name);
        out.key("layout").begin_object();
        out.field("tp", p.tp).field("pp", p.pp).field("dp", p.dp).field("cp", p.cp).field("ep", p.ep);
        if (p.expert_tp != 0) out.field("expert_tp", p.expert_tp);
        out.field("sequence_parallel", p.sequence_parallel).field("zero", p.zero);
        out.field("virtual_stages", p.virtual_stages).field("schedule", enum_name(p.schedule));
        out.field("first_stage_layers", p.stage_split.first_stage_layers).field("last_stage_layers", p.stage_split.last_stage_layers);
        out.field("embedding_in_stage_split", p.stage_split.embedding_in_stage_split);
        out.field("loss_in_stage_split", p.stage_split.loss_in_stage_split);
        if (!p.stage_split.pipeline_layout.empty()) out.field("pipeline_layout", p.stage_split.pipeline_layout);
        out.field("micro_batch", h.layout.micro_batch).field("recompute", enum_name(h.layout.recompute));
        out.end_object();
        out.key("result").begin_object();
        out.field("iteration_time_s", r.iteration_time_s).field("total_time_s", r.total_time_s);
        if (r.cost_known)
            out.field("cost_usd", r.cost_usd).field("step_cost_usd", phases::step_cost_usd(space.base(), r.iteration_time_s));
        else
            out.key("cost_usd").null().key("step_cost_usd").null();  // no price for the GPU: as the result JSON
        out.field("mfu", r.mfu).field("tokens_per_s", r.tokens_per_s);
        out.field("memory_per_gpu_gib", r.memory.per_gpu_gib).field("capacity_gib", r.memory.capacity_gib);
        out.end_object();
        out.end_object();
    }
    out.end_array();
    out.text_or_null("explanation", report.explanation);
    out.key("notes").begin_array();
    for (const std::string& note : report.notes) out.value(note);
    out.end_array();
    out.end_object();
    return out.take();
}

std::string search_csv_header() {
    return "rank,precision,tp,pp,dp,cp,ep,sequence_parallel,zero,schedule,virtual_stages,micro_batch,recompute,"
           "iteration_time_s,total_time_s,cost_usd,mfu,tokens_per_s,memory_per_gpu_gib,"
           "first_stage_layers,last_stage_layers,embedding_in_stage_split,loss_in_stage_split";  // split: appended (CSV readers by position)
}

std::string search_to_csv_rows(const SearchSpace& space, const SearchReport& report) {
    std::string out;
    for (size_t i = 0; i < report.top.size(); ++i) {
        const SearchHit& h = report.top[i];
        const ParallelSpec& p = h.layout.parallel;
        const Prediction& r = h.prediction;
        out += std::to_string(i + 1) + "," + space.precisions()[size_t(h.layout.precision)].name + "," + std::to_string(p.tp) + "," +
               std::to_string(p.pp) + "," + std::to_string(p.dp) + "," + std::to_string(p.cp) + "," + std::to_string(p.ep) + "," +
               (p.sequence_parallel ? "true" : "false") + "," + std::to_string(p.zero) + "," + std::string(enum_name(p.schedule)) + "," +
               std::to_string(p.virtual_stages) + "," + std::to_string(h.layout.micro_batch) + "," +
               std::string(enum_name(h.layout.recompute)) + "," + json_number(r.iteration_time_s) + "," + json_number(r.total_time_s) +
               "," + (r.cost_known ? json_number(r.cost_usd) : "") + "," + json_number(r.mfu) + "," + json_number(r.tokens_per_s) + "," +
               json_number(r.memory.per_gpu_gib) + "," + std::to_string(p.stage_split.first_stage_layers) + "," +
               std::to_string(p.stage_split.last_stage_layers) + "," + (p.stage_split.embedding_in_stage_split ? "true" : "false") + "," +
               (p.stage_split.loss_in_stage_split ? "true" : "false") + "\n";
    }
    return out;
}

}  // namespace trainclock
