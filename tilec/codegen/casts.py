"""Value conversions (``cast``), bit reinterpretation (``bitcast``) and pointer arithmetic (``addptr``).

Casts to ``i1`` test for non-zero (like Python's ``bool``); int -> int extends by the *source's* signedness;
float -> int truncates and saturates (NaN -> 0); float -> narrower float rounds to nearest even, or toward
zero for ``rounding = "rtz"`` (fixed up from the nearest-even result by stepping one ulp toward zero when it
overshot).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import types as T
from . import llvm_types as LT
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
            return b.fcmp_unordered("!=", v, LT.const(LT.scalar_type(s), 0.0, w))
        return b.icmp_unsigned("!=", v, LT.const(LT.scalar_type(s), 0, w))
    if s.is_int and d.is_int:
        if s.bits == d.bits:
            return v
        if s.bits > d.bits:
            return b.trunc(v, dty)
        return b.sext(v, dty) if s.is_signed else b.zext(v, dty)
    if s.is_int and d.is_float:
        return b.sitofp(v, dty) if s.is_signed else b.uitofp(v, dty)
    if s.is_float and d.is_int:
        x = b.fpext(v, LT.vec(LT.F32, w)) if s.bits == 16 else v
        name = "llvm.fptosi.sat" if d.is_signed else "llvm.fptoui.sat"
        return icall(b, name, dty, [x], (dty, x.type))
    # float -> float
    if s.bits == 16 and d.bits == 16:  # f16 <-> bf16 through f32
        v = b.fpext(v, LT.vec(LT.F32, w))
        s, sty = T.f32, LT.vec(LT.F32, w)
    if d.bits > s.bits:
        return b.fpext(v, dty)
    if s.bits == 64 and d.bits == 16:
        # LLVM lowers f64 -> 16-bit floats to a compiler-rt call the JIT cannot resolve: go through f32, rounding
        # that first step to odd so the second rounding is exact (f32 keeps far more than the 2 extra bits needed)
        v = _to_f32_odd(b, v, w) if rounding != "rtz" else cast(b, v, T.f64, T.f32, "rtz", w)
        s, sty = T.f32, LT.vec(LT.F32, w)
    r = b.fptrunc(v, dty)
    if rounding != "rtz":
        return r
    back = b.fpext(r, sty)
    fabs = lambda x: b.call(_fabs(b, x.type), [x])  # noqa: E731
    over = b.fcmp_ordered(">", fabs(back), fabs(v))
    finite = b.fcmp_ordered("<", fabs(v), LT.const(LT.scalar_type(s), float("inf"), w))
    ity = LT.vec(ir.IntType(d.bits), w)
    stepped = b.bitcast(b.sub(b.bitcast(r, ity), LT.const(ir.IntType(d.bits), 1, w)), dty)
    return b.select(b.and_(over, finite), stepped, r)


def _to_f32_odd(b, v, w):
    """f64 -> f32 rounded to odd: truncate, then set the last bit when the truncation was inexact."""
    z = cast(b, v, T.f64, T.f32, "rtz", w)
    inexact = b.fcmp_ordered("!=", b.fpext(z, v.type), v)
    i32 = LT.vec(LT.I32, w)
    odd = b.bitcast(b.or_(b.bitcast(z, i32), LT.const(LT.I32, 1, w)), z.type)
    return b.select(inexact, odd, z)


def _fabs(b, ty):
    from .intrinsics import declare
    return declare(b.module, "llvm.fabs", ty, [ty], (ty,))


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
