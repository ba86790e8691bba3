"""Value conversions (``cast``), bit reinterpretation (``bitcast``) and pointer arithmetic (``addptr``).

Casts to ``i1`` test for non-zero (like Python's ``bool``); int -> int extends by the *source's* signedness;
float -> int truncates and saturates (NaN -> 0); float -> narrower float rounds to nearest even, or toward
zero for ``rounding = "rtz"`` (fixed up from the nearest-even result by stepping one ulp toward zero when it
overshot).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import types as T
from . import fp8, llvm_types as LT
from .intrinsics import call as icall


def cast(b: ir.IRBuilder, v, src: T.Type, dst: T.Type, rounding: str = "rtne", w: int = 1):
    s, d = src.element, dst.element
    sty, dty = LT.vec(LT.scalar_type(s), w), LT.vec(LT.scalar_type(d), w)
    if s == d:
        return v
    if isinstance(s, T.PointerType) or isinstance(d, T.PointerType):
        if isinstance(s, T.PointerType) and isinstance(d, T.PointerType):
            return v
        if isinstance(s, T.PointerType):
            if d == T.i1:
                return b.icmp_unsigned("!=", b.ptrtoint(v, LT.vec(LT.I64, w)), LT.const(LT.I64, 0, w))
            return b.ptrtoint(v, dty)
        return b.inttoptr(b.sext(v, LT.vec(LT.I64, w)) if s.bits < 64 else v, dty)
    if d == T.i1:
        if s.is_float:
            x = widen_to_f32(b, v, s, w) if s.name in LT.CODES else v  # codes compare as their values
            return b.fcmp_unordered("!=", x, LT.const(LT.F32 if s.name in LT.CODES else LT.scalar_type(s), 0.0, w))
        return b.icmp_unsigned("!=", v, LT.const(LT.scalar_type(s), 0, w))
    if s.is_int and d.is_int:
        if s.bits == d.bits:
            return v
        if s.bits > d.bits:
            return b.trunc(v, dty)
        return b.sext(v, dty) if s.is_signed else b.zext(v, dty)
    if s.is_int and d.is_float:
        if d.name in LT.FP8:
            f = b.sitofp(v, LT.vec(LT.F64, w)) if s.is_signed else b.uitofp(v, LT.vec(LT.F64, w))
            return _fp8_cast(b, f, T.f64, d, rounding, w)
        if d.name in LT.CODES:  # bf16: one rounding from the exact f64 value
            f = b.sitofp(v, LT.vec(LT.F64, w)) if s.is_signed else b.uitofp(v, LT.vec(LT.F64, w))
            return cast(b, f, T.f64, dst, rounding, w)
        r = b.sitofp(v, dty) if s.is_signed else b.uitofp(v, dty)
        if d == T.f16 and s.bits >= 16 and not (s.is_signed and s.bits == 16):
            r = _f16_overflow(b, v, s, r, w)
        return r
    if s.is_float and d.is_int:
        x = widen_to_f32(b, v, s, w) if s.bits <= 16 else v
        name = "llvm.fptosi.sat" if d.is_signed else "llvm.fptoui.sat"
        return icall(b, name, dty, [x], (dty, x.type))
    # float -> float
    if s.name in LT.FP8 or d.name in LT.FP8:
        return _fp8_cast(b, v, s, d, rounding, w)
    if s.bits == 16 and d.bits == 16:  # f16 <-> bf16 through f32
        v = widen_to_f32(b, v, s, w)
        s, sty = T.f32, LT.vec(LT.F32, w)
    if d.bits > s.bits:
        if s == T.bf16:
            v = widen_to_f32(b, v, s, w)
            return v if d == T.f32 else b.fpext(v, dty)
        return b.fpext(v, dty)
    if s.bits == 64 and d.bits == 16:
        # LLVM lowers f64 -> 16-bit floats to a compiler-rt call the JIT cannot resolve: go through f32, rounding
        # that first step to odd so the second rounding is exact (f32 keeps far more than the 2 extra bits needed)
        v = _to_f32_odd(b, v, w) if rounding != "rtz" else cast(b, v, T.f64, T.f32, "rtz", w)
        s, sty = T.f32, LT.vec(LT.F32, w)
    if d == T.bf16:
        return narrow_from_f32(b, v, d, w) if rounding != "rtz" else _f32_to_bf16_rtz(b, v, w)
    r = b.fptrunc(v, dty)
    if rounding != "rtz":
        return r
    back = b.fpext(r, sty)
    fabs = lambda x: icall(b, "llvm.fabs", x.type, [x], (x.type,))  # noqa: E731
    over = b.fcmp_ordered(">", fabs(back), fabs(v))
    finite = b.fcmp_ordered("<", fabs(v), LT.const(LT.scalar_type(s), float("inf"), w))
    ity = LT.vec(ir.IntType(d.bits), w)
    stepped = b.bitcast(b.sub(b.bitcast(r, ity), LT.const(ir.IntType(d.bits), 1, w)), dty)
    return b.select(b.and_(over, finite), stepped, r)


_F16_OVERFLOW = 65520  # the least integer that rounds to infinity in f16 (halfway between 65504 and 65536)


def _f16_overflow(b, v, s, r, w):
    """Integers past f16's range are infinities, explicitly. LLVM (22) folds ``fpext(uitofp x to half)`` to
    ``uitofp x to float`` when ``x``'s known significant bits fit half's mantissa, losing the overflow to infinity
    (``(x << 59).to(tl.float16) * 0.0`` gave 0, not NaN); with the overflow selected here, the folded path is
    only taken for values where it is exact."""
    ity = LT.scalar_type(s)
    inf = LT.const(LT.F16, float("inf"), w)
    if not s.is_signed:
        return b.select(b.icmp_unsigned(">=", v, LT.const(ity, _F16_OVERFLOW, w)), inf, r)
    r = b.select(b.icmp_signed(">=", v, LT.const(ity, _F16_OVERFLOW, w)), inf, r)
    return b.select(b.icmp_signed("<=", v, LT.const(ity, -_F16_OVERFLOW, w)), LT.const(LT.F16, float("-inf"), w), r)


def _to_f32_odd(b, v, w):
    """f64 -> f32 rounded to odd: truncate, then set the last bit when the truncation was inexact."""
    z = cast(b, v, T.f64, T.f32, "rtz", w)
    inexact = b.fcmp_ordered("!=", b.fpext(z, v.type), v)
    i32 = LT.vec(LT.I32, w)
    odd = b.bitcast(b.or_(b.bitcast(z, i32), LT.const(LT.I32, 1, w)), z.type)
    return b.select(inexact, odd, z)


def widen_to_f32(b, v, t: T.Type, w: int = 1):
    """A 16-bit float or fp8 code as f32 (exact). bf16 is widened with integer ops: it is f32's upper half, and
    LLVM's own bf16 conversions flush subnormals on some hosts."""
    if t.element.name in LT.FP8:
        return fp8.decode(b, v, t.element, w)
    if t.element == T.bf16:
        i16, i32 = LT.vec(ir.IntType(16), w), LT.vec(LT.I32, w)
        bits = b.zext(v if v.type == i16 else b.bitcast(v, i16), i32)
        return b.bitcast(b.shl(bits, LT.const(LT.I32, 16, w)), LT.vec(LT.F32, w))
    return b.fpext(v, LT.vec(LT.F32, w))


def narrow_from_f32(b, v, t: T.Type, w: int = 1):
    """f32 -> f16/bf16/fp8 rounding to nearest even; bf16 with integer ops (subnormals kept, NaN stays quiet)."""
    if t.element.name in LT.FP8:
        return fp8.encode(b, v, t.element, "rtne", w)
    if t.element != T.bf16:
        return b.fptrunc(v, LT.vec(LT.scalar_type(t.element), w))
    i32 = LT.vec(LT.I32, w)
    c = lambda x: LT.const(LT.I32, x, w)  # noqa: E731
    bits = b.bitcast(v, i32)
    hi = b.lshr(bits, c(16))
    rounded = b.lshr(b.add(bits, b.add(c(0x7FFF), b.and_(hi, c(1)))), c(16))
    out = b.select(b.fcmp_unordered("uno", v, v), b.or_(hi, c(0x40)), rounded)
    return b.trunc(out, LT.vec(ir.IntType(16), w))


def _f32_to_bf16_rtz(b, v, w):
    """Toward zero is truncation of the low half (a NaN stays a quiet NaN)."""
    c = lambda x: LT.const(LT.I32, x, w)  # noqa: E731
    hi = b.lshr(b.bitcast(v, LT.vec(LT.I32, w)), c(16))
    hi = b.select(b.fcmp_unordered("uno", v, v), b.or_(hi, c(0x40)), hi)
    return b.trunc(hi, LT.vec(ir.IntType(16), w))


def _fp8_cast(b, v, s, d, rounding, w):
    """Casts into or out of fp8 go through f32 (exact from fp8; f64 sources round to odd first)."""
    if s.name in LT.FP8:
        x = fp8.decode(b, v, s, w)
        if d.name in LT.FP8:
            return fp8.encode(b, x, d, rounding, w)
        if d == T.f32:
            return x
        if d.bits > 32:
            return b.fpext(x, LT.vec(LT.scalar_type(d), w))
        return narrow_from_f32(b, x, d, w) if rounding != "rtz" else cast(b, x, T.f32, d, rounding, w)
    if s == T.f64:
        v = _to_f32_odd(b, v, w) if rounding != "rtz" else cast(b, v, T.f64, T.f32, "rtz", w)
    elif s.bits == 16:
        v = widen_to_f32(b, v, s, w)
    return fp8.encode(b, v, d, rounding, w)


def bitcast(b, v, src: T.Type, dst: T.Type, w: int = 1):
    s, d = src.element, dst.element
    dty = LT.vec(LT.scalar_type(d), w)
    if isinstance(s, T.PointerType) and not isinstance(d, T.PointerType):
        return b.ptrtoint(v, dty)
    if isinstance(d, T.PointerType) and not isinstance(s, T.PointerType):
        return b.inttoptr(v, dty)
    if s == T.i1 or d == T.i1 or LT.scalar_type(s) == LT.scalar_type(d):
        return v
    return b.bitcast(v, dty)


def addptr(b, p, off, ptr_type: T.Type, off_type: T.Type, w: int = 1):
    """``p + off`` elements; ``p`` may be a scalar pointer with vector offsets (giving a vector of pointers)."""
    o = off_type.element
    ity = LT.vec(LT.I64, LT.width_of(off.type))
    if o.bits < 64:
        off = b.sext(off, ity) if o.is_signed else b.zext(off, ity)
    ety = LT.memory_type(ptr_type.element.pointee)
    g = b.gep(p, [off], source_etype=ety)
    if LT.width_of(off.type) > 1 or isinstance(p.type, ir.VectorType):
        g.type = ir.VectorType(LT.PTR, max(LT.width_of(off.type), LT.width_of(p.type)))
    return g
