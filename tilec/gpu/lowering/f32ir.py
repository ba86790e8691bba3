"""The few LLVM IR building blocks the f32 math formulas share (``mathlib32``, ``trig32``, ``pow32``): constants,
generic intrinsics every GPU backend (and the host, for the tests) lowers, Horner's rule with fused multiply-adds,
and exact scaling by a power of two. Nothing here is vendor-specific."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _call
from .types import F32, I32

#: the smallest normal f32 as raw bits: anything below (as unsigned bits) is +0 or a positive subnormal
MIN_NORMAL_BITS = 0x00800000
LOG2E = 1.4426950408889634
LOG2E_HI = float.fromhex("0x1.715476p+0")  # log2(e) rounded to f32
LOG2E_LO = LOG2E - LOG2E_HI  # the rest, rounded to f32 where used: log2(e) to 48 bits as a pair


def c(v: float):
    return ir.Constant(F32, v)


def i32(v: int):
    return ir.Constant(I32, v)


def f(b, name: str, *args):
    """``llvm.<name>.f32(args)``: fma, fabs, rint, floor, copysign, minnum, maxnum, ..."""
    return _call(b, f"llvm.{name}.f32", F32, list(args))


def fabs(b, x):
    return f(b, "fabs", x)


def poly(b, x, coeffs):
    """coeffs[0] + coeffs[1] x + ... by Horner's rule with fused multiply-adds."""
    acc = c(coeffs[-1])
    for k in reversed(coeffs[:-1]):
        acc = f(b, "fma", acc, x, c(k))
    return acc


def pow2(b, n):
    """2.0 ** n for an i32 ``n`` in [-126, 127], built from its exponent bits (no rounding, no flush)."""
    return b.bitcast(b.shl(b.add(n, i32(127)), i32(23)), F32)


def scale(b, v, n):
    """v * 2 ** n for an i32 ``n`` in [-252, 254] in two multiplies by normal powers of two: the first is exact,
    so the second rounds once, also into the subnormal range, and 2**128 (exp near overflow) needs no
    unrepresentable factor."""
    h = b.ashr(n, i32(1))
    return b.fmul(b.fmul(v, pow2(b, h)), pow2(b, b.sub(n, h)))


def split_exponent(b, x):
    """(m, e) with x = m * 2**e and m in [sqrt(1/2), sqrt(2)) for a finite x > 0, subnormals included, using
    integer operations only: a subnormal's bits read as an integer are x * 2**149 exactly (``uitofp``), so no
    floating-point step sees a subnormal and hardware that flushes them cannot change the answer. Zero,
    negative, infinite and NaN inputs give meaningless (m, e); callers select their results."""
    bits = b.bitcast(x, I32)
    tiny = b.icmp_unsigned("<", bits, i32(MIN_NORMAL_BITS))
    bits = b.select(tiny, b.bitcast(b.uitofp(bits, F32), I32), bits)
    adj = b.sub(bits, i32(0x3F3504F3))  # the bits of sqrt(1/2): m's exponent moves by one where m would pass it
    e = b.ashr(adj, i32(23))
    m = b.bitcast(b.sub(bits, b.shl(e, i32(23))), F32)
    return m, b.sub(e, b.select(tiny, i32(149), i32(0)))
