"""``tl.fma`` of floats narrower than f32 (f16, bf16, fp8) rounded once, for lowerings that compute them in f32.

An f32 fma of such values rounds twice, to f32 and then to the format, and the first rounding can land exactly on
a midpoint of the format that the exact result is not on: bf16 ``(1 + 2**-4) * (1 + 2**-4) + 2**-100`` is just
above the midpoint 1 + 2**-3 + 2**-8, the f32 fma drops the 2**-100 and the tie then goes down to even (1.125, where
one rounding gives 1.1328125); f16 has such cases too. Rounding the first step *to odd* instead makes the second
rounding the only one (Boldo and Melquiond, "Emulation of FMA and correctly-rounded sums", IEEE TC 2008), given
two more bits than the format: f32 has 24 against bf16's 8 and f16's 11.

The exact ``a * b + c`` is kept as an f64 pair: the product of two values of at most 11 significant bits within
f32's exponent range is exact in f64, and the sum's rounding error is recovered exactly (Knuth's two-sum).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import types as T
from . import llvm_types as LT
from .casts import cast


def fma_f32_odd(b: ir.IRBuilder, x, y, z, w: int = 1):
    """f32 operands holding values of a format with at most 11 significant bits -> the f32 rounding to odd of
    ``x * y + z``: round it to the format (to nearest) and the result is the correctly rounded fma."""
    f64 = LT.vec(LT.F64, w)
    i32 = LT.vec(LT.I32, w)
    one = LT.const(LT.I32, 1, w)
    zero = LT.const(LT.F64, 0.0, w)
    x, y, z = (b.fpext(v, f64) for v in (x, y, z))
    p = b.fmul(x, y)  # exact
    s = b.fadd(p, z)
    bb = b.fsub(s, p)
    e = b.fadd(b.fsub(p, b.fsub(s, bb)), b.fsub(z, bb))  # s + e == p + z exactly (NaN when s is not finite)
    t = cast(b, s, T.f64, T.f32, "rtz", w)  # finite past f32's range: the largest f32, which rounds on to inf
    bits = b.bitcast(t, i32)
    # s between two f32 values: so is the exact sum, and the odd one of the two is t | 1 (t is the one toward 0)
    between = b.fcmp_ordered("!=", b.fpext(t, f64), s)
    odd_between = b.or_(bits, one)
    # s an f32 value and the sum not exactly s: the neighbour toward e when t is even (one step up in magnitude
    # when e has s's sign, down otherwise; s is not 0 here, a sum that rounds to 0 being exact)
    off = b.and_(b.fcmp_ordered("!=", e, zero), b.icmp_unsigned("==", b.and_(bits, one), LT.const(LT.I32, 0, w)))
    away = b.icmp_unsigned("==", b.fcmp_ordered("<", e, zero), b.fcmp_ordered("<", s, zero))
    stepped = b.select(away, b.add(bits, one), b.sub(bits, one))
    out = b.select(between, odd_between, b.select(off, stepped, bits))
    return b.bitcast(out, LT.vec(LT.F32, w))
