"""Size limits that keep the code readable in one sitting: no module in ``tilec/`` over 700 lines and no function
(or method) over 80 lines, measured with ``ast`` from the ``def`` line to the last line of the body.

Exemptions are named one by one, each with its reason. Run this file as a script to print every module and
function over the limits.
"""
from __future__ import annotations

import ast
import functools
import os
import sys

from test_architecture import source_files  # the same walk over tilec/ as the layering checks

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tilec")
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80

#: paths relative to the repository root (``tilec/...``) -> why they may be longer (none today)
FILE_EXEMPT: dict = {}
#: ``path::qualified.name`` -> why it may be longer (none today)
FUNCTION_EXEMPT: dict = {}


def _functions(tree):
    """(qualified name, lines) of every function and method, nested ones included."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    out.append((name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            else:
                visit(child, prefix)
    visit(tree, "")
    return out


def oversized(paths, base: str, max_file: int = MAX_FILE_LINES, max_function: int = MAX_FUNCTION_LINES):
    """(files, functions) over the limits: ``[(path, lines)]`` and ``[(path::name, lines)]``, paths relative to
    ``base`` with ``/`` separators."""
    files, functions = [], []
    for path in paths:
        rel = os.path.relpath(path, base).replace(os.sep, "/")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        n = len(text.splitlines())
        if n > max_file:
            files.append((rel, n))
        for name, size in _functions(ast.parse(text, path)):
            if size > max_function:
                functions.append((f"{rel}::{name}", size))
    return files, functions


def _report(files, functions) -> str:
    lines = [f"  {p}: {n} lines (limit {MAX_FILE_LINES})" for p, n in files]
    lines += [f"  {f}: {n} lines (limit {MAX_FUNCTION_LINES})" for f, n in functions]
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def _tilec_oversized():
    return oversized(source_files(), os.path.dirname(ROOT))


def test_files_and_functions_are_small():
    files, functions = _tilec_oversized()
    files = [(p, n) for p, n in files if p not in FILE_EXEMPT]
    functions = [(f, n) for f, n in functions if f not in FUNCTION_EXEMPT]
    assert not files and not functions, (
        "over the size limits (split by what the code does, into named steps or modules of one purpose):\n"
        + _report(files, functions))


def test_the_check_finds_an_oversized_file_and_function(tmp_path):
    method = ["class K:", "    def f(self):"] + [f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES)]
    (tmp_path / "long_function.py").write_text("\n".join(method) + "\n")
    (tmp_path / "long_file.py").write_text("".join(f"y{i} = {i}\n" for i in range(MAX_FILE_LINES + 1)))
    (tmp_path / "small.py").write_text("def g():\n    return 1\n")
    files, functions = oversized(source_files(str(tmp_path)), str(tmp_path))
    assert files == [("long_file.py", MAX_FILE_LINES + 1)]
    assert functions == [("long_function.py::K.f", MAX_FUNCTION_LINES + 1)]
    report = _report(files, functions)
    assert f"long_file.py: {MAX_FILE_LINES + 1} lines" in report
    assert f"long_function.py::K.f: {MAX_FUNCTION_LINES + 1} lines" in report


if __name__ == "__main__":
    report = _report(*_tilec_oversized())
    print(report or "nothing over the limits")
    sys.exit(1 if report else 0)
