// trainclock: the flat config field table and the did-you-mean (names.hpp).
#include "trainclock/io/names.hpp"

#include <algorithm>

namespace trainclock {

const std::vector<ConfigField>& config_fields() {
    static const std::vector<ConfigField> fields = {
        {"m", "--model", "model", FieldType::spec,
         "model preset id, inline JSON object, or FILE (.json or a path): a model object or a Hugging Face config.json"},
        {"g", "--gpu", "gpu", FieldType::spec, "GPU preset id, or an inline JSON object"},
        {"n", "--node", "node", FieldType::spec, "node preset id or inline object (default: the GPU's default_node)"},
        {"N", "--gpus", "num_gpus", FieldType::integer, "number of GPUs (default tp*pp*cp*dp)"},
        {"p", "--precision", "precision", FieldType::spec,
         "precision preset id or inline object (default bf16-mixed, else fp16-mixed, else fp32)"},
        {"f8", "--fp8-recipe", "precision.fp8_recipe", FieldType::choice,
         "delayed | tensorwise | rowwise | blockwise (fp8 GEMMs), mxfp8, nvfp4 (default: the framework's, else delayed; mxfp8/nvfp4 their "
         "own)"},
        {"fw", "--framework", "framework", FieldType::spec,
         "training stack: megatron-core | megatron-lm | deepspeed | torchtitan | llm-foundry | hf-transformers | pytorch | tensorflow | "
         "jax, or an inline object (default: none, today's defaults = megatron-lm's)"},
        {"tp", "--tp", "parallel.tp", FieldType::integer, "tensor-parallel size (default 1)"},
        {"pp", "--pp", "parallel.pp", FieldType::integer, "pipeline stages (default 1)"},
        {"dp", "--dp", "parallel.dp", FieldType::integer, "data-parallel replicas (default: num_gpus / (tp*pp*cp))"},
        {"cp", "--cp", "parallel.cp", FieldType::integer, "context-parallel size (default 1)"},
        {"ep", "--ep", "parallel.ep", FieldType::integer, "expert-parallel size, MoE only (default 1)"},
        {"sp", "--sp", "parallel.sequence_parallel", FieldType::boolean, "Megatron sequence parallelism (default off)"},
        {"z", "--zero", "parallel.zero", FieldType::integer, "ZeRO stage 0-3, 3 = FSDP (default 0)"},
        {"vp", "--vpp", "parallel.virtual_stages", FieldType::integer, "virtual stages per pipeline stage (interleaved schedule)"},
        {"s", "--schedule", "parallel.schedule", FieldType::choice, "gpipe | 1f1b | interleaved (default 1f1b)"},
        {"fsl", "--first-stage-layers", "parallel.first_stage_layers", FieldType::integer,
         "layers on the first pipeline stage, Megatron's --decoder-first-pipeline-num-layers (default 0: even split)"},
        {"lsl", "--last-stage-layers", "parallel.last_stage_layers", FieldType::integer,
         "layers on the last pipeline stage, Megatron's --decoder-last-pipeline-num-layers (default 0: even split)"},
        {"ess", "--embedding-in-stage-split", "parallel.embedding_in_stage_split", FieldType::boolean,
         "count the embedding as a layer of the pipeline split (Megatron's --account-for-embedding-in-pipeline-split)"},
        {"lss", "--loss-in-stage-split", "parallel.loss_in_stage_split", FieldType::boolean,
         "count the LM head + loss as a layer of the pipeline split (Megatron's --account-for-loss-in-pipeline-split)"},
        {"odp", "--overlap-dp", "parallel.overlap_dp_comm", FieldType::boolean,
         "overlap the DP gradient reduction with backward (default on)"},
        {"otp", "--overlap-tp", "parallel.overlap_tp_comm", FieldType::boolean, "overlap TP collectives with GEMMs (default off)"},
        {"seq", "--seq", "training.seq_len", FieldType::integer, "sequence length, tokens (default 2048)"},
        {"gbs", "--gbs", "training.global_batch", FieldType::integer, "global batch, samples per optimizer step (default 512)"},
        {"mbs", "--mbs", "training.micro_batch", FieldType::integer, "micro-batch, samples (default 1)"},
        {"rc", "--recompute", "training.recompute", FieldType::choice, "none | selective | full (default none)"},
        {"fa", "--flash", "training.flash_attention", FieldType::boolean,
         "fused (flash) attention where the dtype has a kernel (default on)"},
        {"ak", "--attention-kernel", "training.attention_kernel", FieldType::choice,
         "flash2 (FlashAttention-2/Triton era) | flash3 (Hopper-native: FA3, cuDNN via TE) (default flash2)"},
        {"o", "--optimizer", "training.optimizer", FieldType::choice,
         "adamw | adamw8bit | adam | lamb | lamb-per-tensor | sgd | adamw-per-tensor (default adamw)"},
        {"ft", "--finetune", "training.finetune.method", FieldType::choice, "full | lora | qlora (default full: every weight trains)"},
        {"lor", "--lora-rank", "training.finetune.lora_rank", FieldType::integer, "LoRA adapter rank r (required with lora / qlora)"},
        {"lot", "--lora-targets", "training.finetune.lora_targets", FieldType::choice,
         "attention | all-linear: layers that get adapters (default all-linear)"},
        {"frz", "--frozen-layers", "training.finetune.frozen_layers", FieldType::integer,
         "freeze the input embedding and the first N layers (default 0)"},
        {"oo", "--offload-optimizer", "training.offload_optimizer", FieldType::boolean,
         "master weights, optimizer states and gradients in CPU memory (default off)"},
        {"opr", "--offload-params", "training.offload_params", FieldType::boolean,
         "weights in CPU memory, streamed per layer; needs zero 3 with dp > 1 (default off)"},
        {"tok", "--tokens", "training.tokens", FieldType::number, "training tokens of the whole run, e.g. 15e12 (default 0: one step)"},
        {"usd", "--price", "training.price_per_gpu_hour", FieldType::number, "USD per GPU-hour (default: the GPU preset's)"},
        {"cki", "--checkpoint-interval", "training.checkpoint_interval_s", FieldType::number,
         "training seconds between checkpoints (default: Young's optimum sqrt(2 x save time / interruption rate))"},
        {"cks", "--checkpoint-steps", "training.checkpoint_interval_steps", FieldType::integer,
         "optimizer steps between checkpoints (instead of --checkpoint-interval)"},
        {"sbw", "--storage-bw", "training.storage_bw_gbps", FieldType::number,
         "checkpoint storage bandwidth of the job, GB/s (default 0.122 GB/s per GPU: Llama 3's 2 TB/s over 16K GPUs)"},
        {"rst", "--restart", "training.restart_s", FieldType::number,
         "seconds from an interruption to training again, before the checkpoint load (default 600, assumed)"},
        {"fr", "--failure-rate", "training.failure_rate_per_gpu_hour", FieldType::number,
         "unexpected interruptions per GPU-hour (default 1.97e-5: Llama 3, 419 in 54 days on 16,384 GPUs)"},
        {"ideal", "--ideal", "training.ideal", FieldType::boolean,
         "total time = steps x step time: no checkpoints, interruptions or restarts (default off)"},
        {"cal", "--calibration", "calibration", FieldType::object,
         "calibration JSON overriding efficiencies (\"gpus\": {GPU: {...}} per GPU): a file, inline {...} or ~base64url"},
        {"", "--precision-blind", "calibration.precision_blind", FieldType::boolean, "cost every op at one dtype (static-graph baseline)"},
    };
    return fields;
}

const ConfigField* find_field_by_link_key(std::string_view key) {
    for (const ConfigField& field : config_fields()) {
        if (!field.link_key.empty() && field.link_key == key) return &field;
    }
    return nullptr;
}

const ConfigField* find_field_by_flag(std::string_view flag) {
    for (const ConfigField& field : config_fields()) {
        if (field.flag == flag) return &field;
    }
    return nullptr;
}

namespace {

// ASCII lower case: std::tolower of the "C" locale, which trainclock never changes.
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Levenshtein distance of two lower-cased texts (Wagner & Fischer 1974, two-row form). A row's
// minimum never decreases, so past `limit` it stops and returns limit + 1 (the caller only needs
// distances up to limit: a long unknown key costs no more than a short one).
size_t edit_distance(std::string_view a, std::string_view b, size_t limit, std::vector<size_t>& previous, std::vector<size_t>& current) {
    previous.resize(b.size() + 1);
    current.resize(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        size_t row_min = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            row_min = std::min(row_min, current[j]);
        }
        if (row_min > limit) return limit + 1;
        std::swap(previous, current);
    }
    return previous[b.size()];
}

}  // namespace

// The closest candidates, or "" when none is close: a candidate containing the wanted text
// ("h100" -> "h100-sxm") scores 1, otherwise 2 per edit, accepted up to max(2, length / 3) edits.
// Ties are listed: "h100-nvl, h100-pcie or h100-sxm".
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates) {
    if (wanted.empty()) return "";
    size_t best_score = 2 * std::max<size_t>(2, wanted.size() / 3) + 1;
    std::vector<std::string> best;
    std::string wanted_lower(wanted), candidate_lower;
    std::transform(wanted_lower.begin(), wanted_lower.end(), wanted_lower.begin(), lower);
    std::vector<size_t> previous, current;  // edit_distance's rows, reused
    for (const std::string& candidate : candidates) {
        const bool contains = wanted.size() >= 3 && candidate.find(wanted) != std::string::npos;
        // The distance is at least the length difference: skip the quadratic count when that
        // alone is past the best score (same answer; a long unknown key costs no more than a short one).
        const size_t gap = wanted.size() > candidate.size() ? wanted.size() - candidate.size() : candidate.size() - wanted.size();
        if (2 * gap > best_score && !contains) continue;
        size_t score = 1;
        if (2 * gap <= best_score) {
            candidate_lower.assign(candidate);
            std::transform(candidate_lower.begin(), candidate_lower.end(), candidate_lower.begin(), lower);
            score = 2 * edit_distance(wanted_lower, candidate_lower, best_score / 2, previous, current);
        }
        if (contains) score = std::min<size_t>(score, 1);
        if (score < best_score) {
            best_score = score;
            best.clear();
        }
        if (score == best_score && std::find(best.begin(), best.end(), candidate) == best.end()) best.push_back(candidate);
    }
    std::string joined;
    const size_t shown = std::min<size_t>(best.size(), 3);
    for (size_t i = 0; i < shown; ++i) joined += (i == 0 ? "" : i + 1 == shown ? " or " : ", ") + best[i];
    return joined;
}

}  // namespace trainclock
