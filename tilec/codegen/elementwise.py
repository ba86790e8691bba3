"""The elementwise op table: tir op class -> LLVM instructions, on scalars or fixed-width vectors alike.

Every emitter has the signature ``fn(E, args, op) -> llvm value`` where ``E`` is an :class:`Emit` (builder +
types), ``args`` are LLVM values of one width and ``op`` is the op's class (:data:`ELEMENTWISE`, an
:class:`~tilec.ir.dispatch.OpTable`; the math functions come from ``mathfns.py`` by their names). Semantics
follow ``tilec/ir/ops`` and the evaluator: C-style integer division/remainder (by zero: 0), ``shr`` by
signedness, ``max``/``min`` ignoring NaN unless ``propagate_nan``, ordered float comparisons except ``ne``.
Division by zero and over-wide shifts are defined (no LLVM poison or traps), so masked-off vector lanes can never
fault. f16/bf16 arithmetic is computed in f32 and rounded once, which is exact for the basic operations (fma
rounds to odd in f32 first: ``codegen/fma.py``).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..errors import BackendError
from ..ir import ops as O
from ..ir import types as T
from ..ir.dispatch import OpTable
from . import llvm_types as LT
from . import casts
from .casts import narrow_from_f32, widen_to_f32
from .fma import fma_f32_odd
from .intrinsics import call as icall
from .minmax import fix_signed_zeros
from .mathfns import UNARY_MATH, BINARY_MATH


class Emit:
    """What an emitter needs: the builder, the width, and the tir element types of operands and result."""

    def __init__(self, b: ir.IRBuilder, w: int, src: T.ScalarType, dst: T.ScalarType, attrs: dict, types=(),
                 result=None):
        self.b, self.w, self.src, self.dst, self.attrs = b, w, src, dst, attrs
        self.types, self.result = types, result  # the operands' and the result's tir types (for conversions)

    def ty(self, t: T.Type) -> ir.Type:
        return LT.vec(LT.scalar_type(t), self.w)

    def c(self, t: T.Type, value):
        return LT.const(LT.scalar_type(t), value, self.w)

    def intr(self, name, args, ret=None):
        ret = ret or args[0].type
        return icall(self.b, name, ret, args, (ret,))


def _half(t):
    """Floats computed in f32: the 16-bit ones and fp8 (held as codes)."""
    return t.element.kind == "float" and t.element.bits <= 16


def promote(E: Emit, v, t):
    """f16/bf16/fp8 -> f32 (identity for other types)."""
    return widen_to_f32(E.b, v, t, E.w) if _half(t) else v


def demote(E: Emit, v, t):
    return narrow_from_f32(E.b, v, t, E.w) if _half(t) else v


def _float_arith(fn):
    """Run a float emitter in f32 for 16-bit floats and round the result once."""
    def wrapped(E, args, op):
        t = E.src
        return demote(E, fn(E, [promote(E, a, t) for a in args], op), E.dst)
    return wrapped


def _by_kind(int_fn, float_fn):
    fl = _float_arith(float_fn) if float_fn else None

    def emit(E, args, op):
        if E.src.is_float:
            if fl is None:
                raise BackendError(f"'{op.name}' does not take {E.src}")
            return fl(E, args, op)
        return int_fn(E, args, op)
    return emit


def _idiv(E, a, op):
    """C division/remainder; x / 0 and x % 0 give 0 and INT_MIN / -1 wraps (LLVM would trap on both)."""
    x, d = a
    b = E.b
    zero = b.icmp_unsigned("==", d, E.c(E.src, 0))
    if E.src.is_signed:
        minus1 = b.icmp_signed("==", d, E.c(E.src, -1))
        safe = b.select(b.or_(zero, minus1), E.c(E.src, 1), d)
        r = b.sdiv(x, safe) if op is O.DivOp else b.srem(x, safe)
        r = b.select(minus1, b.sub(E.c(E.src, 0), x) if op is O.DivOp else E.c(E.src, 0), r)
    else:
        safe = b.select(zero, E.c(E.src, 1), d)
        r = b.udiv(x, safe) if op is O.DivOp else b.urem(x, safe)
    return b.select(zero, E.c(E.src, 0), r)


def _shift(E, a, op):
    x, s = a
    bits = E.src.bits
    big = E.b.icmp_unsigned(">=", s, E.c(E.src, bits))
    s2 = E.b.select(big, E.c(E.src, bits - 1), s)
    if op is O.ShlOp:
        return E.b.select(big, E.c(E.src, 0), E.b.shl(x, s2))
    if E.src.is_signed:
        return E.b.ashr(x, s2)
    return E.b.select(big, E.c(E.src, 0), E.b.lshr(x, s2))


def _minmax(E, a, op):
    if E.src.is_float:
        nan = E.attrs.get("propagate_nan", False)
        name = ("llvm.maximum" if nan else "llvm.maxnum") if op is O.MaxOp else \
            ("llvm.minimum" if nan else "llvm.minnum")
        args = [promote(E, x, E.src) for x in a]
        r = icall(E.b, name, args[0].type, args, (args[0].type,))
        if not nan:  # llvm.maximum/minimum already order -0.0 below +0.0
            r = fix_signed_zeros(E.b, op.name, args[0], args[1], r)
        return demote(E, r, E.dst)
    if E.src.is_bool:
        return E.b.or_(*a) if op is O.MaxOp else E.b.and_(*a)
    pre = "s" if E.src.is_signed else "u"
    return E.intr(f"llvm.{pre}{op.name}", list(a))


def _umulhi(E, a, op):
    bits = E.src.bits
    wide = LT.vec(ir.IntType(2 * bits), E.w)
    x, y = (E.b.zext(v, wide) for v in a)
    p = E.b.lshr(E.b.mul(x, y), LT.const(ir.IntType(2 * bits), bits, E.w))
    return E.b.trunc(p, E.ty(E.src))


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _cmp(E, a, op):
    p = _ICMP[E.attrs["predicate"]]
    t = E.src
    if t.is_float:
        x, y = (promote(E, v, t) for v in a)
        return E.b.fcmp_unordered(p, x, y) if p == "!=" else E.b.fcmp_ordered(p, x, y)
    if t.is_ptr or not t.is_signed:
        return E.b.icmp_unsigned(p, *a)
    return E.b.icmp_signed(p, *a)


def _select(E, a, op):
    return E.b.select(*a)


def _fma(E, a, op):
    """One rounding: 16-bit floats and fp8 through an f32 rounded to odd (an f32 fma would round twice)."""
    args = [promote(E, x, E.src) for x in a]
    if _half(E.src):
        return demote(E, fma_f32_odd(E.b, *args, E.w), E.dst)
    return icall(E.b, "llvm.fma", args[0].type, args, (args[0].type,))


def _sign_bit(E):
    """For floats held as integer codes (bf16, fp8): the sign bit as a constant of the code type."""
    code_type = LT.scalar_type(E.src)
    return LT.const(code_type, 1 << (code_type.width - 1), E.w)


def _neg(E, a, op):
    if E.src.element.name in LT.CODES:  # flip the sign bit of the code
        return E.b.xor(a[0], _sign_bit(E))
    if E.src.is_float:
        return E.b.fneg(a[0])
    return E.b.sub(E.c(E.src, 0), a[0])


def _not(E, a, op):
    return E.b.xor(a[0], E.c(E.src, -1))


def _abs(E, a, op):
    if E.src.element.name in LT.CODES:  # clear the sign bit of the code
        return E.b.and_(a[0], E.b.not_(_sign_bit(E)))
    if E.src.is_float:
        return E.intr("llvm.fabs", [a[0]])
    if not E.src.is_signed:
        return a[0]
    return icall(E.b, "llvm.abs", a[0].type, [a[0], LT.const(LT.I1, 0)], (a[0].type,))


def _popc(E, a, op):
    return E.intr("llvm.ctpop", [a[0]])


def _clz(E, a, op):
    return icall(E.b, "llvm.ctlz", a[0].type, [a[0], LT.const(LT.I1, 0)], (a[0].type,))


def _math_unary(name):
    fn = UNARY_MATH[name]

    def emit(E, a, op):
        x = promote(E, a[0], E.src)
        return demote(E, fn(E.b, x), E.dst)
    return emit


def _math_binary(name):
    fn = BINARY_MATH[name]

    def emit(E, a, op):
        x, y = (promote(E, v, E.src) for v in a)
        return demote(E, fn(E.b, x, y), E.dst)
    return emit


def _cast(E, a, op):
    return casts.cast(E.b, a[0], E.types[0], E.result, E.attrs.get("rounding", "rtne"), E.w)


def _bitcast(E, a, op):
    return casts.bitcast(E.b, a[0], E.types[0], E.result, E.w)


def _addptr(E, a, op):
    return casts.addptr(E.b, a[0], a[1], E.types[0], E.types[1], E.w)


ELEMENTWISE = OpTable("LLVM elementwise code")
for _cls, _fn in {
    O.AddOp: _by_kind(lambda E, a, op: E.b.add(*a), lambda E, a, op: E.b.fadd(*a)),
    O.SubOp: _by_kind(lambda E, a, op: E.b.sub(*a), lambda E, a, op: E.b.fsub(*a)),
    O.MulOp: _by_kind(lambda E, a, op: E.b.mul(*a), lambda E, a, op: E.b.fmul(*a)),
    O.DivOp: _by_kind(_idiv, lambda E, a, op: E.b.fdiv(*a)),
    O.FDivOp: _by_kind(None, lambda E, a, op: E.b.fdiv(*a)),
    O.RemOp: _by_kind(_idiv, lambda E, a, op: E.b.frem(*a)),
    O.AndOp: lambda E, a, op: E.b.and_(*a),
    O.OrOp: lambda E, a, op: E.b.or_(*a),
    O.XorOp: lambda E, a, op: E.b.xor(*a),
    O.ShlOp: _shift, O.ShrOp: _shift,
    O.MaxOp: _minmax, O.MinOp: _minmax,
    O.UMulHiOp: _umulhi,
    O.CmpOp: _cmp, O.SelectOp: _select, O.FmaOp: _fma,
    O.CastOp: _cast, O.BitcastOp: _bitcast, O.AddPtrOp: _addptr,
    O.UNARY_OPS["neg"]: _neg, O.UNARY_OPS["not"]: _not, O.UNARY_OPS["abs"]: _abs, O.UNARY_OPS["popc"]: _popc,
    O.UNARY_OPS["clz"]: _clz,
    **{O.UNARY_OPS[n]: _math_unary(n) for n in UNARY_MATH},
    **{O.BINARY_OPS[n]: _math_binary(n) for n in BINARY_MATH},
}.items():
    ELEMENTWISE.register(_cls)(_fn)


def emit_op(b, op, attrs, args, types, result, w: int = 1):
    """Lower elementwise op class ``op`` on LLVM values ``args`` of width ``w``, given the operands' tir
    ``types`` and the ``result`` type: the one dispatch the CPU lowering's scalar ops, lazy tile nodes and combine
    regions share."""
    fn = ELEMENTWISE.lookup_class(op)
    if fn is None:
        raise BackendError(f"no LLVM lowering for elementwise op '{op.name}'")
    src = types[1] if op is O.SelectOp else (types[0] if types else result)
    return fn(Emit(b, w, src.element, result.element, attrs, types, result), list(args), op)
