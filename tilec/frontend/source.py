"""A kernel's source text, its parsed AST, and mapping AST positions to file:line:col for locations and errors."""
from __future__ import annotations

import ast
import copy
import inspect
import linecache
import textwrap

from ..errors import CompilationError
from ..ir.core import Location
from ..language.core import signature_name


class Source:
    """``fn``'s source: ``text`` (dedented), ``tree`` (its FunctionDef), ``file``, and line/column offsets."""

    def __init__(self, fn, text: str | None = None, start_line: int | None = None):
        if text is None:
            try:
                lines, start = inspect.getsourcelines(fn)
            except (OSError, TypeError) as e:
                raise CompilationError(f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {e}") \
                    from None
        else:
            lines, start = text.splitlines(True), start_line or 1
        raw = "".join(lines)
        self.text = textwrap.dedent(raw)
        first = next((ln for ln in lines if ln.strip()), "")
        first_dedented = next((ln for ln in self.text.splitlines(True) if ln.strip()), "")
        self.col_offset = len(first) - len(first_dedented)
        self.file = inspect.getsourcefile(fn) or getattr(fn.__code__, "co_filename", "<unknown>")
        self.start_line = max(start, 1)
        self.lines = lines
        module = ast.parse(self.text)
        defs = [n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            raise CompilationError(f"no function definition found in the source of {fn.__qualname__}")
        self.tree: ast.FunctionDef = defs[0]

    def position(self, node) -> tuple[int, int]:
        line = getattr(node, "lineno", 1) + self.start_line - 1
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        return line, col

    def loc(self, node) -> Location:
        line, col = self.position(node)
        return Location(self.file, line, col)

    def source_line(self, line: int) -> str | None:
        i = line - self.start_line
        if 0 <= i < len(self.lines):
            return self.lines[i]
        return linecache.getline(self.file, line) or None

    def error(self, node, message: str) -> CompilationError:
        line, col = self.position(node)
        return CompilationError(message, self.file, line, col, self.source_line(line))


def replace_source(jitfn, text: str):
    """Give ``jitfn`` new source text (Triton's ``JITFunction._unsafe_update_src``, which test suites use to patch
    a kernel template). Its compiled variants are dropped; the function keeps its globals and closure for names, and
    the interpreter runs a function built from the new text in those globals."""
    old = jitfn.source
    src = Source(jitfn.fn, text, old.start_line)
    src.file = old.file
    fn = jitfn.fn
    fdef = copy.deepcopy(src.tree)
    fdef.decorator_list = []
    tree = ast.increment_lineno(ast.Module(body=[fdef], type_ignores=[]), src.start_line - 1)
    try:
        ns: dict = {}
        exec(compile(tree, src.file, "exec"), fn.__globals__, ns)
        new_fn = ns[fdef.name]
    except Exception:  # the compiled path only needs the text; keep the old function for the interpreter
        new_fn = None
    if new_fn is not None and not (fn.__code__.co_freevars or new_fn.__code__.co_freevars):
        new_fn.__qualname__ = fn.__qualname__
        jitfn.fn = jitfn.__wrapped__ = new_fn
    jitfn._source = src
    jitfn._cache_key = None
    jitfn.cache.clear()
    jitfn._fast_cache.clear()


class Specialization:
    """What ``@jit(repr=...)`` sees of a variant: ``signature`` (runtime parameter -> type string, ``"i32"``,
    ``"*fp32"``) and ``constants`` (constexpr and equal-to-1 parameters -> value)."""

    def __init__(self, signature: dict, constants: dict):
        self.signature, self.constants = signature, constants


def kernel_name(jitfn, runtime, constexprs) -> str:
    """The compiled kernel's name: the function's, or what its ``repr`` callback makes of the specialisation."""
    make = getattr(jitfn, "repr", None)
    if make is None:
        return jitfn.__name__
    signature = {n: signature_name(t) for n, t, _, _ in runtime}
    constants = dict(constexprs)
    constants.update({n: 1 for n, _, _, eq1 in runtime if eq1})
    return str(make(Specialization(signature, constants)))
