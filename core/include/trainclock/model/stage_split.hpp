// trainclock: how the layers of a model are placed on pipeline stages and their virtual stages,
// with Megatron-Core's uneven splits (--decoder-first-pipeline-num-layers,
// --decoder-last-pipeline-num-layers, --account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split). A pure function of counts: config validation, the
// operators, memory, the pipeline and the search read the same assignment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainclock/base/status.hpp"

namespace trainclock {

// The split keys of a layout (config JSON: parallel.first_stage_layers, ...).
struct StageSplit {
    int64_t first_stage_layers = 0;         // layers on the first stage (0 = even split)
    int64_t last_stage_layers = 0;          // layers on the last stage (0 = even split)
    bool embedding_in_stage_split = false;  // the input embedding counts as one layer of the split
    bool loss_in_stage_split = false;       // the LM head + loss counts as one layer of the split
    // Megatron-Core's --pipeline-model-parallel-layout ("" = none): every virtual stage spelled out
    // (parse_pipeline_layout); excludes the four keys above, as Megatron-Core does.
    std::string pipeline_layout;
    bool any() const {
        return first_stage_layers > 0 || last_stage_layers > 0 || embedding_in_stage_split || loss_in_stage_split ||
               !pipeline_layout.empty();
    }
    bool operator==(const StageSplit& o) const {
        return first_stage_layers == o.first_stage_layers && last_stage_layers == o.last_stage_layers &&
               embedding_in_stage_split == o.embedding_in_stage_split && loss_in_stage_split == o.loss_in_stage_split &&
               pipeline_layout == o.pipeline_layout;
    }
};

// Layers [first, first + count) of one virtual stage.
struct LayerRange {
    int64_t first = 0;
    int64_t count = 0;
};

// One virtual stage of a pipeline layout: its transformer layers [first, first + layers) and what
// else it names.
struct LayoutStage {
    int64_t first = 0;       // index of its first transformer layer (t's in the stages before it)
    int64_t layers = 0;      // t
    int64_t mtp = 0;         // m: multi-token-prediction layers
    bool embedding = false;  // E
    bool loss = false;       // L
};

// Megatron-Core's layout string (megatron/core/transformer/pipeline_parallel_layer_layout.py,
// PipelineParallelLayerLayout.parse_str_to_list) as virtual stages in string order, which is
// virtual-stage order j = chunk * pp + stage: E embedding, t transformer layer, m MTP layer, L loss,
// '|' between stages, commas ignored, "(...)*N" repeats a group (groups do not nest) and "x*N" one
// character, e.g. "Et*3|(tt|)*29,m|L" (61 layers + MTP on 16 x 2 virtual stages). An Error (key
// parallel.pipeline_layout) for a character that is no layer or an expansion past 65536 characters.
Result<std::vector<LayoutStage>> parse_pipeline_layout(std::string_view layout);

// Why Megatron-Core rejects `layout` for a model of `layers` transformer layers and `mtp_layers` MTP
// layers on pp x virtual_stages virtual stages (PipelineParallelLayerLayout.__init__ and
// validate_layer_layout): the stage count, E first and once, L last and once, the t and m counts,
// MTP after every t, in one virtual stage, the last of its pipeline stage. nullopt when it accepts.
std::optional<Error> pipeline_layout_error(std::string_view layout, int64_t pp, int64_t virtual_stages, int64_t layers, int64_t mtp_layers);

// Layers of virtual stage j (chunk * stages + stage) when `layers` are split over `virtual_stages`
// pieces in order; the first layers % virtual_stages pieces take one extra layer.
LayerRange virtual_stage_layers(int64_t layers, int64_t virtual_stages, int64_t j);

// Layers of virtual stage j (chunk * stages + stage) under `split`, as Megatron-Core assigns them:
// in virtual-stage order; with first/last set, each of the v chunks of the first (last) stage holds
// first (last) / v layers and the middle stages share the rest equally; with the embedding (loss)
// counted, the split is even over layers + 1 (+ 1) and the first (last) virtual stage builds one
// layer fewer; with a pipeline layout, the t's of its stage j (parsed on each call: Execution keeps
// the parsed layout). Without keys: virtual_stage_layers (Megatron's even split whenever the layers
// divide). O(1) without a layout; the split must pass stage_split_error.
LayerRange stage_layer_range(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& split, int64_t j);

// Why Megatron-Core cannot make the split: an Error naming the parallel.* key at fault and the keys
// that would make one; nullopt when it can. A pipeline layout is checked by pipeline_layout_error
// (here only that it excludes the other keys). Without keys, chunks > 1 must divide evenly; an uneven
// PP-only split keeps trainclock's balanced one (stage_split_note says so).
std::optional<Error> stage_split_error(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& split);

// Splits Megatron-Core accepts for `layers` on stages x chunks when they do not divide evenly,
// nearest to even first: the embedding and loss counted as layers (both, then one), then first and
// last stages of at most one middle share (the first the heavier, as Megatron's DeepSeek-V3 layouts).
// Empty when the layers divide, pp < 2, or none exists.
std::vector<StageSplit> megatron_stage_splits(int64_t layers, int64_t stages, int64_t chunks);

// The warning for a split Megatron-Core rejects (no keys, layers % stages != 0), naming the keys and
// the nearest split it accepts; "" otherwise.
std::string stage_split_note(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& split);

}  // namespace trainclock
