"""The evaluator's ``fma`` rounds once (``tilec/ir/fma.py``), checked against exact rational arithmetic: the fuzzer
(seed 406996) found f32 results one ulp off where the float64 sum had rounded onto an f32 midpoint."""
import math
from fractions import Fraction

import numpy as np
import pytest

from tilec.ir.fma import fma_f64

from .evalhelp import one_op

# (significand bits after the point, least normal exponent, largest finite value)
FORMATS = {"f64": (52, -1022, np.finfo(np.float64).max), "f32": (23, -126, float(np.finfo(np.float32).max)),
           "f16": (10, -14, 65504.0), "bf16": (7, -126, float.fromhex("0x1.fep127"))}


def round_exact(r: Fraction, fmt: str) -> float:
    """``r`` rounded to nearest even in ``fmt``, by integer arithmetic (infinity past the overflow threshold)."""
    m, emin, big = FORMATS[fmt]
    if r == 0:
        return 0.0
    mag = abs(r)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    q = max(e, emin) - m
    n = round(mag / Fraction(2) ** q)  # ties to even
    v = Fraction(n) * Fraction(2) ** q
    out = math.inf if v > Fraction(big) else float(v)
    return out if r > 0 else -out


def exact_fma(a, b, c, fmt):
    return np.array([round_exact(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), fmt)
                     for x, y, z in zip(a, b, c)])


def evaluate(fmt, a, b, c):
    dt = np.float32 if fmt == "bf16" else np.dtype(fmt.replace("f", "float"))
    t = f"tile<{len(a)}x{fmt}>"
    return one_op("fma", [t] * 3, t, [np.asarray(v, dt) for v in (a, b, c)]).astype(np.float64)


@pytest.mark.parametrize("fmt,a,b,c,want", [
    # seed 406996: 0.75 * x is an f32 midpoint, + 39 breaks the tie upward
    ("f32", 0.75, float(np.float32(6.586683e+23)), 39.0, float(np.float32(4.9400125e+23))),
    ("bf16", 1 + 2 ** -4, 1 + 2 ** -4, 2.0 ** -100, 1 + 2 ** -3 + 2 ** -7),
    ("f16", 1.5, 1 + 3 * 2 ** -10, 2.0 ** -24, 1.5 + 2 ** -8 + 2 ** -10),
    ("f64", 1 + 3 * 2 ** -52, 1.5, 2.0 ** -200, 1.5 + 2 ** -50 + 2 ** -52),
])
def test_midpoint_product_plus_a_tiny_addend_rounds_up(fmt, a, b, c, want):
    got = evaluate(fmt, [a], [b], [c])[0]
    assert got == exact_fma([a], [b], [c], fmt)[0] == want


def _midpoint_cases(fmt, rng, n):
    """Products on (or next to) a midpoint of ``fmt`` plus addends far below its precision, of both signs."""
    m = FORMATS[fmt][0]
    spread, below = (3, 14) if fmt == "f16" else (20, 60)  # f16: stay in range, addends above its subnormals
    half = (m + 2) // 2
    a = (rng.integers(1 << half, 1 << (half + 1), n) | 1).astype(np.float64)
    b = (rng.integers(1 << (m + 1 - half), 1 << (m + 2 - half), n) | 1).astype(np.float64)
    scale = np.exp2(rng.integers(-spread, spread, n).astype(np.float64))
    c = rng.choice([-1.0, 1.0], n) * np.exp2(rng.integers(-m - below, -m, n).astype(np.float64)) * a * b
    return a * scale, b / scale, c


@pytest.mark.parametrize("fmt", ["f64", "f32", "bf16", "f16"])
def test_fma_is_the_exact_result_rounded_once(fmt):
    rng = np.random.default_rng(7)
    n = 400
    if fmt == "f64":
        a, b, c = _midpoint_cases(fmt, rng, n)
    else:  # values of the format: narrow significands, then the format's own rounding (exact ones stay)
        a, b, c = _midpoint_cases(fmt, rng, n)
        a, b, c = (np.array([round_exact(Fraction(float(x)), fmt) for x in v]) for v in (a, b, c))
    near = rng.standard_normal((3, n)) * np.exp2(rng.integers(-8, 8, (3, n)))  # ordinary values too
    if fmt != "f64":
        near = np.array([[round_exact(Fraction(float(x)), fmt) for x in row] for row in near])
    a, b, c = (np.concatenate([u, v]) for u, v in zip((a, b, c), near))
    np.testing.assert_array_equal(evaluate(fmt, a, b, c), exact_fma(a, b, c, fmt))


def test_f64_extremes_take_the_exact_path():
    """Exponents where Dekker's product would overflow or lose bits, and cancellations near the subnormals."""
    big, tiny = 2.0 ** 600, 2.0 ** -600
    a = np.array([big, tiny, 2.0 ** -540, 1e308, 1e300, 3.0 * 2 ** -1070, 1 + 2 ** -52])
    b = np.array([big * (1 + 2 ** -52), tiny * 3, 2.0 ** -540 * (1 + 2 ** -52), 2.0, 1e10, 0.5, 1 - 2 ** -52])
    c = np.array([-(2.0 ** 1000), 2.0 ** -1074, -(2.0 ** -1080), -1.7e308, -1e308, 2.0 ** -1074,
                  -1.0])
    got = fma_f64(a, b, c)
    with np.errstate(over="ignore"):
        want = [round_exact(Fraction(x) * Fraction(y) + Fraction(z), "f64") for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(got, want)


def test_f64_special_values_and_zero_signs():
    inf, nan = math.inf, math.nan
    a = np.array([inf, 0.0, 1e300, 1e300, 2.0, -0.0, 1.0, 0.0, nan, 1e-300])
    b = np.array([0.0, 5.0, 1e300, 1e300, inf, 1.0, 1.0, -1.0, 1.0, -1e-300])
    c = np.array([1.0, -0.0, -inf, 1.0, -inf, -0.0, -1.0, -0.0, 1.0, 0.0])
    got = fma_f64(a, b, c)
    want = [nan, 0.0, -inf, inf, nan, -0.0, 0.0, -0.0, nan, -0.0]
    np.testing.assert_array_equal(got, want)
    assert [math.copysign(1, g) for g in got[[1, 5, 6, 7, 9]]] == [1, -1, 1, -1, -1]
