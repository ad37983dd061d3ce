// trainclock: the search's internals (search.hpp shows callers SearchSpace and SearchState only).
// SearchSpace holds a SearchSpaceData (the groups, the floors and the pilot), SearchState a
// SearchStateData (its scratch config, floor cache, top K and counts); search.cpp defines both.
// Tests of the pruning bounds read the groups and the floors through this header.
#pragma once

#include <array>
#include <limits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trainclock/model/config.hpp"
#include "trainclock/perf/calibration.hpp"
#include "trainclock/perf/operators.hpp"
#include "trainclock/perf/prediction.hpp"
#include "trainclock/search/search.hpp"

namespace trainclock {

// Pruning rule 5 (search.cpp [SECTION] Pruning): a floor of predict()'s cost of one micro-batch
// (roofline compute and launches of every op, plus the TP, EP and CP collectives predict() always
// exposes; no bubble, DP sync or optimizer step), per layer kind, embedding and head.
struct MicroBatchFloor {
    std::array<double, kLayerKindSlots> layer_s{};  // one layer of each kind (kind_slot), forward + backward
    double embedding_s = 0, head_s = 0;
    double all_s = 0;  // every layer, the embedding and the head
};
MicroBatchFloor micro_batch_floor(const Config& config, const Calibration& cal);  // zeros when precision-blind
// M x (floor of the busiest stage), plus the step overhead: never above predict(config).iteration_time_s (tested).
double step_time_lower_bound_s(const Config& config);  // validated config
// Rule 5 by cost: a lower bound of the search's cost objective of a layout whose step takes at least step_s.
double cost_lower_bound_for_search_usd(const Config& config, double step_s);

// One (precision, TP, PP, CP, DP, EP, schedule, virtual stages) combination that passes the cheap
// rules; it is one cell, walking SP x ZeRO x recompute x micro-batch.
struct SearchGroup {
    int32_t precision = 0;
    int64_t tp = 1, pp = 1, cp = 1, dp = 1, ep = 1, virtual_stages = 1;
    int64_t expert_tp = 0;  // parallel.expert_tp (0 = tp)
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    StageSplit stage_split;              // Megatron's uneven split where the layers do not divide (stage_split.hpp)
    std::vector<int> sequence_parallel;  // values of the SP dimension
    std::vector<int64_t> zero;           // values of the ZeRO dimension
    std::vector<int64_t> micro_batch;    // ascending
    int64_t first_cell = 0;              // index of the group's first cell
};

// micro_batch_floor by (precision, TP, CP, SP, EP, micro-batch, recompute): the only layout fields
// the ops of a layer and its TP/CP/EP groups depend on (operators.cpp make_ctx, moe_mlp;
// communication.cpp group_placement).
struct FloorKey {
    uint64_t precision_recompute_sp, tp_micro_batch, cp_ep;
    bool operator==(const FloorKey& o) const {
        return precision_recompute_sp == o.precision_recompute_sp && tp_micro_batch == o.tp_micro_batch && cp_ep == o.cp_ep;
    }
};
struct FloorKeyHash {
    size_t operator()(const FloorKey& k) const;
};
using FloorCache = std::unordered_map<FloorKey, MicroBatchFloor, FloorKeyHash>;

// The layers of each pipeline stage of one layout in runs of one kind (slot), in the order
// bound_from_floor_s's exact walk visits them (chunk by chunk): found once per cell instead of per layout.
struct StageRuns {
    int64_t chunks = 1;
    std::vector<size_t> begin;                    // stage s: runs [begin[s], begin[s + 1])
    std::vector<std::pair<double, size_t>> runs;  // (layers, kind_slot)
};

struct SearchStateData;

struct SearchSpaceData {
    Config base_;
    SearchOptions options_;
    std::vector<PrecisionSpec> precisions_;
    std::vector<Recompute> recompute_;  // ascending (none first)
    std::vector<SearchGroup> groups_;
    int64_t cells_ = 0;
    int64_t layouts_ = 0;
    SearchStats enumeration_;         // rejections found while enumerating
    std::vector<std::string> notes_;  // what the enumeration kept of the base (SearchReport::notes)
    Calibration cal_;
    FloorCache floors_;  // found by the pilot (every state starts with them)
    // The plan's floors of one GPU and precision, shared by its spaces of every count (null: each state
    // keeps its own). The floor then keys on whether each TP, CP, EP and expert-TP group stays within
    // one node at the count too (group_in_one_domain: the only way a floor depends on the GPU count).
    std::shared_ptr<FloorCache> shared_floors_;
    std::optional<SearchHit> pilot_cutoff_;     // the K-th best of the pilot
    struct Pilot;                               // the pilot in progress (search.cpp)
    std::shared_ptr<Pilot> pilot_;              // null once done (or when not pruning)
    static constexpr size_t kPilotCells = 256;  // cells the pilot searches
    // The pilot's cells (ascending) and its state: a caller that wants the top alone (the plan) runs
    // the other cells and merges this state instead of searching the pilot's cells twice.
    std::vector<int64_t> pilot_cells_;
    // The least rule-5 bound (average stage, no recompute) of every group the pilot has estimated: once
    // all are, a lower bound of the step of every layout of the space (the plan's candidate bound).
    double min_bound_s_ = std::numeric_limits<double>::infinity();
    // Per group (by its cell), the least of those bounds: run_cell's skip under SearchOptions::max_step_s
    // compares it with the cutoff instead of computing it again (filled by the estimates).
    std::vector<double> group_bound_s_;
    double max_group_bound_s_ = -std::numeric_limits<double>::infinity();  // the greatest of group_bound_s_
    bool estimates_done() const { return !pilot_ || pilot_cells_estimated_; }
    bool pilot_cells_estimated_ = false;
    std::shared_ptr<const SearchStateData> pilot_state_;

    int64_t cells() const { return cells_; }
    const Config& base() const { return base_; }
    const SearchOptions& options() const { return options_; }
    const std::vector<PrecisionSpec>& precisions() const { return precisions_; }
    const std::vector<SearchGroup>& groups() const { return groups_; }
    const std::vector<Recompute>& recompute() const { return recompute_; }
    const Calibration& calibration() const { return cal_; }
    const FloorCache& floors() const { return floors_; }
    const std::optional<SearchHit>& pilot_cutoff() const { return pilot_cutoff_; }
    Config config_for(const SearchLayout& layout) const;
    void run_pilot(int64_t steps);  // `steps` group estimates or pilot cells
};

struct SearchStateData {
    explicit SearchStateData(const SearchSpaceData& space);

    void run(int64_t begin_cell, int64_t end_cell);
    void merge(const SearchStateData& other);
    void run_cell(const SearchGroup& group);
    void load(const SearchLayout& layout);                            // the layout into scratch_
    std::optional<Error> rule_violation(const SearchLayout& layout);  // load + check_config (not counted)
    size_t level_fits(const SearchGroup& g, SearchLayout layout, const std::vector<size_t>& ok, std::vector<char>& rules,
                      std::vector<int64_t>& fits, size_t si, size_t zi, size_t ri);  // rule 1 (search.cpp)
    const SearchHit& evaluate(const SearchLayout& layout);                           // predict() the layout loaded by load
    void note_memory(const SearchLayout& layout, const MemoryBreakdown& memory);
    void offer(const SearchHit& hit);
    const MicroBatchFloor& floor_of(const SearchLayout& layout);  // cached micro_batch_floor of the loaded layout
    const StageRuns& stage_runs();                                // of the cell in progress (its layout loaded)
    StageRuns runs_;
    int64_t runs_cell_ = -1, cell_ = -1;              // the cell runs_ is of; the cell in progress
    double cost_time_cutoff_s(const SearchHit& cut);  // rule 4 by cost: the step time beyond which a layout costs more than cut
    const SearchHit* cutoff() const;                  // the K-th best pruning compares with; null: none yet
    // Rule 5: false = cannot enter; the (objective, secondary) lower bounds it found in the two outputs.
    bool below_cutoff(const SearchLayout& layout, const SearchHit& cut, double* bound_objective, double* bound_secondary);

    const SearchSpaceData* space_;
    FloorCache floor_cache_;  // starts as the space's floors (unused with the space's shared_floors_)
    FloorCache& floors() { return space_->shared_floors_ ? *space_->shared_floors_ : floor_cache_; }
    uint64_t floor_domains(const ParallelSpec& p);  // search.cpp floor_domains, for the last (TP, CP, EP, expert TP) asked
    std::array<int64_t, 4> domains_of_{-1, -1, -1, -1};
    uint64_t domains_ = 0;
    bool fixed_ = false;  // fixed_cutoff_ (the pilot's) replaces top_.back() for pruning
    SearchHit fixed_cutoff_;
    bool external_ = false;  // SearchOptions::max_step_s given: external_cutoff_ prunes too (cutoff())
    SearchHit external_cutoff_;
    Config scratch_;  // base config, mutated per layout
    int32_t scratch_precision_ = -1;
    std::vector<char> base_checked_;   // per precision: check_config passed once (then check_layout_rules)
    int32_t cost_cut_precision_ = -1;  // cost_time_cutoff_s's cache: precision and cut, the step time and its cost bound
    double cost_cut_objective_ = -1, cost_cut_secondary_ = -1, cost_cut_s_ = 0, cost_cut_usd_ = 0;
    SearchHit last_;
    std::vector<SearchHit> top_;
    SearchStats stats_;
    std::optional<MemoryNeed> smallest_memory_;
};

}  // namespace trainclock
