#!/usr/bin/env python3
"""Tests of scripts/check_layers.py on small trees it builds: a clean tree passes, and a back-up
include, an include cycle between folders, a file outside every layer folder and a declaration in
a lower layer than its definition each fail with their message (ctest `layers-self-test`)."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        done = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
        return done.returncode, done.stdout


CLEAN = {
    "core/include/trainclock/base/status.hpp": "#pragma once\n",
    "core/include/trainclock/model/config.hpp": '#include "trainclock/base/status.hpp"\nint rule(int x);\n',
    "core/src/model/config.cpp": '#include "trainclock/model/config.hpp"\nint rule(int x) { return x; }\n',
    "core/src/perf/predict.cpp": '#include "trainclock/model/config.hpp"\n',
    "native/main.cpp": '#include "trainclock/model/config.hpp"\n',
    "tests/core/test_config.cpp": '#include "trainclock/model/config.hpp"\n',
}


def case(name, files, code, message):
    got, out = run(files)
    ok = got == code and message in out
    print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {got}{'' if ok else f', expected {code} with {message!r}; output: {out!r}'}")
    return ok


def main():
    results = [
        case("clean tree", CLEAN, 0, ""),
        case("back-up include", {**CLEAN, "core/src/model/config.cpp": '#include "trainclock/model/config.hpp"\n#include "perf/predict.cpp"\nint rule(int x) { return x; }\n'},
             1, "back-up include: core/src/model/config.cpp (model) includes perf/predict.cpp (perf)"),
        case("cycle between front ends", {**CLEAN, "tests/x.hpp": '#include "../native/y.hpp"\n', "native/y.hpp": '#include "../tests/x.hpp"\n'},
             1, "include cycle between folders: native tests"),
        case("file in no layer folder", {**CLEAN, "core/src/misc.cpp": "\n"}, 2, "core/src/misc.cpp is in no layer folder"),
        case("declaration below its definition", {**CLEAN, "core/src/model/config.cpp": '#include "trainclock/model/config.hpp"\n',
                                                  "core/src/perf/rule.cpp": "int rule(int x) { return x; }\n"},
             1, "rule is declared in core/include/trainclock/model/config.hpp (model) but defined in core/src/perf/rule.cpp (perf)"),
    ]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
