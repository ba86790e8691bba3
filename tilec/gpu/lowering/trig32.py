"""f32 sin, cos and tan over the whole f32 range: x = k pi/2 + r with |r| <= pi/4, then polynomials by quadrant.

Two reductions. For |x| < 2**17 (the fast path, always computed) a three-part Cody-Waite reduction with fused
multiply-adds: pi/2 = C1 + C2 + C3 to 70 bits, and x - k C1 is exact there, so r keeps full relative precision
even where x is close to a multiple of pi/2. Beyond, the 24-bit mantissa is multiplied as an integer by the bits of
2/pi that matter at x's exponent (Payne-Hanek): x 2/pi mod 4 in 64-bit fixed point, whose top two bits are the
quadrant and whose rest is r as a fraction of a quarter turn, exact to about 2**-60. That path sits behind a
branch: a warp whose arguments are all small never runs it. Its table (15 windows of 96 bits of 2/pi, one per
8 exponents; 180 bytes) lives in the target's constant memory.

The constants come from pi computed here with integers (Machin's formula), so no digit string needs checking.
"""
from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.ir as ir
import numpy as np

from .f32ir import c, f, fabs, i32, poly
from .types import F32, I32

I64 = ir.IntType(64)
FAST_LIMIT = 131072.0  # 2**17: k < 2**16.4, so k * C1 is exact and k * (pi/2 - C1 - C2 - C3) below 2**-56


def _atan_inv(n: int, one: int) -> int:
    """atan(1/n) * one, in integers (the series sum (-1)**j / ((2j+1) n**(2j+1)))."""
    total, term, j, n2 = 0, one // n, 0, n * n
    while term:
        total += term // (2 * j + 1) if j % 2 == 0 else -(term // (2 * j + 1))
        term //= n2
        j += 1
    return total


def _pi_scaled(bits: int) -> Fraction:
    """pi to within 2**-bits (Machin: pi = 16 atan(1/5) - 4 atan(1/239)), with 32 guard bits."""
    one = 1 << (bits + 32)
    return Fraction(16 * _atan_inv(5, one) - 4 * _atan_inv(239, one), one)


_PI = _pi_scaled(400)


def _f32_below(v: Fraction) -> Fraction:
    """The largest f32 <= v (v > 0)."""
    r = np.float32(float(v))
    if Fraction(float(r)) > v:
        r = np.nextafter(r, np.float32(0))
    return Fraction(float(r))


# pi/2 = C1 + C2 + C3 + (less than 2**-70): each part the largest f32 below the remainder, so all are positive and
# (-k) C_i is -0 for k = +0: sin(-0) stays -0 through the reduction
_HALF_PI = _PI / 2
C1 = _f32_below(_HALF_PI)
C2 = _f32_below(_HALF_PI - C1)
C3 = _f32_below(_HALF_PI - C1 - C2)


def _two_over_pi_windows():
    """For j in -1..13: floor(2/pi * 2**(8j + 94)) mod 2**96 as three 32-bit words, most significant first."""
    words = []
    for j in range(-1, 14):
        w = math.floor(2 / _PI * 2 ** (8 * j + 94)) % (1 << 96)
        words += [(w >> 64) & 0xFFFFFFFF, (w >> 32) & 0xFFFFFFFF, w & 0xFFFFFFFF]
    return words


TABLE = _two_over_pi_windows()
_TABLE_NAME = "tilec_two_over_pi"


def _table(b, addrspace: int):
    m = b.module
    g = m.globals.get(_TABLE_NAME)
    if g is None:
        ty = ir.ArrayType(I32, len(TABLE))
        g = ir.GlobalVariable(m, ty, _TABLE_NAME, addrspace=addrspace)
        g.global_constant = True
        g.linkage = "internal"
        g.align = 4
        g.initializer = ir.Constant(ty, [ir.Constant(I32, w - (1 << 32) if w >= 1 << 31 else w) for w in TABLE])
    return g


def _fast(b, x):
    """Cody-Waite: (r, k mod 4) for |x| < FAST_LIMIT; meaningless beyond (and k's integer is poison for NaN)."""
    k = f(b, "rint", f(b, "fma", x, c(2 / math.pi), c(0.0)))  # + 0: k = +0 for x = -0, so r = -0 - (+0) C1 = -0
    r = f(b, "fma", b.fneg(k), c(float(C1)), x)
    r = f(b, "fma", b.fneg(k), c(float(C2)), r)
    r = f(b, "fma", b.fneg(k), c(float(C3)), r)
    return r, b.and_(b.fptosi(k, I32), i32(3))


def _payne_hanek(b, x, addrspace: int):
    """(r, k mod 4) for |x| >= 2**15 (so for any x beyond the fast path; inf/NaN give garbage, selected away).

    |x| = m 2**s with the 24-bit integer m. Write s = 8j + c (0 <= c < 8): |x| = (m << c) 2**(8j), and
    (m << c) < 2**31 times the 96-bit window W_j of 2/pi (from bit weight 2**(8j+94) down) is, from bit 32 up,
    |x| 2/pi mod 4 in units of 2**-62 (the window's missing higher bits only add multiples of 4; the lower ones
    change the result by less than 2 units)."""
    bits = b.bitcast(x, I32)
    ab = b.and_(bits, i32(0x7FFFFFFF))
    s = b.sub(b.lshr(ab, i32(23)), i32(150))
    m = b.or_(b.and_(ab, i32(0x7FFFFF)), i32(0x800000))
    idx = b.add(b.ashr(s, i32(3)), i32(1))
    idx = b.select(b.icmp_signed("<", idx, i32(0)), i32(0), idx)
    mc = b.zext(b.shl(m, b.and_(s, i32(7))), I64)
    g = _table(b, addrspace)
    base = b.mul(idx, i32(3))

    def word(off):
        p = b.gep(g, [i32(0), b.add(base, i32(off))], inbounds=True)
        return b.mul(mc, b.zext(b.load(p, align=4), I64))
    hi, mid, lo = word(0), word(1), word(2)
    R = b.add(b.add(b.shl(hi, ir.Constant(I64, 32)), mid), b.lshr(lo, ir.Constant(I64, 32)))
    n = b.lshr(b.add(R, ir.Constant(I64, 1 << 61)), ir.Constant(I64, 62))  # the nearest quarter turn, mod 4
    frac = b.sub(R, b.shl(n, ir.Constant(I64, 62)))  # signed, |frac| <= 2**61: r in units of 2**-62 turns/4
    # r = frac * 2**-62 * pi/2, frac as an f32 pair (hi exact to 24 bits, lo the rest) times pi/2 as a pair
    f_hi = b.sitofp(frac, F32)
    f_lo = b.sitofp(b.sub(frac, b.fptosi(f_hi, I64)), F32)
    k_hi, k_lo = c(float(C1) * 2.0 ** -62), c(float(C2) * 2.0 ** -62)
    r = f(b, "fma", f_hi, k_hi, f(b, "fma", f_hi, k_lo, b.fmul(f_lo, k_hi)))
    q = b.trunc(n, I32)
    neg = b.icmp_signed("<", bits, i32(0))  # sin(-x) = -sin(x): -x = (-k) pi/2 + (-r)
    return b.select(neg, b.fneg(r), r), b.and_(b.select(neg, b.neg(q), q), i32(3))


def reduce(b, x, addrspace: int):
    """(r, q): x = k pi/2 + r, |r| <= pi/4 (slightly more where rint rounds), q = k mod 4 as an i32."""
    r, q = _fast(b, x)
    big = b.fcmp_ordered(">=", fabs(b, x), c(FAST_LIMIT))
    start = b.block
    with b.if_then(big, likely=False):
        r_big, q_big = _payne_hanek(b, x, addrspace)
        inner = b.block
    r_phi, q_phi = b.phi(F32), b.phi(I32)
    r_phi.add_incoming(r, start)
    r_phi.add_incoming(r_big, inner)
    q_phi.add_incoming(q, start)
    q_phi.add_incoming(q_big, inner)
    return r_phi, q_phi


def _sin_poly(b, r, r2):
    return b.fmul(r, poly(b, r2, [1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800]))


def _cos_poly(b, r2):
    return poly(b, r2, [1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600])


def _bit(b, q, v):
    return b.icmp_unsigned("!=", b.and_(q, i32(v)), i32(0))


def _not_finite(b, x):
    return b.fcmp_unordered("==", fabs(b, x), c(math.inf))  # inf or NaN


def _sincos(addrspace: int, cos: bool):
    def fn(b, x):
        r, q = reduce(b, x, addrspace)
        if cos:
            q = b.add(q, i32(1))
        r2 = b.fmul(r, r)
        v = b.select(_bit(b, q, 1), _cos_poly(b, r2), _sin_poly(b, r, r2))
        v = b.select(_bit(b, q, 2), b.fneg(v), v)
        return b.select(_not_finite(b, x), c(math.nan), v)
    return fn


def sin(addrspace: int = 0):
    return _sincos(addrspace, False)


def cos(addrspace: int = 0):
    return _sincos(addrspace, True)


def tan(addrspace: int = 0):
    """One reduction: sin r / cos r, or -cos r / sin r in odd quadrants."""
    def fn(b, x):
        r, q = reduce(b, x, addrspace)
        r2 = b.fmul(r, r)
        s, co = _sin_poly(b, r, r2), _cos_poly(b, r2)
        odd = _bit(b, q, 1)
        v = b.fdiv(b.select(odd, b.fneg(co), s), b.select(odd, s, co))
        return b.select(_not_finite(b, x), c(math.nan), v)
    return fn
