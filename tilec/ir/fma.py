"""A correctly rounded fused multiply-add over numpy arrays: ``a * b + c`` rounded once, as ``tl.fma`` and the
hardware instructions the backends use (x86 ``vfmadd``, ``fma.rn``) compute it.

numpy has no fma, and computing in float64 and rounding to the result type is not one rounding: the float64 sum
may land exactly on a midpoint between two values of the narrower type that the exact sum is not on, and the tie
then goes to even where the exact result lies on the other side (``0.75 * x + 39`` with ``0.75 * x`` an f32
midpoint near 5e23: the 39 is below float64's precision there). Two techniques make it exact:

* types narrower than float64: the product of two such values is exact in float64, the sum's rounding error is
  recovered exactly (``two_sum``), and the float64 sum is rounded *to odd* before the final rounding. Rounding to
  odd with at least two more bits than the target and then to nearest equals one rounding to nearest
  (Boldo and Melquiond, "Emulation of FMA and correctly-rounded sums", IEEE TC 2008); float64's 53 bits cover
  f32 (24), bf16, f16 and fp8.
* float64: the same paper's emulated fma: an exact product as a pair (Dekker's algorithm), ``c`` added exactly
  (``two_sum``), the low parts added rounded to odd, one final rounding. Operands where those steps could
  overflow or underflow (huge or tiny exponents), a rare case, are computed exactly with fractions instead.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitter for 53-bit doubles
_SAFE_HI, _SAFE_LO = 2.0 ** 400, 2.0 ** -400  # operand magnitudes where Dekker's steps neither overflow nor underflow


def two_sum(x, y):
    """``(s, e)`` with ``s = fl(x + y)`` and ``s + e == x + y`` exactly (Knuth; no overflow assumed)."""
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _odd(s, e):
    """``s + e`` (``s`` its rounding to nearest) rounded to odd: ``s`` if exact or already odd, else its neighbour
    toward ``e``, which is odd."""
    bits = s.view(np.uint64)
    bump = (e != 0) & ((bits & np.uint64(1)) == 0) & np.isfinite(s)
    return np.where(bump, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def _split(x):
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def _two_product(a, b):
    """``(p, e)`` with ``p = fl(a * b)`` and ``p + e == a * b`` exactly (Dekker), for operands in the safe range."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _exact(a: float, b: float, c: float) -> float:
    """One fma by exact rational arithmetic (``float(Fraction)`` rounds correctly); finite nonzero operands."""
    r = Fraction(a) * Fraction(b) + Fraction(c)
    if r == 0:
        return 0.0  # an exact cancellation of nonzero terms is +0 when rounding to nearest
    try:
        return float(r)
    except OverflowError:
        return float("inf") if r > 0 else float("-inf")


def fma_via_f64(a, b, c) -> np.ndarray:
    """``a * b + c`` for values of a format narrower than float64, rounded to odd in float64: round the result
    to the format once (``numerics.finish``) and it is the correctly rounded fma."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        s, e = two_sum(a * b, c)  # the product is exact: at most 2 x 24 significant bits, exponents in range
        return _odd(s, e)


def fma_f64(a, b, c) -> np.ndarray:
    """The correctly rounded float64 ``a * b + c``."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, c)))
    with np.errstate(all="ignore"):
        plain = a * b + c  # right wherever the product is exact or irrelevant (zeros, infinities, NaN)
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        out = np.where(np.isfinite(a) & np.isfinite(b) & ~np.isfinite(c), c, plain)
        out = np.where(finite & (c == 0) & (a != 0) & (b != 0), a * b, out)
        general = finite & (a != 0) & (b != 0) & (c != 0)
        mag = [np.abs(v) for v in (a, b)]
        safe = general & np.logical_and.reduce([(m <= _SAFE_HI) & (m >= _SAFE_LO) for m in mag]) \
            & (np.abs(c) <= _SAFE_HI * _SAFE_HI) & (np.abs(c) >= _SAFE_LO * _SAFE_LO)
        uh, ul = _two_product(a, b)
        th, tl = two_sum(c, uh)
        v = _odd(*two_sum(tl, ul))
        out = np.where(safe, th + v, out)
    rest = np.flatnonzero(general & ~safe)
    if rest.size:
        out = np.array(out, copy=True)
        flat, fa, fb, fc = out.reshape(-1), a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in rest:
            flat[i] = _exact(float(fa[i]), float(fb[i]), float(fc[i]))
    return out
