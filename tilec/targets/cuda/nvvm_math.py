"""Math functions for NVPTX without libdevice.

f32 is computed directly: ``ex2.approx.ftz`` for exponentials (2 ulp; subnormal results flush to zero), an own range-reduced log (the hardware
``lg2.approx`` loses relative accuracy near 1, which log1p/pow/expm1 need), Taylor polynomials where a formula
cancels (tanh, erf, expm1 near 0), sin/cos by Cody-Waite reduction to [-pi/4, pi/4] and polynomials (accurate
to a few ulp for |x| up to ~1e5; ``sin.approx`` is only good to ~1e-5 relative). f16 and f64 come from the generic
GPU layer (``tilec/gpu/lowering/mathlib.py``): f16 through these f32 functions, f64 from LLVM's exact intrinsics
and the polynomial library ``mathlib64`` (NVPTX has no f64 transcendental instructions; ptxas fuses none of its
``.rn`` arithmetic, so the double-double steps stay exact).
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _call, mangle
from ...gpu.lowering.mathlib import GpuMath
from ...gpu.lowering.types import F32, I32

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


def _c(v):
    return ir.Constant(F32, v)


def _poly(b, x, coeffs):
    """Horner: coeffs[0] + coeffs[1] x + ..."""
    acc = _c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = _call(b, "llvm.fma.f32", F32, [acc, x, _c(c)])
    return acc


def _fabs(b, x):
    return _call(b, f"llvm.fabs.{mangle(x.type)}", x.type, [x])


def exp2(b, x):
    """``ex2.approx.ftz``: one MUFU instruction (the non-ftz form adds a compare and two multiplies around it
    to produce subnormal results, a third of attention's softmax work); results below 2^-126 flush to zero,
    as in Triton."""
    return _call(b, "llvm.nvvm.ex2.approx.ftz.f", F32, [x])


def exp(b, x):
    return exp2(b, b.fmul(x, _c(LOG2E)))


def log(b, x):
    """Natural log, ~1 ulp: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1))."""
    bits = b.bitcast(x, I32)
    # subnormals: scale up by 2^23 first
    tiny = b.fcmp_ordered("<", x, _c(1.1754943508222875e-38))
    xs = b.select(tiny, b.fmul(x, _c(8388608.0)), x)
    bits = b.bitcast(xs, I32)
    bias = b.select(tiny, ir.Constant(I32, 127 + 23), ir.Constant(I32, 127))
    # shift the mantissa so that m lands in [sqrt(1/2), sqrt(2))
    adj = b.sub(bits, ir.Constant(I32, 0x3F3504F3))
    e = b.ashr(adj, ir.Constant(I32, 23))
    mbits = b.sub(bits, b.shl(e, ir.Constant(I32, 23)))
    m = b.bitcast(mbits, F32)
    e = b.add(e, b.sub(ir.Constant(I32, 127), bias))
    f = b.fsub(m, _c(1.0))
    s = b.fdiv(f, b.fadd(m, _c(1.0)))
    s2 = b.fmul(s, s)
    p = _poly(b, s2, [2.0, 2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11])
    lm = b.fmul(s, p)
    r = b.fadd(lm, b.fmul(b.sitofp(e, F32), _c(LN2)))
    # special values: 0 -> -inf, negative -> nan, inf -> inf, nan -> nan
    r = b.select(b.fcmp_ordered("==", x, _c(0.0)), _c(-math.inf), r)
    r = b.select(b.fcmp_unordered("<", x, _c(0.0)), _c(math.nan), r)
    r = b.select(b.fcmp_ordered("==", x, _c(math.inf)), _c(math.inf), r)
    return r


def _tanh(b, x):
    a = _fabs(b, x)
    x2 = b.fmul(x, x)
    small = b.fmul(x, _poly(b, x2, [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925,
                                     21844 / 6081075, -929569 / 638512875, 6404582 / 10854718875]))
    e = exp(b, b.fmul(a, _c(2.0)))
    big = b.fsub(_c(1.0), b.fdiv(_c(2.0), b.fadd(e, _c(1.0))))
    big = _call(b, "llvm.copysign.f32", F32, [big, x])
    return b.select(b.fcmp_ordered("<", a, _c(0.55)), small, big)


def _erf(b, x):
    a = _fabs(b, x)
    x2 = b.fmul(x, x)
    k = 2 / math.sqrt(math.pi)
    small = b.fmul(x, _poly(b, x2, [k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320, k / 9360, -k / 75600]))
    # Abramowitz & Stegun 7.1.26 for |x| >= 0.5 (absolute error 1.5e-7 where erf >= 0.52)
    t = b.fdiv(_c(1.0), b.fadd(_c(1.0), b.fmul(_c(0.3275911), a)))
    p = b.fmul(t, _poly(b, t, [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429]))
    big = b.fsub(_c(1.0), b.fmul(p, exp(b, b.fneg(x2))))
    big = _call(b, "llvm.copysign.f32", F32, [big, x])
    return b.select(b.fcmp_ordered("<", a, _c(0.5)), small, big)


def _expm1(b, x):
    small = b.fmul(x, _poly(b, x, [1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320]))
    big = b.fsub(exp(b, x), _c(1.0))
    return b.select(b.fcmp_ordered("<", _fabs(b, x), _c(0.25)), small, big)


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
    ay, ax = _fabs(b, y), _fabs(b, x)
    r = _atan(b, b.fdiv(ay, ax))
    r = b.select(b.fcmp_ordered("==", ax, _c(0.0)), b.select(b.fcmp_ordered("==", ay, _c(0.0)), _c(0.0),
                                                             _c(math.pi / 2)), r)
    r = b.select(b.fcmp_ordered("<", x, _c(0.0)), b.fsub(_c(math.pi), r), r)
    neg_zero_x = b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))
    r = b.select(b.and_(b.fcmp_ordered("==", x, _c(0.0)), neg_zero_x),
                 b.select(b.fcmp_ordered("==", ay, _c(0.0)), _c(math.pi), r), r)
    return _call(b, "llvm.copysign.f32", F32, [r, y])


def _pow_f32(b, x, y):
    """C pow: |x|**y from exp2/log, the sign from an odd integer y, NaN for a negative base with a non-integer
    exponent; pow(x, 0) = pow(1, y) = 1 and pow(-1, +-inf) = 1."""
    ax = _fabs(b, x)
    r = exp2(b, b.fmul(y, b.fmul(log(b, ax), _c(LOG2E))))
    neg = b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))
    is_int = b.fcmp_ordered("==", _call(b, "llvm.floor.f32", F32, [y]), y)
    odd = b.fcmp_ordered("==", _fabs(b, b.frem(y, _c(2.0))), _c(1.0))
    r = b.select(b.and_(neg, odd), b.fneg(r), r)
    below_zero = b.fcmp_ordered("<", x, _c(0.0))  # -0.0 keeps its sign for odd y but is no negative base
    r = b.select(b.and_(b.and_(below_zero, b.not_(is_int)), b.fcmp_ordered("==", ax, ax)),
                 b.select(b.fcmp_ordered("==", ax, _c(math.inf)), r, _c(math.nan)), r)
    one = b.or_(b.fcmp_ordered("==", y, _c(0.0)), b.fcmp_ordered("==", x, _c(1.0)))
    one = b.or_(one, b.and_(b.fcmp_ordered("==", ax, _c(1.0)), b.fcmp_ordered("==", _fabs(b, y), _c(math.inf))))
    return b.select(one, _c(1.0), r)


def _sincos_reduce(b, x):
    """x = k * pi/2 + r with |r| <= pi/4 (three-part Cody-Waite constants); returns (r, k mod 4)."""
    k = _call(b, "llvm.rint.f32", F32, [b.fmul(x, _c(2 / math.pi))])
    r = _call(b, "llvm.fma.f32", F32, [b.fneg(k), _c(1.5703125), x])
    r = _call(b, "llvm.fma.f32", F32, [b.fneg(k), _c(4.837512969970703125e-4), r])
    r = _call(b, "llvm.fma.f32", F32, [b.fneg(k), _c(7.54978995489188216e-8), r])
    q = b.and_(b.fptosi(k, I32), ir.Constant(I32, 3))
    return r, q


def _sin_poly(b, r):
    r2 = b.fmul(r, r)
    return b.fmul(r, _poly(b, r2, [1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800]))


def _cos_poly(b, r):
    r2 = b.fmul(r, r)
    return _poly(b, r2, [1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600])


def _sincos(b, x, cos: bool):
    r, q = _sincos_reduce(b, x)
    if cos:
        q = b.add(q, ir.Constant(I32, 1))
    s, c = _sin_poly(b, r), _cos_poly(b, r)
    odd = b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 1)), ir.Constant(I32, 0))
    v = b.select(odd, c, s)
    negate = b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 2)), ir.Constant(I32, 0))
    v = b.select(negate, b.fneg(v), v)
    inf = b.fcmp_ordered("==", _fabs(b, x), _c(math.inf))
    return b.select(inf, _c(math.nan), v)


F32_TABLE = {
    "exp": exp,
    "exp2": exp2,
    "log": log,
    "log2": lambda b, x: b.fmul(log(b, x), _c(LOG2E)),
    "sqrt": lambda b, x: _call(b, "llvm.sqrt.f32", F32, [x]),
    "sqrt_rn": lambda b, x: _call(b, "llvm.sqrt.f32", F32, [x]),
    "rsqrt": lambda b, x: b.fdiv(_c(1.0), _call(b, "llvm.sqrt.f32", F32, [x])),
    "sin": lambda b, x: _sincos(b, x, False),
    "cos": lambda b, x: _sincos(b, x, True),
    "tan": lambda b, x: b.fdiv(_sincos(b, x, False), _sincos(b, x, True)),
    "tanh": _tanh,
    "erf": _erf,
    "expm1": _expm1,
    "log1p": _log1p,
    "sigmoid": lambda b, x: b.fdiv(_c(1.0), b.fadd(_c(1.0), exp(b, b.fneg(x)))),
    "floor": lambda b, x: _call(b, "llvm.floor.f32", F32, [x]),
    "ceil": lambda b, x: _call(b, "llvm.ceil.f32", F32, [x]),
    "trunc": lambda b, x: _call(b, "llvm.trunc.f32", F32, [x]),
    "round": lambda b, x: _call(b, "llvm.round.f32", F32, [x]),  # half away from zero
}
LIBRARY = GpuMath("CUDA", F32_TABLE, _pow_f32, _atan2_f32)
unary, pow_, atan2 = LIBRARY.unary, LIBRARY.pow_, LIBRARY.atan2
