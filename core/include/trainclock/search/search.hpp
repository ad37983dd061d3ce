// trainclock: layout search (issue 5). Given a model, a GPU and a GPU count, enumerate every
// parallel layout (TP, PP, CP, DP, EP, SP, ZeRO, schedule, virtual stages, micro-batch, recompute,
// and precision when asked), drop those that break a rule or do not fit in memory, and rank the
// rest by step time or cost.
//
// The core has no threads and no clocks. A search is split into independent work items ("cells"):
//   SearchSpace space = SearchSpace::create(base, options).value();   // enumerates groups, runs the pilot
//   SearchState state(space);
//   state.run(0, space.cells());            // or [begin, end) slices: N per frame on the web,
//                                           // one range per std::thread natively, then merge()
//   SearchReport report = finish(space, state);
// Results do not depend on how the cells are sliced or merged (the ranking is a total order).
// Pruning compares with a cutoff that create() fixes by searching the most promising cells first
// (search.cpp, SearchSpace::run_pilot), so every state prunes the same layouts however the cells
// are sliced or threaded: every count of the report is deterministic too.
// A cell is one (precision, TP, PP, CP, EP, schedule, v) with all its SP values, ZeRO stages,
// micro-batches and recompute levels: up to a few hundred layouts (most pruned), so a UI should run
// a few cells at a time and check its frame budget between them. finish() may be called at any
// time for partial results. The pilot costs about a tenth of a whole search (gpt3-175b on 1024
// GPUs, all precisions: ~55 ms of ~0.45 s natively): a UI sets options.deferred_pilot and runs it
// in steps too (SearchSpace::run_pilot) before making its state.
//
// Ranking (documented tie-breaks, best first):
//   objective time: iteration_time_s, then cost, then memory per GPU (more headroom first), then
//   the layout in the order precision index, TP, PP, CP, EP, SP off before on, ZeRO, schedule
//   (gpipe, 1f1b, interleaved), virtual stages, stage split (first/last stage layers, embedding,
//   loss), micro-batch, recompute (none, selective, full).
//   objective cost: cost_usd (per step when training.tokens is 0), then iteration time, then the
//   same tie-breaks. Layouts with equal objective, secondary and memory are equivalent to the
//   model and listed once (the first in layout order). With a fixed GPU count and GPU type cost
//   is proportional to time, so both objectives agree except when the price is unknown (0),
//   where cost ties and time decides.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/indirect.hpp"
#include "trainclock/base/status.hpp"
#include "trainclock/model/config.hpp"
#include "trainclock/perf/prediction.hpp"

namespace trainclock {

enum class SearchObjective { time, cost };

// Why a layout was dropped. Counted in layouts (one full tuple of the space each).
enum class RejectReason : int {
    precision,       // the GPU has no unit for a dtype of the precision (FP8 on A100)
    tp_split,        // TP does not divide the heads, the MLP width or the expert width (KV heads: divide or multiple)
    pp_layers,       // more pipeline stages than layers
    seq_split,       // CP does not cut the sequence into 2*CP chunks, or SP cannot split it over TP
    ep_experts,      // EP does not divide the experts and DP (or EP > 1 on a dense model)
    virtual_stages,  // interleaved: the layers do not split into PP * virtual stages equal chunks
    gemm_shape,      // FP8/FP4 GEMMs need hidden and ffn_hidden / TP multiples of 16
    batch,           // micro_batch * DP does not divide the global batch
    micro_batches,   // interleaved: micro-batch count not a multiple of PP; or too many to simulate
    node_fill,       // more GPUs than one node but not whole nodes (every layout)
    rule,            // any other rule of validate_config (the first message is kept)
    memory,          // does not fit in GPU memory
};
inline constexpr int kRejectReasonCount = 12;
std::string_view reject_reason_name(RejectReason reason);  // "tp_split": JSON/CSV key
std::string_view reject_reason_text(RejectReason reason);  // "TP does not divide the heads or the MLP width"

struct SearchOptions {
    std::vector<PrecisionSpec> precisions;  // empty = the base config's precision only
    SearchObjective objective = SearchObjective::time;
    int64_t top_k = 10;  // layouts kept in the ranking
    // Each list restricts one dimension to the values given; empty = every value the rules allow.
    std::vector<int64_t> tp, pp, cp, ep, zero, micro_batch, virtual_stages;
    std::vector<PipelineSchedule> schedules;
    std::vector<Recompute> recompute;
    std::vector<int> sequence_parallel;  // 0 = off, 1 = on; default both when TP > 1
    int64_t max_micro_batch = 0;         // 0 = no cap beyond divisibility
    bool prune = true;                   // skip predictions whose outcome is known (search.cpp [SECTION] Pruning)
    bool deferred_pilot = false;         // create() leaves the pilot to SearchSpace::run_pilot (a UI slicing it)
    // Objective time: layouts whose step takes longer are of no interest to the caller (the plan:
    // dominated or past the deadline). They are pruned as layouts that cannot beat the top K (by
    // their lower bounds) and never listed; the top may then hold fewer than K, or none.
    double max_step_s = std::numeric_limits<double>::infinity();
};

// A searched dimension of SearchOptions, and pinning it: the search then tries only the value the
// config has (the CLI's layout flags and --config keys, the API's "pin" list).
enum class SearchDimension { tp, pp, cp, ep, zero, virtual_stages, schedule, sequence_parallel, micro_batch, recompute };
// The config key each dimension pins, in enum order (value i is kSearchDimensionPaths[i]); the API's
// "pin" list names a dimension by the key's last part ("virtual_stages").
inline constexpr std::string_view kSearchDimensionPaths[] = {"parallel.tp",          "parallel.pp",
                                                             "parallel.cp",          "parallel.ep",
                                                             "parallel.zero",        "parallel.virtual_stages",
                                                             "parallel.schedule",    "parallel.sequence_parallel",
                                                             "training.micro_batch", "training.recompute"};
static_assert(std::size(kSearchDimensionPaths) == static_cast<size_t>(SearchDimension::recompute) + 1, "one config key per dimension");
void pin_dimension(SearchOptions& options, const Config& config, SearchDimension dimension);
// The dimensions a config/v1 JSON text sets (the CLI's --config file, the API's config): both pin
// them unless widened (issue 25 item 6: the CLI and Python search the same layouts).
std::vector<SearchDimension> dimensions_set_by(std::string_view config_json);

// Every precision preset whose gemm, activation and weight dtypes the GPU runs (sorted by name).
std::vector<PrecisionSpec> precisions_for_gpu(const GpuSpec& gpu);
// The search's default set: those of precisions_for_gpu that are used to pretrain. Pure 16-bit
// weights without an fp32 master copy (fp16, bf16) are left out (kNotPretrainingNote says why).
std::vector<PrecisionSpec> pretraining_precisions_for_gpu(const GpuSpec& gpu);
bool used_to_pretrain(const PrecisionSpec& precision);
extern const char* const kNotPretrainingNote;

// One point of the space; with the base config it gives a full Config (SearchSpace::config_for).
struct SearchLayout {
    int32_t precision = 0;  // index into SearchSpace::precisions()
    ParallelSpec parallel;  // tp, pp, dp, cp, ep, sequence_parallel, zero, virtual_stages, schedule
    int64_t micro_batch = 1;
    Recompute recompute = Recompute::none;
};

struct SearchHit {
    SearchLayout layout;
    Prediction prediction;  // predict(config_for(layout)), without timeline
    double objective = 0;   // iteration_time_s or cost (see the header comment)
    double secondary = 0;   // the other one of the two
};

// Memory of one layout (the smallest need is what the explanation of "nothing fits" names).
struct MemoryNeed {
    SearchLayout layout;
    MemoryBreakdown memory;
};

struct SearchStats {
    int64_t layouts = 0;            // every layout of the space (rejected ones included)
    int64_t predicted = 0;          // layouts that reached predict()
    int64_t feasible = 0;           // layouts that pass every rule and fit in memory
    int64_t pruned = 0;             // layouts decided without a full predict() (counted in feasible or rejected too)
    int64_t cannot_beat_top_k = 0;  // of those, feasible ones whose step-time (or objective) lower bound ranks after the K-th best
    std::array<int64_t, kRejectReasonCount> rejected{};  // by RejectReason
    std::string first_rule_message;                      // validate_config's message for the first `rule` rejection
    int64_t rejected_total() const;
};

struct SearchSpaceData;  // a space's groups, floors and pilot (core/src/search/search_internal.hpp)
struct SearchStateData;  // a state's scratch config, floor cache, top K and counts (same)

class SearchSpace {
public:
    // Enumerate the layout groups of `base` (model, gpu, node, num_gpus, training are kept; the
    // parallel layout, micro_batch, recompute and precision are searched). Fails when the options
    // are malformed (top_k < 1, an empty precision list after filtering, num_gpus < 1).
    static Result<SearchSpace> create(const Config& base, const SearchOptions& options);

    int64_t cells() const;    // work items for SearchState::run
    int64_t layouts() const;  // layouts in the whole space
    const Config& base() const;
    const SearchOptions& options() const;
    const std::vector<PrecisionSpec>& precisions() const;
    Config config_for(const SearchLayout& layout) const;  // the full config of one layout

    // The pilot fixes the pruning cutoff (search.cpp). create() runs it whole unless
    // options.deferred_pilot: then call run_pilot until pilot_done() before making the states.
    // Any split gives the same cutoff.
    bool pilot_done() const;
    void run_pilot(int64_t steps);  // `steps` group estimates or pilot cells

    const SearchSpaceData& data() const { return *data_; }  // the internals (opaque outside the core)
    SearchSpaceData& data() { return *data_; }              // (the plan shares floors across spaces)

private:
    SearchSpace();
    Indirect<SearchSpaceData> data_;
};

// The evaluation of some cells of one space (one per thread or per UI session).
class SearchState {
public:
    explicit SearchState(const SearchSpace& space);  // the space must outlive the state

    void run(int64_t begin_cell, int64_t end_cell);  // evaluate cells [begin, end)
    void merge(const SearchState& other);            // add another state's results

    const std::vector<SearchHit>& top() const;                 // best first, at most top_k, no two equivalent
    const SearchStats& stats() const;                          // of the cells run here (enumeration excluded)
    const std::optional<MemoryNeed>& smallest_memory() const;  // least memory seen among rule-passing layouts

private:
    Indirect<SearchStateData> data_;
};

struct SearchReport {
    std::vector<SearchHit> top;                 // best first
    SearchStats stats;                          // enumeration + evaluation
    std::optional<MemoryNeed> smallest_memory;  // least memory need seen (exact when nothing fits)
    std::string explanation;                    // non-empty when nothing is feasible: what blocks it
    std::vector<std::string> notes;             // what the search kept of the base config (its pipeline layout)
    double wall_s = -1;                         // set by the caller (the core has no clock); < 0 = not measured
    int threads = 1;                            // set by the caller
};

SearchReport finish(const SearchSpace& space, const SearchState& state);

// Single-threaded convenience: create + run every cell + finish.
Result<SearchReport> search(const Config& base, const SearchOptions& options);

// Strict total order used for the ranking (true when a ranks before b).
bool ranks_before(const SearchHit& a, const SearchHit& b);

// "TP=8 PP=16 CP=1 DP=128 EP=1 SP ZeRO-1 interleaved(v=4) mbs=1 recompute=none bf16-mixed"
std::string describe_layout(const SearchSpace& space, const SearchLayout& layout);

// {"schema": "trainclock/search/v1", "objective", "stats": {layouts, predicted, feasible, pruned,
//  cannot_beat_top_k, rejected[, wall_s, threads]}, "rejected": {reason: n}, "top": [{"rank", "precision", "layout":
//  {...}, "result": {...}}], "explanation": null | "...", "notes": ["..."] (what the search kept of the base)}
std::string search_report_to_json(const SearchSpace& space, const SearchReport& report);
std::string search_csv_header();
std::string search_to_csv_rows(const SearchSpace& space, const SearchReport& report);

}  // namespace trainclock
