"""The arithmetic and math ops, declared one per line: name, operand domain, numpy meaning and what
canonicalisation may assume of each. Adding such an op is one line here plus one lowering entry per backend.

``div`` is C-style truncating division on integers (signedness from the type) and true division on floats,
``shr`` is arithmetic on signed and logical on unsigned integers, ``rem`` follows C (sign of the dividend).
"""
from __future__ import annotations

import numpy as np

from .. import semantics as S
from .elementwise import BinaryOp, UnaryOp
from .identities import add_identity, all_ones, int_zero, one, zero


def _divisor_zero(op, args) -> bool:
    """Integer division and remainder by zero."""
    return op.operands[0].type.is_int and bool((np.asarray(args[1]) == 0).any())


def _shift_out_of_range(op, args) -> bool:
    """Shifts by a negative amount or by the width or more (i1 shifts are modulo 2 and always defined)."""
    t = op.operands[0].type
    if t.is_bool:
        return False
    amount = np.asarray(args[1]).astype(np.uint64) if t.is_signed else np.asarray(args[1])
    return bool(((amount >= t.element.bits) | (np.asarray(args[1]) < 0)).any())


def binary(cls_name, name, numpy, domain="any", *, commutative=False, attrs=None, identities=(),
           idempotent=False, self_zero=False, undefined=None):
    """Declare a :class:`BinaryOp` subclass (registered under ``name``)."""
    ns = {"name": name, "domain": domain, "numpy": staticmethod(numpy), "identities": tuple(identities),
          "idempotent": idempotent, "self_zero": self_zero,
          "traits": BinaryOp.traits | ({"commutative"} if commutative else set())}
    if attrs:
        ns["attr_types"] = {k: type(v) for k, v in attrs.items()}
        ns["attr_defaults"] = dict(attrs)
    if undefined:
        ns["undefined_on"] = lambda self, args: undefined(self, args)
    return type(cls_name, (BinaryOp,), ns)


LHS, RHS = "lhs", "rhs"  # what an identity makes of the op: its other operand, or the constant itself
AddOp = binary("AddOp", "add", S.wrapping(S.plain(np.add)), commutative=True, identities=[(add_identity, LHS)])
SubOp = binary("SubOp", "sub", S.wrapping(S.plain(np.subtract)), identities=[(int_zero, LHS), (zero, LHS)],
               self_zero=True)
MulOp = binary("MulOp", "mul", S.wrapping(S.plain(np.multiply)), commutative=True,
               identities=[(one, LHS), (int_zero, RHS)])
DivOp = binary("DivOp", "div", S.wrapping(S.div), identities=[(one, LHS)], undefined=_divisor_zero)
RemOp = binary("RemOp", "rem", S.wrapping(S.rem), undefined=_divisor_zero)
AndOp = binary("AndOp", "and", S.plain(np.bitwise_and), "int", commutative=True, idempotent=True,
               identities=[(all_ones, LHS), (int_zero, RHS)])
OrOp = binary("OrOp", "or", S.plain(np.bitwise_or), "int", commutative=True, idempotent=True,
              identities=[(int_zero, LHS), (all_ones, RHS)])
XorOp = binary("XorOp", "xor", S.plain(np.bitwise_xor), "int", commutative=True, identities=[(int_zero, LHS)],
               self_zero=True)
ShlOp = binary("ShlOp", "shl", S.wrapping(S.shl), "int", identities=[(int_zero, LHS)],
               undefined=_shift_out_of_range)
ShrOp = binary("ShrOp", "shr", S.wrapping(S.shr), "int", identities=[(int_zero, LHS)],
               undefined=_shift_out_of_range)
MaxOp = binary("MaxOp", "max", S.minmax(np.maximum, np.fmax, True), commutative=True, idempotent=True,
               attrs={"propagate_nan": False})
MinOp = binary("MinOp", "min", S.minmax(np.minimum, np.fmin, False), commutative=True, idempotent=True,
               attrs={"propagate_nan": False})
PowOp = binary("PowOp", "pow", S.plain(np.power), "float")
Atan2Op = binary("Atan2Op", "atan2", S.plain(np.arctan2), "float")
UMulHiOp = binary("UMulHiOp", "umulhi", S.wrapping(S.umulhi), "int")
#: Triton's float ``/``: the quotient, which a backend may compute within 2 ulp (CUDA's ``div.full.f32``, as Triton)
#: unless ``ieee_rounding``; ``div`` is the correctly rounded quotient everywhere (``tl.math.div_rn``)
FDivOp = binary("FDivOp", "fdiv", S.plain(np.true_divide), "float", identities=[(one, LHS)],
                attrs={"ieee_rounding": False})

BINARY_OPS = {c.name: c for c in (AddOp, SubOp, MulOp, DivOp, RemOp, AndOp, OrOp, XorOp, ShlOp, ShrOp, MaxOp,
                                  MinOp, PowOp, Atan2Op, UMulHiOp, FDivOp)}

# name -> (domain, numpy meaning fn(element type, x)); float results are computed at storage precision and
# rounded by the caller
UNARY_SEMANTICS = {
    "neg": ("any", S.neg), "not": ("int", S.plain(np.invert)), "abs": ("any", S.abs_),
    "exp": ("float", S.plain(np.exp)), "exp2": ("float", S.plain(np.exp2)), "log": ("float", S.plain(np.log)),
    "log2": ("float", S.plain(np.log2)), "sqrt": ("float", S.plain(np.sqrt)), "rsqrt": ("float", S.rsqrt),
    "sin": ("float", S.plain(np.sin)), "cos": ("float", S.plain(np.cos)), "tan": ("float", S.plain(np.tan)),
    "tanh": ("float", S.plain(np.tanh)), "floor": ("float", S.plain(np.floor)),
    "ceil": ("float", S.plain(np.ceil)), "erf": ("float", S.f64(S.erf)), "log1p": ("float", S.plain(np.log1p)),
    "expm1": ("float", S.plain(np.expm1)), "sigmoid": ("float", S.f64(S.sigmoid)),
    "round": ("float", S.round_half_away), "trunc": ("float", S.plain(np.trunc)),
    "sqrt_rn": ("float", S.plain(np.sqrt)), "popc": ("int", S.popc), "clz": ("int", S.clz),
}
UNARY_DOMAINS = {n: d for n, (d, _) in UNARY_SEMANTICS.items()}
UNARY_OPS = {n: type(f"{n.capitalize()}Op", (UnaryOp,), {"name": n, "domain": d, "numpy": staticmethod(fn)})
             for n, (d, fn) in UNARY_SEMANTICS.items()}
