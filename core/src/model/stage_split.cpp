// trainclock: layers per pipeline stage and virtual stage (stage_split.hpp).
// Megatron-Core's rules: NVIDIA/Megatron-LM megatron/core/transformer/transformer_block.py
// get_num_layers_to_build and transformer_layer.py get_transformer_layer_offset.
#include "trainclock/model/stage_split.hpp"

#include <algorithm>
#include <cctype>
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

constexpr const char* kLayoutKey = "parallel.pipeline_layout";
constexpr size_t kMaxLayoutChars = 65536;  // an expansion past it is refused (no hang, no memory blow-up)

// The repeat count at text[at...] (one or more digits), or -1 when none; `end` is set past the digits.
// Counts past kMaxLayoutChars are clamped to kMaxLayoutChars + 1 (the expansion is then refused).
int64_t repeat_count(std::string_view text, size_t at, size_t& end) {
    end = at;
    int64_t n = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
        n = std::min<int64_t>(n * 10 + (text[end] - '0'), int64_t(kMaxLayoutChars) + 1);
        ++end;
    }
    return end == at ? -1 : n;
}

// One re.sub pass of parse_str_to_list: `group` true for r'\(([^)]+)\)\*(\d+)' (a non-empty group
// up to the first ')' repeated), false for r'(.)\*(\d+)' (one character repeated); left to right,
// matches do not overlap, text that matches nothing is kept.
std::optional<Error> unroll(std::string_view in, bool group, std::string& out) {
    out.clear();
    size_t i = 0;
    while (i < in.size()) {
        size_t body_end = i + 1, digits_end = 0;
        if (group) {
            body_end = in[i] == '(' ? in.find(')', i + 1) : std::string_view::npos;
            if (body_end == std::string_view::npos || body_end == i + 1) body_end = std::string_view::npos;
        }
        const size_t star = group ? body_end + 1 : i + 1;
        const int64_t n =
            body_end == std::string_view::npos || star >= in.size() || in[star] != '*' ? -1 : repeat_count(in, star + 1, digits_end);
        if (n < 0) {
            out += in[i++];
            continue;
        }
        const std::string_view body = group ? in.substr(i + 1, body_end - i - 1) : in.substr(i, 1);
        if (out.size() + body.size() * size_t(n) > kMaxLayoutChars) {
            return Error{kLayoutKey, "repeats expand past " + num(int64_t(kMaxLayoutChars)) + " characters"};
        }
        for (int64_t k = 0; k < n; ++k) out += body;
        i = digits_end;
    }
    return std::nullopt;
}

// parse_str_to_list's text: commas dropped, groups unrolled, then single characters.
std::optional<Error> expand_layout(std::string_view layout, std::string& expanded) {
    std::string text;
    for (const char c : layout) {
        if (c != ',') text += c;
    }
    if (text.size() > kMaxLayoutChars) return Error{kLayoutKey, "is longer than " + num(int64_t(kMaxLayoutChars)) + " characters"};
    std::string groups;
    if (auto error = unroll(text, true, groups)) return error;
    return unroll(groups, false, expanded);
}

}  // namespace

Result<std::vector<LayoutStage>> parse_pipeline_layout(std::string_view layout) {
    // parse_str_to_list: the expanded text split at '|'.
    std::string expanded;
    if (auto error = expand_layout(layout, expanded)) return *error;
    std::vector<LayoutStage> stages(1);
    int64_t next_layer = 0;
    for (const char c : expanded) {
        LayoutStage& stage = stages.back();
        switch (c) {
        case '|':
            stages.emplace_back();
            stages.back().first = next_layer;
            break;
        case 't':
            ++stage.layers;
            ++next_layer;
            break;
        case 'm': ++stage.mtp; break;
        case 'E':
            if (stage.embedding) return Error{kLayoutKey, "names the embedding E more than once (Megatron-Core: exactly once)"};
            stage.embedding = true;
            break;
        case 'L':
            if (stage.loss) return Error{kLayoutKey, "names the loss L more than once (Megatron-Core: exactly once)"};
            stage.loss = true;
            break;
        default: {
            const bool bracket = c == '(' || c == ')' || c == '*';
            return Error{kLayoutKey,
                         "'" + std::string(1, c) + "' in virtual stage " + num(int64_t(stages.size()) - 1) +
                             " is not a layer (E embedding, t transformer layer, m MTP layer, L loss, '|' between stages" +
                             (bracket ? "; a group repeats as (...)*N, groups do not nest, and x*N repeats one character" : "") + ")"};
        }
        }
    }
    return stages;
}

std::optional<Error> pipeline_layout_error(std::string_view layout, int64_t pp, int64_t virtual_stages, int64_t layers,
                                           int64_t mtp_layers) {
    auto parsed = parse_pipeline_layout(layout);
    if (!parsed) return parsed.error();
    const std::vector<LayoutStage>& stages = parsed.value();
    const int64_t p = std::max<int64_t>(pp, 1), v = std::max<int64_t>(virtual_stages, 1), n = int64_t(stages.size());
    // __init__: the stages split into pp rows of virtual stages (Megatron-Core takes their count / pp as
    // the virtual pipeline size; trainclock asks for it explicitly).
    if (n != p * v) {
        std::string hint;
        if (n % p == 0 && n / p > 1)
            hint = " (set parallel.virtual_stages = " + num(n / p) + " and parallel.schedule = interleaved)";
        else if (n % p == 0)
            hint = " (set parallel.virtual_stages = 1)";
        else
            hint = " (Megatron-Core needs a multiple of pp: one entry per virtual stage, '|' between them)";
        return Error{kLayoutKey,
                     "has " + num(n) + " stages, not pp x virtual_stages = " + num(p) + " x " + num(v) + " = " + num(p * v) + hint};
    }
    // validate_layer_layout: E first, L last, each once (parse_pipeline_layout refuses a second one in a
    // stage; here across stages), t and m counts, decoder layers before MTP, MTP in one virtual stage,
    // the last of its pipeline stage.
    int64_t embeddings = 0, losses = 0, t = 0, m = 0;
    for (const LayoutStage& s : stages) {
        embeddings += s.embedding;
        losses += s.loss;
        t += s.layers;
        m += s.mtp;
    }
    if (embeddings != 1) return Error{kLayoutKey, "names the embedding E " + num(embeddings) + " times (Megatron-Core: exactly once)"};
    if (losses != 1) return Error{kLayoutKey, "names the loss L " + num(losses) + " times (Megatron-Core: exactly once)"};
    // The order inside a stage is its characters' order: find the first and the last layer named.
    std::string flat;
    (void)expand_layout(layout, flat);  // parsed above: no error
    flat.erase(std::remove(flat.begin(), flat.end(), '|'), flat.end());
    if (flat.front() != 'E')
        return Error{kLayoutKey, "must start with the embedding E, not '" + std::string(1, flat.front()) +
                                     "' (Megatron-Core: the first layer must be embedding)"};
    if (flat.back() != 'L')
        return Error{kLayoutKey,
                     "must end with the loss L, not '" + std::string(1, flat.back()) + "' (Megatron-Core: the last layer must be loss)"};
    if (t != layers)
        return Error{kLayoutKey, "holds " + num(t) + " transformer layers t, the model has " + num(layers) + " (model.layers)"};
    if (m != mtp_layers)
        return Error{kLayoutKey, "holds " + num(m) + " MTP layers m, the model has " + num(mtp_layers) + " (model.mtp_layers)"};
    if (m > 0 && flat.find('t', flat.find('m')) != std::string::npos)
        return Error{kLayoutKey, "places a transformer layer t after an MTP layer m (Megatron-Core: decoder layers before MTP layers)"};
    for (int64_t j = 0; j < n; ++j) {
        const LayoutStage& s = stages[size_t(j)];
        if (s.mtp == 0) continue;
        if (s.mtp != m)
            return Error{kLayoutKey, "spreads the " + num(m) + " MTP layers m over several virtual stages (Megatron-Core: all in one)"};
        if (j / p != v - 1) {
            return Error{kLayoutKey, "places the MTP layers m in virtual stage " + num(j) + " (chunk " + num(j / p) +
                                         " of pipeline stage " + num(j % p) +
                                         "); Megatron-Core needs them in the last chunk of their pipeline stage (one of the last " +
                                         num(p) + " entries)"};
        }
    }
    return std::nullopt;
}

LayerRange virtual_stage_layers(int64_t layers, int64_t virtual_stages, int64_t j) {
    const int64_t n = std::max<int64_t>(virtual_stages, 1);
    const int64_t base = layers / n, extra = layers % n;
    return {j * base + std::min(j, extra), base + (j < extra ? 1 : 0)};
}

LayerRange stage_layer_range(int64_t layers, int64_t stages, int64_t chunks, const StageSplit& s, int64_t j) {
    const int64_t p = std::max<int64_t>(stages, 1), v = std::max<int64_t>(chunks, 1), vs = p * v;
    const int64_t stage = j % p, chunk = j / p;
    const int64_t f = s.first_stage_layers, l = s.last_stage_layers;
    if (!s.pipeline_layout.empty()) {
        const auto parsed = parse_pipeline_layout(s.pipeline_layout);
        if (!parsed || j < 0 || j >= int64_t(parsed.value().size())) return {0, 0};
        const LayoutStage& stage_j = parsed.value()[size_t(j)];
        return {stage_j.first, stage_j.layers};
    }
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
    if (!s.pipeline_layout.empty()) {
        // TransformerConfig.__post_init__: "pipeline_model_parallel_layout cannot be set with other
        // pipeline layout arguments".
        if (f > 0 || l > 0 || s.embedding_in_stage_split || s.loss_in_stage_split) {
            return Error{kLayoutKey, "cannot be combined with " + std::string(kSplitKeys) + " (Megatron-Core rejects it)"};
        }
        return std::nullopt;
    }
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
