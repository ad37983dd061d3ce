#!/usr/bin/env python3
"""Fails on any include from a lower layer to a higher one (docs/DESIGN.md 6, "Layers"), and on a
function declared in a core header but defined only in a higher layer's source (its declaration
belongs in that layer's header).

    scripts/check_layers.py [--graph]

Every C++ file of core/, host/, native/, bench/, web/, python/ and tests/ belongs to one layer of
LAYERS (first matching pattern wins); a file may include files of its own layer or lower ones.
Front ends (the last layer) include none of each other's files (tests may include what they test).
Core paths are relative to core/src or core/include/trainclock ("base/json_reader.hpp"), the rest to
the repository root. --graph prints the include graph between core modules (file stems) by layer.
Declarations are the namespace-scope function declarations of core headers (not inline, not in a
class); definitions the namespace-scope function bodies of core sources outside anonymous
namespaces. A header's declarations may be defined in its own source (same path stem: config.hpp
and config.cpp sit in two layers on purpose).
Exit 0: no back-up include or declaration; 1: each one printed; 2: a file matches no layer.
"""
import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Patterns match the paths described above.
LAYERS = [
    ("base", ["base/status.hpp", "base/indirect.hpp", "base/json_reader.*", "base/json_writer.*", "base/embedded.hpp", "base/names.*"]),
    ("model", ["model/precision.*", "model/model.*", "model/hardware.*", "model/framework.hpp", "model/stage_split.*", "model/config.hpp"]),
    ("catalogue", ["catalogue/spec_json.*", "model/spellings.hpp", "catalogue/presets.*", "catalogue/intervals.*"]),
    ("rules", ["model/config.cpp", "model/framework.cpp"]),
    ("perf", ["perf/constants.*", "perf/constant_names.hpp", "perf/calibration.*", "perf/communication.*", "perf/pipeline.*", "perf/execution.*", "perf/operators.*",
              "perf/memory.*", "perf/run.*", "perf/phases.hpp"]),
    ("prediction", ["perf/prediction.hpp", "perf/predict.cpp"]),
    ("io", ["formats/config_json.*", "formats/link.*", "formats/import*", "formats/prediction_json.*"]),
    ("drivers", ["perf/compare.*", "search/*", "validation/*"]),
    ("api", ["api/api.*"]),
    ("host", ["host/*"]),
    ("web-widgets", ["web/widgets.*", "web/platform.*", "web/imgui_*"]),
    ("front ends", ["native/*", "bench/*", "web/*", "python/*", "tests/*"]),
]

SCAN = ["core/src", "core/include/trainclock", "host", "native", "bench", "web", "python", "tests"]
SKIP = ["web/third_party", "web/build", "tests/fuzz/corpus"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CODE_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|R"\((?:.|\n)*?\)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^\s*#[^\n]*', re.S | re.M)
FUNCTION_NAME = re.compile(r'(?<![\w:])(\w+)\s*\($')
NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "static_assert", "decltype", "alignas", "TEST_CASE"}


def namespace_statements(text):
    """(statement, ender) of the code at namespace scope, outside anonymous namespaces: ender is ';'
    for a declaration, '{' for a body."""
    code = CODE_NOISE.sub(" ", text)
    stack, out, start = [], [], 0  # stack: "ns", "anon" or "body" per open brace
    for i, ch in enumerate(code):
        if ch not in ";{}":
            continue
        statement = " ".join(code[start:i].split())
        start = i + 1
        open_scope = all(kind == "ns" for kind in stack)
        if ch == "{":
            if re.match(r'^(inline\s+)?namespace(\s+[\w:]+)?$', statement) or statement == 'extern "C"':
                stack.append("anon" if re.match(r'^namespace$', statement) else "ns")
            else:
                stack.append("body")
                if open_scope:
                    out.append((statement, "{"))
        elif ch == "}":
            if stack:
                stack.pop()
        elif open_scope:
            out.append((statement, ";"))
    return out


def function_name(statement):
    """The name of the function a statement declares or defines, or None."""
    if re.match(r'^(using|typedef|template\s*<.*>\s*(struct|class)|struct|class|enum|union|friend|static|inline|constexpr)\b', statement):
        return None
    depth, head = 0, None
    for i, ch in enumerate(statement):  # the text before the first top-level '('
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth <= 0:
            head = statement[:i + 1]
            break
        elif ch == "=" and depth <= 0:
            return None  # an initialised variable
    match = FUNCTION_NAME.search(head or "")
    if not match or match.group(1) in NOT_FUNCTIONS or not re.match(r'^[\w:<>,*&\s]+\s[*&]*\w+\s*\($', head):
        return None
    return match.group(1)


def misplaced_declarations(files):
    """A function declared in a core header and defined only in sources of higher layers."""
    declared, defined = {}, {}
    for path in files:
        if not path.startswith("core/"):
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            statements = namespace_statements(f.read())
        for statement, ender in statements:
            name = function_name(statement)
            if not name:
                continue
            if ender == ";" and path.endswith(".hpp"):
                declared.setdefault(name, set()).add(path)
            elif ender == "{" and path.endswith(".cpp"):
                defined.setdefault(name, set()).add(path)
    bad = []
    for name, headers in sorted(declared.items()):
        for header in sorted(headers):
            sources = defined.get(name, set())
            stem = os.path.splitext(logical(header))[0]
            here = layer_of(logical(header))
            if not sources or any(os.path.splitext(logical(s))[0] == stem or layer_of(logical(s)) <= here for s in sources):
                continue
            where = ", ".join(f"{s} ({LAYERS[layer_of(logical(s))][0]})" for s in sorted(sources))
            bad.append(f"{name} is declared in {header} ({LAYERS[here][0]}) but defined in {where}")
    return bad


def logical(path):
    """Repository path -> the path the layer patterns match."""
    for prefix in ("core/src/", "core/include/trainclock/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def layer_of(name):
    for index, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatch(name, p) for p in patterns):
            return index
    return None


def resolve(includer, target):
    """The repository path of an include, or None for a system/third-party header."""
    candidates = [os.path.join(os.path.dirname(includer), target), os.path.join("core/include/trainclock", target[len("trainclock/"):])
                  if target.startswith("trainclock/") else None, os.path.join("core/src", target), os.path.join("host", target),
                  os.path.join("tests/core", target)]
    for c in candidates:
        if c and os.path.isfile(os.path.join(ROOT, c)):
            return os.path.normpath(c)
    return None


def main():
    files = []
    for top in SCAN:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            rel_dir = os.path.relpath(dirpath, ROOT)
            dirnames[:] = [d for d in dirnames if not any(os.path.join(rel_dir, d).startswith(s) for s in SKIP)]
            files += [os.path.join(rel_dir, f) for f in filenames if f.endswith((".cpp", ".hpp", ".h"))]
    bad, unplaced, graph = [], [], {}
    for path in sorted(files):
        here = layer_of(logical(path))
        if here is None:
            unplaced.append(path)
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in INCLUDE.findall(text):
            resolved = resolve(path, target)
            if resolved is None:
                continue
            there = layer_of(logical(resolved))
            if there is None:
                unplaced.append(resolved)
                continue
            if there > here:
                bad.append(f"{path} ({LAYERS[here][0]}) includes {target} ({LAYERS[there][0]})")
            elif there == here == len(LAYERS) - 1 and resolved.split("/")[0] != path.split("/")[0] and not path.startswith("tests/"):
                bad.append(f"{path} (front end {path.split('/')[0]}) includes {target} (front end {resolved.split('/')[0]})")
            if path.startswith("core/") and resolved.startswith("core/"):
                a = os.path.splitext(logical(path))[0]
                b = os.path.splitext(logical(resolved))[0]
                if a != b:
                    graph.setdefault((here, a), set()).add(b)
    if "--graph" in sys.argv:
        for (index, module), targets in sorted(graph.items()):
            print(f"{LAYERS[index][0]:11} {module} -> {' '.join(sorted(targets))}")
    for path in sorted(set(unplaced)):
        print(f"check_layers: {path} is in no layer (scripts/check_layers.py LAYERS)")
    for line in bad:
        print(f"check_layers: back-up include: {line}")
    declarations = misplaced_declarations(sorted(files))
    for line in declarations:
        print(f"check_layers: declaration in a lower layer: {line}")
    if unplaced:
        return 2
    return 1 if bad or declarations else 0


if __name__ == "__main__":
    sys.exit(main())
