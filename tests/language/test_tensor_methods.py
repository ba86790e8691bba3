"""``tl.tensor`` methods and dunders where Triton has them (``x.sum()``, ``x.to()``, ``x.T``, ``x.exp()``,
``x.reduce(...)``, ``x[None, :]``, reflected operators), each checked against its function form's numpy value."""
import numpy as np

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def _add(a, b):
    return a + b


@tilec.jit
def methods_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    o = tl.arange(0, M * N)
    tl.store(Z + o, x.T.reshape(M * N))
    tl.store(Z + M * N + o, x.permute(1, 0).view(M * N))
    tl.store(Z + 2 * M * N + o, x.exp().log().ravel())
    tl.store(Z + 3 * M * N + tl.arange(0, M), x.sum(axis=1))
    tl.store(Z + 3 * M * N + M + tl.arange(0, M), x.reduce(1, _add))
    tl.store(Z + 3 * M * N + 2 * M + o, x.associative_scan(1, _add).ravel())
    tl.store(Z + 4 * M * N + 2 * M + o, (2.0 - x).abs().sqrt().ravel())
    tl.store(Z + 5 * M * N + 2 * M + o, x.to(tl.int32).to(tl.float32, bitcast=False).ravel())
    b = (x > 0).logical_and(x < 1).logical_or(x < -1)
    tl.store(Z + 6 * M * N + 2 * M + o, b.to(tl.float32).ravel())
    tl.store(Z + 7 * M * N + 2 * M + o, x.expand_dims(0).broadcast_to(2, M, N).sum(0).ravel())
    tl.store(Z + 8 * M * N + 2 * M + o, (1 / x.sigmoid()).ravel())


def test_tensor_methods(mode):
    m, n = 4, 8
    x = rng(80).standard_normal((m, n)).astype(np.float32)
    z = np.zeros(9 * m * n + 2 * m, np.float32)
    launch(methods_kernel, (1,), mode, x, z, M=m, N=n)
    k = m * n
    np.testing.assert_array_equal(z[:k], x.T.ravel())
    np.testing.assert_array_equal(z[k:2 * k], x.T.ravel())
    np.testing.assert_allclose(z[2 * k:3 * k], x.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z[3 * k:3 * k + m], x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(z[3 * k + m:3 * k + 2 * m], x.sum(1), rtol=1e-5)
    base = 3 * k + 2 * m
    np.testing.assert_allclose(z[base:base + k], np.cumsum(x, 1).ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z[base + k:base + 2 * k], np.sqrt(np.abs(2 - x)).ravel(), rtol=1e-6)
    np.testing.assert_array_equal(z[base + 2 * k:base + 3 * k], np.trunc(x).ravel())
    np.testing.assert_array_equal(z[base + 3 * k:base + 4 * k], (((x > 0) & (x < 1)) | (x < -1)).ravel())
    np.testing.assert_allclose(z[base + 4 * k:base + 5 * k], 2 * x.ravel(), rtol=1e-6)
    np.testing.assert_allclose(z[base + 5 * k:base + 6 * k], (1 + np.exp(-x.astype(np.float64))).ravel(),
                               rtol=1e-5)
