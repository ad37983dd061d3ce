// trainclock: JSON-string facade over the core, shared by web/bindings.cpp and scripts.
// Every function takes and returns JSON text; failures come back as
// {"error": {"key": "...", "message": "..."}} and never throw.
#pragma once

#include <string>
#include <string_view>

namespace trainclock {

std::string predict_json(std::string_view config_json);  // result/v1 JSON (with "timeline")
std::string compare_json(std::string_view config_json);  // {"rows": [{precision, result...}]} across the GPU's precisions
std::string scaling_json(std::string_view config_json);  // {"gpu_counts", "points": [{num_gpus, precision, result...}]} (scaling.hpp)
std::string presets_json(std::string_view kind);         // kind "" = all: {"models": [...], "gpus": [...], ...}
std::string encode_link(std::string_view config_json);   // {"fragment": "v=1&m=..."}
std::string decode_link(std::string_view fragment);      // {"config": {...}} (a config/v1 object)
std::string import_hf_json(std::string_view hf_json);    // {"model": {...}, "warnings": [...]} from a Hugging Face config.json
// {"config": {...}, "warnings": [...]} of a launch config: kind "megatron" (text = the command line),
// "torchtitan" (TOML) or "deepspeed" (JSON); overrides_json as in import.hpp ({"model", "gpu", "num_gpus"}).
std::string import_launch_json(std::string_view kind, std::string_view text, std::string_view overrides_json);
// trainclock/search/v1 JSON of a single-threaded search. options: {"top": 10, "objective": "time" | "cost",
// "all_precisions": false, "pin": ["tp", "pp", "cp", "ep", "zero", "virtual_stages", "schedule",
// "sequence_parallel", "micro_batch", "recompute"], "widen": [...] | "all"}: pinned dimensions keep the
// config's value. As `trainclock search --config`: the layout keys the config sets are pinned unless
// "widen" names them, and a config without a precision searches the pretraining precisions.
std::string search_json(std::string_view config_json, std::string_view options_json);
// trainclock/plan/v1 JSON (search/plan.hpp) of a config/v1 draft (model, training with tokens, framework;
// its gpu, num_gpus, precision and layout are chosen by the plan). options: {"days": 0, "budget_usd": 0,
// "gpus": ["h100-sxm", ...] (default: every priced preset), "max_gpus": 16384, "precisions": ["bf16-mixed",
// ...] | "all" (default: the pretraining set), "prices": {"h100-sxm": 2.5}, "top": 20} (all optional).
std::string plan_json(std::string_view config_json, std::string_view options_json);
// trainclock/validation/v1 JSON over the embedded cases. options: {"source": "<id or file prefix>",
// "precision_blind": false, "calibration": {...}} (all optional); {"cross_source": true} alone gives the
// leave-one-source-out report instead (trainclock/cross-source/v1, as validate --cross-source --json);
// {"components": true} alone the component microbenchmarks (trainclock/components/v1, validate --components --json).
std::string validate_json(std::string_view options_json);
// A measurements file (presets/validation case format) -> the calibrate report (trainclock/calibrate/v1);
// a tools/measure_gpu.py micro-benchmark file -> trainclock/calibrate-microbenchmarks/v1 (import.hpp).
std::string calibrate_json(std::string_view measurements_json);

}  // namespace trainclock
