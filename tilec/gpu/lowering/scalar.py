"""Elementwise semantics on single LLVM values: tables keyed by tir op class, one for float and one for integer
element types (signedness from the tir element type). Tiles are lists of such values, so the tile lowering maps
these over registers. Math functions come from the target's math library (``GpuTarget.math``).
Not tilec/codegen/elementwise.py: that table works on the CPU backend's register model (16-bit codes for
bf16, i8 codes for fp8, vectors) while here bf16/fp8 live in f32 registers (see :mod:`.types`).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _intrinsic, mangle
from ...errors import BackendError
from ...ir import ops as O
from .types import F32, F64, FP8, I64, llvm_type, round_bf16, round_fp8


class _Operands:
    """What a scalar emitter reads besides its LLVM operands: the op's class, the tir element type, the op's
    attributes, the float flags to set and the target's math library."""
    __slots__ = ("op", "et", "attrs", "flags", "math")

    def __init__(self, op, et, attrs, flags, math):
        self.op, self.et, self.attrs, self.flags, self.math = op, et, attrs, flags, math


def _float_minmax(b, x, y, a):
    """maximumnum/minimumnum: the number wins over NaN and -0.0 < +0.0 (IEEE 754-2019), which is what GPU
    max/min instructions do, so they stay one instruction (maxnum + a signed-zero fix-up cost three more per
    element, in attention's row maxima too)."""
    nan = a.attrs.get("propagate_nan")
    base = ("maximum" if nan else "maximumnum") if a.op is O.MaxOp else ("minimum" if nan else "minimumnum")
    return _intrinsic(b, f"llvm.{base}.{mangle(x.type)}", x.type, [x, y])


def _shl(b, x, y, a):
    w = ir.Constant(x.type, x.type.width - 1)
    big = b.icmp_unsigned(">", y, w)
    return b.select(big, ir.Constant(x.type, 0), b.shl(x, b.select(big, w, y)))


def _shr(b, x, y, a):
    """Amounts are unsigned; >= the width gives 0 (logical) or the sign fill (arithmetic)."""
    w = ir.Constant(x.type, x.type.width - 1)
    big = b.icmp_unsigned(">", y, w)
    if a.et.is_signed:
        return b.ashr(x, b.select(big, w, y))
    return b.select(big, ir.Constant(x.type, 0), b.lshr(x, b.select(big, w, y)))


def _int_minmax(b, x, y, a):
    fn = ("s" if a.et.is_signed else "u") + a.op.name
    return _intrinsic(b, f"llvm.{fn}.{mangle(x.type)}", x.type, [x, y])


def _umulhi(b, x, y, a):
    w = x.type.width
    wide = ir.IntType(2 * w)
    p = b.mul(b.zext(x, wide), b.zext(y, wide))
    return b.trunc(b.lshr(p, ir.Constant(wide, w)), x.type)


def _divrem(b, x, y, a):
    """C division/remainder made total like the IR's reference semantics: x / 0 = x % 0 = 0 and
    MIN / -1 wraps (LLVM leaves both undefined)."""
    div = a.op is O.DivOp
    t = x.type
    zero = ir.Constant(t, 0)
    is_zero = b.icmp_unsigned("==", y, zero)
    safe = b.select(is_zero, ir.Constant(t, 1), y)
    if a.et.is_signed:
        minus1 = b.icmp_signed("==", safe, ir.Constant(t, -1))
        safe = b.select(minus1, ir.Constant(t, 1), safe)
        r = b.sdiv(x, safe) if div else b.srem(x, safe)
        r = b.select(minus1, b.neg(x) if div else zero, r)
    else:
        r = b.udiv(x, safe) if div else b.urem(x, safe)
    return b.select(is_zero, zero, r)


def _fdiv(b, x, y, a):
    """``fdiv``: the math library's (``GpuMath.fdiv``: a vendor's approximate f32 division) where it has one."""
    fdiv = getattr(a.math, "fdiv", None)
    return fdiv(b, x, y, a.attrs.get("ieee_rounding", False)) if fdiv is not None else b.fdiv(x, y)


# op class -> fn(builder, x, y, _Operands), for float and for integer (bool, pointer) element types
FLOAT_BINARY = {
    O.AddOp: lambda b, x, y, a: b.fadd(x, y, flags=a.flags),
    O.SubOp: lambda b, x, y, a: b.fsub(x, y, flags=a.flags),
    O.MulOp: lambda b, x, y, a: b.fmul(x, y, flags=a.flags),
    O.DivOp: lambda b, x, y, a: b.fdiv(x, y),
    O.FDivOp: lambda b, x, y, a: _fdiv(b, x, y, a),
    O.RemOp: lambda b, x, y, a: b.frem(x, y),
    O.MaxOp: _float_minmax, O.MinOp: _float_minmax,
    O.PowOp: lambda b, x, y, a: a.math.pow_(b, x, y),
    O.Atan2Op: lambda b, x, y, a: a.math.atan2(b, x, y),
}
INT_BINARY = {
    O.AddOp: lambda b, x, y, a: b.add(x, y),
    O.SubOp: lambda b, x, y, a: b.sub(x, y),
    O.MulOp: lambda b, x, y, a: b.mul(x, y),
    O.AndOp: lambda b, x, y, a: b.and_(x, y),
    O.OrOp: lambda b, x, y, a: b.or_(x, y),
    O.XorOp: lambda b, x, y, a: b.xor(x, y),
    O.DivOp: _divrem, O.RemOp: _divrem, O.ShlOp: _shl, O.ShrOp: _shr,
    O.MaxOp: _int_minmax, O.MinOp: _int_minmax, O.UMulHiOp: _umulhi,
}


def binary(b: ir.IRBuilder, op, et, x, y, attrs=None, contract: bool = False, math=None):
    """``x op y`` for op class ``op`` and tir element type ``et``. ``contract`` lets LLVM fuse a float multiply
    with the add that consumes it into one fma (Triton's ``enable_fp_fusion``, on by default)."""
    fn = (FLOAT_BINARY if et.is_float else INT_BINARY).get(op)
    if fn is None:
        raise BackendError(f"the GPU lowering cannot lower '{op.name}' on {et}")
    return fn(b, x, y, _Operands(op, et, attrs or {}, ("contract",) if contract and et.is_float else (), math))


def _abs_int(b, x, a):
    if not a.et.is_signed:
        return x
    return _intrinsic(b, f"llvm.abs.{mangle(x.type)}", x.type, [x, ir.Constant(ir.IntType(1), 0)])


_U = O.UNARY_OPS
# op class -> fn(builder, x, _Operands); float ops not listed come from the target's math library by name
FLOAT_UNARY = {
    _U["neg"]: lambda b, x, a: b.fneg(x),
    _U["abs"]: lambda b, x, a: _intrinsic(b, f"llvm.fabs.{mangle(x.type)}", x.type, [x]),
}
INT_UNARY = {
    _U["neg"]: lambda b, x, a: b.neg(x),
    _U["not"]: lambda b, x, a: b.not_(x),
    _U["abs"]: _abs_int,
    _U["popc"]: lambda b, x, a: _intrinsic(b, f"llvm.ctpop.{mangle(x.type)}", x.type, [x]),
    _U["clz"]: lambda b, x, a: _intrinsic(b, f"llvm.ctlz.{mangle(x.type)}", x.type,
                                          [x, ir.Constant(ir.IntType(1), 0)]),
}


def _math_library(b, x, a):
    return a.math.unary(b, a.op.name, x)


def unary(b: ir.IRBuilder, op, et, x, math=None):
    fn = FLOAT_UNARY.get(op, _math_library) if et.is_float else INT_UNARY.get(op)
    if fn is None:
        raise BackendError(f"the GPU lowering cannot lower '{op.name}' on {et}")
    return fn(b, x, _Operands(op, et, {}, (), math))


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def cmp(b: ir.IRBuilder, pred: str, et, x, y):
    if et.is_float:
        if pred == "ne":
            return b.fcmp_unordered("!=", x, y)
        return b.fcmp_ordered(_ICMP[pred], x, y)
    if et.is_ptr:
        return b.icmp_unsigned(_ICMP[pred], b.ptrtoint(x, I64), b.ptrtoint(y, I64))
    if et.is_signed:
        return b.icmp_signed(_ICMP[pred], x, y)
    return b.icmp_unsigned(_ICMP[pred], x, y)


def fma(b, et, x, y, z):
    return _intrinsic(b, f"llvm.fma.{mangle(x.type)}", x.type, [x, y, z])


def cast(b: ir.IRBuilder, src_t, dst_t, x, rounding="rtne"):
    """Value conversion between tir element types (signedness from the source, like C)."""
    s, d = src_t.element, dst_t.element
    ls, ld = llvm_type(s), llvm_type(d)
    if s.is_ptr or d.is_ptr:
        if s.is_ptr and d.is_ptr:
            return x if ls == ld else b.addrspacecast(x, ld)
        if s.is_ptr:
            return b.ptrtoint(x, ld)
        return b.inttoptr(x, ld)
    if d.name in FP8:
        return x if s == d else round_fp8(b, dst_t, f32_for_fp8(b, s, x, rounding), rounding)
    if s.is_float and d.is_float:
        if d.name == "bf16":
            if rounding == "rtz" and s.name != "bf16":
                return _bf16_rtz(b, x if ls == F32 else (b.fpext(x, F32) if _width(ls) < 32 else
                                                       _narrow_rtz(b, x, F32)))
            y = x if ls == F32 else (b.fpext(x, F32) if _width(ls) < 32 else b.fptrunc(x, F32))
            return round_bf16(b, y)
        if ls == ld:
            return x
        if _width(ls) < _width(ld):
            return b.fpext(x, ld)
        return _narrow_rtz(b, x, ld) if rounding == "rtz" else b.fptrunc(x, ld)
    if s.is_float:  # float -> int
        if d.is_bool:
            return b.fcmp_unordered("!=", x, ir.Constant(ls, 0.0))
        # saturating, NaN -> 0 (the IR's semantics; plain fptosi is undefined out of range)
        fn = "fptosi" if d.is_signed else "fptoui"
        return _intrinsic(b, f"llvm.{fn}.sat.i{ld.width}.{mangle(ls)}", ld, [x])
    if d.is_float:  # int -> float
        y = b.sitofp(x, ld) if s.is_signed else b.uitofp(x, ld)
        return round_bf16(b, y) if d.name == "bf16" else y
    # int -> int
    if d.is_bool:
        return b.icmp_unsigned("!=", x, ir.Constant(ls, 0))
    if ls.width == ld.width:
        return x
    if ls.width > ld.width:
        return b.trunc(x, ld)
    return b.sext(x, ld) if s.is_signed else b.zext(x, ld)


def f32_for_fp8(b: ir.IRBuilder, s, x, rounding):
    """The f32 value an fp8 cast rounds (as on the CPU): exact from 8/16-bit floats, f64 and integers (through
    f64) rounded to odd so that the second rounding to fp8 is the only one (f32 keeps far more than the two extra
    bits that needs); toward zero throughout for ``rtz``."""
    if not s.is_float:
        x = b.sitofp(x, F64) if s.is_signed else b.uitofp(x, F64)
    elif x.type != F64:
        return x if x.type == F32 else b.fpext(x, F32)
    z = _narrow_rtz(b, x, F32)
    if rounding == "rtz":
        return z
    inexact = b.fcmp_ordered("!=", b.fpext(z, F64), x)
    i32 = ir.IntType(32)
    return b.select(inexact, b.bitcast(b.or_(b.bitcast(z, i32), ir.Constant(i32, 1)), F32), z)


def _narrow_rtz(b: ir.IRBuilder, x, ld):
    """``x`` narrowed to float type ``ld`` rounding toward zero: the nearest-even result, stepped one ulp toward
    zero (its integer code minus one) where it came out larger in magnitude than ``x``. Finite values past the
    largest finite one so become it, not infinity; NaN and infinities pass as they are."""
    y = b.fptrunc(x, ld)
    fabs = f"llvm.fabs.{mangle(x.type)}"
    grew = b.fcmp_ordered(">", _intrinsic(b, fabs, x.type, [b.fpext(y, x.type)]), _intrinsic(b, fabs, x.type, [x]))
    it = ir.IntType(_width(ld))
    stepped = b.bitcast(b.sub(b.bitcast(y, it), ir.Constant(it, 1)), ld)
    return b.select(grew, stepped, y)


def _bf16_rtz(b: ir.IRBuilder, v):
    """An f32 register value rounded toward zero to bf16 (kept in f32): the low 16 bits cleared, except that NaN
    keeps the nearest-even path's quiet NaN (clearing could leave an infinity)."""
    i32 = ir.IntType(32)
    cut = b.bitcast(b.and_(b.bitcast(v, i32), ir.Constant(i32, 0xFFFF0000)), F32)
    return b.select(b.fcmp_unordered("uno", v, v), round_bf16(b, v), cut)


def _width(t):
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]
