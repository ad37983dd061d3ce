// Tests for trainclock/stage_split.hpp: layers per (virtual) pipeline stage against Megatron-Core's
// assignment (megatron/core/transformer/transformer_block.py get_num_layers_to_build and
// transformer_layer.py get_transformer_layer_offset), hand-counted.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trainclock/model/stage_split.hpp"

using namespace trainclock;

namespace {

StageSplit uneven(int64_t first, int64_t last) {
    StageSplit s;
    s.first_stage_layers = first;
    s.last_stage_layers = last;
    return s;
}

StageSplit accounted(bool embedding, bool loss) {
    StageSplit s;
    s.embedding_in_stage_split = embedding;
    s.loss_in_stage_split = loss;
    return s;
}

// Layers of each virtual stage j = chunk * stages + stage, checking they tile [0, layers) in order.
std::vector<int64_t> counts(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& split) {
    std::vector<int64_t> out;
    int64_t next = 0;
    for (int64_t j = 0; j < stages * chunks; ++j) {
        const LayerRange r = stage_layer_range(layers, stages, chunks, split, j);
        CHECK(r.first == next);
        next = r.first + r.count;
        out.push_back(r.count);
    }
    CHECK(next == layers);
    return out;
}

// Layers a pipeline stage holds over all its chunks.
int64_t stage_total(const std::vector<int64_t>& per_virtual_stage, int64_t stages, int64_t stage) {
    int64_t total = 0;
    for (size_t j = size_t(stage); j < per_virtual_stage.size(); j += size_t(stages)) total += per_virtual_stage[j];
    return total;
}

}  // namespace

TEST_CASE("even split: Megatron-Core's interleaved example, 8 layers on 2 stages", "[stage_split]") {
    // transformer_block.py: 4 chunks -> stage 0: [0] [2] [4] [6], stage 1: [1] [3] [5] [7];
    // 2 chunks -> stage 0: [0, 1] [4, 5], stage 1: [2, 3] [6, 7].
    const StageSplit none;
    for (int64_t j = 0; j < 8; ++j) CHECK(stage_layer_range(8, 2, 4, none, j).first == j);
    CHECK(stage_layer_range(8, 2, 2, none, 1).first == 2);  // stage 1, chunk 0
    CHECK(stage_layer_range(8, 2, 2, none, 2).first == 4);  // stage 0, chunk 1
    CHECK(stage_layer_range(8, 2, 2, none, 3).first == 6);
    CHECK(counts(8, 2, 2, none) == std::vector<int64_t>{2, 2, 2, 2});
    CHECK_FALSE(stage_split_error(8, 2, 2, none));
}

TEST_CASE("Llama 3.1 405B, 126 layers on PP 16: first/last 7 and embedding+loss give the same split", "[stage_split]") {
    // --decoder-first/last-pipeline-num-layers 7: (126 - 14) / 14 = 8 per middle stage.
    std::vector<int64_t> expected(16, 8);
    expected.front() = expected.back() = 7;
    REQUIRE_FALSE(stage_split_error(126, 16, 1, uneven(7, 7)));
    CHECK(counts(126, 16, 1, uneven(7, 7)) == expected);
    // --account-for-embedding/loss-in-pipeline-split: (126 + 2) / 16 = 8, one fewer at both ends.
    REQUIRE_FALSE(stage_split_error(126, 16, 1, accounted(true, true)));
    CHECK(counts(126, 16, 1, accounted(true, true)) == expected);
    CHECK(stage_layer_range(126, 16, 1, uneven(7, 7), 15).first == 119);
}

TEST_CASE("Llama 3.1 405B on PP 8 x VP 8 (NeMo's layout): embedding and loss take a layer's place", "[stage_split]") {
    // (126 + 2) / 64 = 2 layers per chunk; the first chunk of stage 0 and the last of stage 7 build 1.
    const StageSplit split = accounted(true, true);
    REQUIRE_FALSE(stage_split_error(126, 8, 8, split));
    const std::vector<int64_t> per = counts(126, 8, 8, split);
    CHECK(per.front() == 1);
    CHECK(per.back() == 1);
    CHECK(stage_total(per, 8, 0) == 15);  // 1 + 7 x 2
    CHECK(stage_total(per, 8, 3) == 16);
    CHECK(stage_total(per, 8, 7) == 15);
    // Chunk 1 of stage 0 is virtual stage 8: it starts after 1 + 7 x 2 = 15 layers.
    CHECK(stage_layer_range(126, 8, 8, split, 8).first == 15);
    // Without the keys the split cannot be made, and the error names them and suggests this one.
    const auto error = stage_split_error(126, 8, 8, StageSplit{});
    REQUIRE(error);
    CHECK(error->key == "parallel.virtual_stages");
    CHECK(error->message.find("parallel.first_stage_layers") != std::string::npos);
    CHECK(error->message.find("embedding_in_stage_split and loss_in_stage_split") != std::string::npos);
}

TEST_CASE("uneven first/last stages with virtual stages follow get_transformer_layer_offset", "[stage_split]") {
    // 16 layers, PP 4, VP 2, first 2, last 2: middle stages 12 / 2 = 6 layers, 3 per chunk; a chunk
    // row holds 2/2 + 2 x 3 + 2/2 = 8 layers. Offsets: stage r > 0 of chunk c starts at
    // 8 c + 1 + (r - 1) x 3.
    const std::vector<int64_t> per = counts(16, 4, 2, uneven(2, 2));
    CHECK(per == std::vector<int64_t>{1, 3, 3, 1, 1, 3, 3, 1});
    CHECK(stage_layer_range(16, 4, 2, uneven(2, 2), 6).first == 8 + 1 + 3);  // chunk 1, stage 2
    // Only the first stage set: the last is a middle stage (15 - 3 = 12 over 3 stages).
    CHECK(counts(15, 4, 1, uneven(3, 0)) == std::vector<int64_t>{3, 4, 4, 4});
    // Only the last: DeepSeek-V3-like 61 layers on PP 8 with 5 on the last: 56 / 7 = 8.
    CHECK(counts(61, 8, 1, uneven(0, 5)) == std::vector<int64_t>{8, 8, 8, 8, 8, 8, 8, 5});
}

TEST_CASE("splits Megatron-Core cannot make are errors naming the key", "[stage_split]") {
    auto key_of = [](int64_t layers, int64_t pp, int64_t v, const StageSplit& s) {
        const auto error = stage_split_error(layers, pp, v, s);
        return error ? error->key : std::string();
    };
    CHECK(key_of(126, 16, 1, uneven(6, 7)) == "parallel.first_stage_layers");  // 113 over 14 stages
    CHECK(key_of(126, 1, 1, uneven(7, 0)) == "parallel.first_stage_layers");   // needs pp >= 2
    CHECK(key_of(126, 16, 1, uneven(0, 130)) == "parallel.last_stage_layers");
    CHECK(key_of(10, 2, 1, uneven(4, 5)) == "parallel.first_stage_layers");  // pp 2: 4 + 5 != 10
    CHECK(key_of(10, 2, 1, uneven(4, 6)).empty());
    CHECK(key_of(16, 4, 2, uneven(3, 1)) == "parallel.first_stage_layers");  // 3 % vp 2
    StageSplit both = uneven(7, 7);
    both.loss_in_stage_split = true;
    CHECK(key_of(126, 16, 1, both) == "parallel.loss_in_stage_split");                         // Megatron asserts the same
    CHECK(key_of(126, 16, 1, accounted(true, false)) == "parallel.embedding_in_stage_split");  // 127 % 16
    // No keys: an uneven PP-only split is kept (balanced) and reported, not rejected.
    CHECK(key_of(126, 16, 1, StageSplit{}).empty());
    CHECK(counts(126, 16, 1, StageSplit{}) == std::vector<int64_t>{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 7});
    const std::string note = stage_split_note(126, 16, 1, StageSplit{});
    CHECK(note.find("Megatron-LM rejects") != std::string::npos);
    CHECK(note.find("parallel.first_stage_layers") != std::string::npos);
    CHECK(stage_split_note(126, 16, 1, uneven(7, 7)).empty());
    CHECK(stage_split_note(128, 16, 1, StageSplit{}).empty());
}

TEST_CASE("megatron_stage_splits lists the splits nearest to even", "[stage_split]") {
    // 126 on PP 16: embedding + loss (128 / 16), then first/last 7 (a middle share of 8).
    const std::vector<StageSplit> p16 = megatron_stage_splits(126, 16, 1);
    REQUIRE(p16.size() == 2);
    CHECK(p16[0] == accounted(true, true));
    CHECK(p16[1] == uneven(7, 7));
    // 126 on PP 8 x VP 8: only embedding + loss (128 / 64) exists.
    const std::vector<StageSplit> v8 = megatron_stage_splits(126, 8, 8);
    REQUIRE(v8.size() == 1);
    CHECK(v8[0] == accounted(true, true));
    // Qwen3-235B, 94 layers on PP 8: 96 / 8 = 12, or first/last 11 with 12 per middle stage.
    const std::vector<StageSplit> q = megatron_stage_splits(94, 8, 1);
    REQUIRE(q.size() == 2);
    CHECK(q[1] == uneven(11, 11));
    // 61 layers on PP 8 (63 % 8 != 0, 62 % 8 != 0): first 7, last 6 around middle stages of 8.
    const std::vector<StageSplit> d = megatron_stage_splits(61, 8, 1);
    REQUIRE(d.size() == 1);
    CHECK(d[0] == uneven(7, 6));
    for (const auto& [layers, pp, v] : {std::tuple<int64_t, int64_t, int64_t>{126, 16, 1}, {126, 8, 8}, {94, 8, 1}, {61, 8, 1}, {94, 4, 2}})
        for (const StageSplit& s : megatron_stage_splits(layers, pp, v)) CHECK_FALSE(stage_split_error(layers, pp, v, s));
    CHECK(megatron_stage_splits(128, 16, 1).empty());  // divides
}
