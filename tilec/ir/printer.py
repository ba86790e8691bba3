"""Textual form of tir. ``parser.py`` reads it back exactly: print(parse(print(m))) == print(m).

Grammar (one op per line, nested regions indented by two spaces)::

    module        := 'module' [attrs] '{' func* '}'
    func          := 'func' '@'NAME '(' [arg (',' arg)*] ')' ['->' '(' types ')'] [attrs] '{' op* '}' [loc]
    op            := [results '='] NAME [operand (',' operand)*] [attrs] [':' type (',' type)*] region* [loc]
    region        := '{' [block_header] op* '}'          (one block per region)
    block_header  := '^bb' '(' [arg (',' arg)*] ')' ':'
    arg           := '%'NAME ':' type
    attrs         := '{' NAME '=' attr (',' NAME '=' attr)* '}'   (attributes equal to the op's default omitted)
    attr          := INT | FLOAT | 'true' | 'false' | STRING | '!'type | '[' [attr (',' attr)*] ']'
    loc           := 'loc(' STRING ':' INT ':' INT ')'
    type          := i1|i8|..|u64|f16|bf16|f32|f64|f8e4m3|f8e5m2 | 'ptr<' type [',' INT] '>'
                   | 'tile<' (INT 'x')+ type [',' layout] '>'

Value names come from the frontend's variable names where known (``%offs``), made unique per function, else
numbers. Floats print with ``repr`` so they parse back bit-exactly (``inf``, ``-inf``, ``nan`` included).
"""
from __future__ import annotations

import json
import math
import os
import re

from .core import Block, Operation, Value, show_ir_with
from .ops import FuncOp, ModuleOp
from .types import Type

_NAME_OK = re.compile(r"[^A-Za-z0-9_]")


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        r = repr(v)
        return r if any(c in r for c in ".en") else r + ".0"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, Type):
        return f"!{v}"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    raise TypeError(f"cannot print attribute value {v!r}")


class Printer:
    def __init__(self, locations: bool = False):
        self.locations = locations
        self.lines: list[str] = []
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.counter = 0

    # -- names -------------------------------------------------------------------------------------------
    def name(self, v: Value) -> str:
        n = self.names.get(v)
        if n is None:
            return "%<<UNKNOWN>>"
        return "%" + n

    def define(self, v: Value) -> str:
        hint = _NAME_OK.sub("_", v.name_hint) if v.name_hint else None
        if hint and not hint[0].isdigit():
            n, k = hint, 0
            while n in self.used:
                k += 1
                n = f"{hint}_{k}"
        else:
            while str(self.counter) in self.used:
                self.counter += 1
            n = str(self.counter)
            self.counter += 1
        self.used.add(n)
        self.names[v] = n
        return "%" + n

    # -- emit --------------------------------------------------------------------------------------------
    def loc(self, op) -> str:
        return f" {op.loc}" if self.locations and op.loc is not None else ""

    def attrs(self, op, skip=()) -> str:
        items = [(k, v) for k, v in op.attrs.items()
                 if k not in skip and not (k in op.attr_defaults and op.attr_defaults[k] == v
                                           and type(op.attr_defaults[k]) is type(v))]
        if not items:
            return ""
        return " {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in items) + "}"

    def module(self, m: ModuleOp, indent=0):
        self.lines.append(" " * indent + f"module{self.attrs(m)} {{")
        for op in m.body.ops:
            self.op(op, indent + 2)
        self.lines.append(" " * indent + "}")

    def func(self, f: FuncOp, indent):
        self.names, self.used, self.counter = {}, set(), 0
        args = ", ".join(f"{self.define(a)}: {a.type}" for a in f.args)
        res = f.function_type.results
        rs = f" -> ({', '.join(map(str, res))})" if res else ""
        head = f"func @{f.sym_name}({args}){rs}{self.attrs(f, ('sym_name', 'function_type'))} {{"
        self.lines.append(" " * indent + head)
        for op in f.body.ops:
            self.op(op, indent + 2)
        self.lines.append(" " * indent + "}" + self.loc(f))

    def op(self, op: Operation, indent=0):
        if isinstance(op, ModuleOp):
            return self.module(op, indent)
        if isinstance(op, FuncOp):
            return self.func(op, indent)
        pad = " " * indent
        operands = ", ".join(self.name(o) for o in op.operands)
        results = ", ".join(self.define(r) for r in op.results)
        s = pad + (f"{results} = " if results else "") + op.name
        if operands:
            s += " " + operands
        s += self.attrs(op)
        if op.results:
            s += " : " + ", ".join(str(r.type) for r in op.results)
        if not op.regions:
            self.lines.append(s + self.loc(op))
            return
        for i, r in enumerate(op.regions):
            s += " {"
            self.lines.append(s)
            self.block(r.blocks[0] if r.blocks else Block(), indent)
            s = pad + "}"
        self.lines.append(s + self.loc(op))

    def block(self, b: Block, indent):
        if b.args:
            args = ", ".join(f"{self.define(a)}: {a.type}" for a in b.args)
            self.lines.append(" " * indent + f"^bb({args}):")
        for op in b.ops:
            self.op(op, indent + 2)


def print_ir(op: Operation, locations: bool | None = None) -> str:
    """Text of a module, function or single op; with ``locations`` (default: ``TILEC_DUMP_IR_LOC=1``) each op
    ends in its ``loc("file":line:col)``, which the parser reads back."""
    if locations is None:
        locations = os.environ.get("TILEC_DUMP_IR_LOC", "") not in ("", "0")
    p = Printer(locations)
    p.op(op)
    return "\n".join(p.lines) + "\n"


show_ir_with(print_ir)  # how modules and functions show themselves (``Operation.__repr__``)
