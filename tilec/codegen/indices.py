"""Data-dependent tile indices in LLVM IR, shared by every backend: a ``gather`` index wrapped into its axis.

The gather op defines an index outside ``[0, n)`` as wrapping modulo ``n`` (``tilec/ir/ops/shape.py: GatherOp``), so
the same bits come out of the CPU, every GPU and the evaluator, and no backend ever reads outside the source
tile. Tile sizes are powers of two, where the wrap is one ``and`` of the low bits in 32-bit arithmetic.
"""
from __future__ import annotations

from . import llvm_types as LT


def wrap_index(b, k, index_type, n: int, w: int = 1):
    """``k`` (``w`` lanes of the tir integer type ``index_type``) modulo ``n``, as i32."""
    e = index_type.element
    if n & (n - 1) == 0:  # two's complement: the low bits are the remainder, negative indices included
        i32 = LT.vec(LT.I32, w)
        if e.bits > 32:
            k = b.trunc(k, i32)
        elif e.bits < 32:
            k = b.sext(k, i32) if e.is_signed else b.zext(k, i32)
        return b.and_(k, LT.const(LT.I32, n - 1, w))
    i64 = LT.vec(LT.I64, w)
    if e.bits < 64:
        k = b.sext(k, i64) if e.is_signed else b.zext(k, i64)
    if e.is_signed:
        r = b.srem(k, LT.const(LT.I64, n, w))
        k = b.select(b.icmp_signed("<", r, LT.const(LT.I64, 0, w)), b.add(r, LT.const(LT.I64, n, w)), r)
    else:
        k = b.urem(k, LT.const(LT.I64, n, w))
    return b.trunc(k, LT.vec(LT.I32, w))
