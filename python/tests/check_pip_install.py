"""`pip install .` into a fresh venv, then `import trainclock` without PYTHONPATH (ctest python/pip-install).

Runs what the README shows, offline: python3 -m venv --system-site-packages VENV, then
VENV/bin/pip install --no-build-isolation SOURCE, with TRAINCLOCK_BUILD_DIR pointing setup.py at the
already built tree (the core is reused, only the module target is brought up to date). The installed
module must live in VENV and give the CLI's iteration time bit for bit.
usage: check_pip_install.py SOURCE_DIR BUILD_DIR CLI VENV_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE, BUILD, CLI, VENV = sys.argv[1:5]
CONFIG = {"model": "llama3-8b", "gpu": "h100-sxm", "num_gpus": 8, "parallel": {"tp": 2},
          "training": {"seq_len": 4096, "global_batch": 64}}
PROBE = """
import json, sys, trainclock
r = trainclock.predict(json.loads(sys.argv[1]))
print(json.dumps({"file": trainclock.__file__, "version": trainclock.__version__,
                  "iteration_time_s": r["iteration_time_s"]}))
"""


def run(args, **kwargs):
    done = subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        sys.exit(f"pip-install: `{' '.join(args)}` exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def main():
    start = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    shutil.rmtree(VENV, ignore_errors=True)
    run([sys.executable, "-m", "venv", "--system-site-packages", VENV], env=env)
    pip = os.path.join(VENV, "bin", "pip")
    run([pip, "install", "--no-build-isolation", "--no-index", "--no-deps", "--disable-pip-version-check", "--no-cache-dir", "-q", SOURCE],
        env={**env, "TRAINCLOCK_BUILD_DIR": BUILD})
    installed = time.monotonic() - start
    with tempfile.TemporaryDirectory() as elsewhere:  # not the source tree: the import must come from the venv
        probe = run([os.path.join(VENV, "bin", "python"), "-c", PROBE, json.dumps(CONFIG)], env=env, cwd=elsewhere)
    mine = json.loads(probe.stdout)
    site = os.path.realpath(os.path.join(VENV, "lib"))
    if not os.path.realpath(mine["file"]).startswith(site + os.sep):
        sys.exit(f"pip-install: trainclock was imported from {mine['file']}, not from the venv's {site}")
    cli = run([CLI, "predict", "--config", "-", "--json"], input=json.dumps(CONFIG))
    theirs = json.loads(cli.stdout)["iteration_time_s"]
    if mine["iteration_time_s"] != theirs:
        sys.exit(f"pip-install: iteration_time_s {mine['iteration_time_s']!r} from the installed module, {theirs!r} from the CLI")
    print(f"pip-install: trainclock {mine['version']} installed into {VENV} in {installed:.1f} s; "
          f"imported from {mine['file']}; iteration_time_s {mine['iteration_time_s']!r} == CLI")


if __name__ == "__main__":
    main()
