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


def test_cpu_mode_writes_measurements_that_calibrate_reads(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not installed (apt-get install python3-torch): measure_gpu.py not exercised")
    out, calib = tmp_path / "m.json", tmp_path / "c.json"
    cli = os.environ.get("TRAINCLOCK_CLI", os.path.join(SOURCE, "build", "bin", "trainclock"))
    run = subprocess.run([sys.executable, TOOL, "--cpu", "--gpu", "h100-sxm", "--out", str(out), "--calibration-out", str(calib),
                          "--trainclock", cli], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    measurements = json.loads(out.read_text())
    assert measurements["schema"] == "trainclock/measurements/v1"
    shapes = {(row["m"], row["n"], row["k"]) for row in measurements["gemm"]}
    assert shapes == {(128, 192, 64), (128, 64, 64), (128, 256, 64), (128, 64, 256)}  # QKV, proj, MLP up, MLP down of h = 64
    for row in measurements["gemm"]:
        assert row["tflops"] == pytest.approx(2 * row["m"] * row["n"] * row["k"] / row["seconds"] / 1e12)
    for row in measurements["attention"]:  # 4 b h s^2 d forward, backward 2.5 x that
        flops = 4 * row["batch"] * row["heads"] * row["seq"] ** 2 * row["head_dim"] * (3.5 if row["pass"] == "forward+backward" else 1)
        assert row["tflops"] == pytest.approx(flops / row["seconds"] / 1e12)
    assert {row["pass"] for row in measurements["attention"]} == {"forward", "forward+backward"}
    assert measurements["memory"]["bandwidth_gbps"] > 0
    assert {row["op"] for row in measurements["collectives"]} >= {"all_reduce"}
    assert all(row["busbw_gbps"] is None for row in measurements["collectives"])  # one rank: no bus traffic
    # --calibration-out ran trainclock calibrate --measurements: said it measured a CPU, not an H100.
    assert "measured on the CPU" in run.stderr
    section = json.loads(calib.read_text())["gpus"]["h100-sxm"]
    assert 0 < section["gemm_efficiency"]["fp32"] <= 1
    assert 0 < section["memory_efficiency"] <= 1
    assert "intra_node_efficiency" not in section  # one rank measures no bus
    # The same file straight into calibrate (the documented route), and its JSON report.
    report = subprocess.run([cli, "calibrate", "--measurements", str(out), "--json"], capture_output=True, text=True, check=True)
    parsed = json.loads(report.stdout)
    assert parsed["schema"] == "trainclock/calibrate-microbenchmarks/v1"
    assert parsed["calibration"] == json.loads(calib.read_text())
    assert any(line.startswith("gemm_efficiency.fp32 = ") for line in parsed["derivation"])
    config = {"model": "gpt2", "gpu": "h100-sxm", "num_gpus": 8, "calibration": json.loads(calib.read_text())}
    shipped = trainclock.predict(dict(config, calibration={}))["iteration_time_s"]
    assert trainclock.predict(config)["iteration_time_s"] > shipped  # a CPU's efficiencies make the H100 slower
