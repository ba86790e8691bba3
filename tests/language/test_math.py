"""Elementwise math: accuracy in ulps against float64 numpy over random inputs of every magnitude, special values
(NaN, inf, -0.0), and the integer/NaN semantics of abs, maximum/minimum, clamp, fma, cdiv, umulhi."""
import math

import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng

N = 1000
BLOCK = 1024


@tilec.jit
def unary_kernel(X, Y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m, other=1.0)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "exp2":
        y = tl.exp2(x)
    elif FN == "log":
        y = tl.log(x)
    elif FN == "log2":
        y = tl.log2(x)
    elif FN == "sin":
        y = tl.sin(x)
    elif FN == "cos":
        y = tl.cos(x)
    elif FN == "sqrt":
        y = tl.sqrt(x)
    elif FN == "sqrt_rn":
        y = tl.sqrt_rn(x)
    elif FN == "rsqrt":
        y = tl.rsqrt(x)
    elif FN == "erf":
        y = tl.erf(x)
    elif FN == "floor":
        y = tl.floor(x)
    elif FN == "ceil":
        y = tl.ceil(x)
    elif FN == "abs":
        y = tl.abs(x)
    elif FN == "sigmoid":
        y = tl.sigmoid(x)
    else:
        y = tl.math.exp(x)
    tl.store(Y + o, y, mask=m)


def _erf(x):
    return np.vectorize(math.erf)(x)


# name -> (float64 reference, input sampler, allowed ulps)
def _mixed(r, lo_exp, hi_exp, positive=False):
    mag = 2.0 ** r.uniform(lo_exp, hi_exp, N)
    return mag if positive else mag * r.choice([-1.0, 1.0], N)


CASES = {
    "exp": (np.exp, lambda r: np.concatenate([_mixed(r, -20, 6.4)[:N // 2], r.uniform(-87, 88, N - N // 2)]), 2),
    "exp2": (np.exp2, lambda r: r.uniform(-126, 127, N), 2),
    "log": (np.log, lambda r: _mixed(r, -126, 127, True), 2),
    "log2": (np.log2, lambda r: _mixed(r, -126, 127, True), 2),
    "sin": (np.sin, lambda r: np.concatenate([_mixed(r, -20, 7)[:N // 2], r.uniform(-1e4, 1e4, N - N // 2)]), 2),
    "cos": (np.cos, lambda r: np.concatenate([_mixed(r, -20, 7)[:N // 2], r.uniform(-1e4, 1e4, N - N // 2)]), 2),
    "sqrt": (np.sqrt, lambda r: _mixed(r, -126, 127, True), 1),
    "sqrt_rn": (np.sqrt, lambda r: _mixed(r, -126, 127, True), 0.5),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda r: _mixed(r, -120, 120, True), 2),
    "erf": (_erf, lambda r: np.concatenate([_mixed(r, -20, 2)[:N // 2], r.uniform(-5, 5, N - N // 2)]), 2),
    "floor": (np.floor, lambda r: _mixed(r, -5, 30), 0),
    "ceil": (np.ceil, lambda r: _mixed(r, -5, 30), 0),
    "abs": (np.abs, lambda r: _mixed(r, -126, 127), 0),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda r: r.uniform(-80, 80, N), 3),
}


# CUDA's exp/exp2/sigmoid use the hardware's fast ex2.approx (as Triton's do): the error grows with |x|
CUDA_ULPS = {"exp": 128, "sigmoid": 128, "erf": 8}


def ulp_error(got, ref):
    """|got - ref| in units of the float32 spacing at ``ref`` (ref in float64)."""
    ref32 = ref.astype(np.float32)
    spacing = np.spacing(np.abs(ref32)).astype(np.float64)
    spacing = np.maximum(spacing, np.float64(np.finfo(np.float32).smallest_subnormal))
    return np.abs(got.astype(np.float64) - ref) / spacing


@pytest.mark.parametrize("fn", sorted(CASES))
def test_fp32_accuracy_in_ulps(mode, fn):
    ref_fn, sample, max_ulp = CASES[fn]
    if mode == "cuda":
        max_ulp = CUDA_ULPS.get(fn, max_ulp)
    x = sample(rng(sum(map(ord, fn)))).astype(np.float32)
    y = np.zeros(N, np.float32)
    launch(unary_kernel, (1,), mode, x, y, N, FN=fn, BLOCK=BLOCK)
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
    finite = np.isfinite(ref) & (np.abs(ref) < np.finfo(np.float32).max)
    err = ulp_error(y[finite], ref[finite])
    assert err.max() <= max_ulp, f"{fn}: max error {err.max():.2f} ulp at x={x[finite][err.argmax()]!r}"


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], np.float32)


@pytest.mark.parametrize("fn", ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "floor", "ceil", "abs", "erf",
                                "sin", "cos", "sigmoid"])
def test_special_values(mode, fn):
    ref_fn = CASES[fn][0]
    y = np.zeros(len(SPECIAL), np.float32)
    launch(unary_kernel, (1,), mode, SPECIAL, y, len(SPECIAL), FN=fn, BLOCK=8)
    with np.errstate(all="ignore"):
        ref = ref_fn(SPECIAL.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(y[ok], ref[ok], rtol=1e-6)
    if fn in ("floor", "ceil", "sqrt"):  # signed zero kept
        np.testing.assert_array_equal(np.signbit(y[ok]), np.signbit(ref[ok]))


@tilec.jit
def fp64_kernel(X, Y, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m, other=1.0)
    tl.store(Y + o, tl.exp(x), mask=m)
    tl.store(Y + n + o, tl.log(tl.abs(x)), mask=m)
    tl.store(Y + 2 * n + o, tl.sin(x), mask=m)
    tl.store(Y + 3 * n + o, tl.sqrt(tl.abs(x)), mask=m)


def test_fp64_math(mode):
    x = rng(5).uniform(-30, 30, 100)
    y = np.zeros(400)
    launch(fp64_kernel, (1,), mode, x, y, 100, BLOCK=128)
    want = np.stack([np.exp(x), np.log(np.abs(x)), np.sin(x), np.sqrt(np.abs(x))])
    np.testing.assert_allclose(y.reshape(4, 100), want, rtol=1e-14)


@tilec.jit
def nan_kernel(X, Y, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    tl.store(Z + o, tl.maximum(x, y))
    tl.store(Z + BLOCK + o, tl.minimum(x, y))
    tl.store(Z + 2 * BLOCK + o, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(Z + 3 * BLOCK + o, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(Z + 4 * BLOCK + o, tl.clamp(x, -1.0, 1.0))
    tl.store(Z + 5 * BLOCK + o, tl.clamp(x, -1.0, 1.0, propagate_nan=tl.PropagateNan.ALL))


def test_maximum_minimum_clamp_nan(mode):
    """Without propagate_nan a NaN operand yields the other one (fmax); with it, NaN wins; clamp likewise."""
    x = np.array([np.nan, 1.0, np.nan, -3.0, 0.5, 2.0, -2.0, 7.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 4.0, -0.5, 1.0, 3.0, np.nan], np.float32)
    z = np.zeros(48, np.float32)
    launch(nan_kernel, (1,), mode, x, y, z, BLOCK=8)
    z = z.reshape(6, 8)
    np.testing.assert_array_equal(z[0], np.fmax(x, y))
    np.testing.assert_array_equal(z[1], np.fmin(x, y))
    np.testing.assert_array_equal(z[2], np.maximum(x, y))
    np.testing.assert_array_equal(z[3], np.minimum(x, y))
    np.testing.assert_array_equal(z[5], np.clip(x, -1, 1))
    np.testing.assert_array_equal(z[4][~np.isnan(x)], np.clip(x, -1, 1)[~np.isnan(x)])


@tilec.jit
def misc_kernel(X, Y, Z, W, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    w = tl.load(W + o)
    tl.store(Z + o, tl.fma(x, y, w))
    tl.store(Z + BLOCK + o, tl.fdiv(x, y))
    tl.store(Z + 2 * BLOCK + o, tl.div_rn(x, y))
    tl.store(Z + 3 * BLOCK + o, tl.math.fma(x, y, w))


def test_fma_and_divisions(mode):
    r = rng(6)
    x, y, w = (r.standard_normal(16).astype(np.float32) for _ in range(3))
    z = np.zeros(64, np.float32)
    launch(misc_kernel, (1,), mode, x, y, z, w, BLOCK=16)
    z = z.reshape(4, 16)
    fma = (x.astype(np.float64) * y + w).astype(np.float32)  # a single rounding
    np.testing.assert_array_equal(z[0], fma)
    np.testing.assert_array_equal(z[3], fma)
    np.testing.assert_array_equal(z[2], x / y)
    np.testing.assert_allclose(z[1], x / y, rtol=2e-7)


@tilec.jit
def int_math_kernel(X, Y, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    tl.store(Z + o, tl.abs(x))
    tl.store(Z + BLOCK + o, tl.cdiv(x, 7))
    tl.store(Z + 2 * BLOCK + o, tl.umulhi(x, y))
    tl.store(Z + 3 * BLOCK + o, tl.maximum(x, y))
    tl.store(Z + 4 * BLOCK + o, tl.minimum(x, y))


@pytest.mark.parametrize("t", ["int32", "uint32", "int64", "uint64"])
def test_integer_math(mode, t):
    info = np.iinfo(t)
    r = rng(7)
    x = r.integers(max(info.min, -10**6), min(info.max, 10**6), 16, dtype=t)
    y = r.integers(info.min // 2, info.max // 2, 16, dtype=t)
    z = np.zeros(80, t)
    launch(int_math_kernel, (1,), mode, x, y, z, BLOCK=16)
    z = z.reshape(5, 16)
    bits = np.dtype(t).itemsize * 8
    mask = (1 << bits) - 1
    hi = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
    np.testing.assert_array_equal(z[0], np.abs(x))
    xs = x.astype(object)
    cd = np.array([-((-a - 6) // 7) if a < 0 else (a + 6) // 7 for a in xs])  # C division of x + 6 by 7
    np.testing.assert_array_equal(z[1].astype(object), cd.astype(object))
    np.testing.assert_array_equal(z[2].astype(np.uint64) & np.uint64(mask), np.array(hi, np.uint64))
    np.testing.assert_array_equal(z[3], np.maximum(x, y))
    np.testing.assert_array_equal(z[4], np.minimum(x, y))
