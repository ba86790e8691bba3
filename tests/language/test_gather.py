"""``tl.gather`` and ``tl.flip``: one ``gather`` op, checked against numpy's ``take_along_axis`` / ``flip`` in every
mode (compiled on the CPU, interpreted, and on CUDA with ``-m gpu``).

Hypothesis draws ranks 1-3, power-of-two shapes (the language's tiles; the IR-level property tests in
``tests/strategies.py`` also gather along axes of 3), the axis, an index shape that differs from the source's
along it, element and index dtypes, and in-range indices with repeats. Indices out of range wrap modulo the axis
(the op's definition) and are reported by debug builds."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilec
import tilec.language as tl
from tilec.errors import BoundsError
from tilec.language.reinterpret import reinterpret
from langhelp import launch, random_array

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
INDEX_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint32"]


@tilec.jit
def gather1(X, I, Z, S0: tl.constexpr, I0: tl.constexpr, AX: tl.constexpr):
    x = tl.load(X + tl.arange(0, S0))
    io = tl.arange(0, I0)
    tl.store(Z + io, tl.gather(x, tl.load(I + io), AX))


@tilec.jit
def gather2(X, I, Z, S0: tl.constexpr, S1: tl.constexpr, I0: tl.constexpr, I1: tl.constexpr, AX: tl.constexpr):
    x = tl.load(X + tl.arange(0, S0)[:, None] * S1 + tl.arange(0, S1)[None, :])
    io = tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :]
    tl.store(Z + io, tl.gather(x, tl.load(I + io), AX))


@tilec.jit
def gather3(X, I, Z, S0: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, I0: tl.constexpr, I1: tl.constexpr,
            I2: tl.constexpr, AX: tl.constexpr):
    x = tl.load(X + tl.arange(0, S0)[:, None, None] * (S1 * S2) + tl.arange(0, S1)[None, :, None] * S2
                + tl.arange(0, S2)[None, None, :])
    io = (tl.arange(0, I0)[:, None, None] * (I1 * I2) + tl.arange(0, I1)[None, :, None] * I2
          + tl.arange(0, I2)[None, None, :])
    tl.store(Z + io, tl.gather(x, tl.load(I + io), AX))


KERNELS = {1: gather1, 2: gather2, 3: gather3}


def _data(r, shape, dt):
    """Random values of ``dt``; bf16 as its 16-bit codes of finite values (passed through ``reinterpret``)."""
    if dt == "bfloat16":
        return (r.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return random_array(r, shape, dt)


def _arg(a, dt):
    return reinterpret(a, tl.bfloat16) if dt == "bfloat16" else a


def run_gather(mode, x, idx, axis, dt):
    """``tl.gather(x, idx, axis)`` in ``mode``; returns the result (bf16 as codes)."""
    z = np.zeros(idx.shape, x.dtype)
    const = {f"S{d}": n for d, n in enumerate(x.shape)} | {f"I{d}": n for d, n in enumerate(idx.shape)}
    launch(KERNELS[x.ndim], (1,), mode, _arg(x, dt), idx, _arg(z, dt), AX=axis, **const)
    return z


pow2 = st.sampled_from([1, 2, 4, 8, 16])


@st.composite
def cases(draw, max_numel=512):
    rank = draw(st.integers(1, 3))
    shape = [draw(pow2) for _ in range(rank)]
    if rank == 1:
        shape[0] = draw(st.sampled_from([2, 4, 8, 32, 128, 256]))
    axis = draw(st.integers(0, rank - 1))
    ishape = list(shape)
    ishape[axis] = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    while np.prod(shape) > max_numel or np.prod(ishape) > max_numel:
        d = int(np.argmax(shape))
        shape[d] //= 2
        ishape[d] = shape[d] if d != axis else ishape[d]
    dt = draw(st.sampled_from(DTYPES))
    n = shape[axis]
    it = draw(st.sampled_from([t for t in INDEX_DTYPES if np.iinfo(t).max >= n - 1]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return tuple(shape), axis, tuple(ishape), dt, it, seed


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_gather_matches_numpy(mode, case):
    shape, axis, ishape, dt, it, seed = case
    r = np.random.default_rng(seed)
    x = _data(r, shape, dt)
    n = shape[axis]
    idx = r.integers(0, n, ishape).astype(it)
    if idx.size > 1 and n > 1:  # repeated indices for sure
        idx.reshape(-1)[1] = idx.reshape(-1)[0]
    got = run_gather(mode, x, idx, axis, dt)
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx.astype(np.int64), axis))


@tilec.jit
def flip1(X, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Z + o, tl.flip(tl.load(X + o)))


@tilec.jit
def flip2(X, Z, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    o = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Z + o, tl.flip(tl.load(X + o), DIM))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rank=st.integers(1, 2), m=st.sampled_from([2, 8, 32]), n=st.sampled_from([2, 4, 16, 64, 1024]),
       dim=st.integers(0, 1), dt=st.sampled_from(DTYPES), seed=st.integers(0, 2 ** 32 - 1))
def test_flip_matches_numpy(mode, rank, m, n, dim, dt, seed):
    r = np.random.default_rng(seed)
    if rank == 1:
        x = _data(r, (n,), dt)
        z = np.zeros_like(x)
        launch(flip1, (1,), mode, _arg(x, dt), _arg(z, dt), N=n)
        np.testing.assert_array_equal(z, x[::-1])
        return
    n = min(n, 64)
    x = _data(r, (m, n), dt)
    z = np.zeros_like(x)
    launch(flip2, (1,), mode, _arg(x, dt), _arg(z, dt), M=m, N=n, DIM=dim)
    np.testing.assert_array_equal(z, np.flip(x, dim))


@pytest.mark.parametrize("dt", ["int8", "float32", "float64", "bfloat16"])
def test_flip_of_1024_elements(mode, dt):
    x = _data(np.random.default_rng(5), (1024,), dt)
    z = np.zeros_like(x)
    launch(flip1, (1,), mode, _arg(x, dt), _arg(z, dt), N=1024)
    np.testing.assert_array_equal(z, x[::-1])


def test_out_of_range_indices_wrap(mode):
    """Triton leaves them undefined; tilec wraps them modulo the axis on every backend (never a stray read)."""
    x = np.arange(32, dtype=np.float32).reshape(4, 8) * 1.5
    idx = np.array([[-1, 8, 9, -8, -9, 100, 7, 0]] * 4, np.int32)
    got = run_gather(mode, x, idx, 1, "float32")
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx % 8, 1))
    uidx = np.array([[255, 8, 16, 3, 4, 5, 6, 7]] * 4, np.uint8)
    got = run_gather(mode, x, uidx, 1, "float32")
    np.testing.assert_array_equal(got, np.take_along_axis(x, uidx.astype(np.int64) % 8, 1))


@tilec.jit
def rotate(X, Z, N: tl.constexpr, SHIFT: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.store(Z + o, tl.gather(x, o + SHIFT, 0))  # consecutive indices that wrap inside a vector
    tl.store(Z + N + o, tl.gather(x, SHIFT - o, 0))  # reversed ones


@pytest.mark.parametrize("shift", [0, 5, 16, -3, 63])
def test_consecutive_and_reversed_indices_that_wrap(mode, shift):
    x = np.arange(64, dtype=np.int32) * 3
    z = np.zeros(128, np.int32)
    launch(rotate, (1,), mode, x, z, N=64, SHIFT=shift)
    o = np.arange(64)
    np.testing.assert_array_equal(z[:64], x[(o + shift) % 64])
    np.testing.assert_array_equal(z[64:], x[(shift - o) % 64])


@tilec.jit(debug=True)
def gather_debug(X, I, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.store(Z + o, tl.gather(x, tl.load(I + o), 0))  # GATHER


def test_debug_builds_report_out_of_range_indices(mode):
    x = np.arange(16, dtype=np.float32)
    z = np.zeros(16, np.float32)
    idx = np.arange(16, dtype=np.int32)[::-1].copy()
    launch(gather_debug, (1,), mode, x, idx, z, N=16)  # in range: no error
    np.testing.assert_array_equal(z, x[::-1])
    idx[[3, 9]] = [16, -2]
    with pytest.raises(BoundsError) as e:
        launch(gather_debug, (2,), mode, x, idx, z, N=16)
    msg = str(e.value)
    assert "test_gather.py:" in msg and "# GATHER" in msg
    assert re.search(r"out-of-bounds gather in program \(\d, 0, 0\).*: index -2 outside \[0, 16\) along axis 0",
                     msg), msg
    idx[9] = 0  # the smallest bad index is reported
    with pytest.raises(BoundsError, match=r"index 16 outside \[0, 16\)"):
        launch(gather_debug, (1,), mode, x, idx, z, N=16)


def test_cpu_flip_reads_vectors():
    """A row flip reads reversed vectors (a shuffle), a column flip whole rows: no per-element gather."""
    x = np.zeros((32, 64), np.float32)
    k = flip2.warmup(x, x, M=32, N=64, DIM=1, grid=(1,))
    assert "shufflevector" in k.asm["llir"] and "<i32 15, i32 14," in k.asm["llir"]
    k = flip2.warmup(x, x, M=32, N=64, DIM=0, grid=(1,))
    assert "masked.gather" not in k.asm["llir"]
    assert "gather axis 0 from buffer" in k.asm["plan"]
