"""Math functions for AMDGPU without ROCm's device libraries.

f32 uses the LLVM intrinsics the AMDGPU backend lowers itself to accurate instruction sequences (exp, exp2, log,
log2, sqrt, fma, rounding); where it has none (it reports "no libcall available" for tan, tanh, atan, ...) or
only a short hardware approximation (sin, cos, pow), the functions are range reductions and polynomials.
f16 and f64 come from the generic GPU layer (``tilec/gpu/lowering/mathlib.py``): f16 through these f32 functions,
f64 from what LLVM lowers exactly (sqrt, floor, ceil, trunc, round) and the polynomial library ``mathlib64``
(exp, log, sin, cos, tanh, atan2, pow, erf, ...). LLVM aborts the whole process on f64 sin/cos/pow intrinsics for
AMDGPU, so those never reach it.
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _call
from ...gpu.lowering.mathlib import EXACT_ANY, GpuMath  # noqa: F401  (EXACT_ANY: the f64 functions LLVM lowers)
from ...gpu.lowering.types import F32, I32

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


def _c(v):
    return ir.Constant(F32, v)


def _f(b, name, *args):
    """``llvm.<name>.f32``."""
    return _call(b, f"llvm.{name}.f32", F32, list(args))


def _poly(b, x, coeffs):
    """Horner: coeffs[0] + coeffs[1] x + ..."""
    acc = _c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = _f(b, "fma", acc, x, _c(c))
    return acc


def exp(b, x):
    return _f(b, "exp", x)


def log(b, x):
    return _f(b, "log", x)


def _tanh(b, x):
    a = _f(b, "fabs", x)
    x2 = b.fmul(x, x)
    small = b.fmul(x, _poly(b, x2, [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925,
                                     21844 / 6081075, -929569 / 638512875, 6404582 / 10854718875]))
    e = exp(b, b.fmul(a, _c(2.0)))
    big = _f(b, "copysign", b.fsub(_c(1.0), b.fdiv(_c(2.0), b.fadd(e, _c(1.0)))), x)
    return b.select(b.fcmp_ordered("<", a, _c(0.55)), small, big)


def _erf(b, x):
    a = _f(b, "fabs", x)
    x2 = b.fmul(x, x)
    k = 2 / math.sqrt(math.pi)
    small = b.fmul(x, _poly(b, x2, [k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320, k / 9360, -k / 75600]))
    # Abramowitz & Stegun 7.1.26 for |x| >= 0.5 (absolute error 1.5e-7 where erf >= 0.52)
    t = b.fdiv(_c(1.0), b.fadd(_c(1.0), b.fmul(_c(0.3275911), a)))
    p = b.fmul(t, _poly(b, t, [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429]))
    big = _f(b, "copysign", b.fsub(_c(1.0), b.fmul(p, exp(b, b.fneg(x2)))), x)
    return b.select(b.fcmp_ordered("<", a, _c(0.5)), small, big)


def _expm1(b, x):
    small = b.fmul(x, _poly(b, x, [1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320]))
    big = b.fsub(exp(b, x), _c(1.0))
    return b.select(b.fcmp_ordered("<", _f(b, "fabs", x), _c(0.25)), small, big)


def _log1p(b, x):
    u = b.fadd(x, _c(1.0))
    d = b.fsub(u, _c(1.0))
    r = b.fmul(log(b, u), b.fdiv(x, d))
    r = b.select(b.fcmp_ordered("==", d, _c(0.0)), x, r)
    return b.select(b.fcmp_ordered("==", u, _c(math.inf)), _c(math.inf), r)


def _atan(b, t):
    """atan for t >= 0: reduce to |z| <= tan(pi/8) through atan(t) = pi/4 + atan((t-1)/(t+1)), and 1/t."""
    inv = b.fcmp_ordered(">", t, _c(1.0))
    t = b.select(inv, b.fdiv(_c(1.0), t), t)
    mid = b.fcmp_ordered(">", t, _c(0.41421356))
    z = b.select(mid, b.fdiv(b.fsub(t, _c(1.0)), b.fadd(t, _c(1.0))), t)
    z2 = b.fmul(z, z)
    r = b.fmul(z, _poly(b, z2, [1.0, -1 / 3, 1 / 5, -1 / 7, 1 / 9, -1 / 11, 1 / 13, -1 / 15, 1 / 17, -1 / 19]))
    r = b.select(mid, b.fadd(r, _c(math.pi / 4)), r)
    return b.select(inv, b.fsub(_c(math.pi / 2), r), r)


def _atan2_f32(b, y, x):
    ay, ax = _f(b, "fabs", y), _f(b, "fabs", x)
    r = _atan(b, b.fdiv(ay, ax))
    r = b.select(b.fcmp_ordered("==", ax, _c(0.0)), b.select(b.fcmp_ordered("==", ay, _c(0.0)), _c(0.0),
                                                             _c(math.pi / 2)), r)
    r = b.select(b.fcmp_ordered("<", x, _c(0.0)), b.fsub(_c(math.pi), r), r)
    neg_zero_x = b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))
    r = b.select(b.and_(b.fcmp_ordered("==", x, _c(0.0)), neg_zero_x),
                 b.select(b.fcmp_ordered("==", ay, _c(0.0)), _c(math.pi), r), r)
    return _f(b, "copysign", r, y)


def _pow_f32(b, x, y):
    """C pow: |x|**y from exp2/log2, the sign from an odd integer y, NaN for a negative base with a non-integer
    exponent; pow(x, 0) = pow(1, y) = 1 and pow(-1, +-inf) = 1."""
    ax = _f(b, "fabs", x)
    r = _f(b, "exp2", b.fmul(y, _f(b, "log2", ax)))
    neg = b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))
    is_int = b.fcmp_ordered("==", _f(b, "floor", y), y)
    odd = b.fcmp_ordered("==", _f(b, "fabs", b.frem(y, _c(2.0))), _c(1.0))
    r = b.select(b.and_(neg, odd), b.fneg(r), r)
    below_zero = b.fcmp_ordered("<", x, _c(0.0))  # -0.0 keeps its sign for odd y but is no negative base
    r = b.select(b.and_(b.and_(below_zero, b.not_(is_int)), b.fcmp_ordered("==", ax, ax)),
                 b.select(b.fcmp_ordered("==", ax, _c(math.inf)), r, _c(math.nan)), r)
    one = b.or_(b.fcmp_ordered("==", y, _c(0.0)), b.fcmp_ordered("==", x, _c(1.0)))
    one = b.or_(one, b.and_(b.fcmp_ordered("==", ax, _c(1.0)), b.fcmp_ordered("==", _f(b, "fabs", y), _c(math.inf))))
    return b.select(one, _c(1.0), r)


def _sincos(b, x, cos: bool):
    """x = k pi/2 + r with |r| <= pi/4 (three-part Cody-Waite constants), then the sin or cos polynomial by
    quadrant: a few ulp for |x| up to ~1e5, unlike the hardware's v_sin_f32."""
    k = _f(b, "rint", b.fmul(x, _c(2 / math.pi)))
    r = _f(b, "fma", b.fneg(k), _c(1.5703125), x)
    r = _f(b, "fma", b.fneg(k), _c(4.837512969970703125e-4), r)
    r = _f(b, "fma", b.fneg(k), _c(7.54978995489188216e-8), r)
    q = b.and_(b.fptosi(k, I32), ir.Constant(I32, 3))
    if cos:
        q = b.add(q, ir.Constant(I32, 1))
    r2 = b.fmul(r, r)
    s = b.fmul(r, _poly(b, r2, [1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800]))
    c = _poly(b, r2, [1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600])
    odd = b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 1)), ir.Constant(I32, 0))
    v = b.select(odd, c, s)
    negate = b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 2)), ir.Constant(I32, 0))
    v = b.select(negate, b.fneg(v), v)
    return b.select(b.fcmp_ordered("==", _f(b, "fabs", x), _c(math.inf)), _c(math.nan), v)


F32_TABLE = {
    "exp": exp,
    "exp2": lambda b, x: _f(b, "exp2", x),
    "log": log,
    "log2": lambda b, x: _f(b, "log2", x),
    "sqrt": lambda b, x: _f(b, "sqrt", x),
    "sqrt_rn": lambda b, x: _f(b, "sqrt", x),
    "rsqrt": lambda b, x: b.fdiv(_c(1.0), _f(b, "sqrt", x)),
    "sin": lambda b, x: _sincos(b, x, False),
    "cos": lambda b, x: _sincos(b, x, True),
    "tan": lambda b, x: b.fdiv(_sincos(b, x, False), _sincos(b, x, True)),
    "tanh": _tanh,
    "erf": _erf,
    "expm1": _expm1,
    "log1p": _log1p,
    "sigmoid": lambda b, x: b.fdiv(_c(1.0), b.fadd(_c(1.0), exp(b, b.fneg(x)))),
    "floor": lambda b, x: _f(b, "floor", x),
    "ceil": lambda b, x: _f(b, "ceil", x),
    "trunc": lambda b, x: _f(b, "trunc", x),
    "round": lambda b, x: _f(b, "round", x),  # half away from zero
}
LIBRARY = GpuMath("HIP", F32_TABLE, _pow_f32, _atan2_f32)
unary, pow_, atan2 = LIBRARY.unary, LIBRARY.pow_, LIBRARY.atan2
