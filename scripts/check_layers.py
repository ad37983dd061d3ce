#!/usr/bin/env python3
"""Fails on any include from a lower layer to a higher one (docs/DESIGN.md 6.1, "Layers"), on a cycle
in the include graph between folders, and on a function declared in a core header but defined only
in a higher layer's source (its declaration belongs in that layer's header).

    scripts/check_layers.py [--graph] [--root DIR]

A folder is a layer: a core file's layer is its folder under core/src or core/include/trainclock
(base/, model/, catalogue/, perf/, formats/, search/, validation/, api/), any other file's the
deepest folder of FOLDERS that holds it (web/toolkit/ below web/). A file may include files of its
own layer or lower ones; the front ends (the last rank) include none of each other's files (tests
may include what they test). --graph prints the include graph between folders, then between core
modules (file stems) by layer; --root checks another tree (scripts/test_check_layers.py). Declarations are the namespace-scope function declarations of core
headers (not inline, not in a class); definitions the namespace-scope function bodies of core
sources outside anonymous namespaces.
Exit 0: no back-up include, cycle or misplaced declaration; 1: each one printed; 2: a file in no layer.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first; one rank may hold several folders. Core folders name core/src/<folder> and
# core/include/trainclock/<folder>, the rest are paths from the repository root.
CORE_FOLDERS = ["base", "model", "catalogue", "perf", "formats", "search", "validation", "api"]
FOLDERS = [[f] for f in CORE_FOLDERS] + [["host"], ["web/toolkit"], ["native", "bench", "web", "python", "tests"]]
FRONT_ENDS = len(FOLDERS) - 1

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
            here = layer_of(header)
            if not sources or any(layer_of(s) <= here for s in sources):
                continue
            where = ", ".join(f"{s} ({folder_of(s)})" for s in sorted(sources))
            bad.append(f"{name} is declared in {header} ({folder_of(header)}) but defined in {where}")
    return bad


def logical(path):
    """Repository path -> the path its layer is read from (core files: relative to src/ or include/trainclock/)."""
    for prefix in ("core/src/", "core/include/trainclock/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def folder_of(path):
    """The layer folder of a repository path, or None."""
    name = logical(path)
    if name != path:
        top = name.split("/")[0]
        return top if top in CORE_FOLDERS and "/" in name else None
    candidates = [f for rank in FOLDERS[len(CORE_FOLDERS):] for f in rank if name.startswith(f + "/")]
    return max(candidates, key=len) if candidates else None


def layer_of(path):
    folder = folder_of(path)
    return next((i for i, rank in enumerate(FOLDERS) if folder in rank), None) if folder else None


def layer_of_folder(folder):
    return next(i for i, rank in enumerate(FOLDERS) if folder in rank)


def layer_name(index):
    return "/".join(FOLDERS[index])


def cycles(edges):
    """The strongly connected components of more than one node of a directed graph {node: {node}}."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


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
    global ROOT
    if "--root" in sys.argv:
        ROOT = sys.argv[sys.argv.index("--root") + 1]
    files = []
    for top in SCAN:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            rel_dir = os.path.relpath(dirpath, ROOT)
            dirnames[:] = [d for d in dirnames if not any(os.path.join(rel_dir, d).startswith(s) for s in SKIP)]
            files += [os.path.join(rel_dir, f) for f in filenames if f.endswith((".cpp", ".hpp", ".h"))]
    bad, unplaced, modules, folders = [], [], {}, {}
    for path in sorted(files):
        here = layer_of(path)
        if here is None:
            unplaced.append(path)
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in INCLUDE.findall(text):
            resolved = resolve(path, target)
            if resolved is None:
                continue
            there = layer_of(resolved)
            if there is None:
                unplaced.append(resolved)
                continue
            if there > here:
                bad.append(f"{path} ({folder_of(path)}) includes {target} ({folder_of(resolved)})")
            elif there == here == FRONT_ENDS and folder_of(resolved) != folder_of(path) and not path.startswith("tests/"):
                bad.append(f"{path} (front end {folder_of(path)}) includes {target} (front end {folder_of(resolved)})")
            if folder_of(resolved) != folder_of(path):
                folders.setdefault(folder_of(path), set()).add(folder_of(resolved))
            if path.startswith("core/") and resolved.startswith("core/"):
                a = os.path.splitext(logical(path))[0]
                b = os.path.splitext(logical(resolved))[0]
                if a != b:
                    modules.setdefault((here, a), set()).add(b)
    if "--graph" in sys.argv:
        for folder in sorted(folders, key=lambda f: (layer_of_folder(f), f)):
            print(f"{folder + '/':13} -> {' '.join(f + '/' for f in sorted(folders[folder], key=lambda f: (layer_of_folder(f), f)))}")
        print()
        for (index, module), targets in sorted(modules.items()):
            print(f"{layer_name(index):11} {module} -> {' '.join(sorted(targets))}")
    for path in sorted(set(unplaced)):
        print(f"check_layers: {path} is in no layer folder (scripts/check_layers.py FOLDERS)")
    for line in bad:
        print(f"check_layers: back-up include: {line}")
    loops = cycles(folders)
    for loop in loops:
        print(f"check_layers: include cycle between folders: {' '.join(loop)}")
    declarations = misplaced_declarations(sorted(files))
    for line in declarations:
        print(f"check_layers: declaration in a lower layer: {line}")
    if unplaced:
        return 2
    return 1 if bad or loops or declarations else 0


if __name__ == "__main__":
    sys.exit(main())
