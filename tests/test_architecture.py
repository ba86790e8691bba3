"""The package structure: tilec's subpackages import each other without a cycle.

The graph is built from the source with ``ast``, counting module-level and function-local imports alike (a
function-local import that dodges a cycle is still a dependency). Its nodes are the units of the layering:
``tilec.ir``, ``tilec.passes``, ``tilec.language``, ``tilec.frontend``, ``tilec.runtime``, ``tilec.gpu``,
``tilec.codegen``, ``tilec.targets.<t>`` and each top-level module (``tilec.compiler``, ``tilec.pipeline``, ...;
``tilec`` itself is the package's ``__init__``). Run this file as a script to print the graph and the count of
function-local imports.
"""
from __future__ import annotations

import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tilec")
SUBPACKAGES = ("ir", "passes", "language", "frontend", "runtime", "gpu", "codegen")

# modules imported lazily on purpose: optional or heavy third-party dependencies, not tilec's own
THIRD_PARTY_OK = ("torch", "cuda", "numpy", "ml_dtypes", "llvmlite", "triton")


def module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def is_package(path: str) -> bool:
    return os.path.basename(path) == "__init__.py"


def unit_of(module: str) -> str:
    """The layering unit a tilec module belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return "tilec"
    if parts[1] in SUBPACKAGES:
        return "tilec." + parts[1]
    if parts[1] == "targets" and len(parts) > 2:
        return "tilec.targets." + parts[2]
    return "tilec." + parts[1]


def source_files():
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def _exists(module: str) -> bool:
    base = os.path.join(os.path.dirname(ROOT), *module.split("."))
    return os.path.isfile(base + ".py") or os.path.isdir(base)


def imports_of(path: str):
    """(imported tilec module, line, function-local?) for every import statement in ``path``."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    me = module_name(path)
    package = me if is_package(path) else me.rpartition(".")[0]
    out = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    out.append((alias.name, child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    out.append((sub if target.startswith("tilec") and _exists(sub) else target, child.lineno,
                                inner))
            visit(child, inner)
    visit(tree, False)
    return out


def unit_graph():
    """{unit: {imported unit: [(module, line), ...]}} over tilec's own imports."""
    graph: dict = {}
    for path in source_files():
        me = module_name(path)
        src = unit_of(me)
        graph.setdefault(src, {})
        for target, line, _local in imports_of(path):
            if target != "tilec" and not target.startswith("tilec."):
                continue
            dst = unit_of(target)
            if dst != src:
                graph[src].setdefault(dst, []).append((me, line))
                graph.setdefault(dst, {})
    return graph


def find_cycle(graph):
    """One cycle as a list of units (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {n: WHITE for n in graph}
    stack: list = []

    def dfs(n):
        color[n] = GREY
        stack.append(n)
        for m in sorted(graph[n]):
            if color[m] == GREY:
                return stack[stack.index(m):] + [m]
            if color[m] == WHITE:
                c = dfs(m)
                if c:
                    return c
        stack.pop()
        color[n] = BLACK
        return None

    for n in sorted(graph):
        if color[n] == WHITE:
            c = dfs(n)
            if c:
                return c
    return None


def describe_cycle(graph, cycle) -> str:
    lines = []
    for a, b in zip(cycle, cycle[1:]):
        where = ", ".join(f"{m}:{line}" for m, line in graph[a][b][:3])
        lines.append(f"  {a} -> {b}   ({where})")
    return "import cycle between tilec's packages:\n" + "\n".join(lines)


def local_imports(own_only: bool = True):
    """(module, line, imported) of every function-local import (of tilec's own modules when ``own_only``)."""
    out = []
    for path in source_files():
        for target, line, local in imports_of(path):
            if local and (not own_only or target == "tilec" or target.startswith("tilec.")):
                out.append((module_name(path), line, target))
    return out


# -------------------------------------------------------------------------------------------------------------------
def test_no_cycle_between_packages():
    graph = unit_graph()
    cycle = find_cycle(graph)
    assert cycle is None, describe_cycle(graph, cycle)


def test_frontend_does_not_know_the_runtime():
    """The frontend recognises @jit functions through ``tilec.language.core.is_jit_function``; it never imports
    the runtime that launches them."""
    assert "tilec.runtime" not in unit_graph()["tilec.frontend"]


# unit -> units it must not import (directly): what sits above it in the layering
ABOVE = {
    "tilec.ir": ("tilec.passes", "tilec.language", "tilec.frontend", "tilec.runtime", "tilec.compiler",
                 "tilec.pipeline", "tilec.backends", "tilec.targets.cpu", "tilec.targets.cuda"),
    "tilec.language": ("tilec.frontend", "tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.backends"),
    "tilec.passes": ("tilec.frontend", "tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.targets.cpu",
                     "tilec.targets.cuda"),
    "tilec.codegen": ("tilec.frontend", "tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.targets.cpu",
                      "tilec.targets.cuda"),
    "tilec.frontend": ("tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.backends", "tilec.targets.cpu",
                       "tilec.targets.cuda"),
    # backends are found by name through the registry; they never reach back up to it or to the launch path
    "tilec.targets.cpu": ("tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.backends", "tilec.frontend"),
    "tilec.targets.cuda": ("tilec.runtime", "tilec.compiler", "tilec.pipeline", "tilec.backends", "tilec.frontend"),
    "tilec.targets.arguments": ("tilec.targets.cpu", "tilec.targets.cuda", "tilec.runtime", "tilec.compiler"),
    "tilec.compiler": ("tilec.pipeline", "tilec.runtime"),
}


def test_lower_layers_stay_below():
    graph = unit_graph()
    for low, highs in ABOVE.items():
        for high in highs:
            assert high not in graph.get(low, {}), f"{low} imports {high}: {graph[low][high][:3]}"


def test_cycle_detector_reports_a_cycle():
    g = {"a": {"b": [("a.x", 1)]}, "b": {"c": [("b.y", 2)]}, "c": {"a": [("c.z", 3)]}, "d": {}}
    cycle = find_cycle(g)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert "a.x:1" in describe_cycle(g, cycle)
    assert find_cycle({"a": {"b": []}, "b": {}}) is None


def test_function_local_imports_are_seen():
    """The checker counts imports inside functions (those are where cycles hide)."""
    assert any(m == "tilec.backends" for m, _, _ in local_imports())


if __name__ == "__main__":
    g = unit_graph()
    for n in sorted(g):
        print(n, "->", ", ".join(sorted(g[n])))
    c = find_cycle(g)
    print(describe_cycle(g, c) if c else "no cycle")
    own = local_imports()
    print(f"function-local imports: {len(local_imports(False))} in all, {len(own)} of tilec's own modules")
    if "-v" in sys.argv:
        for m, line, t in own:
            print(f"  {m}:{line} {t}")
