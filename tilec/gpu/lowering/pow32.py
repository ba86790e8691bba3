"""f32 pow over the whole range: |x|**y = 2**(y log2|x|) with log2|x| in double-f32 (a hi + lo pair, within
2**-29 relative) and the product y log2|x| kept as a pair too, so that results near overflow (|y log2 x| up to 128) and
in the subnormal range keep a few ulp. In plain f32, y log2 x rounded loses up to 2**-24 * 128 of the exponent:
~40 ulp of the result. 2**(hi + lo) is the vendor's reduced exp2 on (hi - rint(hi)) + lo, scaled exactly.
Subnormal bases are normalised with integer operations (``f32ir.split_exponent``).
"""
from __future__ import annotations

import math

from .f32ir import LOG2E_HI, LOG2E_LO, c, f, fabs, i32, poly, scale, split_exponent
from .types import F32, I32


def _fast_two_sum(b, a, x):
    """(s, e) with s + e = a + x exactly, for |a| >= |x| or a == 0."""
    s = b.fadd(a, x)
    return s, b.fsub(x, b.fsub(s, a))


def log2_pair(b, ax):
    """log2(ax) for ax >= 0 as (hi, lo): m = ax 2**-e in [sqrt(1/2), sqrt(2)), log m = 2s + 2s^3/3 + ... with
    s = (m-1)/(m+1) carried as a pair; 0 gives (-inf, 0), inf (inf, 0), NaN (NaN, 0)."""
    m, e = split_exponent(b, ax)
    fm = b.fsub(m, c(1.0))  # exact
    u = b.fadd(fm, c(2.0))
    u_lo = b.fsub(fm, b.fsub(u, c(2.0)))  # u + u_lo = fm + 2 exactly
    rcp = b.fdiv(c(1.0), u)
    s = b.fmul(fm, rcp)
    res = b.fsub(f(b, "fma", b.fneg(s), u, fm), b.fmul(s, u_lo))  # fm - s (fm + 2)
    s_lo = b.fmul(res, rcp)
    z = b.fmul(s, s)
    tail = b.fmul(b.fmul(s, z), poly(b, z, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]))  # |s| <= 0.172: 2**-34 left
    # ln m = 2 atanh(s + s_lo) = 2s + (tail + 2 s_lo (1 + z)): s_lo also moves the tail (d/ds of 2s^3/3 = 2z)
    l_hi, l_lo = _fast_two_sum(b, b.fmul(s, c(2.0)), f(b, "fma", s_lo, f(b, "fma", z, c(2.0), c(2.0)), tail))
    p_hi = b.fmul(l_hi, c(LOG2E_HI))
    p_lo = f(b, "fma", l_hi, c(LOG2E_HI), b.fneg(p_hi))  # exact product error
    p_lo = b.fadd(p_lo, f(b, "fma", l_hi, c(LOG2E_LO), b.fmul(l_lo, c(LOG2E_HI))))
    t_hi, t_err = _fast_two_sum(b, b.sitofp(e, F32), p_hi)  # |e| >= 1 > |p_hi|, or e = 0
    hi, lo = _fast_two_sum(b, t_hi, b.fadd(t_err, p_lo))
    special = b.or_(b.fcmp_unordered("==", ax, c(0.0)), b.fcmp_ordered("==", ax, c(math.inf)))  # 0, inf, NaN
    log2_special = b.select(b.fcmp_ordered("==", ax, c(0.0)), c(-math.inf), ax)
    return b.select(special, log2_special, hi), b.select(special, c(0.0), lo)


def exp2_pair(b, hi, lo, exp2_reduced):
    """2**(hi + lo) for |lo| small against hi's ulp: k = rint(hi), 2**((hi - k) + lo) from the vendor, times 2**k
    in two exact steps. k is clamped to [-160, 160] (beyond, (hi - k) drives the vendor's 2**x to 0 or inf), and
    lo is dropped where hi is huge, infinite or NaN (where it may be NaN itself)."""
    k = f(b, "rint", f(b, "minnum", f(b, "maxnum", hi, c(-160.0)), c(160.0)))  # never NaN
    lo = b.select(b.fcmp_ordered("<", fabs(b, hi), c(256.0)), lo, c(0.0))
    r = b.fadd(b.fsub(hi, k), lo)
    return scale(b, exp2_reduced(b, r), b.fptosi(k, I32))


def pow_with(exp2_reduced):
    """C pow: |x|**y as above, the sign from an odd integer y, NaN for a negative base with a non-integer
    exponent; pow(x, 0) = pow(1, y) = 1 and pow(-1, +-inf) = 1."""
    def pow_(b, x, y):
        ax = fabs(b, x)
        l_hi, l_lo = log2_pair(b, ax)
        w_hi = b.fmul(y, l_hi)
        w_lo = f(b, "fma", y, l_lo, f(b, "fma", y, l_hi, b.fneg(w_hi)))
        r = exp2_pair(b, w_hi, w_lo, exp2_reduced)
        neg = b.icmp_signed("<", b.bitcast(x, I32), i32(0))
        is_int = b.fcmp_ordered("==", f(b, "floor", y), y)
        odd = b.fcmp_ordered("==", fabs(b, b.frem(y, c(2.0))), c(1.0))
        r = b.select(b.and_(neg, odd), b.fneg(r), r)
        below_zero = b.fcmp_ordered("<", x, c(0.0))  # -0.0 keeps its sign for odd y but is no negative base
        r = b.select(b.and_(b.and_(below_zero, b.not_(is_int)), b.fcmp_ordered("==", ax, ax)),
                     b.select(b.fcmp_ordered("==", ax, c(math.inf)), r, c(math.nan)), r)
        one = b.or_(b.fcmp_ordered("==", y, c(0.0)), b.fcmp_ordered("==", x, c(1.0)))
        one = b.or_(one, b.and_(b.fcmp_ordered("==", ax, c(1.0)), b.fcmp_ordered("==", fabs(b, y), c(math.inf))))
        return b.select(one, c(1.0), r)
    return pow_
