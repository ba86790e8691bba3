"""Reads the textual form that ``printer.py`` writes (its docstring is the grammar) back into ops.

A hand-written recursive-descent reader over the raw text rather than a token stream: the grammar is
line-sensitive in one place (an op's operands, attributes, result types, regions and location all sit on the
op's first line, so ``barrier`` followed by ``%x = ...`` on the next line are two ops) and contextual in others
(``tile<4x8xf32>``), which a cursor with small regexes handles directly.

Errors are :class:`IRParseError` (an :class:`IRError`) reading ``file:line:col: expected ..., got ...`` followed by
the offending line and a caret.

Layout encodings in tile types (``tile<16x16xf32, #blocked<...>>``) are parsed by functions registered with
:func:`register_layout_parser`; the IR core knows nothing about them. A dialect that adds ops and layouts (the
GPU IR) registers its module with :func:`register_dialect`, and the parser imports it the first time it meets an
op or layout name it does not know: the core IR never names the layers above it.
"""
from __future__ import annotations

import importlib
import json
import re
from typing import Callable

from .core import Block, IRError, Location, OP_REGISTRY, Operation, Region, Value
from .ops import FuncOp, ModuleOp
from .types import SCALAR_NAMES, FunctionType, PointerType, ScalarType, SharedBufferType, TileType, Type


class IRParseError(IRError):
    """Text that is not valid tir; ``line``/``col`` are 1-based."""

    def __init__(self, message, file, line, col, source_line):
        self.message, self.file, self.line, self.col = message, file, line, col
        caret = " " * max(0, col - 1) + "^"
        super().__init__(f"{file}:{line}:{col}: {message}\n    {source_line}\n    {caret}")


# name -> fn(body_text) -> layout object, where body_text is what sits between the balanced '<' '>' after
# '#name' (None when there is no '<'). The layout's str() must print back as '#name<body_text>'.
LAYOUT_PARSERS: dict[str, Callable[[str | None], object]] = {}


def register_layout_parser(name: str, fn: Callable[[str | None], object]):
    LAYOUT_PARSERS[name] = fn


# modules that register further ops and layouts when imported, not imported yet
_DIALECTS: list[str] = []


def register_dialect(module: str) -> None:
    """Have the parser import ``module`` (which registers its ops and layouts) when it first meets a name it
    does not know."""
    if module not in _DIALECTS:
        _DIALECTS.append(module)


def _load_dialects() -> bool:
    """Import the registered dialects not imported yet; whether there were any."""
    loaded = bool(_DIALECTS)
    while _DIALECTS:
        importlib.import_module(_DIALECTS[0])
        _DIALECTS.pop(0)
    return loaded


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_VALUE = re.compile(r"%([A-Za-z0-9_]+)")
_INT = re.compile(r"[-+]?\d+")
_NUMBER = re.compile(r"[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)(?![A-Za-z0-9_])")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LOC = re.compile(r'loc\("(.*?)":(\d+):(\d+)\)')
_DIM = re.compile(r"(\d+)x")
_TRUE = re.compile(r"true(?![A-Za-z0-9_])")
_FALSE = re.compile(r"false(?![A-Za-z0-9_])")
_ATTR_START = re.compile(r"\{[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*=")
_TOKEN = re.compile(r"\S+")
_SCALARS = frozenset(SCALAR_NAMES)


class _Parser:
    def __init__(self, text: str, file: str):
        self.text, self.file, self.pos = text, file, 0
        self.scopes: list[dict[str, Value]] = []

    # -- cursor ------------------------------------------------------------------------------------------
    def error(self, msg, pos=None):
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        src = self.text[start:end if end >= 0 else len(self.text)]
        return IRParseError(msg, self.file, line, pos - start + 1, src)

    def ws(self):
        """Skip blanks, newlines and '//' comments."""
        t, n = self.text, len(self.text)
        while self.pos < n:
            c = t[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif t.startswith("//", self.pos):
                e = t.find("\n", self.pos)
                self.pos = n if e < 0 else e
            else:
                break

    def inline_ws(self):
        """Skip blanks on the current line only."""
        t, n = self.text, len(self.text)
        while self.pos < n and t[self.pos] in " \t":
            self.pos += 1

    def at_eol(self) -> bool:
        self.inline_ws()
        return self.pos >= len(self.text) or self.text[self.pos] in "\r\n" or self.text.startswith("//", self.pos)

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def got(self) -> str:
        if self.pos >= len(self.text):
            return "end of input"
        m = _TOKEN.match(self.text, self.pos)
        tok = m.group(0) if m else repr(self.text[self.pos])
        return f"'{tok[:20]}'"

    def expect(self, s: str, what: str | None = None):
        if not self.accept(s):
            raise self.error(f"expected {what or repr(s)}, got {self.got()}")

    def delimited(self, close: str, item, what: str, skip=None) -> list:
        """``item()`` values separated by ',' up to ``close`` (perhaps none), with blanks skipped by ``skip``
        (``ws``: newlines too; ``inline_ws``) around each; ``what`` names the list in errors. Type lists, list
        attributes and argument lists are all read this way."""
        skip = skip or self.ws
        out = []
        skip()
        if self.accept(close):
            return out
        while True:
            skip()
            out.append(item())
            skip()
            if self.accept(close):
                return out
            self.expect(",", f"',' or '{close}' in {what}")

    def match(self, rx: re.Pattern):
        m = rx.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def ident(self, what="a name") -> str:
        m = self.match(_IDENT)
        if not m:
            raise self.error(f"expected {what}, got {self.got()}")
        return m.group(0)

    def integer(self, what="an integer") -> int:
        m = self.match(_INT)
        if not m:
            raise self.error(f"expected {what}, got {self.got()}")
        return int(m.group(0))

    # -- types -------------------------------------------------------------------------------------------
    def type(self) -> Type:
        start = self.pos
        if self.accept("("):
            ins = self.type_list(")")
            self.inline_ws()
            self.expect("->", "'->' in a function type")
            self.inline_ws()
            self.expect("(", "'(' before function results")
            return FunctionType(ins, self.type_list(")"))
        m = self.match(_IDENT)
        if not m:
            raise self.error(f"expected a type, got {self.got()}")
        name = m.group(0)
        if name in _SCALARS:
            return ScalarType(name)
        if name == "ptr":
            self.expect("<", "'<' after 'ptr'")
            pointee = self.type()
            space = 1
            self.inline_ws()
            if self.accept(","):
                self.inline_ws()
                space = self.integer("an address space")
            self.expect(">", "'>' closing a pointer type")
            return PointerType(pointee, space)
        if name in ("tile", "smem"):
            self.expect("<", f"'<' after '{name}'")
            dims = []
            while True:
                d = self.match(_DIM)
                if not d:
                    break
                dims.append(int(d.group(1)))
            elem = self.type()
            if elem.is_tile or isinstance(elem, FunctionType):
                raise self.error(f"tile element must be a scalar or pointer, got {elem}", start)
            layout = None
            self.inline_ws()
            if self.accept(","):
                self.inline_ws()
                layout = self.layout()
            self.expect(">", f"'>' closing a {name} type")
            if name == "smem":
                if len(dims) < 2:
                    raise self.error("a shared buffer type needs a stage dimension and a tile shape", start)
                return SharedBufferType(dims, elem, layout)
            return TileType(dims, elem, layout)
        raise self.error(f"expected a type, got unknown type '{name}'", start)

    def type_list(self, close: str) -> list:
        return self.delimited(close, self.type, "a type list", self.inline_ws)

    def layout(self):
        start = self.pos
        self.expect("#", "a layout ('#name<...>')")
        name = self.ident("a layout name")
        body = None
        if self.peek("<"):
            depth, i = 0, self.pos
            while i < len(self.text):
                c = self.text[i]
                depth += c == "<"
                depth -= c == ">"
                if depth == 0:
                    break
                i += 1
            else:
                raise self.error("unbalanced '<' in a layout", start)
            body = self.text[self.pos + 1:i]
            self.pos = i + 1
        fn = LAYOUT_PARSERS.get(name)
        if fn is None and _load_dialects():
            fn = LAYOUT_PARSERS.get(name)
        if fn is None:
            raise self.error(f"unknown layout '#{name}' (known: {', '.join(sorted(LAYOUT_PARSERS)) or 'none'})", start)
        try:
            return fn(body)
        except IRParseError:
            raise
        except Exception as e:  # a layout parser's own complaint, placed at the layout
            raise self.error(f"bad layout '#{name}': {e}", start) from None

    # -- attributes --------------------------------------------------------------------------------------
    def attr_value(self):
        self.inline_ws()
        if self.accept("["):
            return tuple(self.delimited("]", self.attr_value, "a list attribute"))
        if self.accept("!"):
            return self.type()
        if self.peek('"'):
            m = self.match(_STRING)
            if not m:
                raise self.error("unterminated string")
            return json.loads(m.group(0))
        m = self.match(_NUMBER)
        if m:
            s = m.group(0)
            if any(c in s for c in ".eEn"):
                return float(s)
            return int(s)
        if self.match(_TRUE):
            return True
        if self.match(_FALSE):
            return False
        raise self.error(f"expected an attribute value (number, true/false, string, !type or [...]), "
                         f"got {self.got()}")

    def at_attr_dict(self) -> bool:
        """'{' NAME '=' starts attributes; any other '{' on an op's line opens a region."""
        return _ATTR_START.match(self.text, self.pos) is not None

    def attr_dict(self) -> dict:
        self.expect("{")
        attrs = {}
        while True:
            self.ws()
            start = self.pos
            k = self.ident("an attribute name")
            if k in attrs:
                raise self.error(f"duplicate attribute '{k}'", start)
            self.ws()
            self.expect("=", f"'=' after attribute name '{k}'")
            attrs[k] = self.attr_value()
            self.ws()
            if self.accept("}"):
                return attrs
            self.expect(",", "',' or '}' in an attribute dictionary")

    def loc(self):
        self.inline_ws()
        if not self.peek("loc("):
            return None
        m = self.match(_LOC)
        if not m:
            raise self.error('expected a location loc("file":line:col)')
        return Location(m.group(1), int(m.group(2)), int(m.group(3)))

    # -- values ------------------------------------------------------------------------------------------
    def lookup(self, name: str, pos) -> Value:
        for s in reversed(self.scopes):
            v = s.get(name)
            if v is not None:
                return v
        raise self.error(f"use of undefined value '%{name}'", pos)

    def define(self, name: str, v: Value, pos):
        for s in reversed(self.scopes):
            if name in s:
                raise self.error(f"redefinition of value '%{name}'", pos)
        self.scopes[-1][name] = v

    @staticmethod
    def hint(name: str):
        return None if name[0].isdigit() else name

    def arg_list(self, close=")"):
        """'%name: type' pairs up to ``close``; returns [(name, type, pos)]."""
        def arg():
            pos = self.pos
            m = self.match(_VALUE)
            if not m:
                raise self.error(f"expected an argument '%name: type', got {self.got()}")
            self.inline_ws()
            self.expect(":", f"':' and a type after '%{m.group(1)}'")
            self.inline_ws()
            return m.group(1), self.type(), pos
        return self.delimited(close, arg, "an argument list")

    # -- ops ---------------------------------------------------------------------------------------------
    def region(self, block_args=None) -> Region:
        """'{' [^bb(args):] op* '}'; ``block_args`` (a function's parameters) replace the header."""
        self.expect("{", "'{' opening a region")
        self.scopes.append({})
        try:
            self.ws()
            if block_args is None:
                block_args = []
                if self.accept("^bb"):
                    self.expect("(", "'(' after '^bb'")
                    block_args = self.arg_list()
                    self.inline_ws()
                    self.expect(":", "':' after a block header")
            block = Block([t for _, t, _ in block_args], [self.hint(n) for n, _, _ in block_args])
            for (n, _, pos), a in zip(block_args, block.args):
                self.define(n, a, pos)
            while True:
                self.ws()
                if self.accept("}"):
                    break
                if self.pos >= len(self.text):
                    raise self.error("expected '}' closing a region, got end of input")
                block.append(self.op())
        finally:
            self.scopes.pop()
        return Region([block])

    def op(self) -> Operation:
        self.ws()
        start = self.pos
        results = []
        if self.peek("%"):
            while True:
                pos = self.pos
                m = self.match(_VALUE)
                if not m:
                    raise self.error(f"expected a result name '%name', got {self.got()}")
                results.append((m.group(1), pos))
                self.inline_ws()
                if not self.accept(","):
                    break
                self.inline_ws()
            self.expect("=", "'=' after result names")
            self.inline_ws()
        name_pos = self.pos
        name = self.ident("an op name")
        if name == "func":
            if results:
                raise self.error("'func' has no results", start)
            return self.func(start)
        if name == "module":
            if results:
                raise self.error("'module' has no results", start)
            return self.module_op()
        cls = OP_REGISTRY.get(name)
        if cls is None and _load_dialects():
            cls = OP_REGISTRY.get(name)
        if cls is None:
            raise self.error(f"unknown op '{name}'", name_pos)
        operands = []
        if not self.at_eol() and self.peek("%"):
            while True:
                pos = self.pos
                m = self.match(_VALUE)
                if not m:
                    raise self.error(f"expected an operand '%name', got {self.got()}")
                operands.append(self.lookup(m.group(1), pos))
                self.inline_ws()
                if not self.accept(","):
                    break
                self.inline_ws()
        attrs = {}
        if not self.at_eol() and self.peek("{") and (cls.num_regions == 0 or self.at_attr_dict()):
            attrs = self.attr_dict()
        types = []
        if not self.at_eol() and self.accept(":"):
            while True:
                self.inline_ws()
                types.append(self.type())
                self.inline_ws()
                if not self.accept(","):
                    break
        if len(types) != len(results):
            raise self.error(f"'{name}' has {len(results)} result name(s) but {len(types)} result type(s)", start)
        regions = []
        while not self.at_eol() and self.peek("{"):
            regions.append(self.region())
            self.inline_ws()
        if regions or cls.num_regions:
            if len(regions) != cls.num_regions:
                raise self.error(f"'{name}' expects {cls.num_regions} region(s), got {len(regions)}", name_pos)
        loc = self.loc()
        if not self.at_eol() and not self.peek("}"):
            raise self.error(f"expected the end of the '{name}' op, got {self.got()}")
        try:
            op = cls(operands, types, attrs, regions or None, loc, [self.hint(n) for n, _ in results])
        except IRError as e:
            raise self.error(str(e), start) from None
        for (n, pos), r in zip(results, op.results):
            self.define(n, r, pos)
        return op

    def func(self, start) -> FuncOp:
        self.inline_ws()
        self.expect("@", "'@' and a function name")
        sym = self.ident("a function name")
        self.expect("(", "'(' opening the parameter list")
        outer, self.scopes = self.scopes, []
        try:
            self.scopes.append({})
            params = self.arg_list()
            results = []
            self.inline_ws()
            if self.accept("->"):
                self.inline_ws()
                self.expect("(", "'(' before function results")
                results = self.type_list(")")
            attrs = {}
            self.inline_ws()
            if self.at_attr_dict():
                attrs = self.attr_dict()
            self.inline_ws()
            body = self.region(params)
        finally:
            self.scopes = outer
        loc = self.loc()
        attrs = {"sym_name": sym, "function_type": FunctionType([t for _, t, _ in params], results), **attrs}
        return FuncOp([], [], attrs, [body], loc)

    def module_op(self) -> ModuleOp:
        self.inline_ws()
        attrs = self.attr_dict() if self.at_attr_dict() else {}
        self.inline_ws()
        outer, self.scopes = self.scopes, []
        try:
            body = self.region([])
        finally:
            self.scopes = outer
        loc = self.loc()
        return ModuleOp([], [], attrs, [body], loc)

    def end(self):
        self.ws()
        if self.pos < len(self.text):
            raise self.error(f"expected end of input, got {self.got()}")


def parse_module(text: str, file: str = "<string>") -> ModuleOp:
    """Parse a module; text holding only functions is wrapped in a module."""
    p = _Parser(text, file)
    p.ws()
    if p.peek("module"):
        m = p.op()
        p.end()
        return m
    body = Block()
    p.scopes.append({})
    while True:
        p.ws()
        if p.pos >= len(p.text):
            break
        body.append(p.op())
    return ModuleOp([], [], {}, [Region([body])])


def parse_op(text: str, file: str = "<string>") -> Operation:
    """Parse one top-level op (a func or a module)."""
    p = _Parser(text, file)
    p.scopes.append({})
    op = p.op()
    p.end()
    return op


def parse_type(text: str) -> Type:
    """Parse a type from its text (for layout parsers and tools)."""
    p = _Parser(text, "<type>")
    t = p.type()
    p.end()
    return t
