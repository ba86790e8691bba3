"""Loads and stores: masks with non-power-of-two sizes and `other`, bool and small-int memory, block pointers
(make_block_ptr/advance, boundary_check, padding_option) and tensor descriptors, against numpy."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def masked_kernel(X, Z, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=OTHER)
    tl.store(Z + o, x, mask=o < n + 3)  # the padding lands in Z's tail


@pytest.mark.parametrize("dt,other", [("float32", -1.5), ("int8", 7), ("uint16", 9), ("bool", True),
                                      ("float64", float("nan"))])
def test_masked_load_other(mode, dt, other):
    n = 45
    r = rng(70)
    x = (r.integers(0, 2, n).astype(bool) if dt == "bool" else (r.standard_normal(n) * 50).astype(dt))
    z = np.zeros(n + 3, dt)
    launch(masked_kernel, (3,), mode, x, z, n, OTHER=other, BLOCK=16)
    np.testing.assert_array_equal(z, np.concatenate([x, np.full(3, other, dt)]))


@tilec.jit
def block_ptr_kernel(X, Z, M, N, sm, sn, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    pm = tl.program_id(0)
    src = tl.make_block_ptr(X, shape=(M, N), strides=(sm, sn), offsets=(pm * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    dst = tl.make_block_ptr(Z, shape=(M, N), strides=(N, 1), offsets=(pm * BM, 0), block_shape=(BM, BN),
                            order=(1, 0))
    for _ in range(0, N, BN):
        t = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
        tl.store(dst, t + 1, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))


@pytest.mark.parametrize("transposed", [False, True])
def test_block_pointers(mode, transposed):
    m, n = 19, 37
    x = rng(71).standard_normal((n, m) if transposed else (m, n)).astype(np.float32)
    sm, sn = (1, m) if transposed else (n, 1)
    z = np.zeros((m, n), np.float32)
    launch(block_ptr_kernel, (tilec.cdiv(m, 8),), mode, x, z, m, n, sm, sn, BM=8, BN=16, PAD="zero")
    np.testing.assert_array_equal(z, (x.T if transposed else x) + 1)


@tilec.jit
def padding_kernel(X, Z, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_block_ptr(X, shape=(M, N), strides=(N, 1), offsets=(-2, 3), block_shape=(BM, BN), order=(1, 0))
    t = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
    tl.store(Z + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], t)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_block_pointer_padding(mode, pad):
    m, n = 5, 6
    x = rng(72).standard_normal((m, n)).astype(np.float32)
    z = np.zeros((8, 8), np.float32)
    launch(padding_kernel, (1,), mode, x, z, m, n, BM=8, BN=8, PAD=pad)
    want = np.full((8, 8), 0.0 if pad == "zero" else np.nan, np.float32)
    want[2:2 + m, 0:n - 3] = x[:, 3:]
    np.testing.assert_array_equal(z, want)


@tilec.jit
def descriptor_kernel(X, Z, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_tensor_descriptor(X, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(Z, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    t = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], t * 2)
    tl.static_assert(src.block_shape == (BM, BN))


@tilec.jit
def descriptor_fn_kernel(X, Z, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(X, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option="nan")
    dst = tl.make_tensor_descriptor(Z, shape=[M + 1, N], strides=[N, 1], block_shape=[BM, BN])
    tl.store_tensor_descriptor(dst, [0, 0], tl.load_tensor_descriptor(src, [1, 0]))


def test_tensor_descriptors(mode):
    m, n = 21, 45
    x = rng(73).standard_normal((m, n)).astype(np.float32)
    z = np.zeros((m, n), np.float32)
    launch(descriptor_kernel, (tilec.cdiv(m, 8), tilec.cdiv(n, 16)), mode, x, z, m, n, BM=8, BN=16)
    np.testing.assert_array_equal(z, 2 * x)
    z2 = np.zeros((5, 8), np.float32)
    launch(descriptor_fn_kernel, (1,), mode, x[:4, :8].copy(), z2, 4, 8, BM=4, BN=8)
    np.testing.assert_array_equal(z2[:3, :8], x[1:4, :8])
    assert np.isnan(z2[3, :8]).all()  # the row past the source reads as the NaN padding


@tilec.jit
def ptr_arith_kernel(X, Z, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    p = X + n - 1 - o            # pointer minus offsets
    q = Z + o
    tl.store(q, tl.load(p, mask=o < n), mask=o < n)
    tl.store(q + n, tl.load(p - 0, mask=o < n) * 2, mask=o < n)


def test_pointer_arithmetic(mode):
    n = 13
    x = np.arange(n, dtype=np.float32)
    z = np.zeros(2 * n, np.float32)
    launch(ptr_arith_kernel, (1,), mode, x, z, n, BLOCK=16)
    np.testing.assert_array_equal(z[:n], x[::-1])
    np.testing.assert_array_equal(z[n:], 2 * x[::-1])
