"""Lane shuffles of any scalar of the GPU register model through a vendor's 32-bit shuffle.

GPUs exchange registers between lanes 32 bits at a time, so a vendor supplies only that 32-bit shuffle and every
other type travels through it the same way: f32 as its bits, narrower integers and f16 zero-extended to 32 bits,
64-bit values (i64, f64, pointers) as two 32-bit halves.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .types import F16, F32, F64, I16, I32, I64


def widened(b, v, shuffle32):
    """``shuffle32(x)`` (an i32 -> i32 lane shuffle) applied to ``v`` of any scalar type: the value another lane
    holds, in ``v``'s type."""
    t = v.type
    if t == I32:
        return shuffle32(v)
    if t == F32:
        return b.bitcast(shuffle32(b.bitcast(v, I32)), F32)
    if t in (I64, F64) or isinstance(t, ir.PointerType):
        x = v if t == I64 else (b.ptrtoint(v, I64) if isinstance(t, ir.PointerType) else b.bitcast(v, I64))
        lo = shuffle32(b.trunc(x, I32))
        hi = shuffle32(b.trunc(b.lshr(x, ir.Constant(I64, 32)), I32))
        r = b.or_(b.zext(lo, I64), b.shl(b.zext(hi, I64), ir.Constant(I64, 32)))
        if t == I64:
            return r
        return b.inttoptr(r, t) if isinstance(t, ir.PointerType) else b.bitcast(r, t)
    if t == F16:
        return b.bitcast(b.trunc(shuffle32(b.zext(b.bitcast(v, I16), I32)), I16), F16)
    if isinstance(t, ir.IntType) and t.width < 32:
        return b.trunc(shuffle32(b.zext(v, I32)), t)
    raise TypeError(f"cannot shuffle {t}")
