"""tl.extra.libdevice / tl.extra.cuda.libdevice: each function against float64 numpy, in ulps of float32."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.language.extra import libdevice
from langhelp import launch, rng

N = 512


@tilec.jit
def unary_kernel(X, Y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=0.5)
    tl.store(Y + o, FN(x), mask=o < n)


@tilec.jit
def binary_kernel(X, Y, Z, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=0.5)
    y = tl.load(Y + o, mask=o < n, other=0.5)
    tl.store(Z + o, FN(x, y), mask=o < n)


def _u(r, lo, hi):
    return r.uniform(lo, hi, N)


UNARY = {  # name: (numpy reference, sampler, max ulps)
    "tanh": (np.tanh, lambda r: _u(r, -10, 10), 4),
    "tan": (np.tan, lambda r: _u(r, -1.5, 1.5), 4),
    "log1p": (np.log1p, lambda r: np.abs(_u(r, -1, 1)) * 10.0 ** r.integers(-6, 6, N), 4),
    "expm1": (np.expm1, lambda r: _u(r, -1, 1) * 10.0 ** r.integers(-6, 1, N), 4),
    "trunc": (np.trunc, lambda r: _u(r, -1e4, 1e4), 0),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), lambda r: np.round(_u(r, -50, 50) * 2) / 2, 0),
    "rint": (np.rint, lambda r: np.round(_u(r, -50, 50) * 2) / 2, 0),
    "log10": (np.log10, lambda r: 10.0 ** _u(r, -30, 30), 4),
    "exp10": (lambda x: 10.0 ** x, lambda r: _u(r, -30, 30), 8),
    "sinh": (np.sinh, lambda r: _u(r, -10, 10), 4),
    "cosh": (np.cosh, lambda r: _u(r, -10, 10), 4),
    "atan": (np.arctan, lambda r: _u(r, -100, 100), 4),
    "asin": (np.arcsin, lambda r: _u(r, -0.99, 0.99), 4),
    "acos": (np.arccos, lambda r: _u(r, -0.99, 0.99), 4),
    "fabs": (np.abs, lambda r: _u(r, -5, 5), 0),
}
BINARY = {
    "pow": (np.power, lambda r: (np.abs(_u(r, 0.1, 10)), _u(r, -5, 5)), 4),
    "atan2": (np.arctan2, lambda r: (_u(r, -5, 5), _u(r, -5, 5)), 4),
    "hypot": (np.hypot, lambda r: (_u(r, -1e3, 1e3), _u(r, -1e3, 1e3)), 4),
    "fmod": (np.fmod, lambda r: (_u(r, -100, 100), _u(r, 0.5, 7)), 0),
    "fmax": (np.fmax, lambda r: (_u(r, -1, 1), _u(r, -1, 1)), 0),
    "fmin": (np.fmin, lambda r: (_u(r, -1, 1), _u(r, -1, 1)), 0),
}


# CUDA computes exp-based functions with the fast ex2.approx, as Triton does: a little looser there
CUDA_ULPS = {"sinh": 16, "cosh": 16, "pow": 32, "exp10": 16}


def ulps(got, ref):
    sp = np.maximum(np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64), 1e-45)
    return np.abs(got.astype(np.float64) - ref) / sp


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(mode, name):
    ref, sample, bound = UNARY[name]
    bound = CUDA_ULPS.get(name, bound) if mode == "cuda" else bound
    x = sample(rng(sum(map(ord, name)))).astype(np.float32)
    y = np.zeros(N, np.float32)
    launch(unary_kernel, (1,), mode, x, y, N, FN=getattr(libdevice, name), BLOCK=N)
    err = ulps(y, ref(x.astype(np.float64)))
    assert err.max() <= bound, f"{name}: {err.max():.1f} ulp at {x[err.argmax()]!r}"


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(mode, name):
    ref, sample, bound = BINARY[name]
    bound = CUDA_ULPS.get(name, bound) if mode == "cuda" else bound
    a, b = (v.astype(np.float32) for v in sample(rng(sum(map(ord, name)))))
    z = np.zeros(N, np.float32)
    launch(binary_kernel, (1,), mode, a, b, z, N, FN=getattr(libdevice, name), BLOCK=N)
    err = ulps(z, ref(a.astype(np.float64), b.astype(np.float64)))
    assert err.max() <= bound, f"{name}: {err.max():.1f} ulp"


@tilec.jit
def predicates_kernel(X, Z, I, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Z + o, tl.extra.cuda.libdevice.isnan(x).to(tl.int32) + 2 * libdevice.isinf(x).to(tl.int32)
             + 4 * libdevice.signbit(x).to(tl.int32))
    i = tl.load(I + o)
    tl.store(Z + BLOCK + o, libdevice.popc(i))
    tl.store(Z + 2 * BLOCK + o, libdevice.clz(i))


def test_predicates_and_bit_counts(mode):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0, 2.0, 1e-40], np.float32)
    i = np.array([0, 1, -1, 255, 2**30, 7, 12345, -2**31], np.int32)
    z = np.zeros(24, np.int32)
    launch(predicates_kernel, (1,), mode, x, z, i, BLOCK=8)
    want = np.isnan(x) + 2 * np.isinf(x) + 4 * np.signbit(x)
    np.testing.assert_array_equal(z[:8], want)
    u = i.view(np.uint32)
    np.testing.assert_array_equal(z[8:16], [bin(int(v)).count("1") for v in u])
    np.testing.assert_array_equal(z[16:], [32 - int(v).bit_length() for v in u])
