"""f32 math for every GPU target, written once over the few primitives a vendor supplies (:class:`F32Primitives`).

Vendors differ only in how they get 2**x (a one-instruction hardware approximation, or an LLVM intrinsic their
backend lowers to an accurate sequence) and in whether their LLVM backend already lowers exp, log and log2
accurately over the whole range (where it has only approximations, those come from here).
Everything else is built here once, correct over the whole f32 range, subnormals, infinities and NaN included:

- exp: n = rint(x log2e) and the reduced r = x log2e - n computed with a two-part log2e in fused multiply-adds,
  2**r by the vendor's reduced exp2 (|r| <= 1/2, where hardware approximations are good), then scaled by 2**n in
  two multiplies so that results near overflow (n = 128) and in the subnormal range are right. Rounding x log2e
  itself to f32, as ``exp2(x * log2e)`` does, costs up to 2**-24 * 128 in the exponent: tens of ulp near
  overflow (2e-6 relative at e**63 .. e**88).
- log: x = m 2**e with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals normalised with integer operations
  only, ``f32ir.split_exponent``), log m = 2 atanh((m-1)/(m+1)); within 2.5 ulp.
- expm1 by its own reduction (no cancellation near 0 or at ln2 multiples), log1p, tanh, erf, sigmoid (from
  exp(-|x|), so the tail below e**-87 keeps its subnormal results), atan, atan2 here; sin, cos and tan in
  :mod:`.trig32` (Payne-Hanek for huge arguments); pow in :mod:`.pow32` (log2 in double-f32, so large and
  subnormal results stay accurate).

``library(backend, primitives)`` returns the target's :class:`~.mathlib.GpuMath`, which adds f16 (through these)
and f64 (:mod:`.mathlib64`). The host tests build the same IR with host intrinsics standing in for the vendor's
and measure it in ulps over the whole range (``tests/gpu/test_f32_math.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from . import pow32, trig32
from .f32ir import LOG2E, LOG2E_HI, LOG2E_LO, c, f, fabs, i32, poly, scale, split_exponent
from .mathlib import GpuMath
from .types import F32, I32

LN2 = 0.6931471805599453
LN2_HI = 0.693145751953125  # 16 significant bits: n * LN2_HI is exact for |n| < 2**8
LN2_LO = LN2 - LN2_HI  # rounded to f32 where used


@dataclass(frozen=True)
class F32Primitives:
    """What a GPU vendor gives the f32 library. Each is ``fn(b, x) -> value`` on f32 LLVM values.

    ``exp2_reduced``: 2**x for |x| <= 1/2 (a hardware approximation within about 2 ulp is fine); every exponential
    here is built on it. ``exp2``: what ``tl.exp2`` is, over the whole range (may be the same function when it is
    good everywhere). ``exp2_flushes_subnormals``: ``exp2``'s results below 2**-126 are zeros (a flush-to-zero
    instruction); tests read it. ``exp2_full``: 2**x within about 2 ulp over the whole range, subnormal results
    included (one hardware instruction and a scaling): then ``exp`` is :func:`exp_corrected`, a few instructions
    cheaper than :func:`exp_with`. ``exp``, ``log``, ``log2``: the vendor's own when its backend lowers them
    accurately over the whole range, else None and this module's are used. ``table_address_space``: where the
    constant table of 2/pi's bits lives (the reduction of huge sin/cos arguments): the target's constant memory.
    ``div``: ``fn(b, x, y)``, f32 ``fdiv`` (Triton's ``/``) as the vendor's full-range approximate division, within 2
    ulp; None: the correctly rounded quotient."""
    exp2_reduced: Callable
    exp2: Callable
    exp2_flushes_subnormals: bool = False
    exp2_full: Optional[Callable] = None
    exp: Optional[Callable] = None
    log: Optional[Callable] = None
    log2: Optional[Callable] = None
    table_address_space: int = 0
    div: Optional[Callable] = None


# -- exponentials ----------------------------------------------------------------------------------------------------
def exp_with(exp2_reduced):
    """e**x from ``exp2_reduced``: n = rint(x log2e), then 2**(x log2e - n) from the vendor, times 2**n exactly.
    The reduced argument is x L_hi - n (one fused rounding of a value below 1/2) plus x L_lo, with log2e =
    L_hi + L_lo: within 2**-25, where x log2e rounded first would be off by up to 2**-24 * 150. n is computed
    from x clamped to [-104, 89] (beyond, the result is 0 or inf anyway, and the reduced argument, computed from
    x itself, drives 2**r to 0 or inf); NaN travels through it."""
    def exp(b, x):
        xc = f(b, "minnum", f(b, "maxnum", x, c(-104.0)), c(89.0))
        k = f(b, "rint", b.fmul(xc, c(LOG2E)))
        r = f(b, "fma", x, c(LOG2E_LO), f(b, "fma", x, c(LOG2E_HI), b.fneg(k)))
        return scale(b, exp2_reduced(b, r), b.fptosi(k, I32))
    return exp


def exp_corrected(exp2_full):
    """e**x as 2**t (1 + d ln2) with t = RN(x log2e) and d = x log2e - t from two fmas (log2e as a pair): one
    ``exp2_full`` and five arithmetic instructions, where rounding x log2e first would be off by up to 2**-24 * 150
    relative near the ends of the range. The correction is NaN only where 2**t is already the answer (x = +-inf:
    d is inf - inf; 2**t = inf with d < 0), so a NaN there gives 2**t back."""
    def exp(b, x):
        t = b.fmul(x, c(LOG2E_HI))
        d = f(b, "fma", x, c(LOG2E_LO), f(b, "fma", x, c(LOG2E_HI), b.fneg(t)))
        e = exp2_full(b, t)
        r = f(b, "fma", e, b.fmul(d, c(LN2)), e)
        return b.select(b.fcmp_unordered("uno", r, r), e, r)
    return exp


def expm1(b, x):
    """e**x - 1 without cancellation anywhere: n = rint(x log2e), r = x - n ln2, p = expm1(r) by its Taylor series
    (|r| <= ln2/2: 10 terms), then 2**n p + (2**n - 1), exact but for one rounding, as (p - (2**-n - 1)) 2**n
    for n >= 0 (scaled in two steps up to overflow) and as fma(2**n, p, 2**n - 1) below. x is clamped to
    [-30, 89] first (expm1 is -1 in f32 below -17; above 88.8 it overflows), keeping NaN."""
    xc = b.select(b.fcmp_ordered("<", x, c(-30.0)), c(-30.0), b.select(b.fcmp_ordered(">", x, c(89.0)), c(89.0), x))
    k = f(b, "rint", f(b, "minnum", f(b, "maxnum", b.fmul(xc, c(LOG2E)), c(-44.0)), c(129.0)))  # never NaN
    k = b.fadd(k, c(0.0))  # k = +0 for x = -0, so that r (and expm1) is -0 there
    r = f(b, "fma", b.fneg(k), c(LN2_HI), xc)
    r = f(b, "fma", b.fneg(k), c(LN2_LO), r)
    p = b.fmul(r, poly(b, r, [1 / math.factorial(j + 1) for j in range(10)]))
    n = b.fptosi(k, I32)
    neg = b.icmp_signed("<", n, i32(0))
    nn = b.select(neg, i32(0), n)  # both forms are built for every lane: keep each one's power in range
    up = scale(b, b.fsub(p, b.fsub(scale(b, c(1.0), b.neg(nn)), c(1.0))), nn)  # p - 0 keeps expm1(-0) = -0
    s = scale(b, c(1.0), b.select(neg, n, i32(0)))
    down = f(b, "fma", s, p, b.fsub(s, c(1.0)))
    return b.select(neg, down, up)


# -- logarithms ------------------------------------------------------------------------------------------------------
def log(b, x):
    """Natural log within 2.5 ulp over the whole range: x = m 2**e (``split_exponent``, subnormals by integer
    operations), log m = 2 atanh(s) with s = (m-1)/(m+1), |s| <= 0.172."""
    m, e = split_exponent(b, x)
    fm = b.fsub(m, c(1.0))
    s = b.fdiv(fm, b.fadd(m, c(1.0)))
    s2 = b.fmul(s, s)
    lm = b.fmul(s, poly(b, s2, [2.0, 2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]))
    r = b.fadd(lm, b.fmul(b.sitofp(e, F32), c(LN2)))
    # special values: +-0 -> -inf, negative -> nan, inf -> inf, nan -> nan
    r = b.select(b.fcmp_ordered("==", x, c(0.0)), c(-math.inf), r)
    r = b.select(b.fcmp_unordered("<", x, c(0.0)), c(math.nan), r)
    return b.select(b.fcmp_ordered("==", x, c(math.inf)), c(math.inf), r)


def log2_via(log_fn):
    return lambda b, x: b.fmul(log_fn(b, x), c(LOG2E))


def log1p_with(log_fn):
    """log(1 + x) = log(u) x / (u - 1) with u = 1 + x rounded: the quotient corrects u's rounding error."""
    def log1p(b, x):
        u = b.fadd(x, c(1.0))
        d = b.fsub(u, c(1.0))
        r = b.fmul(log_fn(b, u), b.fdiv(x, d))
        r = b.select(b.fcmp_ordered("==", d, c(0.0)), x, r)
        return b.select(b.fcmp_ordered("==", u, c(math.inf)), c(math.inf), r)
    return log1p


# -- functions of exp ------------------------------------------------------------------------------------------------
def tanh_with(exp_fn):
    def tanh(b, x):
        a = fabs(b, x)
        x2 = b.fmul(x, x)
        small = b.fmul(x, poly(b, x2, [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925,
                                         21844 / 6081075, -929569 / 638512875, 6404582 / 10854718875]))
        e = exp_fn(b, b.fmul(a, c(2.0)))
        big = f(b, "copysign", b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(e, c(1.0)))), x)
        return b.select(b.fcmp_ordered("<", a, c(0.55)), small, big)
    return tanh


def erf_with(exp_fn):
    def erf(b, x):
        a = fabs(b, x)
        x2 = b.fmul(x, x)
        k = 2 / math.sqrt(math.pi)
        small = b.fmul(x, poly(b, x2, [k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320, k / 9360, -k / 75600]))
        # Abramowitz & Stegun 7.1.26 for |x| >= 0.5 (absolute error 1.5e-7 where erf >= 0.52)
        t = b.fdiv(c(1.0), b.fadd(c(1.0), b.fmul(c(0.3275911), a)))
        p = b.fmul(t, poly(b, t, [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429]))
        big = f(b, "copysign", b.fsub(c(1.0), b.fmul(p, exp_fn(b, b.fneg(x2)))), x)
        return b.select(b.fcmp_ordered("<", a, c(0.5)), small, big)
    return erf


def sigmoid_with(exp_fn):
    """1 / (1 + e**-x) for x >= 0 and e**x / (1 + e**x) below, both from e = e**-|x| <= 1: no overflow, and the
    tail below x = -87 keeps its (subnormal) values instead of 1 / inf = 0."""
    def sigmoid(b, x):
        e = exp_fn(b, b.fneg(fabs(b, x)))
        num = b.select(b.fcmp_ordered("<", x, c(0.0)), e, c(1.0))
        return b.fdiv(num, b.fadd(c(1.0), e))
    return sigmoid


# -- inverse trigonometry --------------------------------------------------------------------------------------------
def atan_nonneg(b, t):
    """atan for t >= 0: reduce to |z| <= tan(pi/8) through atan(t) = pi/4 + atan((t-1)/(t+1)), and 1/t."""
    inv = b.fcmp_ordered(">", t, c(1.0))
    t = b.select(inv, b.fdiv(c(1.0), t), t)
    mid = b.fcmp_ordered(">", t, c(0.41421356))
    z = b.select(mid, b.fdiv(b.fsub(t, c(1.0)), b.fadd(t, c(1.0))), t)
    z2 = b.fmul(z, z)
    r = b.fmul(z, poly(b, z2, [1.0, -1 / 3, 1 / 5, -1 / 7, 1 / 9, -1 / 11, 1 / 13, -1 / 15, 1 / 17, -1 / 19]))
    r = b.select(mid, b.fadd(r, c(math.pi / 4)), r)
    return b.select(inv, b.fsub(c(math.pi / 2), r), r)


def atan2(b, y, x):
    """C atan2: the quadrant from the signs (of zeros too), pi/4 multiples for two infinities, NaN for a NaN."""
    ay, ax = fabs(b, y), fabs(b, x)
    r = atan_nonneg(b, b.fdiv(ay, ax))
    r = b.select(b.fcmp_ordered("==", ax, c(0.0)), b.select(b.fcmp_ordered("==", ay, c(0.0)), c(0.0),
                                                            c(math.pi / 2)), r)
    both_inf = b.and_(b.fcmp_ordered("==", ax, c(math.inf)), b.fcmp_ordered("==", ay, c(math.inf)))
    r = b.select(both_inf, c(math.pi / 4), r)
    r = b.select(b.fcmp_ordered("<", x, c(0.0)), b.fsub(c(math.pi), r), r)
    neg_zero_x = b.icmp_signed("<", b.bitcast(x, I32), i32(0))
    r = b.select(b.and_(b.fcmp_ordered("==", x, c(0.0)), neg_zero_x),
                 b.select(b.fcmp_ordered("==", ay, c(0.0)), c(math.pi), r), r)
    return b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), f(b, "copysign", r, y))


# -- the table -------------------------------------------------------------------------------------------------------
def table(p: F32Primitives) -> dict:
    """name -> fn(b, x) for every f32 unary op, from the vendor's primitives."""
    exp = p.exp or (exp_corrected(p.exp2_full) if p.exp2_full else exp_with(p.exp2_reduced))
    log_fn = p.log or log
    sqrt = lambda b, x: f(b, "sqrt", x)  # noqa: E731  (IEEE sqrt: correctly rounded everywhere)
    return {
        "exp": exp,
        "exp2": p.exp2,
        "log": log_fn,
        "log2": p.log2 or log2_via(log_fn),
        "sqrt": sqrt,
        "sqrt_rn": sqrt,
        "rsqrt": lambda b, x: b.fdiv(c(1.0), sqrt(b, x)),
        "sin": trig32.sin(p.table_address_space),
        "cos": trig32.cos(p.table_address_space),
        "tan": trig32.tan(p.table_address_space),
        "tanh": tanh_with(exp),
        "erf": erf_with(exp),
        "expm1": expm1,
        "log1p": log1p_with(log_fn),
        "sigmoid": sigmoid_with(exp),
        "floor": lambda b, x: f(b, "floor", x),
        "ceil": lambda b, x: f(b, "ceil", x),
        "trunc": lambda b, x: f(b, "trunc", x),
        "round": lambda b, x: f(b, "round", x),  # half away from zero
    }


def library(backend: str, p: F32Primitives) -> GpuMath:
    """The target's whole math library: these f32 functions, f16 through them, f64 from :mod:`.mathlib64`."""
    return GpuMath(backend, table(p), pow32.pow_with(p.exp2_reduced), atan2, p.div)
