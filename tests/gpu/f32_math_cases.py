"""f32 math over the whole range: inputs, float64 references and accuracy bounds, shared by the host test of the
generic formulas (``test_f32_math.py``) and the device test of the CUDA target (``test_f32_math_range.py``).

Inputs reach every part of the range: random bit patterns over all finite floats (subnormals and values up to
3.4e38 included), the regions each function is hard in (exp near overflow and into the subnormal results, sin/cos
of huge arguments and of floats next to multiples of pi/2, logarithms of subnormals, pow with subnormal bases and
results near overflow), the arguments of the fuzzer's CUDA seeds, and NaN, infinities and signed zeros.

A bound is in ulps of the f32 result (the spacing of f32 at the float64 reference; subnormal results count in
subnormal ulps). It holds for the formulas over an exact 2**x and over a hardware approximation 2**-22 off (the
host test's stand-in for ``ex2.approx.ftz``), so it is an honest bound for the device too. Overflowing results
must be infinities, and special values must match exactly (NaN, infinities, the sign of exact zeros).
"""
from __future__ import annotations

import math

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
TINY = 2.0 ** -126

# name: (ulps, number of arguments)
BOUNDS = {
    "exp": 5, "exp2": 5, "log": 3, "log2": 4, "log1p": 4, "expm1": 3, "sin": 3, "cos": 3, "tan": 4, "tanh": 4,
    "erf": 8, "sigmoid": 7, "pow": 6, "atan2": 3.5, "sqrt": 0.5, "rsqrt": 2,
}
BINARY = ("pow", "atan2")

_erf = np.vectorize(math.erf, otypes=[np.float64])
REFERENCE = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log1p": np.log1p, "expm1": np.expm1,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "erf": _erf,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "pow": np.power, "atan2": np.arctan2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
}

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149, -2.0 ** -149, 2.0 ** -126 - 2.0 ** -149,
                     TINY, -TINY, FLT_MAX, -FLT_MAX, 1.0, -1.0, 0.5, 2.0], np.float32)
# sin/cos arguments of the fuzzer's CUDA seeds (400535, 401415, 403106, 405663, ...): huge exact integers
FUZZ_TRIG = np.array([2147483648.0, 1073741824.0, -2147483648.0, 1840872704.0, 1081081856.0, 4.0e8, 402653088.0,
                      4294967296.0, 4294966784.0, 4202692608.0, 7.2057594e16, 1.44115188e17, 4.61168602e18,
                      -9.22337204e18, 9.22337204e18, 1.84467441e19, 9.09501945e18, -3.88435468e16, -50331648.0,
                      -805306368.0, -28672.0], np.float32)
# exp arguments of seeds 401527, 402275, 402908, 405790, 407937: e**63 .. e**88 and overflow
FUZZ_EXP = np.array([86.0, 73.0, 92.0, 87.0, 97.0, 100.0, 67.0, 77.0, 85.0, 76.0, 95.0, 63.0, 61.0, 65.0, 69.0, 401.0,
                     88.0, 88.5, 88.72, 88.7228, -87.5, -90.0, -100.0, -103.9, -104.0], np.float32)


def _all_finite(rng, n):
    """Uniform over bit patterns: every binade equally, subnormals and the largest floats included."""
    x = rng.integers(0, 0x7F800000, n, dtype=np.uint32).view(np.float32)
    return np.where(rng.random(n) < 0.5, -x, x)


def _wide(rng, n, lo, hi):
    return (rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(lo, hi, n))).astype(np.float32)


def _subnormals(rng, n):
    return rng.integers(1, 0x00800000, n, dtype=np.uint32).view(np.float32)


def _near_multiples_of_half_pi(rng, n):
    """f32(k pi/2) and its neighbours: the arguments whose reduced r is smallest, for k up to 2**60."""
    k = np.exp2(rng.uniform(0, 60, n)).round()
    x = (k * (np.pi / 2)).astype(np.float32)
    return np.concatenate([x, np.nextafter(x, np.float32(np.inf)), -np.nextafter(x, np.float32(0))])


def inputs(name: str, n: int = 20000, seed: int = 0):
    """The arguments for ``name``: a tuple of one or two float32 arrays of equal length."""
    rng = np.random.default_rng(seed + sum(map(ord, name)))
    s = SPECIALS
    parts = {
        "exp": [rng.uniform(-104, 89, n), _wide(rng, n, -30, 7), np.linspace(88.0, 88.8, n // 10),
                np.linspace(-104.0, -86.0, n // 10), FUZZ_EXP, _all_finite(rng, n // 10)],
        "exp2": [rng.uniform(-152, 129, n), np.arange(-152, 130), _wide(rng, n, -30, 7)],
        "log": [np.abs(_all_finite(rng, n)), _subnormals(rng, n // 4), 1 + _wide(rng, n // 4, -24, -1)],
        "log1p": [rng.uniform(-1, 10, n), np.abs(_all_finite(rng, n)), -np.abs(_wide(rng, n // 2, -150, -1)),
                  _subnormals(rng, n // 10)],
        "expm1": [rng.uniform(-20, 89, n), _wide(rng, n, -150, 2), np.linspace(-0.4, 0.4, n // 10),
                  _all_finite(rng, n // 10)],
        "sin": [_all_finite(rng, n), _wide(rng, n, -20, 20), _wide(rng, n, 15, 128),
                _near_multiples_of_half_pi(rng, n // 4), FUZZ_TRIG, np.linspace(131000.0, 131100.0, 501)],
        "tanh": [_wide(rng, n, -150, 6), _all_finite(rng, n // 2)],
        "erf": [rng.uniform(-6, 6, n), _wide(rng, n, -150, 3), _all_finite(rng, n // 4)],
        "sigmoid": [rng.uniform(-104, 104, n), _wide(rng, n, -150, 7), _all_finite(rng, n // 4)],
        "sqrt": [np.abs(_all_finite(rng, n)), _subnormals(rng, n // 4)],
    }
    parts["log2"] = parts["log"]
    parts["cos"] = parts["tan"] = parts["sin"]
    parts["rsqrt"] = parts["sqrt"]
    if name == "pow":
        x = np.abs(_all_finite(rng, n))
        with np.errstate(all="ignore"):
            y = (rng.uniform(-155, 130, n) / np.log2(x.astype(np.float64))).astype(np.float32)
        y = np.where(np.isfinite(y), y, np.float32(1.5))
        xi = -np.abs(_wide(rng, n // 4, -10, 10))  # negative bases with integer (odd and even) exponents
        yi = rng.integers(-12, 13, n // 4).astype(np.float32)
        xs, ys = np.meshgrid(s, s)
        return (np.concatenate([x, _subnormals(rng, n // 4), xi, xs.ravel()]).astype(np.float32),
                np.concatenate([y, rng.uniform(-1.2, 1.2, n // 4), yi, ys.ravel()]).astype(np.float32))
    if name == "atan2":
        xs, ys = np.meshgrid(s, s)
        return (np.concatenate([_wide(rng, n, -149, 127), _all_finite(rng, n), xs.ravel()]).astype(np.float32),
                np.concatenate([_wide(rng, n, -149, 127), _all_finite(rng, n), ys.ravel()]).astype(np.float32))
    return (np.concatenate([np.asarray(p, np.float32) for p in parts[name]] + [s]).astype(np.float32),)


def reference(name: str, *args):
    with np.errstate(all="ignore"):
        return REFERENCE[name](*[a.astype(np.float64) for a in args])


def ulp_error(got, want):
    """|got - want| in f32 ulps at ``want`` (float64); an infinity, and any reference beyond, counts as 2**128, one
    ulp past FLT_MAX (the overflow threshold is half an ulp below it)."""
    g = np.clip(np.asarray(got, np.float64), -2.0 ** 128, 2.0 ** 128)
    w = np.clip(np.asarray(want, np.float64), -2.0 ** 128, 2.0 ** 128)
    spacing = np.spacing(np.minimum(np.abs(w), 2.0 ** 127).astype(np.float32)).astype(np.float64)  # 2**104 at top
    with np.errstate(all="ignore"):
        return np.abs(g - w) / spacing


def check(name: str, args, got, exp2_flushes: bool = False) -> str | None:
    """None when ``got`` (float32) is within ``name``'s bound of the float64 reference everywhere, else a message
    naming the worst arguments. ``exp2_flushes``: exp2 results below 2**-126 may be zeros."""
    want = reference(name, *args)
    got = np.asarray(got, np.float32)
    nan_w, nan_g = np.isnan(want), np.isnan(got)
    if (nan_w != nan_g).any():
        return f"{name}: NaN differs: {_list(args, got, want, np.flatnonzero(nan_w != nan_g))}"
    ok = np.flatnonzero(~nan_w)
    g, w = got[ok], want[ok]
    exact = (w == 0) | np.isinf(w)  # exact zeros (their sign too) and exact infinities
    bad = exact & ((g != w) | (np.signbit(g) != np.signbit(w)))
    if bad.any():
        return f"{name}: special values differ: {_list(args, got, want, ok[bad])}"
    err = np.where(exact, 0.0, ulp_error(g, w))
    if exp2_flushes and name == "exp2":
        err = np.where((np.abs(w) < TINY) & (g == 0), 0.0, err)
    if err.max(initial=0) > BOUNDS[name]:
        return f"{name}: {err.max():.3g} ulp > {BOUNDS[name]}: {_list(args, got, want, ok[np.argsort(err)[::-1]])}"
    return None


def worst_ulps(name: str, args, got) -> float:
    """The largest error in ulps over the finite normal references (for reports)."""
    want = reference(name, *args)
    fin = np.isfinite(want) & (np.abs(want) >= TINY)
    return float(ulp_error(np.asarray(got, np.float32)[fin], want[fin]).max(initial=0))


def _list(args, got, want, idx):
    return ", ".join("(" + ", ".join(repr(float(a[i])) for a in args) + f") -> {got[i]!r} (want {want[i]!r})"
                     for i in idx[:4])
