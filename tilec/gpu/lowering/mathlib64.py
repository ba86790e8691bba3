"""f64 math as range reductions and polynomials in plain LLVM IR (fma, rint, fabs, copysign, bit casts), for GPU
targets whose LLVM backend has no f64 transcendentals: it either reports "no libcall available" or aborts the
process on ``llvm.sin.f64`` and friends. Nothing here calls a library, so any target can use it; each
function's accuracy is measured in ulps against mpmath (the AMD backend's math tests run this very IR on the host).

Covered: exp, exp2, expm1, log, log2, log1p, pow (log in double-double, so large results keep their accuracy),
sin, cos, tan (a four-part Cody-Waite reduction, measured within 3 ulp up to |x| = 1e8; beyond that the reduction
degrades, there is no Payne-Hanek), tanh, sigmoid, atan2, erf (a positive series below 1.2, erfc's continued
fraction from 1.2 to 6; within 4 ulp).
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _call

F64, I64, I32 = ir.DoubleType(), ir.IntType(64), ir.IntType(32)
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # LN2_HI has 32 trailing zero bits
LOG2E = 1.4426950408889634
# pi/2 in three parts of 33 bits (fdlibm's pio2_1, pio2_2, pio2_3): k * part is exact for |k| < 2^20
PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21)
PIO2_TAIL = 8.47842766036889956997e-32
TWO3_HI = 2 / 3
TWO3_LO = 3.700743415417188e-17  # 2/3 - TWO3_HI
EXP_MAX, EXP_MIN = 709.782712893384, -745.1332191019412


def _c(v):
    return ir.Constant(F64, v)


def _f(b, name, *args):
    return _call(b, f"llvm.{name}.f64", F64, list(args))


def _poly(b, x, coeffs):
    """coeffs[0] + coeffs[1] x + ... by Horner's rule with fused multiply-adds."""
    acc = _c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = _f(b, "fma", acc, x, _c(c))
    return acc


def _lt(b, x, v):
    return b.fcmp_ordered("<", x, _c(v))


def _gt(b, x, v):
    return b.fcmp_ordered(">", x, _c(v))


def _pow2(b, n):
    """2.0 ** n for an i32 ``n`` in [-1022, 1023], built from its exponent bits."""
    bits = b.shl(b.zext(b.add(n, ir.Constant(I32, 1023)), I64), ir.Constant(I64, 52))
    return b.bitcast(bits, F64)


def _scale(b, x, n):
    """x * 2**n for i32 ``n`` in [-2044, 2046], in two exact steps (no intermediate overflow or early
    underflow for the results exp produces)."""
    h = b.ashr(n, ir.Constant(I32, 1))
    return b.fmul(b.fmul(x, _pow2(b, h)), _pow2(b, b.sub(n, h)))


_EXP_TAYLOR = [1 / math.factorial(k) for k in range(14)]  # |r| <= ln2/2: truncation below 1e-18


def _exp_dd(b, hi, lo):
    """e**(hi + lo) for a double-double argument (|lo| <= ulp(hi)): lo joins the reduced argument."""
    k = _f(b, "rint", b.fmul(hi, _c(LOG2E)))
    r = _f(b, "fma", b.fneg(k), _c(LN2_HI), hi)
    r = b.fadd(_f(b, "fma", b.fneg(k), _c(LN2_LO), r), lo)
    k = b.select(b.fcmp_ordered("ord", k, k), k, _c(0.0))
    k = b.select(_gt(b, _f(b, "fabs", k), 2000.0), _c(0.0), k)
    return _special_exp(b, hi, _exp_reduced(b, r, b.fptosi(k, I32)))


def _exp_reduced(b, r, n):
    """e**r * 2**n for |r| <= ln2/2."""
    return _scale(b, _poly(b, r, _EXP_TAYLOR), n)


def _special_exp(b, x, v):
    v = b.select(_gt(b, x, EXP_MAX), _c(math.inf), v)
    v = b.select(_lt(b, x, EXP_MIN), _c(0.0), v)
    return b.select(b.fcmp_unordered("uno", x, x), x, v)


def exp(b, x):
    k = _f(b, "rint", b.fmul(x, _c(LOG2E)))
    r = _f(b, "fma", b.fneg(k), _c(LN2_HI), x)
    r = _f(b, "fma", b.fneg(k), _c(LN2_LO), r)
    k = b.select(b.fcmp_ordered("ord", k, k), k, _c(0.0))  # NaN/inf would make fptosi poison
    k = b.select(_gt(b, _f(b, "fabs", k), 2000.0), _c(0.0), k)  # |x| that large is settled by _special_exp
    return _special_exp(b, x, _exp_reduced(b, r, b.fptosi(k, I32)))


def exp2(b, x):
    k = _f(b, "rint", x)
    f = b.fsub(x, k)  # exact
    r = _f(b, "fma", f, _c(LN2_HI), b.fmul(f, _c(LN2_LO)))
    k = b.select(b.fcmp_ordered("ord", k, k), k, _c(0.0))
    k = b.select(_gt(b, _f(b, "fabs", k), 2000.0), _c(0.0), k)
    v = _exp_reduced(b, r, b.fptosi(k, I32))
    v = b.select(_gt(b, x, 1024.0), _c(math.inf), v)
    v = b.select(_lt(b, x, -1075.0), _c(0.0), v)
    return b.select(b.fcmp_unordered("uno", x, x), x, v)


def expm1(b, x):
    small = b.fmul(x, _poly(b, x, [1 / math.factorial(k + 1) for k in range(19)]))  # |x| < 0.5
    big = b.fsub(exp(b, x), _c(1.0))
    return b.select(_lt(b, _f(b, "fabs", x), 0.5), small, big)


_LOG_R = [2 / (2 * k + 1) for k in range(1, 13)]  # R(z) = 2z/3 + 2z^2/5 + ..., z = s^2 <= 0.0295


def _log_parts(b, x):
    """(e as f64, log(m)) with x = m * 2**e, m in [sqrt(1/2), sqrt(2)); subnormal x are scaled first.
    log(m) = f - s (f - R(s^2)), f = m - 1, s = f / (2 + f) (fdlibm's arrangement: one rounding at the end)."""
    tiny = _lt(b, x, 2.2250738585072014e-308)
    xs = b.select(tiny, b.fmul(x, _c(2.0 ** 54)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.trunc(b.lshr(bits, ir.Constant(I64, 52)), I32), ir.Constant(I32, 1023))
    e = b.select(tiny, b.sub(e, ir.Constant(I32, 54)), e)
    mant = b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 0x3FF << 52))
    m = b.bitcast(mant, F64)
    big = _gt(b, m, math.sqrt(2.0))
    m = b.select(big, b.fmul(m, _c(0.5)), m)
    e = b.select(big, b.add(e, ir.Constant(I32, 1)), e)
    f = b.fsub(m, _c(1.0))  # exact (Sterbenz)
    s = b.fdiv(f, b.fadd(f, _c(2.0)))
    z = b.fmul(s, s)
    R = b.fmul(z, _poly(b, z, _LOG_R))
    lm = b.fsub(f, b.fmul(s, b.fsub(f, R)))
    return b.sitofp(e, F64), lm


def _log_special(b, x, v):
    v = b.select(b.fcmp_ordered("==", x, _c(0.0)), _c(-math.inf), v)
    v = b.select(_lt(b, x, 0.0), _c(math.nan), v)
    v = b.select(b.fcmp_ordered("==", x, _c(math.inf)), x, v)
    return b.select(b.fcmp_unordered("uno", x, x), x, v)


def _log_dd(b, x):
    """log(x) as a double-double (hi, lo) for finite positive x: s = f / (2 + f) carried in two parts, so that
    log(m) = 2 s + s R(s^2) and e ln 2 add up with about 2^-100 relative error."""
    tiny = _lt(b, x, 2.2250738585072014e-308)
    xs = b.select(tiny, b.fmul(x, _c(2.0 ** 54)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.trunc(b.lshr(bits, ir.Constant(I64, 52)), I32), ir.Constant(I32, 1023))
    e = b.select(tiny, b.sub(e, ir.Constant(I32, 54)), e)
    m = b.bitcast(b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 0x3FF << 52)), F64)
    big = _gt(b, m, math.sqrt(2.0))
    m = b.select(big, b.fmul(m, _c(0.5)), m)
    e = b.sitofp(b.select(big, b.add(e, ir.Constant(I32, 1)), e), F64)
    f = b.fsub(m, _c(1.0))
    d = b.fadd(f, _c(2.0))
    d_lo = b.fadd(b.fsub(_c(2.0), d), f)  # 2 + f = d + d_lo exactly (|f| < 2)
    s = b.fdiv(f, d)
    s_lo = b.fdiv(b.fsub(_f(b, "fma", b.fneg(s), d, f), b.fmul(s, d_lo)), d)
    # log(m) = 2 s + 2 s^3 / 3 + s^5 R2(s^2): the cubic term in double-double too (alone it is 1% of log m)
    z = b.fmul(s, s)
    z_lo = _f(b, "fma", s, s, b.fneg(z))
    c3 = b.fmul(s, z)
    c3_lo = b.fadd(_f(b, "fma", s, z, b.fneg(c3)), b.fadd(b.fmul(s, z_lo), b.fmul(_c(3.0), b.fmul(z, s_lo))))
    t3 = b.fmul(_c(TWO3_HI), c3)
    t3_lo = b.fadd(_f(b, "fma", _c(TWO3_HI), c3, b.fneg(t3)),
                   b.fadd(b.fmul(_c(TWO3_HI), c3_lo), b.fmul(_c(TWO3_LO), c3)))
    rest = b.fmul(c3, b.fmul(z, _poly(b, z, _LOG_R[1:])))  # s^5 (2/5 + 2 s^2 / 7 + ...)
    a_hi, a_lo = b.fmul(e, _c(LN2_HI)), b.fmul(e, _c(LN2_LO))  # a_hi exact
    t = b.fmul(_c(2.0), s)  # exact
    hi = b.fadd(a_hi, t)
    err1 = b.fsub(t, b.fsub(hi, a_hi))  # Fast2Sum: |a_hi| >= |t| or a_hi = 0
    hi2, err2 = _two_sum(b, hi, t3)
    lo = b.fadd(b.fadd(err1, err2), b.fadd(b.fadd(a_lo, b.fmul(_c(2.0), s_lo)), b.fadd(t3_lo, rest)))
    both = b.fadd(hi2, lo)
    return both, b.fsub(lo, b.fsub(both, hi2))


def _two_sum(b, x, y):
    """(x + y rounded, its exact rounding error)."""
    s = b.fadd(x, y)
    bb = b.fsub(s, x)
    return s, b.fadd(b.fsub(x, b.fsub(s, bb)), b.fsub(y, bb))


def pow_(b, x, y):
    """C pow: |x|**y = e**(y log|x|) with log|x| and the product in double-double, the sign from an odd integer
    y, NaN for a negative base with a non-integer exponent; pow(x, 0) = pow(1, y) = 1, pow(-1, +-inf) = 1;
    zeros, infinities and NaNs follow from the plain formula."""
    ax = _f(b, "fabs", x)
    l_hi, l_lo = _log_dd(b, b.select(b.fcmp_ordered("==", ax, _c(0.0)), _c(1.0), ax))
    p = b.fmul(y, l_hi)
    p_lo = b.fadd(_f(b, "fma", y, l_hi, b.fneg(p)), b.fmul(y, l_lo))
    p_lo = b.select(b.fcmp_ordered("<", _f(b, "fabs", p), _c(math.inf)), p_lo, _c(0.0))
    r = _exp_dd(b, p, p_lo)
    plain = exp(b, b.fmul(y, log(b, ax)))  # zeros, infinities, NaNs
    regular = b.and_(b.and_(b.fcmp_ordered(">", ax, _c(0.0)), b.fcmp_ordered("<", ax, _c(math.inf))),
                     b.fcmp_ordered("<", _f(b, "fabs", y), _c(math.inf)))
    r = b.select(regular, r, plain)
    is_int = b.fcmp_ordered("==", _f(b, "floor", y), y)
    half = b.fmul(y, _c(0.5))
    odd = b.and_(is_int, b.fcmp_ordered("!=", _f(b, "floor", half), half))
    neg = b.icmp_signed("<", b.bitcast(x, I64), ir.Constant(I64, 0))
    r = b.select(b.and_(neg, odd), b.fneg(r), r)
    below_zero = b.fcmp_ordered("<", x, _c(0.0))  # -0.0 keeps its sign for odd y but is no negative base
    finite_y = b.fcmp_ordered("<", _f(b, "fabs", y), _c(math.inf))
    finite_x = b.fcmp_ordered("<", ax, _c(math.inf))
    r = b.select(b.and_(b.and_(below_zero, b.not_(is_int)), b.and_(finite_y, finite_x)), _c(math.nan), r)
    one = b.or_(b.fcmp_ordered("==", y, _c(0.0)), b.fcmp_ordered("==", x, _c(1.0)))
    one = b.or_(one, b.and_(b.fcmp_ordered("==", ax, _c(1.0)), b.fcmp_ordered("==", _f(b, "fabs", y), _c(math.inf))))
    return b.select(one, _c(1.0), r)


def log(b, x):
    e, lm = _log_parts(b, x)
    v = _f(b, "fma", e, _c(LN2_HI), _f(b, "fma", e, _c(LN2_LO), lm))  # e * LN2_HI is exact
    return _log_special(b, x, v)


def log2(b, x):
    e, lm = _log_parts(b, x)
    hi = 1.4426950408889634
    lo = 2.0355273740931033e-17  # log2(e) - hi
    v = b.fadd(e, _f(b, "fma", lm, _c(hi), b.fmul(lm, _c(lo))))
    return _log_special(b, x, v)


def log1p(b, x):
    u = b.fadd(x, _c(1.0))
    d = b.fsub(u, _c(1.0))
    r = b.fmul(log(b, u), b.fdiv(x, d))  # log(u) * x / (u - 1) corrects the rounding of 1 + x
    r = b.select(b.fcmp_ordered("==", d, _c(0.0)), x, r)
    return b.select(b.fcmp_ordered("==", u, _c(math.inf)), _c(math.inf), r)


_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(11)]
_COS = [(-1) ** k / math.factorial(2 * k) for k in range(12)]


def _sincos(b, x, cos: bool):
    """x = k pi/2 + r, |r| <= pi/4, then the sin or cos series by quadrant."""
    k = _f(b, "rint", b.fmul(x, _c(2 / math.pi)))
    nk = b.fneg(k)
    r = _f(b, "fma", nk, _c(PIO2[0]), x)
    r = _f(b, "fma", nk, _c(PIO2[1]), r)
    r = _f(b, "fma", nk, _c(PIO2[2]), r)
    r = _f(b, "fma", nk, _c(PIO2_TAIL), r)
    finite = b.fcmp_ordered("<", _f(b, "fabs", k), _c(2.0 ** 62))
    q = b.trunc(b.fptosi(b.select(finite, k, _c(0.0)), I64), I32)
    q = b.and_(q, ir.Constant(I32, 3))
    if cos:
        q = b.add(q, ir.Constant(I32, 1))
    r2 = b.fmul(r, r)
    s = b.fmul(r, _poly(b, r2, _SIN))
    c = _poly(b, r2, _COS)
    v = b.select(b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 1)), ir.Constant(I32, 0)), c, s)
    v = b.select(b.icmp_unsigned("!=", b.and_(q, ir.Constant(I32, 2)), ir.Constant(I32, 0)), b.fneg(v), v)
    return b.select(b.fcmp_ordered("==", _f(b, "fabs", x), _c(math.inf)), _c(math.nan), v)


def tanh(b, x):
    """tanh |x| = t / (t + 2) with t = expm1(2 |x|): a few ulp everywhere, 1 beyond 22."""
    a = _f(b, "fabs", x)
    t = expm1(b, b.fmul(a, _c(2.0)))
    v = b.select(_gt(b, a, 22.0), _c(1.0), b.fdiv(t, b.fadd(t, _c(2.0))))
    v = _f(b, "copysign", v, x)
    return b.select(b.fcmp_unordered("uno", x, x), x, v)


def erf(b, x):
    """erf |x| = 2/sqrt(pi) e^(-x^2) |x| (1 + 2x^2/3 (1 + 2x^2/5 (1 + ...))) below 1.2 (45 terms, all positive:
    no cancellation; e^(-x^2) from x^2 in double-double); 1 - erfc |x| up to 6 with erfc |x| = e^(-x^2) /
    (sqrt(pi) (x + 1/2 / (x + 1 / (x + 3/2 / ...)))) (120 terms, evaluated backwards); 1 beyond."""
    a = _f(b, "fabs", x)
    z = b.fmul(a, a)
    z_lo = _f(b, "fma", a, a, b.fneg(z))
    g = _exp_dd(b, b.fneg(z), b.fneg(z_lo))
    two_z = b.fmul(z, _c(2.0))
    s = _c(1.0)
    for n in range(45, 0, -1):
        s = _f(b, "fma", b.fmul(two_z, _c(1.0 / (2 * n + 1))), s, _c(1.0))
    small = b.fmul(b.fmul(g, _c(2 / math.sqrt(math.pi))), b.fmul(a, s))
    a2 = b.select(_lt(b, a, 1.2), _c(1.2), b.select(_gt(b, a, 6.0), _c(6.0), a))  # keep the fraction finite
    t = a2
    for n in range(120, 0, -1):
        t = b.fadd(a2, b.fdiv(_c(n / 2), t))
    erfc = b.fdiv(exp(b, b.fneg(b.fmul(a2, a2))), b.fmul(t, _c(math.sqrt(math.pi))))
    big = b.fsub(_c(1.0), erfc)
    v = b.select(_lt(b, a, 1.2), small, b.select(_lt(b, a, 6.0), big, _c(1.0)))
    v = _f(b, "copysign", v, x)
    return b.select(b.fcmp_unordered("uno", x, x), x, v)


_ATAN = [(-1) ** k / (2 * k + 1) for k in range(24)]  # |z| <= tan(pi/8)


def _atan(b, t):
    """atan for t >= 0: atan(t) = pi/2 - atan(1/t) above 1, pi/4 + atan((t-1)/(t+1)) above tan(pi/8)."""
    inv = _gt(b, t, 1.0)
    t = b.select(inv, b.fdiv(_c(1.0), t), t)
    mid = _gt(b, t, math.tan(math.pi / 8))
    z = b.select(mid, b.fdiv(b.fsub(t, _c(1.0)), b.fadd(t, _c(1.0))), t)
    r = b.fmul(z, _poly(b, b.fmul(z, z), _ATAN))
    r = b.select(mid, b.fadd(r, _c(math.pi / 4)), r)
    return b.select(inv, b.fsub(_c(math.pi / 2), r), r)


def atan2(b, y, x):
    ay, ax = _f(b, "fabs", y), _f(b, "fabs", x)
    both_inf = b.and_(b.fcmp_ordered("==", ay, _c(math.inf)), b.fcmp_ordered("==", ax, _c(math.inf)))
    r = _atan(b, b.fdiv(ay, ax))
    r = b.select(both_inf, _c(math.pi / 4), r)
    r = b.select(b.fcmp_ordered("==", ax, _c(0.0)),
                 b.select(b.fcmp_ordered("==", ay, _c(0.0)), _c(0.0), _c(math.pi / 2)), r)
    neg_x = b.icmp_signed("<", b.bitcast(x, I64), ir.Constant(I64, 0))  # -0.0 included
    r = b.select(neg_x, b.fsub(_c(math.pi), r), r)
    r = _f(b, "copysign", r, y)
    nan = b.or_(b.fcmp_unordered("uno", x, x), b.fcmp_unordered("uno", y, y))
    return b.select(nan, _c(math.nan), r)


UNARY = {
    "exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log1p": log1p,
    "sin": lambda b, x: _sincos(b, x, False), "cos": lambda b, x: _sincos(b, x, True),
    "tan": lambda b, x: b.fdiv(_sincos(b, x, False), _sincos(b, x, True)),
    "tanh": tanh, "erf": erf, "sigmoid": lambda b, x: b.fdiv(_c(1.0), b.fadd(_c(1.0), exp(b, b.fneg(x)))),
}
