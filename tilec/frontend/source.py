"""A kernel's source text, its parsed AST, and mapping AST positions to file:line:col for locations and errors."""
from __future__ import annotations

import ast
import inspect
import linecache
import textwrap

from ..errors import CompilationError
from ..ir.core import Location


class Source:
    """``fn``'s source: ``text`` (dedented), ``tree`` (its FunctionDef), ``file``, and line/column offsets."""

    def __init__(self, fn):
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise CompilationError(f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {e}") from None
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
