"""The package structure: tilec's modules import each other without a loop, and its layers stay in order.

Dependencies are read from the source with ``ast``, two ways:

- import statements, at module level or inside a function (a function-local import that dodges a loop is still
  a dependency);
- string imports: a string literal in code (not a docstring) that names a tilec module, ``"tilec.gpu.dialect"``
  or ``"tilec.cache.redis_backend:RedisBackend"`` (optionally after ``-m``), counts as an import of that module.
  Such strings are what ``importlib.import_module``, ``__import__``, ``python -m`` and the registries that load
  modules by name (backends, remote caches, the Triton compatibility table) are given, so a lower layer cannot
  reach a higher one by naming it. A name built at run time (an f-string, ``__name__ + ".x"``) is not seen: the
  registration points take whole literals so that it is.

Two graphs are built from them. The *file graph* has one node per module (``tilec`` is the package's
``__init__``) and every dependency as an edge: it must have no loop, except for the deferred imports listed in
``DEFERRED_LOOPS``. The *unit graph* merges modules into the units of the layering (``tilec.ir``,
``tilec.passes``, ``tilec.language``, ``tilec.frontend``, ``tilec.runtime``, ``tilec.gpu``, ``tilec.codegen``,
``tilec.targets.<t>``, each module of ``tilec.tools`` and each other top-level module or package): it must have
no loop either (the deferred imports aside), and ``ABOVE`` says which units a unit must not depend on at all.

A function-local import of a tilec module carries its reason as a ``#`` comment on the import's line or the line
above (a backend loaded only when used, a loop it breaks and why that loop cannot go). Target-independent
packages name no vendor in code (``test_no_backend_names_in_target_independent_code``).

Run this file as a script to print the unit graph and the function-local imports (``-v``: each of them).
"""
from __future__ import annotations

import ast
import functools
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tilec")
SUBPACKAGES = ("ir", "passes", "language", "frontend", "runtime", "gpu", "codegen")


def module_name(path: str, root: str = ROOT) -> str:
    rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
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
    if parts[1] == "tools":  # each tool an application of its own (the HTML recorder is not the viewer's CLI)
        return module
    return "tilec." + parts[1]


def source_files(root: str = ROOT):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(d, f)


def _exists(module: str, root: str = ROOT) -> bool:
    base = os.path.join(os.path.dirname(root), *module.split("."))
    return os.path.isfile(base + ".py") or os.path.isdir(base)


@functools.lru_cache(maxsize=None)
def _parse(path: str):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return ast.parse(text, path), text.splitlines()


def docstring_nodes(tree) -> set:
    """ids of the docstring constants of ``tree`` (module, classes, functions)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


# "tilec.a.b", "tilec.a.b:Attr", "-m tilec.a.b" (a bare "tilec" is a name: a folder, a producer)
_MODULE_STRING = re.compile(r"^(?:-m\s+)?(tilec(?:\.[A-Za-z_]\w*)+)(?::[\w.]+)?$")


def imports_of(path: str, root: str = ROOT):
    """(imported tilec-or-other module, line, function-local?, by string?) for every dependency of ``path``."""
    tree, _ = _parse(path)
    me = module_name(path, root)
    package = me if is_package(path) else me.rpartition(".")[0]
    docs = docstring_nodes(tree)
    out = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    out.append((alias.name, child.lineno, inner, False))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    out.append((sub if target.startswith("tilec") and _exists(sub, root) else target, child.lineno,
                                inner, False))
            elif isinstance(child, ast.Constant) and isinstance(child.value, str) and id(child) not in docs:
                m = _MODULE_STRING.match(child.value.strip())
                if m and _exists(m.group(1), root):
                    out.append((m.group(1), child.lineno, inner, True))
            visit(child, inner)
    visit(tree, False)
    return out


def _own(target: str) -> bool:
    return target == "tilec" or target.startswith("tilec.")


# -- the file graph ---------------------------------------------------------------------------------------------
# Loops that remain only through a deferred (function-local) import, each with the reason it cannot go:
# {(importing module, imported module): reason}. The import itself carries the same reason as a comment.
DEFERRED_LOOPS = {
    ("tilec.tools.aot.spec", "tilec.compat"):
        "a kernel file is imported with Triton's names installed (compat), and compat offers the ahead-of-time "
        "tools under Triton's names (triton.tools.compile, .link), by name only",
}


def file_graph(root: str = ROOT, deferred: dict | None = None):
    """{module: {imported module: [line, ...]}} over tilec's own modules, every kind of dependency counted,
    except the ``deferred`` edges (default ``DEFERRED_LOOPS``)."""
    deferred = DEFERRED_LOOPS if deferred is None else deferred
    graph: dict = {}
    for path in source_files(root):
        me = module_name(path, root)
        graph.setdefault(me, {})
        for target, line, _local, _string in imports_of(path, root):
            if not _own(target) or target == me or (me, target) in deferred:
                continue
            graph[me].setdefault(target, []).append(line)
            graph.setdefault(target, {})
    return graph


# -- the unit graph ---------------------------------------------------------------------------------------------
def unit_graph(root: str = ROOT, deferred: dict | None = None):
    """{unit: {imported unit: [(module, line), ...]}} over tilec's own imports, every kind counted, except the
    ``deferred`` edges (default ``DEFERRED_LOOPS``)."""
    deferred = DEFERRED_LOOPS if deferred is None else deferred
    graph: dict = {}
    for path in source_files(root):
        me = module_name(path, root)
        src = unit_of(me)
        graph.setdefault(src, {})
        for target, line, _local, _string in imports_of(path, root):
            if not _own(target) or (me, target) in deferred:
                continue
            dst = unit_of(target)
            if dst != src:
                graph[src].setdefault(dst, []).append((me, line))
                graph.setdefault(dst, {})
    return graph


def find_cycle(graph):
    """One cycle as a list of nodes (first == last), or None."""
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

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for n in sorted(graph):
        if color[n] == WHITE:
            c = dfs(n)
            if c:
                return c
    return None


def describe_cycle(graph, cycle) -> str:
    lines = []
    for a, b in zip(cycle, cycle[1:]):
        where = ", ".join(str(w) if not isinstance(w, tuple) else f"{w[0]}:{w[1]}" for w in graph[a][b][:3])
        lines.append(f"  {a} -> {b}   ({where})")
    return "import loop:\n" + "\n".join(lines)


def local_imports(own_only: bool = True, root: str = ROOT):
    """(module, line, imported) of every function-local import statement (of tilec's own modules when
    ``own_only``), one per statement."""
    out = {}
    for path in source_files(root):
        for target, line, local, string in imports_of(path, root):
            if local and not string and (not own_only or _own(target)):
                out.setdefault((module_name(path, root), line), target)
    return [(m, line, t) for (m, line), t in out.items()]


def _path_of(module: str, root: str = ROOT) -> str:
    base = os.path.join(os.path.dirname(root), *module.split("."))
    return base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")


_NOQA = re.compile(r"noqa(?::\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?")


def has_reason(lines: list, line: int) -> bool:
    """Whether the statement starting at ``line`` (1-based) has a ``#`` comment of a few words on its line or
    as the line above (a bare ``noqa`` is no reason)."""
    candidates = [lines[line - 1].partition("#")[2] if "#" in lines[line - 1] else ""]
    if line >= 2 and lines[line - 2].lstrip().startswith("#"):
        candidates.append(lines[line - 2].lstrip()[1:])
    return any(len(re.findall(r"[A-Za-z]{2,}", _NOQA.sub("", c))) >= 3 for c in candidates)


# -- backend names ----------------------------------------------------------------------------------------------
TARGET_INDEPENDENT = ("tilec.ir", "tilec.passes", "tilec.language", "tilec.frontend", "tilec.gpu",
                      "tilec.codegen", "tilec.runtime")
VENDOR_WORDS = ("cuda", "hip", "nvptx", "amdgcn")

# {(module, the identifier or string that names a vendor): reason}
VENDOR_EXEMPT = {
    ("tilec.language.extra", "cuda"): "Triton's module name (tl.extra.cuda); the module is NVIDIA's spelling of "
                                      "tl.extra.libdevice, its PTX-only calls fail on other backends as any "
                                      "unsupported inline assembly does",
    ("tilec.language.reinterpret", "__cuda_array_interface__"): "the array-interchange protocol of numba, cupy "
                                                                "and torch, read to find an array's address",
    ("tilec.runtime.args", "is_cuda"): "a torch tensor's attribute, part of the tensor's cache key as in Triton",
    ("tilec.runtime.autotuner", "use_cuda_graph"): "a parameter of Triton's autotune, accepted for compatibility",
    ("tilec.runtime.autotuner", "enable_fp_fusion_hip"): "a compile option of another Triton backend, dropped "
                                                         "from configs (FOREIGN_OPTIONS)",
    ("tilec.passes.cli", "compile target whose facts the passes use, e.g. cuda:90 (arch, warp size)"):
        "help text: an example of the --target syntax",
}


def _words(text: str) -> set:
    return {w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", text)}


def vendor_mentions(path: str, root: str = ROOT):
    """(line, text) for each identifier or non-docstring string in ``path`` that has a vendor's name as a word
    (``is_cuda``, ``HIPBackend``, ``"cuda"``; not ``chip`` or ``ship``)."""
    tree, _ = _parse(path)
    docs = docstring_nodes(tree)
    out = []
    for n in ast.walk(tree):
        texts = []
        if isinstance(n, ast.Name):
            texts = [n.id]
        elif isinstance(n, ast.Attribute):
            texts = [n.attr]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [n.name]
        elif isinstance(n, ast.arg):
            texts = [n.arg]
        elif isinstance(n, ast.keyword) and n.arg:
            texts = [n.arg]
        elif isinstance(n, ast.alias):
            texts = [n.name, n.asname or ""]
        elif isinstance(n, ast.ImportFrom) and n.module:
            texts = [n.module]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            texts = [n.value]
        for t in texts:
            if _words(t) & set(VENDOR_WORDS):
                out.append((getattr(n, "lineno", 0), t))
    return out


# -------------------------------------------------------------------------------------------------------------------
def test_no_import_loop_between_files():
    graph = file_graph()
    cycle = find_cycle(graph)
    assert cycle is None, describe_cycle(graph, cycle)


def test_deferred_loops_are_still_loops():
    """Each listed deferred import exists and still closes a loop (else it belongs at module level)."""
    full = file_graph(deferred={})
    for (a, b), reason in DEFERRED_LOOPS.items():
        assert b in full.get(a, {}), f"{a} no longer imports {b}: drop it from DEFERRED_LOOPS"
        assert reason
        seen, todo = set(), [b]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(m for m in full.get(n, {}) if (n, m) != (a, b))
        assert a in seen, f"{a} -> {b} closes no loop any more: import it at module level"


def test_no_cycle_between_packages():
    graph = unit_graph()
    cycle = find_cycle(graph)
    assert cycle is None, describe_cycle(graph, cycle)


def test_frontend_does_not_know_the_runtime():
    """The frontend recognises @jit functions through ``tilec.language.core.is_jit_function``; it never imports
    the runtime that launches them."""
    assert "tilec.runtime" not in unit_graph()["tilec.frontend"]


_TARGETS = ("tilec.targets.cpu", "tilec.targets.cuda", "tilec.targets.hip")
_TOP = ("tilec", "tilec.compiler", "tilec.pipeline", "tilec.backends", "tilec.compat", "tilec.testing",
        "tilec.torch", "tilec.tools")
# unit -> units it must not depend on, by statement or by string: what sits above it in the layering (a name
# stands for itself and every unit under it: "tilec.tools" for each tool)
ABOVE = {
    "tilec.ir": ("tilec.passes", "tilec.language", "tilec.frontend", "tilec.runtime", "tilec.gpu", "tilec.codegen",
                 "tilec.cache") + _TARGETS + _TOP,
    "tilec.passes": ("tilec.language", "tilec.frontend", "tilec.runtime", "tilec.gpu", "tilec.cache")
                    + _TARGETS + _TOP,
    "tilec.language": ("tilec.frontend", "tilec.runtime", "tilec.gpu", "tilec.cache") + _TARGETS + _TOP,
    "tilec.codegen": ("tilec.frontend", "tilec.runtime", "tilec.gpu", "tilec.cache") + _TARGETS + _TOP,
    "tilec.frontend": ("tilec.runtime", "tilec.gpu", "tilec.cache") + _TARGETS + _TOP,
    "tilec.gpu": ("tilec.frontend", "tilec.runtime", "tilec.cache") + _TARGETS + _TOP,
    # backends are found by name through the registry; they never reach back up to it or to the launch path
    "tilec.targets.cpu": ("tilec.runtime", "tilec.frontend", "tilec.targets.cuda", "tilec.targets.hip") + _TOP,
    "tilec.targets.cuda": ("tilec.runtime", "tilec.frontend", "tilec.targets.cpu", "tilec.targets.hip") + _TOP,
    "tilec.targets.hip": ("tilec.runtime", "tilec.frontend", "tilec.targets.cpu", "tilec.targets.cuda") + _TOP,
    "tilec.targets.arguments": _TARGETS + ("tilec.runtime", "tilec.compiler"),
    "tilec.runtime": _TARGETS,
    "tilec.compiler": ("tilec.pipeline", "tilec.runtime"),
    "tilec.pipeline": _TARGETS,
}


def test_lower_layers_stay_below():
    graph = unit_graph()
    for low, highs in ABOVE.items():
        for high in highs:
            for unit, where in graph.get(low, {}).items():
                below = high != "tilec" and unit.startswith(high + ".")
                assert not (unit == high or below), f"{low} imports {unit}: {where[:3]}"


def test_function_local_imports_say_why():
    """A function-local import of a tilec module is a loop it breaks or a module loaded only when used; the
    comment says which, so that the next reader can tell whether it may move to the top."""
    missing = []
    for module, line, target in local_imports():
        _, lines = _parse(_path_of(module))
        if not has_reason(lines, line):
            missing.append(f"{module}:{line} imports {target}")
    assert not missing, "function-local imports without a reason comment:\n  " + "\n  ".join(missing)


def test_no_backend_names_in_target_independent_code():
    """The target-independent packages name no vendor (``cuda``, ``hip``, ``nvptx``, ``amdgcn`` as a word) in
    code: identifiers, imported names and string constants. What differs between vendors is asked of the target
    (``GpuTarget``, the backend object or its registry entry), so a new vendor is a new ``targets/<v>`` package and
    a registration, never a branch here. Docstrings and comments may name vendors (they explain, with examples);
    so may the exemptions below, names that belong to an outside API."""
    found = []
    for path in source_files():
        module = module_name(path)
        if unit_of(module) not in TARGET_INDEPENDENT:
            continue
        for line, text in vendor_mentions(path):
            if (module, text) not in VENDOR_EXEMPT:
                found.append(f"{module}:{line} {text!r}")
    assert not found, "vendor names in target-independent code:\n  " + "\n  ".join(found)


def test_vendor_exemptions_are_used():
    used = set()
    for path in source_files():
        module = module_name(path)
        used.update((module, text) for _, text in vendor_mentions(path))
    assert not set(VENDOR_EXEMPT) - used, f"stale exemptions: {set(VENDOR_EXEMPT) - used}"


# -- the checker itself ------------------------------------------------------------------------------------------
def test_cycle_detector_reports_a_cycle():
    g = {"a": {"b": [("a.x", 1)]}, "b": {"c": [("b.y", 2)]}, "c": {"a": [("c.z", 3)]}, "d": {}}
    cycle = find_cycle(g)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    assert "a.x:1" in describe_cycle(g, cycle)
    assert find_cycle({"a": {"b": []}, "b": {}}) is None


def _write(root, files: dict):
    for name, text in files.items():
        path = os.path.join(root, *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def test_a_loop_between_files_is_found(tmp_path):
    """A loop through a module-level import, a function-local one and a string import, in a small package."""
    root = str(tmp_path / "tilec")
    _write(root, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    # (a test)\n    from .c import g\n    return g\n",
        "c.py": '"""Docstrings naming tilec.a are no import."""\nimport importlib\n\n\n'
                'def g():\n    return importlib.import_module("tilec.a")\n',
        "d.py": '"""tilec.a"""\nBACKENDS = {"x": "tilec.c:g"}\nCMD = ["-m tilec.b"]\n',
    })
    graph = file_graph(root, deferred={})
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"tilec.a", "tilec.b", "tilec.c"}, cycle
    assert set(graph["tilec.d"]) == {"tilec.c", "tilec.b"}  # a registry's and a command line's module strings
    assert "tilec.a" not in graph["tilec"]                      # docstrings are no import
    assert find_cycle(file_graph(root, deferred={("tilec.c", "tilec.a"): "test"})) is None
    assert [(m, t) for m, _, t in local_imports(root=root)] == [("tilec.b", "tilec.c")]


def test_function_local_imports_are_seen():
    """The checker counts imports inside functions (those are where loops hide)."""
    assert any(m == "tilec.backends" for m, _, _ in local_imports())


def test_reason_comments():
    lines = ["def f():", "    # loaded only when used: llvmlite", "    from . import x", "    from . import y",
             "    from . import z  # noqa: F401", "    from . import w  # noqa: F401 (registers the passes)"]
    assert has_reason(lines, 3) and not has_reason(lines, 4) and not has_reason(lines, 5) and has_reason(lines, 6)


def test_vendor_words():
    assert _words("HIPBackend") >= {"hip"} and "cuda" in _words("is_cuda") and "cuda" in _words("cuda:90")
    assert not _words("chip_ship relationship") & set(VENDOR_WORDS)


if __name__ == "__main__":
    g = unit_graph()
    for n in sorted(g):
        print(n, "->", ", ".join(sorted(g[n])))
    c = find_cycle(g)
    print(describe_cycle(g, c) if c else "no loop between units")
    f = file_graph()
    c = find_cycle(f)
    print(describe_cycle(f, c) if c else "no loop between files")
    own = local_imports()
    print(f"function-local import statements: {len(local_imports(False))} in all, {len(own)} of tilec's own modules")
    if "-v" in sys.argv:
        for m, line, t in own:
            print(f"  {m}:{line} {t}")
