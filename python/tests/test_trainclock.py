"""pytest tests of the trainclock Python module (ctest runs them: python/CMakeLists.txt).

The module must give the CLI's answers bit for bit: each check runs build/bin/trainclock on the
same config and compares the parsed doubles with ==.
"""
import json
import os
import subprocess
import tempfile

import pytest

import trainclock

CLI = os.environ.get("TRAINCLOCK_CLI", "build/bin/trainclock")
SOURCE = os.environ.get("TRAINCLOCK_SOURCE_DIR", ".")
CONFIG = {"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 16, "precision": "bf16-mixed",
          "parallel": {"tp": 2, "pp": 2, "sequence_parallel": True, "zero": 1},
          "training": {"seq_len": 8192, "global_batch": 256, "micro_batch": 1, "recompute": "selective", "tokens": 1e12}}


def cli(*args, stdin=None):
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, check=False)


def cli_predict(config):
    run = cli("predict", "--config", "-", "--json", stdin=json.dumps(config))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_predict_is_bit_identical_to_the_cli():
    mine, theirs = trainclock.predict(CONFIG), cli_predict(CONFIG)
    assert mine["iteration_time_s"] > 0
    for key, value in theirs.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert mine[key] == value, key  # the same double, not merely close
    assert mine["memory"] == theirs["memory"]
    assert mine["breakdown_s"] == theirs["breakdown_s"]
    assert mine["warnings"] == theirs["warnings"]
    assert mine["config"] == theirs["config"]
    assert mine["timeline"]  # the API adds the pipeline timeline


def test_a_config_without_framework_runs_the_core_default_megatron_core():
    # issue 25 item 9: the default comes from the core (as the CLI's), "none" keeps the old defaults.
    plain = trainclock.predict(CONFIG)
    assert plain["config"]["framework"] == "megatron-core"
    assert plain == trainclock.predict({**CONFIG, "framework": "megatron-core"})
    none = trainclock.predict({**CONFIG, "framework": "none"})
    assert none["config"]["framework"] == "none"
    assert none["iteration_time_s"] > plain["iteration_time_s"]
    assert none["iteration_time_s"] == cli_predict({**CONFIG, "framework": "none"})["iteration_time_s"]


def test_search_agrees_with_the_cli_search_config():
    # issue 25 item 6: the same precisions searched and the same layout keys pinned as `search --config`.
    config = {"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 16, "parallel": {"tp": 2},
              "training": {"seq_len": 4096, "global_batch": 256}}
    theirs = json.loads(cli("search", "--config", "-", "--top", "5", "--json", stdin=json.dumps(config)).stdout)
    mine = trainclock.search(config, top=5)
    assert [hit["result"]["iteration_time_s"] for hit in mine["top"]] == [hit["result"]["iteration_time_s"] for hit in theirs["top"]]
    assert [hit["precision"] for hit in mine["top"]] == [hit["precision"] for hit in theirs["top"]]
    assert mine["top"][0]["precision"] == "fp8-mixed"  # the pretraining set, not the default bf16-mixed alone
    assert all(hit["layout"]["tp"] == 2 for hit in mine["top"])  # the config's tp pins it, as --config does
    widened = trainclock.search(config, top=5, widen=["tp"])
    cli_widened = json.loads(cli("search", "--config", "-", "--widen", "tp", "--top", "5", "--json", stdin=json.dumps(config)).stdout)
    assert [hit["layout"] for hit in widened["top"]] == [hit["layout"] for hit in cli_widened["top"]]
    with pytest.raises(ValueError, match="widen"):
        trainclock.search(config, widen=["nosuchkey"])


def test_errors_raise_valueerror_with_the_cli_message():
    bad = dict(CONFIG, parallel={"tp": 3})
    with pytest.raises(ValueError) as raised:
        trainclock.predict(bad)
    run = cli("predict", "--config", "-", stdin=json.dumps(bad))
    assert run.returncode == 2
    assert run.stderr == "trainclock: error: " + str(raised.value) + "\n"  # the same line
    assert str(raised.value).startswith("parallel.tp: 3 does not divide model.heads")
    with pytest.raises(ValueError, match="malformed JSON"):
        trainclock.predict("{")
    with pytest.raises(ValueError, match="unknown preset kind"):
        trainclock.presets("cpus")


def test_compare_search_validate_presets():
    rows = trainclock.compare(CONFIG)["rows"]
    assert {row["precision"] for row in rows} >= {"bf16-mixed", "fp8-mixed", "fp32"}
    found = trainclock.search(dict(CONFIG, num_gpus=8), top=3, pin=["tp"], widen="all")
    assert found["schema"] == "trainclock/search/v1" and len(found["top"]) == 3
    assert all(hit["layout"]["tp"] == 2 for hit in found["top"])
    cli_run = cli("search", "--config", "-", "--tp", "2", "--widen", "all", "--gpus", "8", "--top", "3", "--json", stdin=json.dumps(CONFIG))
    theirs = json.loads(cli_run.stdout)
    assert [hit["result"]["iteration_time_s"] for hit in found["top"]] == [hit["result"]["iteration_time_s"] for hit in theirs["top"]]
    report = trainclock.validate(source="te-llama")
    assert report["schema"] == "trainclock/validation/v1"
    assert any(group["name"] == "te-llama" for group in report["groups"])
    catalogue = trainclock.presets()
    assert "llama3-8b" in {model["name"] for model in catalogue["models"]}
    assert set(trainclock.presets("gpus")) == {"gpus"}


def test_import_hf_from_a_file_and_predict_with_it():
    path = os.path.join(SOURCE, "tests", "core", "hf", "qwen3-8b.json")
    model = trainclock.import_hf(path)
    assert (model["layers"], model["kv_heads"], model["head_dim"] if "head_dim" in model else 128) == (36, 8, 128)
    with open(path, encoding="utf-8") as file:
        hf = json.load(file)
    assert trainclock.import_hf(hf) == model
    mine = trainclock.predict(dict(CONFIG, model=model))
    theirs = cli_predict(dict(CONFIG, model={"hf_config": hf}))
    assert mine["iteration_time_s"] == theirs["iteration_time_s"]
    with pytest.raises(ValueError, match="model_type: 'mamba' is not supported"):
        trainclock.import_hf({"model_type": "mamba"})


def test_sweep_rows():
    rows = trainclock.sweep(CONFIG, {"parallel.tp": [1, 2, 3], "training.micro_batch": [1, 2]})
    assert len(rows) == 6
    assert [(row["parallel.tp"], row["training.micro_batch"]) for row in rows][:3] == [(1, 1), (1, 2), (2, 1)]
    good = [row for row in rows if row["error"] is None]
    bad = [row for row in rows if row["error"] is not None]
    assert len(good) == 4 and len(bad) == 2  # tp 3 does not divide 32 heads
    assert all(row["iteration_time_s"] is None for row in bad)
    point = dict(CONFIG, parallel=dict(CONFIG["parallel"], tp=1), training=dict(CONFIG["training"], micro_batch=2))
    assert good[1]["iteration_time_s"] == trainclock.predict(point)["iteration_time_s"]
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(rows)
    assert list(frame.columns[:2]) == ["parallel.tp", "training.micro_batch"]


def test_launch_config_importers():
    launch = os.path.join(SOURCE, "tests", "core", "launch")
    config = trainclock.import_megatron(os.path.join(launch, "megatron-llama3-8b-h100-fp8.txt"), gpu="h100-sxm")
    assert config["framework"] == "megatron-core" and config["num_gpus"] == 8
    words = ["--num-layers", "32", "--hidden-size", "4096", "--num-attention-heads", "32", "--vocab-size", "32000",
             "--tensor-model-parallel-size", "2", "--bf16", "--split", "99,1,0", "--unknown-thing", "x y"]
    listed = trainclock.import_megatron(words, gpu="h100-sxm", num_gpus=16)
    assert listed["parallel"]["tp"] == 2 and listed["num_gpus"] == 16
    assert trainclock.import_megatron.warnings == ["not understood, ignored: --unknown-thing"]
    run = cli("import", "megatron", "--gpu", "h100-sxm", "--gpus", "16", "--", *words)
    assert json.loads(run.stdout) == listed  # the CLI prints the same document
    titan = trainclock.import_torchtitan(os.path.join(launch, "torchtitan-llama3-70b.toml"), gpu="a100-sxm4-80gb", num_gpus=64)
    assert titan["model"] == "llama3.1-70b" and titan["parallel"]["zero"] == 3
    ds = trainclock.import_deepspeed({"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True}, "zero_optimization": {"stage": 1}},
                                     model="llama3-8b", gpu="h100-sxm", num_gpus=8)
    assert ds["training"]["global_batch"] == 32 and ds["precision"] == "bf16-mixed"
    with pytest.raises(ValueError, match="zero_optimization.stage: 5 is not 0-3"):
        trainclock.import_deepspeed({"zero_optimization": {"stage": 5}})


def test_the_readme_one_liner_prints_the_clis_iteration_time():
    """README "From Python": its `python3 -c 'import trainclock; print(...)'` line, run as written
    (with this build's package on PYTHONPATH), prints the very double the CLI writes."""
    import ast
    import re
    import sys
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as file:
        lines = [line for line in file if line.startswith("PYTHONPATH=build/python ") and "trainclock.predict(" in line]
    assert lines, "README.md lost its Python one-liner"
    code = re.search(r"-c '(.*)'", lines[0]).group(1)
    config = ast.literal_eval(re.search(r"predict\((\{.*\})\)\[", code).group(1))
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", os.path.join(SOURCE, "build", "python")))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout) == cli_predict(config)["iteration_time_s"]  # repr and the CLI's JSON: shortest round trip


def test_calibrate_gives_the_clis_report_for_runs_and_for_micro_benchmarks():
    for name in ("docs/examples/calibrate-llm-foundry-h100.json", "python/tests/data/measure-gpu-cpu-mode.json"):
        path = os.path.join(SOURCE, name)
        mine = trainclock.calibrate(path)
        run = cli("calibrate", "--measurements", path, "--json")
        assert run.returncode == 0, run.stderr
        assert mine == json.loads(run.stdout), name
        config = dict(CONFIG, calibration=mine["calibration"])
        assert trainclock.predict(config)["iteration_time_s"] == cli_predict(config)["iteration_time_s"]
    fitted = trainclock.calibrate(os.path.join(SOURCE, "docs/examples/calibrate-llm-foundry-h100.json"))
    assert fitted["stacks"] == [{"gpu": "h100-sxm", "framework": "llm-foundry"}]  # what the calibration is for
    assert fitted["mape_after"] < fitted["mape_before"] and fitted["mape_leave_one_out"] < fitted["mape_before"]
    with pytest.raises(ValueError, match="framework"):
        runs = json.loads(open(os.path.join(SOURCE, "docs/examples/calibrate-llm-foundry-h100.json"), encoding="utf-8").read())
        runs["cases"][1]["config"]["framework"] = "megatron-core"
        trainclock.calibrate(runs)


def test_plan_is_the_cli_plan_and_its_configs_reproduce():
    config = {"model": "gpt2-xl", "training": {"seq_len": 1024, "global_batch": 32}}
    mine = trainclock.plan(config, tokens=1e10, gpus=["h100-sxm", "a100-sxm4-80gb"], max_gpus=8, prices={"a100-sxm4-80gb": 1.5})
    run = cli("plan", "--config", "-", "--tokens", "1e10", "--gpu", "h100-sxm,a100-sxm4-80gb", "--max-gpus", "8",
              "--price", "a100-sxm4-80gb=1.5", "--json", stdin=json.dumps(config))
    assert run.returncode == 0, run.stderr
    theirs = json.loads(run.stdout)
    assert mine["schema"] == "trainclock/plan/v1"
    mine["stats"].pop("wall_s", None)
    theirs["stats"].pop("wall_s", None)
    assert mine == theirs
    assert mine["options"] and any(o["pareto"] for o in mine["options"])
    for option in mine["options"]:
        again = trainclock.predict(option["config"])
        assert again["total_time_s"] / 86400 == option["days"]
        assert again["cost_usd"] == option["cost_usd"]
    with pytest.raises(ValueError, match="tokens"):
        trainclock.plan(config)
