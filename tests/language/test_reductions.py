"""Reductions and scans over every axis (and axis=None, keep_dims) and dtype: sum/max/min/argmax/argmin with
indices and tie-breaking, xor_sum/reduce_or, reduce with a @jit combine (tuples too), cumsum/cumprod,
associative_scan (reverse), sort and topk."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tilec
import tilec.language as tl
from langhelp import launch, random_array, rng

M, N = 4, 16


@tilec.jit
def reduce_kernel(X, Z, AXIS: tl.constexpr, KEEP: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    s = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    mx = tl.max(x, axis=AXIS, keep_dims=KEEP)
    mn = x.min(axis=AXIS, keep_dims=KEEP)
    if KEEP:
        tl.static_assert(len(s.shape) == 2)
    if AXIS is None:
        tl.store(Z + tl.arange(0, 1), tl.reshape(s, 1).to(Z.dtype.element_ty))
        tl.store(Z + 1 + tl.arange(0, 1), tl.reshape(mx, 1).to(Z.dtype.element_ty))
        tl.store(Z + 2 + tl.arange(0, 1), tl.reshape(mn, 1).to(Z.dtype.element_ty))
    else:
        R: tl.constexpr = N if AXIS == 0 else M
        o = tl.arange(0, R)
        tl.store(Z + o, tl.reshape(s, R).to(Z.dtype.element_ty))
        tl.store(Z + R + o, tl.reshape(mx, R).to(Z.dtype.element_ty))
        tl.store(Z + 2 * R + o, tl.reshape(mn, R).to(Z.dtype.element_ty))


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32", "uint32", "int64", "float16", "float32",
                                "float64"])
@pytest.mark.parametrize("axis,keep", [(0, False), (1, True), (None, False), (None, True), (-1, False)])
def test_sum_max_min(mode, dt, axis, keep):
    x = random_array(rng(30), (M, N), dt)
    z = np.zeros(3 * N, np.float64 if dt.startswith("f") else np.int64)
    launch(reduce_kernel, (1,), mode, x, z, AXIS=axis, KEEP=keep, M=M, N=N)
    r = 1 if axis is None else (N if axis == 0 else M)
    acc = np.float64 if dt.startswith("f") else np.int64
    tol = 1e-6
    atol = 2e-3 * np.abs(x.astype(acc)).sum(axis=axis).ravel() if dt == "float16" else 0  # fp16 accumulates
    np.testing.assert_allclose(z[:r], x.astype(acc).sum(axis=axis).ravel(), rtol=tol, atol=np.max(atol))
    np.testing.assert_array_equal(z[r:2 * r], x.max(axis=axis).ravel().astype(acc))
    np.testing.assert_array_equal(z[2 * r:3 * r], x.min(axis=axis).ravel().astype(acc))


@tilec.jit
def sum_dtype_kernel(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    s = tl.sum(x)
    tl.static_assert(s.dtype == tl.int32)  # small ints accumulate in int32, as in Triton
    tl.store(Z, s)
    tl.store(Z + 1, tl.sum(x, dtype=tl.int8).to(tl.int32))


def test_sum_of_small_ints_widens(mode):
    x = np.full(64, 100, np.int8)
    z = np.zeros(2, np.int32)
    launch(sum_dtype_kernel, (1,), mode, x, z, BLOCK=64)
    assert z[0] == 6400 and z[1] == np.array(6400).astype(np.int8)


@tilec.jit
def nan_reduce_kernel(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(Z, tl.max(x, 0))
    tl.store(Z + 1, tl.max(x, 0, propagate_nan=tl.PropagateNan.ALL))
    tl.store(Z + 2, tl.min(x, 0, propagate_nan=True))


def test_max_min_nan(mode):
    x = np.array([1.0, np.nan, 3.0, -2.0], np.float32)
    z = np.zeros(3, np.float32)
    launch(nan_reduce_kernel, (1,), mode, x, z, BLOCK=4)
    assert z[0] == 3.0 and np.isnan(z[1]) and np.isnan(z[2])


@tilec.jit
def arg_kernel(X, V, I, AXIS: tl.constexpr, LEFT: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    v, i = tl.max(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=LEFT)
    R: tl.constexpr = N if AXIS == 0 else M
    o = tl.arange(0, R)
    tl.store(V + o, v)
    tl.store(I + o, i)
    v2, i2 = tl.min(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=LEFT)
    tl.store(V + R + o, v2)
    tl.store(I + R + o, i2)
    tl.store(I + 2 * R + o, tl.argmax(x, AXIS, tie_break_left=LEFT))
    tl.store(I + 3 * R + o, tl.argmin(x, AXIS))


@pytest.mark.parametrize("dt", ["int32", "uint8", "float32", "float64"])
@pytest.mark.parametrize("axis", [0, 1])
def test_arg_extremes(mode, dt, axis):
    x = rng(31).integers(0, 5, (M, N)).astype(dt)  # many ties: the first index wins
    r = N if axis == 0 else M
    v, i = np.zeros(2 * r, dt), np.zeros(4 * r, np.int32)
    launch(arg_kernel, (1,), mode, x, v, i, AXIS=axis, LEFT=True, M=M, N=N)
    np.testing.assert_array_equal(v[:r], x.max(axis))
    np.testing.assert_array_equal(v[r:], x.min(axis))
    for k, ref in enumerate([x.argmax(axis), x.argmin(axis), x.argmax(axis), x.argmin(axis)]):
        np.testing.assert_array_equal(i[k * r:(k + 1) * r], ref)


def test_argmax_tie_break_right_returns_a_maximum(mode):
    x = rng(32).integers(0, 3, (M, N)).astype(np.int32)
    v, i = np.zeros(2 * M, np.int32), np.zeros(4 * M, np.int32)
    launch(arg_kernel, (1,), mode, x, v, i, AXIS=1, LEFT=False, M=M, N=N)
    assert all(x[r, i[r]] == x[r].max() for r in range(M))


@tilec.jit
def bits_kernel(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(Z + tl.arange(0, BLOCK), tl.xor_sum(x, 1))
    tl.store(Z + BLOCK + tl.arange(0, BLOCK), tl.reduce_or(x, 0))
    tl.store(Z + 2 * BLOCK, x.xor_sum())


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint64"])
def test_xor_sum_reduce_or(mode, dt):
    info = np.iinfo(dt)
    x = rng(33).integers(info.min, info.max, (8, 8), dtype=dt, endpoint=True)
    z = np.zeros(17, dt)
    launch(bits_kernel, (1,), mode, x, z, BLOCK=8)
    np.testing.assert_array_equal(z[:8], np.bitwise_xor.reduce(x, 1))
    np.testing.assert_array_equal(z[8:16], np.bitwise_or.reduce(x, 0))
    assert z[16] == np.bitwise_xor.reduce(x.ravel())


@tilec.jit
def _mul_combine(a, b):
    return a * b


@tilec.jit
def _argmax_combine(v1, i1, v2, i2):
    take = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@tilec.jit
def custom_reduce_kernel(X, Z, V, I, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Z + tl.arange(0, M), tl.reduce(x, 1, _mul_combine))
    idx = tl.broadcast_to(tl.arange(0, N)[None, :], (M, N))
    v, i = tl.reduce((x, idx), 1, _argmax_combine)
    tl.store(V + tl.arange(0, M), v)
    tl.store(I + tl.arange(0, M), i)
    kv = tl.reduce(x, 0, _mul_combine, keep_dims=True)
    tl.store(Z + M + tl.arange(0, N), tl.reshape(kv, N))


def test_reduce_with_jit_combine_and_tuples(mode):
    x = rng(34).uniform(0.5, 1.5, (M, N)).astype(np.float32)
    z, v, i = np.zeros(M + N, np.float32), np.zeros(M, np.float32), np.zeros(M, np.int32)
    launch(custom_reduce_kernel, (1,), mode, x, z, v, i, M=M, N=N)
    np.testing.assert_allclose(z[:M], x.prod(1), rtol=1e-5)
    np.testing.assert_allclose(z[M:], x.prod(0), rtol=1e-5)
    np.testing.assert_array_equal(v, x.max(1))
    np.testing.assert_array_equal(i, x.argmax(1))


@tilec.jit
def _first_nonzero(a, b):
    return tl.where(a != 0, a, b)


@tilec.jit
def scan_kernel(X, Z, AXIS: tl.constexpr, REV: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Z + offs, tl.cumsum(x, AXIS, reverse=REV))
    tl.store(Z + M * N + offs, tl.cumprod(x, axis=AXIS, reverse=REV))
    tl.store(Z + 2 * M * N + offs, tl.associative_scan(x, AXIS, _first_nonzero, reverse=REV))
    tl.store(Z + 3 * M * N + offs, x.cumsum(AXIS))


def _first_nonzero_ref(x, axis, rev):
    x = np.moveaxis(x, axis, 0)
    out = np.empty_like(x)
    for j in range(x.shape[0]):
        seq = x[:j + 1] if not rev else x[j:][::-1]
        nz = seq[seq != 0] if seq.ndim == 1 else None
        if nz is None:
            cols = []
            for c in range(x.shape[1]):
                col = seq[:, c]
                nzc = col[col != 0]
                cols.append(nzc[0] if len(nzc) else 0)
            out[j] = cols
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("dt", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("axis,rev", [(0, False), (1, False), (1, True), (0, True)])
def test_scans(mode, dt, axis, rev):
    r = rng(35)
    if dt.startswith("f"):
        x = r.uniform(0.8, 1.25, (M, N)).astype(dt)
    else:
        x = r.integers(-3, 4, (M, N)).astype(dt)
    x[1, 3] = 0
    z = np.zeros((4, M, N), dt)
    launch(scan_kernel, (1,), mode, x, z, AXIS=axis, REV=rev, M=M, N=N)
    f = (lambda a, fn: np.flip(fn(np.flip(a, axis), axis=axis), axis)) if rev else (lambda a, fn: fn(a, axis=axis))
    tol = 1e-5 if dt == "float32" else 1e-12
    np.testing.assert_allclose(z[0], f(x, np.cumsum), rtol=tol)
    np.testing.assert_allclose(z[1], f(x, np.cumprod), rtol=tol * 10)
    np.testing.assert_array_equal(z[2], _first_nonzero_ref(x, axis, rev))
    np.testing.assert_allclose(z[3], np.cumsum(x, axis=axis), rtol=tol)


@tilec.jit
def sort_kernel(X, Z, DESC: tl.constexpr, K: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Z + offs, tl.sort(x, descending=DESC))
    tl.store(Z + M * N + offs, x.sort(dim=1, descending=DESC))
    t = tl.topk(x, K)
    tl.store(Z + 2 * M * N + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], t)


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "int64", "float16", "float32", "float64"])
@pytest.mark.parametrize("desc", [False, True])
def test_sort_topk(mode, dt, desc):
    x = random_array(rng(36), (M, N), dt)
    x[0, :4] = x[0, 4:8]  # duplicates
    z = np.zeros(3 * M * N, dt)
    launch(sort_kernel, (1,), mode, x, z, DESC=desc, K=4, M=M, N=N)
    want = np.sort(x, axis=1)
    if desc:
        want = want[:, ::-1]
    np.testing.assert_array_equal(z[:M * N].reshape(M, N), want)
    np.testing.assert_array_equal(z[M * N:2 * M * N].reshape(M, N), want)
    np.testing.assert_array_equal(z[2 * M * N:2 * M * N + 4 * M].reshape(M, 4), np.sort(x, 1)[:, ::-1][:, :4])


def test_sort_nan_last(mode):
    x = rng(37).standard_normal((M, N)).astype(np.float32)
    x[:, 3] = np.nan
    z = np.zeros(3 * M * N, np.float32)
    launch(sort_kernel, (1,), mode, x, z, DESC=False, K=4, M=M, N=N)
    np.testing.assert_array_equal(z[:M * N].reshape(M, N), np.sort(x, 1))


@tilec.jit
def sum_1d_kernel(X, Z, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Z, tl.sum(tl.load(X + o, mask=o < n, other=0)))


@given(st.lists(st.integers(-2**20, 2**20), min_size=1, max_size=100))
def test_masked_sum_property(values):
    """Property: the masked sum of any list of ints equals Python's (padding with 0 is the identity)."""
    x = np.array(values, np.int32)
    z = np.zeros(1, np.int32)
    launch(sum_1d_kernel, (1,), "cpu", x, z, len(values), BLOCK=128)
    assert int(z[0]) == sum(values)


@tilec.jit
def sort_1d_kernel(X, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Z + o, tl.sort(x))
    tl.store(Z + BLOCK + o, tl.sort(x, descending=True))


@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0]),
                min_size=32, max_size=32))
def test_sort_property(values):
    """Property: tl.sort is numpy's sort (NaN last; descending is its reverse) on any float32 data."""
    x = np.array(values, np.float32)
    z = np.zeros(64, np.float32)
    launch(sort_1d_kernel, (1,), "cpu", x, z, BLOCK=32)
    np.testing.assert_array_equal(z[:32], np.sort(x))
    np.testing.assert_array_equal(z[32:], np.sort(x)[::-1])
