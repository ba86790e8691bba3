"""The text form of layout encodings: ``#name<field = value, ...>`` read back by :func:`parse_layout`, and the
table of encodings it knows, which :func:`register_layout` extends (the MFMA/WMMA layouts register themselves).
Importing this module makes the encodings readable in IR text too.
"""
from __future__ import annotations

import re

from .blocked_layouts import BlockedLayout, DotOperandLayout, LinearEncoding, SliceLayout
from .linear_layouts import Layout
from .mma_layouts import MmaLayout, MmaOperandLayout
from .shared_layouts import SharedLayout
from ..ir.parser import register_layout_parser


_TOKEN = re.compile(r"\s*(#\w+<|\[|\]|>|,|=|-?\d+|\w+)")


class _Reader:
    def __init__(self, text):
        self.toks = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"bad layout text at {text[pos:pos + 20]!r}")
            self.toks.append(m.group(1))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, t):
        got = self.next()
        if got != t:
            raise ValueError(f"expected {t!r} in layout, got {got!r}")

    def value(self):
        t = self.toks[self.i]
        if t.startswith("#"):
            return self.layout()
        if t == "[":  # a list of ints or of lists (a linear layout's bases)
            self.next()
            out = []
            while self.toks[self.i] != "]":
                out.append(self.value())
                if self.toks[self.i] == ",":
                    self.next()
            self.next()
            return tuple(out)
        return int(self.next())

    def layout(self):
        head = self.next()
        name = head[1:-1]
        fields = {}
        while self.toks[self.i] != ">":
            k = self.next()
            self.expect("=")
            fields[k] = self.value()
            if self.toks[self.i] == ",":
                self.next()
        self.next()
        return _build(name, fields)


_BUILDERS = {
    "blocked": lambda f: BlockedLayout(f["spt"], f["tpw"], f["wpc"], f["order"]),
    "slice": lambda f: SliceLayout(f["dim"], f["parent"]),
    "linear": lambda f: LinearEncoding(f["shape"], f["reg"], f["lane"], f["warp"]),
    "dot_op": lambda f: DotOperandLayout(f["idx"], f["parent"]),
    "shared": lambda f: SharedLayout(f["vec"], f["per_phase"], f["max_phase"], f["order"], f.get("cols", 0)),
    "mma": lambda f: MmaLayout(f["wpc"], f.get("version", 2)),
    "mma_op": lambda f: MmaOperandLayout(f["idx"], f["parent"], f.get("kw", 2)),
}


def register_layout(name: str, builder) -> None:
    """Make ``#name<...>`` readable (here and in IR text): ``builder(fields)`` builds the encoding from its
    parsed fields (a dict)."""
    _BUILDERS[name] = builder
    register_layout_parser(name, lambda body: parse_layout(f"#{name}<{body or ''}>"))


def _build(name, fields):
    b = _BUILDERS.get(name)
    if b is None:
        raise ValueError(f"unknown layout #{name}")
    try:
        return b(fields)
    except KeyError as e:
        raise ValueError(f"layout #{name} lacks field {e}") from None


def parse_layout(text: str) -> Layout:
    """Read ``#blocked<...>`` (or any registered encoding) back; raises ValueError on bad text."""
    r = _Reader(text)
    lay = r.layout()
    if r.i != len(r.toks):
        raise ValueError(f"trailing text after layout: {' '.join(r.toks[r.i:])}")
    return lay


def _register_with_parser():
    for n in _BUILDERS:
        register_layout_parser(n, lambda body, n=n: parse_layout(f"#{n}<{body or ''}>"))


_register_with_parser()
