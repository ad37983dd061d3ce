// trainclock: layers per pipeline stage and virtual stage (stage_split.hpp).
// Megatron-Core's rules: NVIDIA/Megatron-LM megatron/core/transformer/transformer_block.py
// get_num_layers_to_build and transformer_layer.py get_transformer_layer_offset.
#include "trainclock/model/stage_split.hpp"

#include <algorithm>
#include <utility>

namespace trainclock {
namespace {

std::string num(int64_t value) { return std::to_string(value); }

constexpr const char* kSplitKeys =
    "parallel.first_stage_layers / last_stage_layers or parallel.embedding_in_stage_split / loss_in_stage_split";

std::string split_text(const StageSplit& g) {
    if (g.first_stage_layers > 0)
        return "first_stage_layers " + num(g.first_stage_layers) + ", last_stage_layers " + num(g.last_stage_layers);
    std::string out = g.embedding_in_stage_split ? "embedding_in_stage_split" : "";
    if (g.embedding_in_stage_split && g.loss_in_stage_split) out += " and ";
    return out + (g.loss_in_stage_split ? "loss_in_stage_split" : "");
}

}  // namespace

LayerRange virtual_stage_layers(int64_t layers, int64_t virtual_stages, int64_t j) {
    const int64_t n = std::max<int64_t>(virtual_stages, 1);
    const int64_t base = layers / n, extra = layers % n;
    return {j * base + std::min(j, extra), base + (j < extra ? 1 : 0)};
}

LayerRange stage_layer_range(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& s, int64_t j) {
    const int64_t p = std::max<int64_t>(stages, 1), v = std::max<int64_t>(chunks, 1), vs = p * v;
    const int64_t stage = j % p, chunk = j / p;
    const int64_t f = s.first_stage_layers, l = s.last_stage_layers;
    if (f > 0 || l > 0) {
        // get_transformer_layer_offset: one row of chunks holds first / v + middle stages x
        // (rest / middle) / v + last / v layers; a stage's chunk starts after the earlier stages'.
        const int64_t middle = p - (f > 0 ? 1 : 0) - (l > 0 ? 1 : 0);
        const int64_t per_middle = middle > 0 ? (layers - f - l) / middle / v : 0;
        const int64_t first_chunk = f > 0 ? f / v : per_middle;
        const int64_t row = (f > 0 ? f / v : 0) + middle * per_middle + (l > 0 ? l / v : 0);
        const int64_t count = (stage == 0 && f > 0) ? f / v : (stage == p - 1 && l > 0) ? l / v : per_middle;
        return {chunk * row + (stage > 0 ? first_chunk + (stage - 1) * per_middle : 0), count};
    }
    const int64_t e = s.embedding_in_stage_split ? 1 : 0, o = s.loss_in_stage_split ? 1 : 0;
    if (e == 0 && o == 0) return virtual_stage_layers(layers, vs, j);
    // get_num_layers_to_build: (layers + e + o) / (pp v) per chunk, one fewer on the first (last)
    // virtual stage; the offset drops the embedding's slot after the first.
    const int64_t per = (layers + e + o) / vs;
    return {j * per - (j > 0 ? e : 0), per - (j == 0 ? e : 0) - (j == vs - 1 ? o : 0)};
}

std::optional<Error> stage_split_error(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& s) {
    const int64_t p = std::max<int64_t>(stages, 1), v = std::max<int64_t>(chunks, 1), vs = p * v;
    const int64_t f = s.first_stage_layers, l = s.last_stage_layers;
    if (f < 0 || f > layers)
        return Error{"parallel.first_stage_layers", "must be between 0 and the " + num(layers) + " layers, got " + num(f)};
    if (l < 0 || l > layers)
        return Error{"parallel.last_stage_layers", "must be between 0 and the " + num(layers) + " layers, got " + num(l)};
    const char* uneven_key = f > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
    if (f > 0 || l > 0) {
        if (p < 2) return Error{uneven_key, "needs parallel.pp >= 2"};
        // get_num_layers_to_build asserts "Does not support standalone embedding stage and
        // standalone loss stage with uneven pp".
        if (s.embedding_in_stage_split || s.loss_in_stage_split) {
            return Error{s.embedding_in_stage_split ? "parallel.embedding_in_stage_split" : "parallel.loss_in_stage_split",
                         "cannot be combined with parallel.first_stage_layers / last_stage_layers (Megatron-Core rejects it)"};
        }
        const int64_t middle = p - (f > 0 ? 1 : 0) - (l > 0 ? 1 : 0), rest = layers - f - l;
        if (rest < 0)
            return Error{uneven_key, "first_stage_layers + last_stage_layers = " + num(f + l) + " exceed the " + num(layers) + " layers"};
        if (middle == 0 && rest != 0) {
            return Error{uneven_key, "with pp = 2 the first and last stages hold every layer: first_stage_layers + last_stage_layers = " +
                                         num(f + l) + ", not " + num(layers)};
        }
        if (middle > 0 && rest % middle != 0) {
            return Error{uneven_key, "the " + num(rest) + " layers left after the first/last stages do not split evenly over the other " +
                                         num(middle) + " stages (set parallel.first_stage_layers / last_stage_layers so they do)"};
        }
        if (v > 1) {
            if (f % v != 0)
                return Error{"parallel.first_stage_layers", num(f) + " is not divisible by parallel.virtual_stages = " + num(v)};
            if (l % v != 0) return Error{"parallel.last_stage_layers", num(l) + " is not divisible by parallel.virtual_stages = " + num(v)};
            if (middle > 0 && (rest / middle) % v != 0) {
                return Error{uneven_key, "the " + num(rest / middle) +
                                             " layers of each middle stage are not divisible by parallel.virtual_stages = " + num(v)};
            }
        }
        return std::nullopt;
    }
    const int64_t e = s.embedding_in_stage_split ? 1 : 0, o = s.loss_in_stage_split ? 1 : 0;
    if (e + o > 0) {
        if ((layers + e + o) % vs != 0) {
            const std::string what = e && o ? " + embedding + loss = " : e ? " + embedding = " : " + loss = ";
            return Error{e ? "parallel.embedding_in_stage_split" : "parallel.loss_in_stage_split",
                         "the " + num(layers) + " layers" + what + num(layers + e + o) + " do not split into pp*virtual_stages = " +
                             num(p) + "*" + num(v) + " equal chunks (Megatron-Core needs them to; see " + kSplitKeys + ")"};
        }
        return std::nullopt;
    }
    if (v > 1 && layers % vs != 0) {
        const std::vector<StageSplit> splits = megatron_stage_splits(layers, p, v);
        const std::string hint = splits.empty() ? "" : ", e.g. " + split_text(splits.front());
        return Error{"parallel.virtual_stages", "the " + num(layers) + " layers do not split into pp*virtual_stages = " + num(p) + "*" +
                                                    num(v) + " equal chunks; set " + kSplitKeys + " (Megatron-Core's uneven split" + hint +
                                                    ")"};
    }
    return std::nullopt;
}

std::vector<StageSplit> megatron_stage_splits(int64_t layers, int64_t stages, int64_t chunks) {
    std::vector<StageSplit> out;
    const int64_t p = std::max<int64_t>(stages, 1), v = std::max<int64_t>(chunks, 1), vs = p * v;
    if (layers % vs == 0 || p < 2) return out;
    // The embedding and the loss as layers: Llama 3 405B "reduce[s] one Transformer layer each from
    // the first and the last stages" (Dubey et al. 2024, arXiv 2407.21783, sec. 3.3.2).
    for (const auto& [e, o] : {std::pair<int, int>{1, 1}, {1, 0}, {0, 1}}) {
        if ((layers + e + o) % vs != 0) continue;
        StageSplit split;
        split.embedding_in_stage_split = e == 1;
        split.loss_in_stage_split = o == 1;
        out.push_back(split);
    }
    // First and last stages of at most one middle share m (a multiple of v), the first the heavier.
    const int64_t low = (layers / p) / v * v;
    for (int64_t m = std::max(low, v); m <= low + v; m += v) {
        const int64_t rest = layers - (p - 2) * m;
        if (rest < 2 * v) continue;
        const int64_t f = (rest - rest / 2 + v - 1) / v * v, l = rest - f;
        if (l < v || f > m || l > m) continue;
        StageSplit split;
        split.first_stage_layers = f;
        split.last_stage_layers = l;
        if (!stage_split_error(layers, p, v, split)) out.push_back(split);
    }
    return out;
}

std::string stage_split_note(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& s) {
    const int64_t p = std::max<int64_t>(stages, 1), v = std::max<int64_t>(chunks, 1);
    if (s.any() || v > 1 || layers % p == 0) return "";
    const std::vector<StageSplit> splits = megatron_stage_splits(layers, p, 1);
    const std::string hint = splits.empty() ? "" : " (e.g. " + split_text(splits.front()) + ")";
    return "the " + num(layers) + " layers do not divide into " + num(p) + " pipeline stages: costed as " + num(layers % p) +
           " stages of " + num(layers / p + 1) + " and " + num(p - layers % p) + " of " + num(layers / p) +
           ", a split Megatron-LM rejects; set " + kSplitKeys + hint;
}

}  // namespace trainclock
