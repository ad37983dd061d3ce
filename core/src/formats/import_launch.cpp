// trainclock: launch configs (Megatron-LM/NeMo arguments, torchtitan TOML, DeepSpeed JSON) ->
// config/v1 JSON text (import.hpp).
//
// Index
//   [SECTION] Output: a config/v1 document assembled key by key
//   [SECTION] Command lines
//   [SECTION] Megatron-LM / NeMo
//   [SECTION] TOML subset (torchtitan job configs)
//   [SECTION] torchtitan
//   [SECTION] DeepSpeed
//
// Each importer reads the framework's own names and defaults (cited beside each), writes the
// config/v1 keys they decide, and lists on Imported::warnings what it could not translate.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/json_reader.hpp"
#include "base/json_writer.hpp"
#include "formats/toml.hpp"
#include "trainclock/catalogue/presets.hpp"
#include "trainclock/formats/import.hpp"
#include "trainclock/model/config.hpp"

namespace trainclock {
namespace {

// [SECTION] Output: a config/v1 document assembled key by key --------------------------------------

std::string json_text(std::string_view text) {
    std::string out;
    append_json_string(out, text);
    return out;
}
std::string number(int64_t value) { return std::to_string(value); }
std::string number(double value) { return json_number(value); }
std::string boolean(bool value) { return value ? "true" : "false"; }

// Keys in insertion order with compact JSON values; setting a key again replaces its value.
class JsonObjectOut {
public:
    void set(std::string_view key, std::string raw) {
        for (auto& entry : entries_) {
            if (entry.first == key) {
                entry.second = std::move(raw);
                return;
            }
        }
        entries_.emplace_back(std::string(key), std::move(raw));
    }
    void erase(std::string_view key) {
        entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; }), entries_.end());
    }
    bool empty() const { return entries_.empty(); }
    bool has(std::string_view key) const {
        return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
    }
    std::string compact() const {
        std::string out = "{";
        for (size_t i = 0; i < entries_.size(); ++i) { out += (i ? ", " : "") + json_text(entries_[i].first) + ": " + entries_[i].second; }
        return out + "}";
    }
    std::string pretty() const {  // one top-level key per line
        std::string out = "{\n";
        for (size_t i = 0; i < entries_.size(); ++i) {
            out += "  " + json_text(entries_[i].first) + ": " + entries_[i].second + (i + 1 < entries_.size() ? ",\n" : "\n");
        }
        return out + "}\n";
    }

private:
    std::vector<std::pair<std::string, std::string>> entries_;
};

struct Draft {
    std::string framework;  // a presets/frameworks id
    JsonObjectOut model, moe, mla, parallel, training;
    std::string precision;  // compact JSON: a preset id or an inline object
    std::string top_model;  // a model preset id (when no inline model was read)
    std::optional<int64_t> num_gpus;
    std::vector<std::string> warnings;
    void warn(std::string line) { warnings.push_back(Error::one_line(std::move(line))); }  // one line, as errors are
};

// The document in a fixed key order; the overrides' top-level keys then replace the imported ones.
Result<Imported> finish(Draft& d, std::string_view overrides_json) {
    if (!d.moe.empty()) d.model.set("moe", d.moe.compact());
    if (!d.mla.empty()) d.model.set("mla", d.mla.compact());
    JsonObjectOut out;
    out.set("schema", json_text(kConfigSchema));
    out.set("framework", json_text(d.framework));
    if (!d.model.empty())
        out.set("model", d.model.compact());
    else if (!d.top_model.empty())
        out.set("model", json_text(d.top_model));
    if (d.num_gpus) out.set("num_gpus", number(*d.num_gpus));
    if (!d.precision.empty()) out.set("precision", d.precision);
    if (!d.parallel.empty()) out.set("parallel", d.parallel.compact());
    if (!d.training.empty()) out.set("training", d.training.compact());
    if (overrides_json.find_first_not_of(" \t\r\n") != std::string_view::npos) {
        simdjson::dom::parser parser;
        auto document = parse_json_document(parser, overrides_json);
        if (!document) return Error{"overrides", document.error().message};
        simdjson::dom::object object;
        if (document.value().get_object().get(object) != simdjson::SUCCESS) return Error{"overrides", "expected an object"};
        for (const auto field : object) out.set(field.key, simdjson::minify(field.value));
    }
    if (!out.has("model")) d.warn("no model: give one (trainclock import ... --model ID|FILE) before predicting");
    if (!out.has("gpu")) d.warn("no gpu: give one (--gpu ID) before predicting");
    return Imported{out.pretty(), d.warnings};
}

// [SECTION] Command lines ---------------------------------------------------------------------------

}  // namespace

std::vector<std::string> split_command_line(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < text.size())
                word += text[++i];
            else
                word += c;
            continue;
        }
        if (c == '\\' && i + 1 < text.size()) {
            if (text[i + 1] == '\n')
                ++i;  // line continuation
            else {
                word += text[++i];
                in_word = true;
            }
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
            continue;
        }
        if (c == '#' && !in_word) {  // a comment to the end of the line
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        word += c;
        in_word = true;
    }
    if (in_word) words.push_back(std::move(word));
    return words;
}

namespace {

// Does a config/v1 fragment set this top-level key (the user's override of what we import)?
bool overrides_have(std::string_view overrides_json, std::string_view key) {
    if (overrides_json.find_first_not_of(" \t\r\n") == std::string_view::npos) return false;
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, overrides_json);
    simdjson::dom::object object;
    if (!document || document.value().get_object().get(object) != simdjson::SUCCESS) return false;
    return object[key].error() == simdjson::SUCCESS;
}

std::optional<int64_t> parse_integer(std::string_view text) {
    const std::string copy(text);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value) || value != std::floor(value) ||
        std::fabs(value) > 9e15) {
        return std::nullopt;
    }
    return static_cast<int64_t>(value);
}

// The product when it stays within `limit` (by default 2^53, config JSON's exact integers, as
// parse_integer and TomlReader::integer read), nullopt past it: two such numbers multiplied can
// overflow int64.
std::optional<int64_t> exact_product(std::initializer_list<int64_t> factors, int64_t limit = int64_t(1) << 53) {
    int64_t out = 1;
    for (const int64_t factor : factors) {
        if (__builtin_mul_overflow(out, factor, &out) || out > limit || out < -limit) return std::nullopt;
    }
    return out;
}

// [SECTION] Megatron-LM / NeMo ----------------------------------------------------------------------

// Store-true switches of Megatron-LM's megatron/training/arguments.py (and torchrun's) that take
// no value; every other "--name" takes the words up to the next "--name".
constexpr std::string_view kMegatronSwitches[] = {"swiglu",
                                                  "squared-relu",
                                                  "group-query-attention",
                                                  "untie-embeddings-and-output-weights",
                                                  "sequence-parallel",
                                                  "use-distributed-optimizer",
                                                  "overlap-grad-reduce",
                                                  "overlap-param-gather",
                                                  "tp-comm-overlap",
                                                  "recompute-activations",
                                                  "bf16",
                                                  "fp16",
                                                  "use-flash-attn",
                                                  "multi-latent-attention",
                                                  "moe-grouped-gemm",
                                                  "disable-bias-linear",
                                                  "add-qkv-bias",
                                                  "use-mcore-models",
                                                  "use-legacy-models",
                                                  "mock-data",
                                                  "fp8-param-gather",
                                                  "grad-reduce-in-bf16",
                                                  "use-torch-fsdp2",
                                                  "use-megatron-fsdp",
                                                  "apply-layernorm-1p",
                                                  "cross-entropy-loss-fusion",
                                                  "calculate-per-token-loss",
                                                  "manual-gc",
                                                  "log-throughput",
                                                  "profile",
                                                  "standalone",
                                                  "no-masked-softmax-fusion",
                                                  "no-bias-gelu-fusion",
                                                  "no-bias-dropout-fusion",
                                                  "no-gradient-accumulation-fusion",
                                                  "no-async-tensor-model-parallel-allreduce",
                                                  "no-create-attention-mask-in-dataloader",
                                                  "no-mmap-bin-files",
                                                  "use-rotary-position-embeddings",
                                                  "attention-softmax-in-fp32",
                                                  "accumulate-allreduce-grads-in-fp32",
                                                  "overlap-p2p-communication",
                                                  "defer-embedding-wgrad-compute",
                                                  "moe-permute-fusion",
                                                  "moe-enable-deepep",
                                                  "qk-layernorm",
                                                  "distribute-saved-activations",
                                                  "check-for-nan-in-loss-and-grad",
                                                  "use-dist-ckpt",
                                                  "eod-mask-loss",
                                                  "reset-position-ids",
                                                  "reset-attention-mask",
                                                  "moe-pad-expert-input-to-capacity",
                                                  "no-load-optim",
                                                  "no-load-rng",
                                                  "no-save-optim",
                                                  "no-save-rng",
                                                  "finetune"};

// Arguments that do not change the step time (optimiser hyper-parameters, data, logging, I/O,
// initialisation), by exact name or as a prefix ending in '-'.
constexpr std::string_view kMegatronHarmless[] = {
    "lr", "lr-", "min-lr", "weight-decay", "start-weight-decay", "end-weight-decay", "weight-decay-incr-style", "clip-grad", "adam-",
    "sgd-", "init-method-", "log-", "save", "save-", "load", "data-", "tokenizer-", "vocab-file", "merge-file", "eval-", "seed",
    "attention-dropout", "hidden-dropout", "norm-epsilon", "rotary-", "distributed-", "split", "tensorboard-", "wandb-", "exit-", "no-",
    "ckpt-", "timing-", "manual-gc", "manual-gc-", "profile-", "use-mcore-models", "mock-data", "num-workers", "dataloader-type",
    "master-addr", "master-port", "node-rank", "rdzv-", "standalone", "max-restarts", "position-embedding-type",
    "use-rotary-position-embeddings", "initial-loss-scale", "loss-scale", "loss-scale-window", "min-loss-scale", "hysteresis",
    "accumulate-allreduce-grads-in-fp32", "moe-aux-loss-coeff", "moe-z-loss-coeff", "moe-router-", "moe-grouped-gemm", "moe-permute-fusion",
    "cross-entropy-", "fp8-amax-", "fp8-margin", "fp8-interval", "fp8-param-gather", "overlap-param-gather", "overlap-p2p-communication",
    "defer-embedding-wgrad-compute", "tp-comm-", "wgrad-deferral-limit", "align-", "ddp-", "check-for-", "decoupled-",
    "calculate-per-token-loss", "empty-unused-memory-level", "tiktoken-", "apply-layernorm-1p", "disable-bias-linear", "add-bias-linear",
    "add-qkv-bias", "bias-", "attention-softmax-in-fp32", "log-throughput", "profile", "qk-layernorm", "use-dist-ckpt", "dist-ckpt-",
    "eod-mask-loss", "reset-", "mmap-bin-files", "create-attention-mask-in-dataloader", "num-dataset-builder-threads", "object-storage-",
    "nccl-", "use-legacy-models", "moe-pad-expert-input-to-capacity", "pretrained-checkpoint", "finetune", "use-checkpoint-", "async-save",
    "distribute-saved-activations", "transformer-impl", "attention-backend", "use-flash-attn", "make-vocab-size-divisible-by",
    "train-iters", "train-samples", "node_rank", "max-tokens-to-oom", "micro-batch-size", "te-rng-tracker", "inference-", "retro-", "spec",
    // NeMo's (Hydra keys, dashed): runtime, logging and the nested data/optimizer/tokenizer settings
    "nemo:model.data.", "nemo:model.optim.", "nemo:model.tokenizer.", "nemo:model.peft.", "nemo:tied", "nemo:activation", "mcore-gpt",
    "transformer-engine", "megatron-amp-O2", "max-epochs", "val-check-interval", "log-every-n-steps", "limit-val-batches",
    "limit-test-batches", "accumulate-grad-batches", "restore-from-path", "answer-only-loss", "enable-checkpointing", "logger",
    "num-sanity-val-steps", "gradient-as-bucket-view", "grad-div-ar-fusion", "gradient-accumulation-fusion", "bias-activation-fusion",
    "bias-dropout-add-fusion", "masked-softmax-fusion", "apply-query-key-layer-scaling", "persist-layer-norm",
    "get-attention-mask-from-fusion", "nemo:precision"};

// NeMo's Hydra overrides ("model.tensor_model_parallel_size=2", "trainer.devices=8",
// "training.model.global_batch_size=32" through the NeMo launcher) as the Megatron argument they
// set: name and values, or nullopt for words that are not a model./trainer. override. NeMo's YAML
// keys are Megatron's with underscores (megatron_gpt_config.yaml), a few renamed (aliases below).
std::optional<std::pair<std::string, std::vector<std::string>>> hydra_override(std::string word) {
    while (!word.empty() && (word[0] == '+' || word[0] == '~')) word.erase(0, 1);
    const size_t equals = word.find('=');
    if (equals == std::string::npos || word.compare(0, 2, "--") == 0) return std::nullopt;
    std::string path = word.substr(0, equals);
    std::string value = word.substr(equals + 1);
    if (path.compare(0, 9, "training.") == 0) path.erase(0, 9);  // NeMo-Framework-Launcher: training.<model|trainer>.key
    std::string name;
    if (path == "model.optim.name") {
        if (value != "distributed_fused_adam") return std::nullopt;
        return std::make_pair(std::string("use-distributed-optimizer"), std::vector<std::string>{});
    }
    if (path.compare(0, 6, "model.") == 0)
        name = path.substr(6);
    else if (path.compare(0, 8, "trainer.") == 0)
        name = path.substr(8);
    else
        return std::nullopt;
    if (name.find('.') != std::string::npos)
        return std::make_pair("nemo:" + path, std::vector<std::string>{value});  // data.*, optim.*: reported
    std::replace(name.begin(), name.end(), '_', '-');
    static const std::pair<std::string_view, std::string_view> aliases[] = {{"encoder-seq-length", "seq-length"},
                                                                            {"devices", "nproc-per-node"},
                                                                            {"num-nodes", "nnodes"},
                                                                            {"activations-checkpoint-granularity", "recompute-granularity"},
                                                                            {"activations-checkpoint-method", "recompute-method"},
                                                                            {"activations-checkpoint-num-layers", "recompute-num-layers"},
                                                                            {"num-moe-experts", "num-experts"},
                                                                            {"ub-tp-comm-overlap", "tp-comm-overlap"},
                                                                            {"max-steps", "train-iters"},
                                                                            {"use-flash-attention", "use-flash-attn"}};
    for (const auto& [from, to] : aliases) {
        if (name == from) name = to;
    }
    const bool yes = value == "True" || value == "true";
    const bool no = value == "False" || value == "false" || value == "null" || value == "None";
    if (name == "precision") {  // trainer.precision: bf16 | bf16-mixed | 16 | 16-mixed | 32
        if (value.rfind("bf16", 0) == 0) return std::make_pair(std::string("bf16"), std::vector<std::string>{});
        if (value.rfind("16", 0) == 0) return std::make_pair(std::string("fp16"), std::vector<std::string>{});
        return std::make_pair(std::string("nemo:precision"), std::vector<std::string>{value});
    }
    if (name == "share-embeddings-and-output-weights") {
        return std::make_pair(std::string(no ? "untie-embeddings-and-output-weights" : "nemo:tied"), std::vector<std::string>{});
    }
    if (name == "transformer-engine" && no) return std::make_pair(std::string("transformer-impl"), std::vector<std::string>{"local"});
    if (name == "fp8" && yes) return std::make_pair(std::string("fp8-format"), std::vector<std::string>{"e4m3"});
    if (name == "fp8-hybrid" && yes) return std::make_pair(std::string("fp8-format"), std::vector<std::string>{"hybrid"});
    if (name == "activation") {  // NeMo: gelu | swiglu | fast-swiglu | squared-relu | ...
        if (value == "swiglu" || value == "fast-swiglu") return std::make_pair(std::string("swiglu"), std::vector<std::string>{});
        if (value == "squared-relu") return std::make_pair(std::string("squared-relu"), std::vector<std::string>{});
        if (value == "gelu") return std::make_pair(std::string("nemo:activation"), std::vector<std::string>{});
    }
    if (name == "normalization") {  // NeMo spells them in lower case
        return std::make_pair(name, std::vector<std::string>{value == "rmsnorm" ? "RMSNorm" : value == "layernorm" ? "LayerNorm" : value});
    }
    if (yes) return std::make_pair(name, std::vector<std::string>{});
    if (no) return std::make_pair("nemo-off:" + name, std::vector<std::string>{});  // a switch turned off
    return std::make_pair(name, std::vector<std::string>{value});
}

class DashedArgs {
public:
    explicit DashedArgs(const std::vector<std::string>& words) {
        for (size_t i = 0; i < words.size(); ++i) {
            const std::string& word = words[i];
            if (auto hydra = hydra_override(word)) {
                nemo_ = true;
                if (hydra->first.rfind("nemo-off:", 0) == 0) {
                    args_.erase(hydra->first.substr(9));
                    continue;
                }
                // NeMo's num_query_groups alone means GQA (Megatron also wants --group-query-attention).
                if (hydra->first == "num-query-groups") args_["group-query-attention"] = {};
                args_[hydra->first] = hydra->second;
                order_.push_back(hydra->first);
                continue;
            }
            if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;  // launcher words, the script path
            std::string name = word.substr(2);
            std::vector<std::string> values;
            const size_t equals = name.find('=');
            if (equals != std::string::npos) {
                values.push_back(name.substr(equals + 1));
                name.resize(equals);
            }
            std::replace(name.begin(), name.end(), '_', '-');  // torchrun spells nproc_per_node either way
            const bool is_switch =
                std::find(std::begin(kMegatronSwitches), std::end(kMegatronSwitches), name) != std::end(kMegatronSwitches);
            if (values.empty() && !is_switch) {
                while (i + 1 < words.size() && words[i + 1].compare(0, 2, "--") != 0) values.push_back(words[++i]);
            }
            args_[name] = values;  // the last occurrence wins, as with argparse
            order_.push_back(name);
        }
    }
    bool flag(std::string_view name) {
        used_.emplace_back(name);
        return args_.count(std::string(name)) > 0;
    }
    std::optional<std::string> text(std::string_view name) {
        used_.emplace_back(name);
        const auto it = args_.find(std::string(name));
        if (it == args_.end()) return std::nullopt;
        if (it->second.empty()) {
            fail(name, "needs a value");
            return std::nullopt;
        }
        return it->second[0];
    }
    std::optional<int64_t> integer(std::string_view name) {
        const auto value = text(name);
        if (!value) return std::nullopt;
        const auto parsed = parse_integer(*value);
        if (!parsed) fail(name, "expected an integer, got '" + *value + "'");
        return parsed;
    }
    // An integer of at least 1 (sizes and degrees; 0 would divide by zero downstream).
    std::optional<int64_t> positive(std::string_view name) {
        const auto value = integer(name);
        if (value && *value < 1) {
            fail(name, "must be at least 1, got " + std::to_string(*value));
            return std::nullopt;
        }
        return value;
    }
    std::optional<double> real(std::string_view name) {
        const auto value = text(name);
        if (!value) return std::nullopt;
        char* end = nullptr;
        const double parsed = std::strtod(value->c_str(), &end);
        if (value->empty() || *end != '\0' || !std::isfinite(parsed)) {
            fail(name, "expected a number, got '" + *value + "'");
            return std::nullopt;
        }
        return parsed;
    }
    void fail(std::string_view name, std::string message) {
        if (!error_) error_ = Error{"--" + std::string(name), std::move(message)};
    }
    const std::optional<Error>& error() const { return error_; }
    // NeMo overrides seen: the rest of the run comes from a YAML config, not from Megatron's defaults.
    bool nemo() const { return nemo_; }
    bool given(std::string_view name) const { return args_.count(std::string(name)) > 0; }
    // Arguments neither read nor known to leave the cost unchanged.
    std::vector<std::string> not_understood() const {
        std::vector<std::string> out;
        const std::set<std::string_view> used(used_.begin(), used_.end());
        std::set<std::string_view> seen;  // each name judged once, where it first appears
        for (const std::string& name : order_) {
            if (used.count(name) > 0 || !seen.insert(name).second) continue;
            if (!harmless(name)) out.push_back(name);
        }
        return out;
    }

private:
    // In kMegatronHarmless by exact name, or by one of its prefixes that ends in '-' or '.'.
    static bool harmless(std::string_view name) {
        static const std::set<std::string_view> table(std::begin(kMegatronHarmless), std::end(kMegatronHarmless));
        if (table.count(name) > 0) return true;
        for (size_t end = 1; end < name.size(); ++end) {
            if ((name[end - 1] == '-' || name[end - 1] == '.') && table.count(name.substr(0, end)) > 0) return true;
        }
        return false;
    }
    std::map<std::string, std::vector<std::string>> args_;
    std::vector<std::string> order_;
    std::vector<std::string> used_;
    std::optional<Error> error_;
    bool nemo_ = false;
};

// Megatron's --moe-layer-freq: an integer k (layer i is MoE iff i % k == 0) or a Python list
// expression of 0/1 per layer, such as "([0]*3+[1]*58)" (DeepSeek-V3's recipe).
void read_moe_layer_freq(DashedArgs& a, Draft& d, int64_t layers) {
    const auto text = a.text("moe-layer-freq");
    if (!text) return;
    if (const auto k = parse_integer(*text)) {
        if (*k != 1) {
            d.moe.set("every", number(*k));
            d.warn("--moe-layer-freq " + *text + ": Megatron's MoE layers are i % " + *text +
                   " == 0 (0-based), model.moe.every's (i + 1) % " + *text +
                   " == 0: the same number of MoE layers when num-layers is a multiple of " + *text);
        }
        return;
    }
    // "[0]*3+[1]*58" and "[0,0,1,...]" read as runs (items, times), never expanded: a layer's kind
    // repeats with its run, so two repetitions of a run tell where the first MoE layer is and
    // whether a dense one follows it.
    std::string expr;
    for (const char c : *text) {
        if (c != ' ' && c != '(' && c != ')') expr += c;
    }
    size_t pos = 0;
    bool too_long = false;     // more entries than layers: "[1]*9000000000" is refused, not expanded
    int64_t count = 0;         // entries so far
    int64_t first_moe = -1;    // index of the first 1, -1 while none
    bool dense_after = false;  // a 0 after the first 1
    std::vector<int> items;
    std::string item;
    while (pos < expr.size()) {
        if (expr[pos] == '+') {
            ++pos;
            continue;
        }
        if (expr[pos] != '[') break;
        const size_t close = expr.find(']', pos);
        if (close == std::string::npos) break;
        items.clear();
        item.clear();
        for (size_t i = pos + 1; i <= close; ++i) {
            if (expr[i] == ',' || expr[i] == ']') {
                if (!item.empty()) items.push_back(item == "1" ? 1 : 0);
                item.clear();
            } else {
                item += expr[i];
            }
        }
        pos = close + 1;
        int64_t times = 1;
        if (pos < expr.size() && expr[pos] == '*') {
            size_t end = pos + 1;
            while (end < expr.size() && std::isdigit(static_cast<unsigned char>(expr[end]))) ++end;
            times = parse_integer(expr.substr(pos + 1, end - pos - 1)).value_or(0);
            pos = end;
        }
        if (items.empty()) continue;
        const int64_t size = static_cast<int64_t>(items.size());
        if (times > (layers - count) / size) {
            too_long = true;
            break;
        }
        for (int64_t t = 0; t < std::min<int64_t>(times, 2); ++t) {
            for (int64_t i = 0; i < size; ++i) {
                if (items[static_cast<size_t>(i)] == 1) {
                    if (first_moe < 0) first_moe = count + t * size + i;
                } else if (first_moe >= 0) {
                    dense_after = true;
                }
            }
        }
        count += times * size;
    }
    if (too_long || pos != expr.size() || count != layers) {
        a.fail("moe-layer-freq", "'" + *text + "' is not an integer or a 0/1 list of " + std::to_string(layers) + " layers");
        return;
    }
    if (dense_after) {
        a.fail("moe-layer-freq", "dense layers after the first MoE layer are not representable (only leading dense layers)");
        return;
    }
    d.moe.set("dense_layers", number(first_moe < 0 ? count : first_moe));
}

void read_megatron_model(DashedArgs& a, Draft& d, int64_t tp) {
    const int64_t layers = a.positive("num-layers").value_or(0);
    const int64_t hidden = a.positive("hidden-size").value_or(0);
    const int64_t heads = a.positive("num-attention-heads").value_or(0);
    if (layers <= 0 || hidden <= 0 || heads <= 0) {
        a.fail(layers <= 0   ? "num-layers"
               : hidden <= 0 ? "hidden-size"
                             : "num-attention-heads",
               "missing (the model shape; or give trainclock's --model)");
        return;
    }
    const bool swiglu = a.flag("swiglu");
    // arguments.py: ffn_hidden_size defaults to 4h, or to int(4h * 2/3 / 64) * 64 with --swiglu.
    const int64_t ffn = a.positive("ffn-hidden-size").value_or(swiglu ? static_cast<int64_t>(4.0 * hidden * 2 / 3 / 64) * 64 : 4 * hidden);
    const bool gqa = a.flag("group-query-attention");
    const int64_t groups = a.positive("num-query-groups").value_or(1);
    const int64_t kv_heads = gqa ? groups : heads;
    const std::optional<int64_t> kv_channels = a.positive("kv-channels");
    // Megatron's arguments.py asserts hidden_size % num_attention_heads == 0 unless --kv-channels is
    // given, and num_attention_heads (and num_query_groups) % tensor_model_parallel_size == 0.
    if (!kv_channels && hidden % heads != 0) {
        a.fail("num-attention-heads", std::to_string(heads) + " does not divide --hidden-size " + std::to_string(hidden) +
                                          " (Megatron asserts it unless --kv-channels gives the head width)");
        return;
    }
    const int64_t head_dim = kv_channels.value_or(hidden / heads);
    std::optional<int64_t> vocab = a.positive("vocab-size");
    if (!vocab) {
        a.fail("vocab-size", "missing: Megatron reads the vocabulary from the tokenizer; give --vocab-size N, or trainclock's --model");
        return;
    }
    // Megatron pads the embedding to a multiple of make-vocab-size-divisible-by x TP (_vocab_size_with_padding).
    const auto padding = exact_product({a.positive("make-vocab-size-divisible-by").value_or(128), std::max<int64_t>(tp, 1)});
    if (!padding) {
        a.fail("make-vocab-size-divisible-by", "times --tensor-model-parallel-size is over 2^53");
        return;
    }
    const int64_t multiple = *padding;
    if (tp > 1 && heads % tp != 0) {
        a.fail("tensor-model-parallel-size",
               std::to_string(tp) + " does not divide --num-attention-heads " + std::to_string(heads) + " (Megatron asserts it)");
        return;
    }
    if (tp > 1 && kv_heads % tp != 0 && tp % kv_heads != 0) {
        a.fail("tensor-model-parallel-size", std::to_string(tp) + " and --num-query-groups " + std::to_string(kv_heads) +
                                                 " do not divide one another (each TP rank holds whole KV heads or a share of one)");
        return;
    }
    const int64_t padded = (*vocab + multiple - 1) / multiple * multiple;
    if (padded != *vocab)
        d.warn("vocab " + std::to_string(*vocab) + " padded to " + std::to_string(padded) + " as Megatron does (multiple of " +
               std::to_string(multiple) + ")");
    d.model.set("name", json_text("megatron-args"));
    d.model.set("architecture", json_text("decoder"));
    d.model.set("layers", number(layers));
    d.model.set("hidden", number(hidden));
    d.model.set("heads", number(heads));
    d.model.set("kv_heads", number(kv_heads));
    // Both read up to 9e15: a product past 2^53 is no hidden size (all are below), and no overflow.
    if (exact_product({head_dim, heads}) != hidden) d.model.set("head_dim", number(head_dim));
    d.model.set("ffn_hidden", number(ffn));
    d.model.set("vocab", number(padded));
    if (const auto max_seq = a.integer("max-position-embeddings")) d.model.set("max_seq_len", number(*max_seq));
    d.model.set("activation", json_text(swiglu ? "swiglu" : a.flag("squared-relu") ? "squared-relu" : "gelu"));
    const std::string norm = a.text("normalization").value_or("LayerNorm");
    if (norm != "LayerNorm" && norm != "RMSNorm") a.fail("normalization", "'" + norm + "' is not understood (LayerNorm, RMSNorm)");
    d.model.set("norm", json_text(norm == "RMSNorm" ? "rmsnorm" : "layernorm"));
    d.model.set("tied_embeddings", boolean(!a.flag("untie-embeddings-and-output-weights")));  // Megatron ties by default
    if (const auto experts = a.positive("num-experts")) {
        const int64_t expert_ffn = a.positive("moe-ffn-hidden-size").value_or(ffn);
        d.moe.set("experts", number(*experts));
        d.moe.set("top_k", number(a.positive("moe-router-topk").value_or(2)));
        d.moe.set("expert_ffn_hidden", number(expert_ffn));
        if (const auto shared = a.integer("moe-shared-expert-intermediate-size")) {
            if (expert_ffn <= 0 || *shared % expert_ffn != 0) {
                a.fail("moe-shared-expert-intermediate-size",
                       std::to_string(*shared) + " is not a multiple of the expert width " + std::to_string(expert_ffn));
            } else {
                d.moe.set("shared_experts", number(*shared / expert_ffn));
            }
        }
        read_moe_layer_freq(a, d, layers);
        if (const auto capacity = a.real("moe-expert-capacity-factor")) d.moe.set("capacity_factor", number(*capacity));
        if (!d.moe.has("dense_layers") && !d.moe.has("every")) d.model.set("ffn_hidden", "0");  // every layer routed
    }
    if (a.flag("multi-latent-attention")) {
        // MLATransformerConfig defaults: q_lora_rank None (no query compression), kv_lora_rank 32 (as arguments.py).
        d.mla.set("q_lora_rank", number(a.integer("q-lora-rank").value_or(0)));
        d.mla.set("kv_lora_rank", number(a.integer("kv-lora-rank").value_or(32)));
        d.mla.set("qk_nope_head_dim", number(a.integer("qk-head-dim").value_or(128)));
        d.mla.set("qk_rope_head_dim", number(a.integer("qk-pos-emb-head-dim").value_or(64)));
        d.mla.set("v_head_dim", number(a.integer("v-head-dim").value_or(128)));
    }
    if (const auto mtp = a.integer("mtp-num-layers")) d.model.set("mtp_layers", number(*mtp));
    if (a.text("window-size")) d.warn("--window-size (sliding-window attention) not translated: the prediction uses full attention");
}

}  // namespace

Result<Imported> import_megatron(const std::vector<std::string>& words, std::string_view overrides_json) {
    DashedArgs a(words);
    Draft d;
    const bool legacy = a.text("transformer-impl").value_or("transformer_engine") == "local" || a.flag("use-legacy-models");
    d.framework = legacy ? "megatron-lm" : "megatron-core";
    const int64_t tp = a.positive("tensor-model-parallel-size").value_or(1);
    const int64_t pp = a.positive("pipeline-model-parallel-size").value_or(1);
    if (!overrides_have(overrides_json, "model")) {
        read_megatron_model(a, d, tp);
    } else {
        for (const char* shape : {"num-layers",
                                  "hidden-size",
                                  "ffn-hidden-size",
                                  "num-attention-heads",
                                  "num-query-groups",
                                  "kv-channels",
                                  "vocab-size",
                                  "max-position-embeddings",
                                  "normalization",
                                  "num-experts",
                                  "moe-router-topk",
                                  "moe-ffn-hidden-size",
                                  "moe-shared-expert-intermediate-size",
                                  "moe-layer-freq",
                                  "q-lora-rank",
                                  "kv-lora-rank",
                                  "qk-head-dim",
                                  "qk-pos-emb-head-dim",
                                  "v-head-dim",
                                  "mtp-num-layers",
                                  "swiglu",
                                  "squared-relu",
                                  "group-query-attention",
                                  "untie-embeddings-and-output-weights",
                                  "multi-latent-attention",
                                  "moe-expert-capacity-factor"}) {
            a.flag(shape);  // the given --model replaces the shape these describe
        }
    }

    // torchrun --nproc-per-node N --nnodes M: the job's GPU count.
    const auto per_node = a.positive("nproc-per-node");
    const auto nodes = a.text("nnodes");
    if (per_node) {
        const auto node_count = nodes ? parse_integer(*nodes) : std::optional<int64_t>(1);
        const auto gpus = node_count ? exact_product({*per_node, *node_count}) : std::nullopt;
        if (!node_count)
            a.fail("nnodes", "'" + *nodes + "' is not a fixed node count (elastic ranges are not supported)");
        else if (!gpus)
            a.fail("nnodes", "times --nproc-per-node is over 2^53 GPUs");
        else
            d.num_gpus = *gpus;
    } else if (!overrides_have(overrides_json, "num_gpus")) {
        d.warn("the GPU count is not in the arguments (no torchrun --nproc-per-node): give --gpus N, else dp = 1");
    }

    d.parallel.set("tp", number(tp));
    d.parallel.set("pp", number(pp));
    d.parallel.set("cp", number(a.positive("context-parallel-size").value_or(1)));
    d.parallel.set("ep", number(a.positive("expert-model-parallel-size").value_or(1)));
    d.parallel.set("sequence_parallel", boolean(a.flag("sequence-parallel")));
    int64_t zero = a.flag("use-distributed-optimizer") ? 1 : 0;
    if (a.flag("use-torch-fsdp2")) zero = 3;
    if (a.flag("use-megatron-fsdp")) {
        const std::string strategy = a.text("data-parallel-sharding-strategy").value_or("no_shard");
        zero = strategy == "optim_grads_params" ? 3 : strategy == "optim_grads" ? 2 : strategy == "optim" ? 1 : zero;
    }
    d.parallel.set("zero", number(zero));
    int64_t virtual_stages = a.positive("virtual-pipeline-model-parallel-size").value_or(1);
    if (const auto per_chunk = a.positive("num-layers-per-virtual-pipeline-stage")) {
        const int64_t layers = a.positive("num-layers").value_or(0);
        const auto stage_layers = exact_product({pp, *per_chunk});  // past 2^53: more than any layer count
        if (*per_chunk <= 0 || !stage_layers || layers % *stage_layers != 0) {
            a.fail("num-layers-per-virtual-pipeline-stage", "does not split the layers evenly over pp x chunks");
        } else {
            virtual_stages = layers / *stage_layers;
        }
    }
    // Megatron-Core's flexible layout (arguments.py: the virtual pipeline size is the layout's stage
    // count / pp; the config's rules check the rest with Megatron-Core's messages).
    if (const auto layout = a.text("pipeline-model-parallel-layout")) {
        d.parallel.set("pipeline_layout", json_text(*layout));
        const auto stages = parse_pipeline_layout(*layout);
        if (stages && pp > 0 && int64_t(stages.value().size()) % pp == 0) virtual_stages = int64_t(stages.value().size()) / pp;
    }
    if (virtual_stages > 1) {
        d.parallel.set("virtual_stages", number(virtual_stages));
        d.parallel.set("schedule", json_text("interleaved"));
    }
    // DistributedDataParallelConfig.overlap_grad_reduce defaults to False in Megatron.
    d.parallel.set("overlap_dp_comm", boolean(a.flag("overlap-grad-reduce")));
    d.parallel.set("overlap_tp_comm", boolean(a.flag("tp-comm-overlap")));
    if (const auto first = a.integer("decoder-first-pipeline-num-layers")) d.parallel.set("first_stage_layers", number(*first));
    if (const auto last = a.integer("decoder-last-pipeline-num-layers")) d.parallel.set("last_stage_layers", number(*last));
    // Megatron-Core MoE parallel folding: experts' own TP size (arguments.py: default = tp).
    if (const auto etp = a.positive("expert-tensor-parallel-size"); etp && *etp != tp) d.parallel.set("expert_tp", number(*etp));

    const auto seq = a.positive("seq-length");
    const auto gbs = a.positive("global-batch-size");
    const int64_t mbs = a.positive("micro-batch-size").value_or(1);
    if (seq) d.training.set("seq_len", number(*seq));
    if (gbs) d.training.set("global_batch", number(*gbs));
    d.training.set("micro_batch", number(mbs));
    std::string recompute = "none";
    if (a.flag("recompute-activations")) recompute = "selective";  // arguments.py: sets recompute_granularity = selective
    if (const auto granularity = a.text("recompute-granularity")) {
        if (*granularity != "full" && *granularity != "selective")
            a.fail("recompute-granularity", "'" + *granularity + "' is not full or selective");
        recompute = *granularity;
    }
    if (recompute == "full" && a.integer("recompute-num-layers").value_or(0) > 0 && a.text("recompute-method").value_or("") == "block") {
        d.warn("--recompute-method block recomputes only some layers per stage: costed as full recompute of every layer");
    }
    a.text("recompute-method");
    a.integer("recompute-num-layers");
    d.training.set("recompute", json_text(recompute));
    const std::string backend = a.text("attention-backend").value_or("auto");
    const bool flash = !(backend == "unfused" || backend == "local" || (legacy && !a.flag("use-flash-attn")));
    d.training.set("flash_attention", boolean(flash));
    // CUDA graphs (NVIDIA/Megatron-LM@d98e8a64 megatron/core/transformer/transformer_config.py
    // cuda_graph_impl: local / transformer_engine capture per layer, full_iteration the forward-backward;
    // the deprecated --enable-cuda-graph and --external-cuda-graph are per-layer capture).
    std::string graphs = a.flag("enable-cuda-graph") || a.flag("external-cuda-graph") ? "layers" : "none";
    if (const auto impl = a.text("cuda-graph-impl")) {
        if (*impl == "local" || *impl == "transformer_engine")
            graphs = "layers";
        else if (*impl == "full_iteration")
            graphs = "full";
        else if (*impl != "none")
            a.fail("cuda-graph-impl", "'" + *impl + "' is not understood (none, local, transformer_engine, full_iteration)");
    }
    if (graphs != "none") d.training.set("cuda_graphs", json_text(graphs));
    // MoE token dispatcher (NVIDIA/Megatron-LM@d98e8a64 transformer_config.py moe_token_dispatcher_type
    // allgather | alltoall | flex, flex with moe_flex_dispatcher_backend deepep (its default) | hybridep
    // | ncclep; --moe-enable-deepep is the deprecated spelling of flex with deepep).
    std::string dispatcher;
    if (const auto type = a.text("moe-token-dispatcher-type")) {
        if (*type == "alltoall" || *type == "allgather")
            dispatcher = *type;
        else if (*type == "alltoall_seq")  // earlier Megatron-Core: the all-to-all over the sequence-parallel split
            dispatcher = "alltoall";
        else if (*type == "flex")
            dispatcher = "deepep";
        else
            a.fail("moe-token-dispatcher-type", "'" + *type + "' is not understood (allgather, alltoall, flex)");
    }
    if (a.flag("moe-enable-deepep")) dispatcher = "deepep";
    if (const auto backend = a.text("moe-flex-dispatcher-backend")) {
        if (*backend != "deepep" && *backend != "hybridep" && *backend != "ncclep")
            a.fail("moe-flex-dispatcher-backend", "'" + *backend + "' is not understood (deepep, hybridep, ncclep)");
        else if (*backend != "deepep" && dispatcher == "deepep")
            d.warn("--moe-flex-dispatcher-backend " + *backend +
                   ": costed as DeepEP's fused dispatch and combine (training.moe_dispatcher deepep)");
    }
    if (!dispatcher.empty() && d.moe.has("experts")) d.training.set("moe_dispatcher", json_text(dispatcher));
    const std::string optimizer = a.text("optimizer").value_or("adam");
    // Megatron's "adam" is AdamW (decoupled weight decay: TE/apex FusedAdam with adam_w_mode).
    if (optimizer != "adam" && optimizer != "sgd") a.fail("optimizer", "'" + optimizer + "' is not understood (adam, sgd)");
    d.training.set("optimizer", json_text(optimizer == "sgd" ? "sgd" : "adamw"));
    if (const auto samples = a.integer("train-samples"); samples && seq)
        d.training.set("tokens", number(static_cast<double>(*samples) * static_cast<double>(*seq)));
    else if (const auto iters = a.integer("train-iters"); iters && seq && gbs) {
        d.training.set("tokens", number(static_cast<double>(*iters) * static_cast<double>(*gbs) * static_cast<double>(*seq)));
    }
    if (a.text("rampup-batch-size")) d.warn("--rampup-batch-size not modelled: every step is costed at the final global batch");

    // Precision: Megatron computes in fp32 unless --bf16 / --fp16; --fp8-format adds TE FP8 GEMMs.
    std::string preset = a.flag("bf16") ? "bf16-mixed" : a.flag("fp16") ? "fp16-mixed" : "fp32";
    const auto fp8 = a.text("fp8-format");
    const auto recipe = a.text("fp8-recipe");
    JsonObjectOut precision;
    if (fp8) {
        if (*fp8 != "hybrid" && *fp8 != "e4m3") a.fail("fp8-format", "'" + *fp8 + "' is not understood (hybrid, e4m3)");
        preset = recipe && *recipe == "mxfp8" ? "mxfp8-mixed" : "fp8-mixed";
        if (recipe && *recipe != "mxfp8") precision.set("fp8_recipe", json_text(*recipe));
    }
    if (a.flag("grad-reduce-in-bf16")) precision.set("grad_reduce", json_text("bf16"));
    if (precision.empty()) {
        d.precision = json_text(preset);
    } else {
        JsonObjectOut inline_precision;
        inline_precision.set("preset", json_text(preset));
        d.precision = inline_precision.compact();
        d.precision.pop_back();
        d.precision += ", " + precision.compact().substr(1);
    }
    if (a.nemo()) {
        // NeMo takes what the overrides do not set from its YAML config (--config-name, training=...),
        // not from Megatron's argparse defaults: only the values given are written.
        const std::pair<const char*, std::vector<const char*>> parallel_sources[] = {{"tp", {"tensor-model-parallel-size"}},
                                                                                     {"pp", {"pipeline-model-parallel-size"}},
                                                                                     {"cp", {"context-parallel-size"}},
                                                                                     {"ep", {"expert-model-parallel-size"}},
                                                                                     {"expert_tp", {"expert-tensor-parallel-size"}},
                                                                                     {"sequence_parallel", {"sequence-parallel"}},
                                                                                     {"zero", {"use-distributed-optimizer"}},
                                                                                     {"overlap_dp_comm", {"overlap-grad-reduce"}},
                                                                                     {"overlap_tp_comm", {"tp-comm-overlap"}}};
        const std::pair<const char*, std::vector<const char*>> training_sources[] = {
            {"micro_batch", {"micro-batch-size"}},
            {"recompute", {"recompute-granularity", "recompute-activations"}},
            {"flash_attention", {"use-flash-attn", "attention-backend"}},
            {"optimizer", {"optimizer"}}};
        const auto keep_given = [&](JsonObjectOut& object, const auto& sources) {
            for (const auto& [key, names] : sources) {
                if (std::none_of(names.begin(), names.end(), [&](const char* name) { return a.given(name); })) object.erase(key);
            }
        };
        keep_given(d.parallel, parallel_sources);
        keep_given(d.training, training_sources);
        if (!a.given("bf16") && !a.given("fp16") && !fp8) d.precision.clear();
        d.warn("NeMo overrides: what they do not set comes from the run's YAML config, which trainclock does not read "
               "(the printed config has trainclock's defaults there)");
    }
    if (a.error()) return *a.error();
    for (const std::string& name : a.not_understood()) {
        d.warn("not understood, ignored: " + (name.rfind("nemo:", 0) == 0 ? name.substr(5) : "--" + name));
    }
    return finish(d, overrides_json);
}

namespace {

// [SECTION] TOML values (torchtitan job configs; parsed by toml++ in toml.cpp) ------------------------

class TomlReader {
public:
    explicit TomlReader(std::map<std::string, TomlValue> values) : values_(std::move(values)) {}
    const TomlValue* find(std::string_view key) {
        used_.emplace_back(key);
        const auto it = values_.find(std::string(key));
        return it == values_.end() ? nullptr : &it->second;
    }
    // The first of several keys present (torchtitan moved keys between tables across versions);
    // nullptr when none is, or (recording the error) when it is not of `kind`.
    const TomlValue* first(std::initializer_list<std::string_view> keys, TomlValue::Kind kind, const char* expected) {
        for (const std::string_view key : keys) {
            const TomlValue* v = find(key);
            if (!v) continue;
            if (v->kind == kind) return v;
            fail(key, expected);
            return nullptr;
        }
        return nullptr;
    }
    std::optional<int64_t> integer(std::initializer_list<std::string_view> keys) {
        const TomlValue* v = first(keys, TomlValue::number, "expected an integer");
        if (!v) return std::nullopt;
        if (v->value != std::floor(v->value)) {
            fail(*keys.begin(), "expected an integer");
            return std::nullopt;
        }
        if (std::fabs(v->value) > 9007199254740992.0) {  // 2^53, as config JSON: past it the cast to int64 is undefined
            fail(*keys.begin(), "integer out of range");
            return std::nullopt;
        }
        return static_cast<int64_t>(v->value);
    }
    std::optional<std::string> text(std::initializer_list<std::string_view> keys) {
        const TomlValue* v = first(keys, TomlValue::string, "expected a string");
        return v ? std::optional<std::string>(v->text) : std::nullopt;
    }
    std::optional<bool> flag(std::initializer_list<std::string_view> keys) {
        const TomlValue* v = first(keys, TomlValue::boolean, "expected true or false");
        return v ? std::optional<bool>(v->flag) : std::nullopt;
    }
    std::string array(std::string_view key) {  // the raw text, "" when absent
        const TomlValue* v = find(key);
        return v && v->kind == TomlValue::array ? v->text : std::string();
    }
    void fail(std::string_view key, std::string message) {
        if (!error_) error_ = Error{std::string(key), std::move(message)};
    }
    const std::optional<Error>& error() const { return error_; }
    // Keys of the cost-relevant tables nobody read.
    std::vector<std::string> not_understood(std::initializer_list<std::string_view> tables) const {
        std::vector<std::string> out;
        for (const auto& [key, value] : values_) {
            if (std::find(used_.begin(), used_.end(), key) != used_.end()) continue;
            for (const std::string_view table : tables) {
                if (key.compare(0, table.size() + 1, std::string(table) + ".") == 0) out.push_back(key);
            }
        }
        return out;
    }

private:
    std::map<std::string, TomlValue> values_;
    std::vector<std::string> used_;
    std::optional<Error> error_;
};

// [SECTION] torchtitan -------------------------------------------------------------------------------

// torchtitan model name + flavor -> a trainclock preset (torchtitan/models/*/__init__.py flavors).
std::string torchtitan_preset(const std::string& name, const std::string& flavor) {
    static const std::pair<std::string_view, std::string_view> presets[] = {{"llama3/8B", "llama3.1-8b"},
                                                                            {"llama3/70B", "llama3.1-70b"},
                                                                            {"llama3/405B", "llama3.1-405b"},
                                                                            {"qwen3/8B", "qwen3-8b"},
                                                                            {"qwen3/32B", "qwen3-32b"},
                                                                            {"qwen3/30B-A3B", "qwen3-30b-a3b"},
                                                                            {"qwen3/235B-A22B", "qwen3-235b-a22b"},
                                                                            {"llama2/7B", "llama2-7b"},
                                                                            {"llama2/13B", "llama2-13b"},
                                                                            {"llama2/70B", "llama2-70b"}};
    const std::string key = name + "/" + flavor;
    for (const auto& [id, preset] : presets) {
        if (id == key) return std::string(preset);
    }
    return "";
}

// torchtitan's automatic pipeline split as a Megatron-Core layout string (pytorch/torchtitan@b5bcd76c
// torchtitan/distributed/pipeline_parallel.py _generate_llm_fqn_per_model_part): the embedding and
// the output count as `input_weight` and `output_weight` layers, the stages share the effective
// layers evenly (the first ones one more), stage i on rank i % pp (looped schedules). "" with the
// reason in `why` when torchtitan itself refuses the split.
std::string torchtitan_layout(int64_t stages, int64_t layers, int64_t mtp_layers, int64_t input_weight, int64_t output_weight,
                              std::string& why) {
    const int64_t effective = layers + input_weight + output_weight;
    if (input_weight < 0 || output_weight < 0 || stages > effective) {
        why = "gives " + std::to_string(stages) + " stages, more than the " + std::to_string(effective) + " effective layers";
        return "";
    }
    const int64_t per = effective / stages, extra = effective % stages;
    if (input_weight > per || output_weight > per) {
        why = "first/last_stage_less_layers exceed the " + std::to_string(per) + " layers per stage";
        return "";
    }
    std::string out;
    int64_t next = 0;
    for (int64_t i = 0; i < stages; ++i) {
        int64_t take = per + (i < extra ? 1 : 0) - (i == 0 ? input_weight : 0) - (i == stages - 1 ? output_weight : 0);
        take = std::max<int64_t>(0, std::min(take, layers - next));
        next += take;
        if (i > 0) out += "|";
        if (i == 0) out += "E";
        if (take > 0) out += take == 1 ? std::string("t") : "t*" + std::to_string(take);
        if (i == stages - 1) out += std::string(size_t(mtp_layers), 'm') + "L";
    }
    return out;
}

}  // namespace

Result<Imported> import_torchtitan(std::string_view toml, std::string_view overrides_json) {
    auto parsed = parse_toml(toml);
    if (!parsed) return parsed.error();
    TomlReader t(std::move(parsed).value());
    Draft d;
    d.framework = "torchtitan";
    t.find("job.description");
    const std::string name = t.text({"model.name"}).value_or("");
    const std::string flavor = t.text({"model.flavor"}).value_or("");
    if (!overrides_have(overrides_json, "model")) {
        const std::string preset = torchtitan_preset(name, flavor);
        if (preset.empty()) {
            t.fail("model.flavor", "model " + name + " flavor " + flavor + " has no trainclock preset: give --model ID|FILE");
        }
        d.top_model = preset;
    }
    // JobConfig.parallelism (older releases kept the degrees under [training] / [experimental]).
    const int64_t tp = t.integer({"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"}).value_or(1);
    const int64_t pp = t.integer({"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"}).value_or(1);
    const int64_t cp = t.integer({"parallelism.context_parallel_degree", "experimental.context_parallel_degree"}).value_or(1);
    const int64_t ep = t.integer({"parallelism.expert_parallel_degree"}).value_or(1);
    const int64_t replicate =
        t.integer({"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"}).value_or(1);
    int64_t shard = t.integer({"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree"}).value_or(-1);
    std::optional<int64_t> num_gpus;
    if (overrides_have(overrides_json, "num_gpus")) {
        simdjson::dom::parser parser;
        int64_t n = 0;
        if (parser.parse(overrides_json.data(), overrides_json.size())["num_gpus"].get_int64().get(n) == simdjson::SUCCESS) num_gpus = n;
    }
    if (tp < 1 || pp < 1 || cp < 1 || replicate < 1) {
        return Error{"parallelism", "tensor, pipeline, context and replicate degrees must be at least 1"};
    }
    if (shard < 0) {  // -1: every GPU left after the other degrees (ParallelDims)
        if (!num_gpus) {
            t.fail("parallelism.data_parallel_shard_degree", "-1 (the rest of the GPUs) needs the GPU count: give --gpus N");
        } else if (const auto ranks = exact_product({replicate, tp, pp, cp}); !ranks || *num_gpus % *ranks != 0) {
            t.fail("parallelism.data_parallel_shard_degree",
                   "-1: " + std::to_string(*num_gpus) + " GPUs do not divide by replicate*tp*pp*cp");
        } else {
            shard = *num_gpus / *ranks;
        }
    }
    for (const auto& [key, value] : {std::pair<const char*, int64_t>{"parallelism.tensor_parallel_degree", tp},
                                     {"parallelism.pipeline_parallel_degree", pp},
                                     {"parallelism.context_parallel_degree", cp},
                                     {"parallelism.expert_parallel_degree", ep},
                                     {"parallelism.data_parallel_replicate_degree", replicate}}) {
        if (value < 1) return Error{key, "must be at least 1, got " + std::to_string(value)};
    }
    if (shard == 0 || shard < -1)
        return Error{"parallelism.data_parallel_shard_degree", "must be -1 or at least 1, got " + std::to_string(shard)};
    const auto gpus = exact_product({replicate, std::max<int64_t>(shard, 1), tp, pp, cp});
    if (!gpus) return t.error() ? *t.error() : Error{"parallelism", "the degrees multiply to more than 2^53 GPUs"};
    const int64_t dp = replicate * std::max<int64_t>(shard, 1);
    if (!num_gpus) d.num_gpus = *gpus;
    d.parallel.set("tp", number(tp));
    d.parallel.set("pp", number(pp));
    d.parallel.set("cp", number(cp));
    d.parallel.set("ep", number(ep));
    d.parallel.set("dp", number(dp));
    // Expert tensor parallelism: ParallelismConfig.expert_tensor_parallel_degree (default 1, only 1 or
    // tp: ParallelDims asserts "Currently we only support ETP=TP or ETP=1") until pytorch/torchtitan@c4b409af2
    // (2026-04-30) removed it, after which EP always borrows the TP ranks (efsdp = dp_shard cp tp / ep):
    // with ep > 1 the routed experts are not TP-split (expert_tp 1) unless the key says tp.
    const auto etp = t.integer({"parallelism.expert_tensor_parallel_degree"});
    if (etp && *etp != 1 && *etp != tp) {
        t.fail("parallelism.expert_tensor_parallel_degree", "must be 1 or tensor_parallel_degree = " + std::to_string(tp) + ", got " +
                                                                std::to_string(*etp) + " (torchtitan's ParallelDims)");
    }
    if (ep > 1 && tp > 1 && etp.value_or(1) == 1) d.parallel.set("expert_tp", number(int64_t(1)));
    // FSDP2 fully_shard over the shard group: parameters, gradients and states sharded (ZeRO-3).
    d.parallel.set("zero", number(int64_t(shard > 1 ? 3 : 0)));
    if (replicate > 1 && shard > 1)
        d.warn("HSDP (replicate " + std::to_string(replicate) + " x shard " + std::to_string(shard) +
               "): costed as FSDP over all dp ranks");
    const std::string schedule =
        t.text({"parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule"}).value_or("1F1B");
    // The stage split's keys (ParallelismConfig: first/last_stage_less_layers default 1,
    // layers_per_stage sets the virtual stage count), when given, as a pipeline layout.
    const auto layers_per_stage = t.integer({"parallelism.pipeline_parallel_layers_per_stage"});
    const auto first_less = t.integer({"parallelism.pipeline_parallel_first_stage_less_layers"});
    const auto last_less = t.integer({"parallelism.pipeline_parallel_last_stage_less_layers"});
    const bool looped = schedule == "Interleaved1F1B" || schedule == "LoopedBFS" || schedule == "InterleavedZeroBubble";
    bool laid_out = false;
    if (t.find("parallelism.module_fqns_per_model_part") && pp > 1) {  // without PP torchtitan ignores it
        t.fail("parallelism.module_fqns_per_model_part",
               "module lists per stage are not read: give the split as --pipeline-layout (Megatron-Core's layout string) instead");
    }
    if (pp > 1 && (layers_per_stage || first_less || last_less) && !t.error()) {
        const auto model =
            d.top_model.empty() || overrides_have(overrides_json, "model") ? Result<ModelSpec>(Error{"", ""}) : model_preset(d.top_model);
        if (!model) {
            d.warn("parallelism.pipeline_parallel_*: the model's layer count is not known here: costed as an even split");
        } else if (schedule == "ZBVZeroBubble" || schedule == "DualPipeV") {
            d.warn("pipeline schedule " + schedule + " places stages in a V, which a layout cannot say: costed as an even 1F1B split");
        } else {
            const ModelSpec& m = model.value();
            int64_t stages = pp * (looped ? 2 : 1);  // _get_pipeline_metadata: 2 stages per rank for looped schedules
            const int64_t in = first_less.value_or(1), out = last_less.value_or(1);
            if (layers_per_stage && *layers_per_stage < 1) {
                t.fail("parallelism.pipeline_parallel_layers_per_stage", "must be at least 1");
            } else if (layers_per_stage) {
                stages = (m.layers + in + out + *layers_per_stage - 1) / *layers_per_stage;
                if (stages % pp != 0 || (!looped && stages != pp) || (looped && stages / pp < 2)) {
                    t.fail("parallelism.pipeline_parallel_layers_per_stage",
                           std::to_string(*layers_per_stage) + " gives " + std::to_string(stages) + " stages for " +
                               std::to_string(m.layers) + " layers, which " + schedule + " on " + std::to_string(pp) +
                               " ranks cannot run (torchtitan refuses it)");
                }
            }
            std::string why;
            const std::string layout = t.error() ? "" : torchtitan_layout(stages, m.layers, m.mtp_layers, in, out, why);
            if (!why.empty()) t.fail("parallelism.pipeline_parallel_first_stage_less_layers", why + " (torchtitan refuses it)");
            if (!layout.empty()) {
                d.parallel.set("pipeline_layout", json_text(layout));
                if (stages > pp) {
                    d.parallel.set("virtual_stages", number(stages / pp));
                    d.parallel.set("schedule", json_text("interleaved"));
                }
                laid_out = true;
            }
        }
    }
    if (pp > 1 && !laid_out) {
        if (schedule == "GPipe")
            d.parallel.set("schedule", json_text("gpipe"));
        else if (schedule != "1F1B")
            d.warn("pipeline schedule " + schedule + " costed as 1F1B");
    } else if (laid_out && schedule == "GPipe") {
        d.parallel.set("schedule", json_text("gpipe"));
    } else if (laid_out && schedule != "1F1B" && schedule != "Interleaved1F1B") {
        d.warn("pipeline schedule " + schedule + " costed as " + (looped ? "interleaved 1F1B" : "1F1B"));
    }
    if (t.flag({"parallelism.enable_async_tensor_parallel", "experimental.enable_async_tensor_parallel"}).value_or(false)) {
        d.parallel.set("overlap_tp_comm", "true");
    }
    const int64_t local = t.integer({"training.local_batch_size", "training.batch_size"}).value_or(8);
    const int64_t global = t.integer({"training.global_batch_size"}).value_or(-1);
    const int64_t seq = t.integer({"training.seq_len"}).value_or(2048);
    d.training.set("seq_len", number(seq));
    d.training.set("micro_batch", number(local));
    const auto local_x_dp = exact_product({local, dp});
    if (global <= 0 && !local_x_dp) return Error{"training.local_batch_size", "local_batch_size x dp is over 2^53"};
    const int64_t gbs = global > 0 ? global : *local_x_dp;  // JobConfig: global_batch_size -1 = local x dp (no accumulation)
    d.training.set("global_batch", number(gbs));
    // ActivationCheckpoint.mode defaults to "selective" (op-level SAC).
    const std::string mode = t.text({"activation_checkpoint.mode"}).value_or("selective");
    if (mode != "none" && mode != "selective" && mode != "full")
        t.fail("activation_checkpoint.mode", "'" + mode + "' is not none, selective or full");
    d.training.set("recompute", json_text(mode));
    if (const auto option = t.find("activation_checkpoint.selective_ac_option"); option && option->kind == TomlValue::number) {
        d.warn("activation_checkpoint.selective_ac_option " + json_number(option->value) +
               " (full recompute of every N-th layer) costed as selective");
    }
    t.find("activation_checkpoint.selective_ac_option");
    const std::string optimizer = t.text({"optimizer.name"}).value_or("AdamW");
    if (optimizer != "AdamW" && optimizer != "Adam") d.warn("optimizer " + optimizer + " costed as AdamW");
    d.training.set("optimizer", json_text(optimizer == "Adam" ? "adam" : "adamw"));
    if (const auto steps = t.integer({"training.steps"})) d.training.set("tokens", number(static_cast<double>(*steps) * gbs * seq));
    // CompileConfig.enable (formerly training.compile): Inductor's fusions (training.compile).
    if (const auto compile = t.flag({"compile.enable", "training.compile"})) d.training.set("compile", boolean(*compile));
    // FSDP2 MixedPrecisionPolicy: param_dtype bf16, reduce_dtype fp32 by default (TrainingConfig).
    const std::string param = t.text({"training.mixed_precision_param"}).value_or("bfloat16");
    const std::string reduce = t.text({"training.mixed_precision_reduce"}).value_or("float32");
    const std::string converters = t.array("model.converters");
    const bool float8 = converters.find("float8") != std::string::npos || t.flag({"float8.enable_float8_linear"}).value_or(false);
    const bool mx = converters.find("\"mx\"") != std::string::npos || converters.find("'mx'") != std::string::npos;
    std::string preset = param == "float32" ? "fp32" : "bf16-mixed";
    if (param != "bfloat16" && param != "float32") t.fail("training.mixed_precision_param", "'" + param + "' is not bfloat16 or float32");
    if (float8) preset = "fp8-mixed";
    if (mx) preset = "mxfp8-mixed";
    if (reduce == "bfloat16" && preset != "fp32")
        d.precision = "{\"preset\": " + json_text(preset) + ", \"grad_reduce\": \"bf16\"}";
    else
        d.precision = json_text(preset);
    if (t.error()) return *t.error();
    for (const std::string& key : t.not_understood({"parallelism", "activation_checkpoint", "float8", "training", "model"})) {
        static const std::string_view harmless[] = {"training.max_norm",
                                                    "training.dataset",
                                                    "training.dataset_path",
                                                    "training.warmup_steps",
                                                    "training.seed",
                                                    "training.deterministic",
                                                    "model.hf_assets_path",
                                                    "model.tokenizer_path",
                                                    "float8.enable_fsdp_float8_all_gather",
                                                    "float8.precompute_float8_dynamic_scale_for_fsdp",
                                                    "float8.filter_fqns",
                                                    "training.gc_freq",
                                                    "parallelism.disable_loss_parallel"};
        if (std::find(std::begin(harmless), std::end(harmless), key) == std::end(harmless)) d.warn("not understood, ignored: " + key);
    }
    return finish(d, overrides_json);
}

namespace {

// [SECTION] DeepSpeed --------------------------------------------------------------------------------

// A DeepSpeed integer that may be "auto" (the HF Trainer fills it in): nullopt for auto or absent.
std::optional<int64_t> ds_integer(simdjson::dom::object object, std::string_view key, std::optional<Error>& error) {
    simdjson::dom::element value;
    if (object[key].get(value) != simdjson::SUCCESS) return std::nullopt;
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS && text == "auto") return std::nullopt;
    int64_t number = 0;
    if (value.get_int64().get(number) != simdjson::SUCCESS) {
        if (!error) error = Error{std::string(key), "expected an integer or \"auto\", got " + json_type_phrase(value)};
        return std::nullopt;
    }
    return number;
}

bool ds_enabled(simdjson::dom::object object, std::string_view section) {
    bool enabled = false;
    simdjson::dom::element value;
    if (object[section].get(value) != simdjson::SUCCESS) return false;
    if (value["enabled"].get_bool().get(enabled) == simdjson::SUCCESS) return enabled;
    std::string_view text;
    return value["enabled"].get_string().get(text) == simdjson::SUCCESS && text == "auto";
}

}  // namespace

Result<Imported> import_deepspeed(std::string_view json, std::string_view overrides_json) {
    simdjson::dom::parser parser;
    auto document = parse_json_document(parser, json);
    if (!document) return document.error();
    simdjson::dom::object ds;
    if (document.value().get_object().get(ds) != simdjson::SUCCESS) return Error{"", "expected a DeepSpeed config object"};
    Draft d;
    d.framework = "deepspeed";
    std::optional<Error> error;
    // The batch triple (DeepSpeed's config.py): train_batch_size = micro x accumulation x data-parallel ranks.
    auto train = ds_integer(ds, "train_batch_size", error);
    auto micro = ds_integer(ds, "train_micro_batch_size_per_gpu", error);
    auto accumulation = ds_integer(ds, "gradient_accumulation_steps", error);
    std::optional<int64_t> gpus;
    if (overrides_have(overrides_json, "num_gpus")) {
        simdjson::dom::parser p;
        int64_t n = 0;
        if (p.parse(overrides_json.data(), overrides_json.size())["num_gpus"].get_int64().get(n) == simdjson::SUCCESS) gpus = n;
    }
    int64_t tp = 1;
    simdjson::dom::object tensor_parallel;
    if (ds["tensor_parallel"].get_object().get(tensor_parallel) == simdjson::SUCCESS)
        tp = ds_integer(tensor_parallel, "autotp_size", error).value_or(1);
    for (const auto& [key, value] : {std::pair<const char*, std::optional<int64_t>>{"train_batch_size", train},
                                     {"train_micro_batch_size_per_gpu", micro},
                                     {"gradient_accumulation_steps", accumulation},
                                     {"tensor_parallel.autotp_size", std::optional<int64_t>(tp)}}) {
        if (value && *value < 1) return Error{key, "must be at least 1, got " + std::to_string(*value)};
    }
    if (gpus && *gpus < 1) return Error{"num_gpus", "must be at least 1"};
    // Solve train = micro x accumulation x dp for what is missing; state every value assumed.
    auto& T = train;
    auto& M = micro;
    auto& A = accumulation;
    std::optional<int64_t> dp;
    if (gpus) dp = *gpus / std::max<int64_t>(tp, 1);
    const auto assume = [&](std::optional<int64_t>& value, const char* key) {
        value = 1;
        d.warn(std::string(key) + " not given (or auto): 1 assumed");
    };
    if (T && !dp) {
        if (!M) assume(M, "train_micro_batch_size_per_gpu");
        if (!A) assume(A, "gradient_accumulation_steps");
    }
    if (!T && (!M || !A || !dp)) {
        if (!M) assume(M, "train_micro_batch_size_per_gpu");
        if (!A) assume(A, "gradient_accumulation_steps");
        if (!dp) {
            dp = 1;
            d.warn("the GPU count is not in the config: give --gpus N (1 data-parallel rank assumed)");
        }
    }
    // Integers are read up to 2^63: a product past it is an error, not a signed overflow.
    constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();
    if (T && M && A && !dp) {
        const auto per_rank = exact_product({*M, *A}, int64_max);
        if (!per_rank)
            error = Error{"train_batch_size", "micro x accumulation overflows a 64-bit integer"};
        else if (*T % *per_rank != 0)
            error = Error{"train_batch_size", std::to_string(*T) + " is not micro x accumulation x ranks"};
        else
            dp = *T / *per_rank;
    } else if (T && dp && (!M || !A)) {
        const int64_t per_rank = *T / std::max<int64_t>(*dp, 1);
        if (!M) M = A ? per_rank / std::max<int64_t>(*A, 1) : per_rank;
        if (!A) A = per_rank / std::max<int64_t>(*M, 1);
    } else if (!T && M && A && dp) {
        T = exact_product({*M, *A, *dp}, int64_max);
        if (!T) error = Error{"train_batch_size", "micro x accumulation x ranks overflows a 64-bit integer"};
    }
    if (T && M && A && dp && exact_product({*M, *A, *dp}, int64_max) != T) {
        error = Error{"train_batch_size", std::to_string(*T) + " differs from micro x accumulation x ranks = " + std::to_string(*M) +
                                              " x " + std::to_string(*A) + " x " + std::to_string(*dp)};
    }
    if (dp && !gpus) {
        gpus = exact_product({*dp, tp}, int64_max);
        if (!gpus) error = Error{"tensor_parallel.autotp_size", "times the data-parallel ranks overflows a 64-bit integer"};
    }
    if (train) d.training.set("global_batch", number(*train));
    if (micro) d.training.set("micro_batch", number(*micro));
    if (gpus && !overrides_have(overrides_json, "num_gpus")) d.num_gpus = *gpus;
    if (tp > 1) d.parallel.set("tp", number(tp));
    d.warn("a DeepSpeed config names no sequence length: training.seq_len is trainclock's default 2048 unless the printed config sets it");

    int64_t stage = 0;
    bool overlap = false;
    simdjson::dom::object zero;
    if (ds["zero_optimization"].get_object().get(zero) == simdjson::SUCCESS) {
        stage = ds_integer(zero, "stage", error).value_or(0);
        if (stage < 0 || stage > 3) error = Error{"zero_optimization.stage", std::to_string(stage) + " is not 0-3"};
        // DeepSpeedZeroConfig.overlap_comm: default False, True for stage 3.
        if (zero["overlap_comm"].get_bool().get(overlap) != simdjson::SUCCESS) overlap = stage == 3;
        for (const char* offload : {"offload_optimizer", "offload_param"}) {
            std::string_view device;
            if (zero[offload]["device"].get_string().get(device) == simdjson::SUCCESS && device != "none") {
                d.warn(std::string("zero_optimization.") + offload + " to " + std::string(device) +
                       " not modelled: the PCIe transfers and the CPU optimizer step are not costed");
            }
        }
        bool cpu_offload = false;
        if (zero["cpu_offload"].get_bool().get(cpu_offload) == simdjson::SUCCESS && cpu_offload) {
            d.warn("zero_optimization.cpu_offload not modelled: the PCIe transfers and the CPU optimizer step are not costed");
        }
    }
    d.parallel.set("zero", number(stage));
    d.parallel.set("overlap_dp_comm", boolean(overlap));

    // Precision: bf16 / fp16 (DeepSpeed keeps fp32 master weights in its optimizer), torch amp, else fp32.
    std::string preset = "fp32";
    if (ds_enabled(ds, "bf16") || ds_enabled(ds, "bfloat16"))
        preset = "bf16-mixed";
    else if (ds_enabled(ds, "fp16"))
        preset = "fp16-mixed";
    else if (ds_enabled(ds, "amp"))
        preset = "fp16-amp";
    std::string_view comm;
    if (ds["communication_data_type"].get_string().get(comm) == simdjson::SUCCESS && preset != "fp32") {
        const std::string dtype = comm == "fp16" ? "fp16" : comm == "bf16" ? "bf16" : "fp32";
        d.precision = "{\"preset\": " + json_text(preset) + ", \"grad_reduce\": " + json_text(dtype) + "}";
    } else {
        d.precision = json_text(preset);
    }
    std::string_view optimizer = "AdamW";
    if (ds["optimizer"]["type"].get_string().get(optimizer) != simdjson::SUCCESS) optimizer = "AdamW";
    std::string lower(optimizer);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // DeepSpeed's Adam is FusedAdam with adam_w_mode=True (decoupled weight decay) by default.
    const std::string mapped = lower == "lamb" ? "lamb" : lower == "sgd" ? "sgd" : "adamw";
    if (lower != "adam" && lower != "adamw" && lower != "lamb" && lower != "sgd")
        d.warn("optimizer " + std::string(optimizer) + " costed as " + mapped);
    d.training.set("optimizer", json_text(mapped));
    if (ds["activation_checkpointing"].error() == simdjson::SUCCESS) {
        d.warn(
            "activation_checkpointing: whether layers recompute is decided by the model code; costed as recompute none (give --recompute)");
    }
    static const std::string_view known[] = {"train_batch_size",
                                             "train_micro_batch_size_per_gpu",
                                             "gradient_accumulation_steps",
                                             "zero_optimization",
                                             "bf16",
                                             "bfloat16",
                                             "fp16",
                                             "amp",
                                             "optimizer",
                                             "scheduler",
                                             "gradient_clipping",
                                             "steps_per_print",
                                             "wall_clock_breakdown",
                                             "zero_allow_untested_optimizer",
                                             "activation_checkpointing",
                                             "communication_data_type",
                                             "tensor_parallel",
                                             "tensorboard",
                                             "wandb",
                                             "csv_monitor",
                                             "comms_logger",
                                             "flops_profiler",
                                             "memory_breakdown",
                                             "dump_state",
                                             "seed",
                                             "prescale_gradients",
                                             "gradient_predivide_factor",
                                             "zero_force_ds_cpu_optimizer",
                                             "data_types",
                                             "checkpoint",
                                             "aio"};
    for (const auto field : ds) {
        if (std::find(std::begin(known), std::end(known), field.key) == std::end(known)) {
            d.warn("not understood, ignored: " + std::string(field.key));
        }
    }
    if (error) return *error;
    return finish(d, overrides_json);
}

namespace {}  // namespace
}  // namespace trainclock
