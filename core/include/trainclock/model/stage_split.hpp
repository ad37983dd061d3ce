// trainclock: how the layers of a model are placed on pipeline stages and their virtual stages,
// with Megatron-Core's uneven splits (--decoder-first-pipeline-num-layers,
// --decoder-last-pipeline-num-layers, --account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split). A pure function of counts: config validation, the
// operators, memory, the pipeline and the search read the same assignment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainclock/base/status.hpp"

namespace trainclock {

// The split keys of a layout (config JSON: parallel.first_stage_layers, ...).
struct StageSplit {
    int64_t first_stage_layers = 0;         // layers on the first stage (0 = even split)
    int64_t last_stage_layers = 0;          // layers on the last stage (0 = even split)
    bool embedding_in_stage_split = false;  // the input embedding counts as one layer of the split
    bool loss_in_stage_split = false;       // the LM head + loss counts as one layer of the split
    bool any() const { return first_stage_layers > 0 || last_stage_layers > 0 || embedding_in_stage_split || loss_in_stage_split; }
    bool operator==(const StageSplit& o) const {
        return first_stage_layers == o.first_stage_layers && last_stage_layers == o.last_stage_layers &&
               embedding_in_stage_split == o.embedding_in_stage_split && loss_in_stage_split == o.loss_in_stage_split;
    }
};

// Layers [first, first + count) of one virtual stage.
struct LayerRange {
    int64_t first = 0;
    int64_t count = 0;
};

// Layers of virtual stage j (chunk * stages + stage) when `layers` are split over `virtual_stages`
// pieces in order; the first layers % virtual_stages pieces take one extra layer.
LayerRange virtual_stage_layers(int64_t layers, int64_t virtual_stages, int64_t j);

// Layers of virtual stage j (chunk * stages + stage) under `split`, as Megatron-Core assigns them:
// in virtual-stage order; with first/last set, each of the v chunks of the first (last) stage holds
// first (last) / v layers and the middle stages share the rest equally; with the embedding (loss)
// counted, the split is even over layers + 1 (+ 1) and the first (last) virtual stage builds one
// layer fewer. Without keys: virtual_stage_layers (Megatron's even split whenever the layers
// divide). O(1); the split must pass stage_split_error.
LayerRange stage_layer_range(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& split, int64_t j);

// Why Megatron-Core cannot make the split: an Error naming the parallel.* key at fault and the keys
// that would make one; nullopt when it can. Without keys, chunks > 1 must divide evenly; an uneven
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
