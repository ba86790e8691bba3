"""Common-subexpression elimination over pure, region-free ops, with scoped tables.

An op is available in its own block after its definition and in every region nested below it, so the table
for a nested region starts as a copy-on-write child of its parent's scope and is dropped when the region ends.
Functions are isolated (fresh scope). Loads, stores and atomics are never merged: two loads of one address may
observe different memory. Commutative operands are ordered canonically so ``a + b`` meets ``b + a``.
"""
from __future__ import annotations

import math
import struct
from collections import ChainMap

from ..ir.core import Block, Operation
from ..ir.types import Type
from .base import Pass


def _attr_key(v):
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, float):
        # 0.0 and -0.0 compare equal but are different constants; distinct NaNs compare unequal but fold alike
        return ("f", "nan") if math.isnan(v) else ("f", struct.pack("<d", v))
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, (list, tuple)):
        return ("t", tuple(_attr_key(x) for x in v))
    if isinstance(v, (str, Type)) or v is None:
        return v
    if isinstance(v, dict):
        return ("d", tuple(sorted((k, _attr_key(x)) for k, x in v.items())))
    return ("r", repr(v))


def op_key(op: Operation):
    """What makes two pure ops interchangeable: name, operands, result types and attributes."""
    ids = [id(v) for v in op.operands]
    if op.is_commutative:
        ids.sort()
    attrs = tuple(sorted((k, _attr_key(v)) for k, v in op.attrs.items()))
    return (op.name, tuple(ids), tuple(r.type for r in op.results), attrs)


def _eligible(op: Operation) -> bool:
    return op.is_pure and not op.regions and bool(op.results)


class CSE(Pass):
    name = "cse"

    def run(self, module):
        self.changed = False
        for op in module.body.ops:
            for r in op.regions:
                for b in r.blocks:
                    self._block(b, ChainMap())
        return self.changed

    def _block(self, block: Block, table: ChainMap):
        for op in list(block.ops):
            if _eligible(op):
                k = op_key(op)
                prev = table.get(k)
                if prev is not None:
                    op.replace_with(prev.results)
                    self.changed = True
                    continue
                table[k] = op
            for r in op.regions:
                for b in r.blocks:
                    self._block(b, ChainMap() if "isolated" in op.traits else table.new_child())
