"""The error corpus: malformed kernels and launches, each refused in the interpreter and compiled for the CPU alike
— the same exception class, a message saying what is wrong, and (for kernel errors) file:line:col of the offending
line with the source line and a caret under the offending code.

The cases are tables in ``error_cases_*.py`` (see ``error_corpus.Case`` for the columns)."""
import pytest

from tilec import CompilationError

import error_cases_launch
import error_cases_shapes
import error_cases_syntax
import error_cases_types
from error_corpus import MODES, run

CASES = (error_cases_syntax.CASES + error_cases_types.CASES + error_cases_shapes.CASES + error_cases_launch.CASES)


def test_the_corpus_is_large_and_names_are_unique():
    names = [c.name for c in CASES]
    assert len(names) >= 100
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


def _check(case, mode):
    err, path = run(case, mode)
    assert err is not None, f"{mode}: ran without an error"
    assert isinstance(err, case.error), f"{mode}: {type(err).__name__}: {err}"
    text = str(err)
    assert case.message.lower() in text.lower(), f"{mode}: {text}"
    assert "Traceback" not in text and "internal error" not in text, f"{mode}: {text}"
    if not case.located:
        return err, None
    assert isinstance(err, CompilationError), f"{mode}: {type(err).__name__} has no location: {err}"
    assert err.file == path and err.line == case.line, f"{mode}: at {err.file}:{err.line}, expected line {case.line}"
    lines = text.splitlines()
    marked = case.text.splitlines()[case.line - 1]
    assert lines[0].startswith(f"{path}:{case.line}:{err.col}: "), f"{mode}: {lines[0]}"
    assert len(lines) == 3 and lines[1].strip() == marked.strip() and lines[2].strip() == "^", f"{mode}: {text}"
    assert lines[2].index("^") - lines[1].index(marked.strip()) == err.col - 1 - (len(marked) - len(marked.lstrip()))
    if case.caret is not None:
        assert err.col == marked.index(case.caret) + 1, f"{mode}: caret at column {err.col}: {text}"
    return err, err.col


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refused_alike(case, request):
    if case.xfail:  # still run: a fix shows up as XPASS
        request.node.add_marker(pytest.mark.xfail(reason=case.xfail, strict=False))
    results = [_check(case, mode) for mode in MODES]
    (e1, col1), (e2, col2) = results
    assert type(e1) is type(e2), f"interp raised {type(e1).__name__}, cpu {type(e2).__name__}"
    assert col1 == col2, f"caret at column {col1} in the interpreter, {col2} compiled"
