"""trainclock: predict the time and cost of training a transformer, from Python.

Every function takes the CLI's config/v1 object as a dict (README: "Config") and returns the CLI's
JSON as dicts; the numbers are the very doubles the CLI prints (the same C++ core). Bad input
raises ValueError with the CLI's one-line message ("parallel.tp: 3 does not divide model.heads = 64").

    import trainclock
    r = trainclock.predict({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8})
    r["iteration_time_s"]

    import pandas as pd
    pd.DataFrame(trainclock.sweep({"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 64},
                                  {"parallel.tp": [1, 2, 4, 8], "training.micro_batch": [1, 2]}))
"""

import itertools
import json
import os

from . import _trainclock

__all__ = ["predict", "compare", "search", "plan", "validate", "calibrate", "presets", "import_hf", "import_megatron", "import_torchtitan",
           "import_deepspeed", "sweep", "__version__"]
__version__ = _trainclock.version


def _text(value):
    """A dict (or a JSON string) as JSON text; floats keep their shortest round-trip repr."""
    return value if isinstance(value, str) else json.dumps(value, allow_nan=False)


def _reply(text):
    reply = json.loads(text)
    error = reply.get("error") if isinstance(reply, dict) else None
    if isinstance(error, dict) and set(error) == {"key", "message"}:
        key, message = error["key"], error["message"]
        raise ValueError(f"{key}: {message}" if key else message)
    return reply


def predict(config):
    """One prediction: the result/v1 dict (with "config" and the pipeline "timeline")."""
    return _reply(_trainclock.predict_json(_text(config)))


def compare(config):
    """The config across every precision its GPU runs: {"baseline", "rows": [...], "unsupported"}."""
    return _reply(_trainclock.compare_json(_text(config)))


def search(config, top=10, objective="time", all_precisions=False, pin=(), widen=()):
    """Fastest (objective="cost": cheapest) layouts of config["num_gpus"] GPUs that fit.

    As `trainclock search --config`: the layout keys the config sets ("tp", "pp", "cp", "ep", "zero",
    "virtual_stages", "schedule", "sequence_parallel", "micro_batch", "recompute") keep its value
    unless widen names them (widen="all": every one); pin keeps more; the others are searched. A
    config without a precision searches the pretraining precisions (all_precisions: every one).
    Returns the trainclock/search/v1 dict (single-threaded: the same top layouts as the CLI).
    """
    options = {"top": top, "objective": objective, "all_precisions": bool(all_precisions), "pin": list(pin),
               "widen": widen if widen == "all" else list(widen)}
    return _reply(_trainclock.search_json(_text(config), json.dumps(options)))


def plan(config, tokens=None, days=0, budget_usd=0, gpus=None, max_gpus=16384, precisions=None, prices=None, top=20):
    """Which GPUs, how many and in which precision (the CLI's `trainclock plan`).

    config: a config/v1 dict without GPU or layout ({"model": "llama3-70b", "training": {...}}); tokens
    sets training.tokens. gpus: GPU preset ids (default every priced preset); precisions: ids or
    "all" (default the pretraining set); prices: {"gpu id": USD per GPU-hour}. Returns the
    trainclock/plan/v1 dict: "options" (each with gpu, num_gpus, precision, days, cost_usd, gpu_hours,
    energy_kwh, pareto and the config that `predict` reproduces), "fastest_within_budget" and
    "cheapest_within_deadline" (indices into options), "dropped".
    """
    config = json.loads(_text(config))
    if tokens is not None:
        config.setdefault("training", {})["tokens"] = tokens
    options = {"days": days, "budget_usd": budget_usd, "max_gpus": max_gpus, "top": top}
    if gpus is not None:
        options["gpus"] = [gpus] if isinstance(gpus, str) else list(gpus)
    if precisions is not None:
        options["precisions"] = precisions if precisions == "all" else list(precisions)
    if prices is not None:
        options["prices"] = dict(prices)
    return _reply(_trainclock.plan_json(json.dumps(config), json.dumps(options)))


def validate(source="", precision_blind=False, calibration=None):
    """Accuracy against the published measurements embedded in trainclock (trainclock/validation/v1)."""
    options = {"source": source, "precision_blind": bool(precision_blind)}
    if calibration is not None:
        options["calibration"] = calibration
    return _reply(_trainclock.validate_json(json.dumps(options)))


def calibrate(measurements):
    """A calibration from measurements (a dict, JSON text or a file path): measured runs in the
    presets/validation case format (the trainclock/calibrate/v1 report: factors, errors before/after
    and leave-one-out) or a tools/measure_gpu.py file (trainclock/calibrate-microbenchmarks/v1).
    Either report's "calibration" is what predict's config takes as "calibration"."""
    if isinstance(measurements, (str, os.PathLike)):
        measurements = _read_if_path(measurements)
    return _reply(_trainclock.calibrate_json(_text(measurements)))


def presets(kind=""):
    """The preset catalogue: {"models": [...], "gpus": [...], ...}, or one kind ("models", "gpus", ...)."""
    return _reply(_trainclock.presets_json(kind))


def import_hf(config):
    """A Hugging Face config.json (a dict, JSON text or a file path) as a config/v1 model dict.

    Use it as config["model"]; warnings about what is read but not modelled go to import_hf.warnings.
    """
    if isinstance(config, (str, os.PathLike)) and not str(config).lstrip().startswith("{"):
        with open(config, encoding="utf-8") as file:
            config = file.read()
    reply = _reply(_trainclock.import_hf_json(_text(config)))
    import_hf.warnings = reply["warnings"]
    return reply["model"]


import_hf.warnings = []


def _read_if_path(text):
    if isinstance(text, os.PathLike) or (isinstance(text, str) and "\n" not in text and os.path.isfile(text)):
        with open(text, encoding="utf-8") as file:
            return file.read()
    return text


def _import_launch(kind, text, overrides):
    overrides = {key: value for key, value in overrides.items() if value is not None}
    reply = _reply(_trainclock.import_launch_json(kind, text, json.dumps(overrides)))
    _import_launch.warnings = reply["warnings"]
    return reply["config"]


def import_megatron(args, model=None, gpu=None, num_gpus=None, node=None):
    """Megatron-LM / NeMo arguments (a list of words, a command line, or a file holding it) as a config/v1 dict.

    model / gpu / node / num_gpus fill in or replace what the arguments do not say. Warnings (arguments
    not understood, defaults assumed) are in trainclock.import_megatron.warnings.
    """
    text = " ".join(_quote(word) for word in args) if isinstance(args, (list, tuple)) else _read_if_path(args)
    config = _import_launch("megatron", text, {"model": model, "gpu": gpu, "node": node, "num_gpus": num_gpus})
    import_megatron.warnings = _import_launch.warnings
    return config


def import_torchtitan(toml, model=None, gpu=None, num_gpus=None, node=None):
    """A torchtitan job config (TOML text or a file path) as a config/v1 dict (warnings: .warnings)."""
    config = _import_launch("torchtitan", _read_if_path(toml), {"model": model, "gpu": gpu, "node": node, "num_gpus": num_gpus})
    import_torchtitan.warnings = _import_launch.warnings
    return config


def import_deepspeed(ds_config, model=None, gpu=None, num_gpus=None, node=None):
    """A DeepSpeed config (a dict, JSON text or a file path) as a config/v1 dict; it names no model: give one."""
    text = json.dumps(ds_config) if isinstance(ds_config, dict) else _read_if_path(ds_config)
    config = _import_launch("deepspeed", text, {"model": model, "gpu": gpu, "node": node, "num_gpus": num_gpus})
    import_deepspeed.warnings = _import_launch.warnings
    return config


def _quote(word):
    """A word for trainclock's shell-like splitter (single quotes, ' escaped)."""
    return "'" + str(word).replace("'", "'\\''") + "'"

# Result fields a sweep row carries (scalars of result/v1, memory flattened).
_ROW_FIELDS = ("iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "model_tflops_per_gpu",
               "hardware_tflops_per_gpu", "mfu", "total_time_s", "gpu_hours", "cost_usd", "energy_kwh", "goodput",
               "expected_interruptions")


def _with(config, path, value):
    """A copy of config with the dotted path ("parallel.tp") set to value."""
    out = dict(config)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node[key] = dict(node.get(key) or {})
        node = node[key]
    node[keys[-1]] = value
    return out


def sweep(config, axes):
    """Predict every combination of axes over config; rows ready for pandas.DataFrame(rows).

    axes: {dotted config path: [values]}, e.g. {"parallel.tp": [1, 2, 4], "precision": ["bf16-mixed", "fp8-mixed"]}.
    Each row holds the axis values, the result scalars, memory_per_gpu_gib, fits and error (the
    ValueError message of a combination that is not valid, else None; its numbers are then None).
    """
    paths = list(axes)
    rows = []
    for values in itertools.product(*(list(axes[path]) for path in paths)):
        point = config
        for path, value in zip(paths, values):
            point = _with(point, path, value)
        row = dict(zip(paths, values))
        try:
            result = predict(point)
        except ValueError as error:
            row.update({field: None for field in _ROW_FIELDS})
            row.update({"memory_per_gpu_gib": None, "fits": None, "error": str(error)})
        else:
            row.update({field: result[field] for field in _ROW_FIELDS})
            row.update({"memory_per_gpu_gib": result["memory"]["per_gpu_gib"], "fits": result["memory"]["fits"], "error": None})
        rows.append(row)
    return rows
