"""Creation and shape ops: full/zeros_like, broadcast, reshape/view/ravel, permute/trans, expand_dims, join, split,
interleave, cat, flip, gather, histogram, where, against numpy on several dtypes."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from dtypes import TL
from langhelp import launch, random_array, rng

DTYPES = ["int8", "uint16", "int32", "int64", "float16", "float32", "float64"]


def offsets2(M, N):
    return tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]


@tilec.jit
def creation_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, DT: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Z + offs, tl.zeros_like(x) + tl.full((M, N), 3, DT))
    tl.store(Z + M * N + offs, tl.full_like(x, 5) + tl.zeros((M, N), DT))
    b = tl.broadcast_to(tl.load(X + tl.arange(0, N))[None, :], (M, N))
    tl.store(Z + 2 * M * N + offs, b)
    c, d = tl.broadcast(tl.load(X + tl.arange(0, M) * N)[:, None], b)
    tl.store(Z + 3 * M * N + offs, c)


@pytest.mark.parametrize("dt", DTYPES)
def test_creation_and_broadcast(mode, dt):
    x = random_array(rng(20), (4, 8), dt)
    z = np.zeros((4, 4, 8), dt)
    launch(creation_kernel, (1,), mode, x, z, M=4, N=8, DT=TL[dt])
    np.testing.assert_array_equal(z[0], np.full((4, 8), 3, dt))
    np.testing.assert_array_equal(z[1], np.full((4, 8), 5, dt))
    np.testing.assert_array_equal(z[2], np.broadcast_to(x[0], (4, 8)))
    np.testing.assert_array_equal(z[3], np.broadcast_to(x[:, :1], (4, 8)))


@tilec.jit
def reshape_kernel(X, Z, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    i = tl.arange(0, A)[:, None, None] * (B * C) + tl.arange(0, B)[None, :, None] * C + \
        tl.arange(0, C)[None, None, :]
    x = tl.load(X + i)
    n = A * B * C
    lin = tl.arange(0, n)
    tl.store(Z + lin, tl.ravel(x))
    tl.store(Z + n + lin, tl.reshape(x, (n,)))
    tl.store(Z + 2 * n + lin, x.reshape(A * B, C).reshape(n))
    tl.store(Z + 3 * n + lin, tl.view(x, (n,)))
    tl.store(Z + 4 * n + lin, tl.reshape(tl.permute(x, (2, 0, 1)), n))
    tl.store(Z + 5 * n + lin, tl.reshape(tl.trans(x, 1, 0, 2), n))
    tl.store(Z + 6 * n + lin, tl.reshape(x.reshape(A * B, C).T, n))
    tl.store(Z + 7 * n + lin, tl.reshape(tl.expand_dims(x, 1), n))
    tl.store(Z + 8 * n + lin, tl.reshape(tl.reshape(x, (n,), can_reorder=False), A, B, C).reshape(n))


@pytest.mark.parametrize("dt", ["int16", "float32", "float64"])
def test_reshape_permute_trans(mode, dt):
    x = random_array(rng(21), (2, 4, 8), dt)
    z = np.zeros((9, 64), dt)
    launch(reshape_kernel, (1,), mode, x, z, A=2, B=4, C=8)
    for k in (0, 1, 2, 3, 7, 8):
        np.testing.assert_array_equal(z[k], x.ravel())
    np.testing.assert_array_equal(z[4], x.transpose(2, 0, 1).ravel())
    np.testing.assert_array_equal(z[5], x.transpose(1, 0, 2).ravel())
    np.testing.assert_array_equal(z[6], x.reshape(8, 8).T.ravel())


@tilec.jit
def join_kernel(X, Y, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    j = tl.join(x, y)                                        # (M, N, 2)
    tl.store(Z + tl.arange(0, 2 * M * N), tl.reshape(j, 2 * M * N))
    a, b = tl.split(j)
    tl.store(Z + 2 * M * N + offs, a)
    tl.store(Z + 3 * M * N + offs, b)
    tl.store(Z + 4 * M * N + tl.arange(0, 2 * M * N), tl.reshape(tl.interleave(x, y), 2 * M * N))
    tl.store(Z + 6 * M * N + tl.arange(0, 2 * M * N), tl.reshape(tl.cat(x, y, can_reorder=True), 2 * M * N))
    tl.store(Z + 8 * M * N + tl.arange(0, 2 * M * N), tl.reshape(tl.cat(x, y, dim=1), 2 * M * N))
    s0, s1 = j.split()
    tl.store(Z + 10 * M * N + offs, s1 - s0)


@pytest.mark.parametrize("dt", DTYPES)
def test_join_split_interleave_cat(mode, dt):
    r = rng(22)
    x, y = random_array(r, (4, 8), dt), random_array(r, (4, 8), dt)
    z = np.zeros(11 * 32, dt)
    launch(join_kernel, (1,), mode, x, y, z, M=4, N=8)
    np.testing.assert_array_equal(z[:64], np.stack([x, y], -1).ravel())
    np.testing.assert_array_equal(z[64:96], x.ravel())
    np.testing.assert_array_equal(z[96:128], y.ravel())
    np.testing.assert_array_equal(z[128:192], np.stack([x, y], -1).reshape(4, 16).ravel())
    np.testing.assert_array_equal(z[192:256], np.concatenate([x, y], 0).ravel())
    np.testing.assert_array_equal(z[256:320], np.concatenate([x, y], 1).ravel())
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(z[320:352], (y - x).ravel())


@tilec.jit
def join_scalar_kernel(Z):
    j = tl.join(tl.program_id(0) + 3, 7)
    tl.store(Z + tl.arange(0, 2), j)
    a, b = tl.split(j)
    tl.store(Z + 2, a * 10 + b)


def test_join_split_scalars(mode):
    z = np.zeros(3, np.int32)
    launch(join_scalar_kernel, (1,), mode, z)
    assert z.tolist() == [3, 7, 37]


def test_split_keeps_nan_and_signed_zero(mode):
    x = np.array([np.nan, -0.0, 1.0, -np.inf] * 8, np.float32).reshape(4, 8)
    y = np.array([-0.0, np.nan, np.inf, 2.0] * 8, np.float32).reshape(4, 8)
    z = np.zeros(11 * 32, np.float32)
    launch(join_kernel, (1,), mode, x, y, z, M=4, N=8)
    for got, want in ((z[64:96], x.ravel()), (z[96:128], y.ravel())):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@tilec.jit
def flip_gather_kernel(X, I, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    idx = tl.load(I + offs)
    tl.store(Z + offs, tl.flip(x, 1))
    tl.store(Z + M * N + offs, tl.flip(x, 0))
    tl.store(Z + 2 * M * N + offs, tl.flip(x))
    tl.store(Z + 3 * M * N + offs, tl.gather(x, idx % N, 1))
    tl.store(Z + 4 * M * N + offs, tl.gather(x, idx % M, 0))
    tl.store(Z + 5 * M * N + offs, x.gather(idx % N, axis=1))


@pytest.mark.parametrize("dt", DTYPES)
def test_flip_gather(mode, dt):
    r = rng(23)
    x = random_array(r, (4, 16), dt)
    idx = r.integers(0, 64, (4, 16)).astype(np.int32)
    z = np.zeros((6, 4, 16), dt)
    launch(flip_gather_kernel, (1,), mode, x, idx, z, M=4, N=16)
    np.testing.assert_array_equal(z[0], x[:, ::-1])
    np.testing.assert_array_equal(z[1], x[::-1, :])
    np.testing.assert_array_equal(z[2], x[:, ::-1])  # dim=None: the last dimension
    np.testing.assert_array_equal(z[3], np.take_along_axis(x, idx % 16, 1))
    np.testing.assert_array_equal(z[4], np.take_along_axis(x, idx % 4, 0))
    np.testing.assert_array_equal(z[5], np.take_along_axis(x, idx % 16, 1))


@tilec.jit
def gather_shape_kernel(X, I, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    io = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(Z + io, tl.gather(x, tl.load(I + io), 1))


def test_gather_to_a_different_size(mode):
    r = rng(24)
    x = r.standard_normal((4, 8)).astype(np.float32)
    idx = r.integers(0, 8, (4, 32)).astype(np.int64)
    z = np.zeros((4, 32), np.float32)
    launch(gather_shape_kernel, (1,), mode, x, idx, z, M=4, N=8, K=32)
    np.testing.assert_array_equal(z, np.take_along_axis(x, idx, 1))


@tilec.jit
def histogram_kernel(X, Z, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=0)
    h = tl.histogram(x, BINS, mask=o < n)
    tl.atomic_add(Z + tl.arange(0, BINS), h)


@pytest.mark.parametrize("dt", ["int32", "uint8", "int64"])
def test_histogram(mode, dt):
    x = rng(25).integers(0, 20, 200).astype(dt)  # values >= BINS are ignored
    z = np.zeros(16, np.int32)
    launch(histogram_kernel, (1,), mode, x, z, 200, BLOCK=256, BINS=16)
    np.testing.assert_array_equal(z, np.bincount(x, minlength=20)[:16])


@tilec.jit
def where_kernel(C, X, Y, Z, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    c = tl.load(C + o, mask=m)
    x = tl.load(X + o, mask=m)
    tl.store(Z + o, tl.where(c, x, tl.load(Y + o, mask=m)), mask=m)
    tl.store(Z + n + o, tl.where(c, x, 0), mask=m)
    tl.store(Z + 2 * n + o, tl.where(x > 0, 1, -1), mask=m)


@pytest.mark.parametrize("dt", ["int8", "int32", "float16", "float64"])
def test_where(mode, dt):
    r = rng(26)
    n = 45
    c = r.integers(0, 2, n).astype(bool)
    x, y = random_array(r, n, dt), random_array(r, n, dt)
    z = np.zeros(3 * n, dt)
    launch(where_kernel, (1,), mode, c, x, y, z, n, BLOCK=64)
    np.testing.assert_array_equal(z[:n], np.where(c, x, y))
    np.testing.assert_array_equal(z[n:2 * n], np.where(c, x, 0))
    np.testing.assert_array_equal(z[2 * n:], np.where(x > 0, 1, -1))
