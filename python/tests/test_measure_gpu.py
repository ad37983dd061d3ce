"""tools/measure_gpu.py in its reduced CPU mode: the code path users run on their GPUs.

Needs PyTorch (Debian: python3-torch); skipped, saying so, where it is not installed.
"""
import json
import os
import subprocess
import sys

import pytest

import trainclock

SOURCE = os.environ.get("TRAINCLOCK_SOURCE_DIR", ".")
TOOL = os.path.join(SOURCE, "tools", "measure_gpu.py")


def test_cpu_mode_writes_measurements_and_a_calibration_trainclock_accepts(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed (apt-get install python3-torch): measure_gpu.py not exercised")
    out, calib = tmp_path / "m.json", tmp_path / "c.json"
    run = subprocess.run([sys.executable, TOOL, "--cpu", "--gpu", "h100-sxm", "--out", str(out), "--calibration-out", str(calib)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    measurements = json.loads(out.read_text())
    assert measurements["schema"] == "trainclock/measurements/v1"
    shapes = {(row["m"], row["n"], row["k"]) for row in measurements["gemm"]}
    assert shapes == {(128, 192, 64), (128, 64, 64), (128, 256, 64), (128, 64, 256)}  # QKV, proj, MLP up, MLP down of h = 64
    for row in measurements["gemm"]:
        assert row["tflops"] == pytest.approx(2 * row["m"] * row["n"] * row["k"] / row["seconds"] / 1e12)
    assert measurements["memory"]["bandwidth_gbps"] > 0
    assert {row["op"] for row in measurements["collectives"]} >= {"all_reduce"}
    assert all(row["busbw_gbps"] is None for row in measurements["collectives"])  # one rank: no bus traffic
    section = json.loads(calib.read_text())["gpus"]["h100-sxm"]
    assert 0 < section["gemm_efficiency"]["fp32"] <= 1
    assert 0 < section["memory_efficiency"] <= 1
    config = {"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "calibration": json.loads(calib.read_text())}
    assert trainclock.predict(config)["iteration_time_s"] > 0  # the calibration is one trainclock reads


def test_calibration_arithmetic():
    sys.path.insert(0, os.path.join(SOURCE, "tools"))
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: measure_gpu.py cannot be imported")
    del torch
    import measure_gpu
    gpu = {"peak_tflops": {"bf16": 989.0, "fp8": 1979.0}, "memory_bw_gbps": 3350.0}
    node = {"intra_bw_gbps": 450.0, "inter_bw_gbps": 50.0}
    measurements = {"gemm": [{"dtype": "bf16", "tflops": 700.0}, {"dtype": "bf16", "tflops": 794.2}, {"dtype": "fp8", "tflops": 1400.0}],
                    "attention": [{"dtype": "bf16", "tflops": 500.0}], "memory": {"bandwidth_gbps": 2900.0},
                    "collectives": [{"group": "intra", "busbw_gbps": 360.0}, {"group": "inter", "busbw_gbps": 44.0}]}
    section = measure_gpu.calibration(measurements, gpu, node)
    assert section == {"gemm_efficiency": {"bf16": round(794.2 / 989, 4), "fp8": round(1400 / 1979, 4)},
                       "attention_efficiency": round(500 / 989, 4), "memory_efficiency": round(2900 / 3350, 4),
                       "intra_node_efficiency": 0.8, "inter_node_efficiency": 0.88}
    assert measure_gpu.fraction(5.0, 1.0) == 1.0 and measure_gpu.fraction(1e-9, 1.0) == 0.001
