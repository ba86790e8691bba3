"""Float ``max``/``min`` that order -0.0 below +0.0 (IEEE 754-2019 maximumNumber/minimumNumber), on every backend.

LLVM's ``maxnum``/``minnum`` may return either zero when the operands are +0.0 and -0.0, and numpy's
``fmax``/``fmin`` answer differently with the array's length, so ``1 / max(-0.0, +0.0)`` was +inf or -inf by
chance. Equal operands are resolved on their bits instead: AND for ``max`` (+0 wins), OR for ``min`` (-0 wins);
for any other equal pair both give the operand itself. NaN operands are never equal, so ``maxnum``'s NaN rule
(the number wins) is kept.
"""
from __future__ import annotations

import llvmlite.ir as ir

_BITS = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}


def fix_signed_zeros(b, op: str, x, y, result):
    """``result`` (``maxnum``/``minnum`` of ``x`` and ``y``, scalars or vectors) with equal operands resolved so
    that -0.0 < +0.0."""
    t = x.type
    if isinstance(t, ir.VectorType):
        it = ir.VectorType(ir.IntType(_BITS[type(t.element)]), t.count)
    else:
        it = ir.IntType(_BITS[type(t)])
    xi, yi = b.bitcast(x, it), b.bitcast(y, it)
    both = b.and_(xi, yi) if op == "max" else b.or_(xi, yi)
    return b.select(b.fcmp_ordered("==", x, y), b.bitcast(both, t), result)
