"""fp8 codes <-> f32 values in LLVM IR, scalar (``w == 1``) or ``w``-wide vectors: the one encoding every backend
uses, so the CPU's i8-code registers and the GPU's f32 registers convert alike (and like the evaluator,
``tilec/ir/numerics.py``). e4m3 is NVIDIA's "fn" variant (no infinities, S.1111.111 the only NaN, saturating);
e5m2 is IEEE-like, but casts saturate as e4m3's do (Triton's casts on sm_89+). Integer operations only, plus one exact scaling for subnormals, so no target needs an fp8
instruction.
"""
from __future__ import annotations

from . import llvm_types as LT
from .intrinsics import call as icall


def _format(e):
    """(exponent bits, mantissa bits, bias, has infinities)."""
    return (4, 3, 7, False) if e.name == "f8e4m3" else (5, 2, 15, True)


def decode(b, v, e, w=1):
    """fp8 codes -> exact f32 values."""
    eb, mb, bias, has_inf = _format(e)
    i32, f32 = LT.vec(LT.I32, w), LT.vec(LT.F32, w)
    c = lambda x: LT.const(LT.I32, x, w)  # noqa: E731
    code = b.zext(v, i32)
    sign = b.shl(b.and_(code, c(0x80)), c(24))
    ef = b.and_(b.lshr(code, c(mb)), c((1 << eb) - 1))
    mf = b.and_(code, c((1 << mb) - 1))
    normal = b.or_(b.shl(b.add(ef, c(127 - bias)), c(23)), b.shl(mf, c(23 - mb)))
    sub = b.fmul(b.uitofp(mf, f32), LT.const(LT.F32, 2.0 ** (1 - bias - mb), w))
    mag = b.select(b.icmp_unsigned("==", ef, c(0)), b.bitcast(sub, i32), normal)
    top = b.icmp_unsigned("==", ef, c((1 << eb) - 1))
    if has_inf:
        special = b.select(b.icmp_unsigned("==", mf, c(0)), c(0x7F800000), c(0x7FC00000))
        mag = b.select(top, special, mag)
    else:
        mag = b.select(b.and_(top, b.icmp_unsigned("==", mf, c((1 << mb) - 1))), c(0x7FC00000), mag)
    return b.bitcast(b.or_(mag, sign), f32)


def encode(b, v, e, rounding="rtne", w=1):
    """f32 -> fp8 codes, to nearest even (or toward zero), saturating (infinities too) at the largest finite value,
    +-448 (e4m3) or +-57344 (e5m2), as ``cvt.rn.satfinite`` does; NaN -> 0x7F."""
    eb, mb, bias, has_inf = _format(e)
    i32, f32 = LT.vec(LT.I32, w), LT.vec(LT.F32, w)
    c = lambda x: LT.const(LT.I32, x, w)  # noqa: E731
    bits = b.bitcast(v, i32)
    sign = b.and_(b.lshr(bits, c(24)), c(0x80))
    mag = b.and_(bits, c(0x7FFFFFFF))
    a = b.bitcast(mag, f32)
    drop = 23 - mb
    if rounding == "rtz":
        r = b.lshr(mag, c(drop))
    else:
        r = b.lshr(b.add(mag, b.add(c((1 << (drop - 1)) - 1), b.and_(b.lshr(mag, c(drop)), c(1)))), c(drop))
    normal = b.sub(r, c((127 - bias) << mb))
    scaled = b.fmul(a, LT.const(LT.F32, 2.0 ** (bias - 1 + mb), w))
    rounded = icall(b, "llvm.trunc" if rounding == "rtz" else "llvm.roundeven", f32, [scaled], (f32,))
    sub = b.fptoui(rounded, i32)
    small = b.fcmp_ordered("<", a, LT.const(LT.F32, 2.0 ** (1 - bias), w))
    code = b.select(small, sub, normal)
    top_code = ((1 << eb) - 1) << mb  # e5m2: infinity; e4m3: 448 is top_code | 6
    limit = c(top_code - 1 if has_inf else top_code | ((1 << mb) - 2))  # the largest finite code: saturate
    code = b.select(b.icmp_signed(">", code, limit), limit, code)
    code = b.or_(code, sign)
    nan = b.fcmp_unordered("uno", v, v)
    code = b.select(nan, c(0x7F), code)
    return b.trunc(code, LT.vec(LT.I8, w))
