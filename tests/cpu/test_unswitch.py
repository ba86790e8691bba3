"""Rows whose masks are all on run unmasked code (``targets/cpu/unswitch.py``): the results match numpy for
every mask form the scalar test knows, at sizes where some chunks are whole and some are not, for lanes that wrap
around, and for masks it does not know (which keep the masked code)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl


@tilec.jit
def _form(offs, n, lo, FORM: tl.constexpr):
    """The mask forms the tests use (``FORM`` 7: one the scalar test does not know)."""
    if FORM == 0:
        m = offs < n
    elif FORM == 1:
        m = n > offs
    elif FORM == 2:
        m = offs <= n - 1
    elif FORM == 3:
        m = (offs >= lo) & (offs < n)
    elif FORM == 4:
        m = (n - 1 - offs) >= 0          # a decreasing lane sequence
    elif FORM == 5:
        m = offs.to(tl.uint32) < n.to(tl.uint32)
    elif FORM == 6:
        m = (offs < n) & (lo > 0)        # one part the same in every lane
    else:
        m = ((offs % 3) != 0) & (offs < n)  # a form the scalar test does not know
    return m


@tilec.jit
def edge_forms(x_ptr, out_ptr, n, lo, FORM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=_form(offs, n, lo, FORM), other=-1.0)
    tl.store(out_ptr + offs, x * 2.0 + 1.0, mask=offs < n + 64)


def _edge_reference(x, n, lo, form, size):
    offs = np.arange(size)
    m = {0: offs < n, 1: offs < n, 2: offs <= n - 1, 3: (offs >= lo) & (offs < n), 4: n - 1 - offs >= 0,
         5: offs < n, 6: (offs < n) & (lo > 0), 7: (offs % 3 != 0) & (offs < n)}[form]
    return np.where(m, x[:size], -1.0).astype(np.float32) * 2 + 1


@pytest.mark.parametrize("form", range(8))
@settings(max_examples=12, deadline=None, derandomize=True)
@given(n=st.integers(1, 700), lo=st.integers(-5, 300))
def test_each_mask_form_matches_numpy(form, n, lo):
    block = 64
    grid = (n + 64 + block - 1) // block
    size = grid * block
    x = np.random.default_rng(n).standard_normal(size).astype(np.float32)
    out = np.full(size, 7.0, np.float32)
    edge_forms[(grid,)](x, out, n, lo, FORM=form, BLOCK=block)
    want = _edge_reference(x, n, lo, form, size)
    stored = np.arange(size) < n + 64
    np.testing.assert_array_equal(out[stored], want[stored])
    assert (out[~stored] == 7.0).all()


@tilec.jit
def wrapping_lanes(out_ptr, base, lim, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    offs = base + lanes                  # int32: wraps past 2**31 - 1 within a chunk
    tl.store(out_ptr + lanes, lanes + 1, mask=offs < lim)


@tilec.jit
def wrapping_bytes(out_ptr, base, lim, WIDEN: tl.constexpr, STEP: tl.constexpr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    small = (base + lanes * STEP).to(tl.int8)   # wraps past 127 (more than once within a chunk for big steps)
    if WIDEN:
        m = small.to(tl.int32) < lim     # compared in int32 after the wrap: not affine there
    else:
        m = small < lim.to(tl.int8)
    tl.store(out_ptr + lanes, lanes + 1, mask=m)


@pytest.mark.parametrize("base,lim", [(2 ** 31 - 20, 2 ** 31 - 1), (2 ** 31 - 9, 5), (2 ** 31 - 70, -3)])
def test_lanes_that_wrap_keep_the_masked_code(base, lim):
    out = np.zeros(128, np.int32)
    wrapping_lanes[(1,)](out, base, lim, BLOCK=128)
    offs = (np.int64(base) + np.arange(128)).astype(np.int64)
    offs = ((offs + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    want = np.where(offs < lim, np.arange(128) + 1, 0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("widen", [False, True])
@pytest.mark.parametrize("base,lim,step", [(100, 120, 1), (120, 127, 1), (0, 5, 1), (-130, 10, 1), (250, 0, 1),
                                           (-128, 127, 30), (-128, 70, 30), (5, 127, 9)])
def test_narrow_lanes_that_wrap_keep_the_masked_code(base, lim, step, widen):
    out = np.zeros(64, np.int32)
    wrapping_bytes[(1,)](out, base, lim, WIDEN=widen, STEP=step, BLOCK=64)
    small = (base + np.arange(64) * step).astype(np.int64).astype(np.int8)
    want = np.where(small < np.int8(lim), np.arange(64) + 1, 0)
    np.testing.assert_array_equal(out, want)


@tilec.jit
def masked_2d(a_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(a_ptr + rm[:, None] * stride + rn[None, :], mask=m, other=0.0)
    tl.store(out_ptr + rm[:, None] * stride + rn[None, :], tl.exp(a) - a, mask=m)


@pytest.mark.parametrize("M,N", [(37, 45), (64, 64), (1, 100), (100, 1), (65, 63)])
def test_a_2d_edge_mask_matches_numpy(M, N):
    a = np.random.default_rng(M * N).standard_normal((M, N)).astype(np.float32)
    out = np.full((M, N), 5.0, np.float32)
    masked_2d[(tilec.cdiv(M, 16), tilec.cdiv(N, 32))](a, out, M, N, N, BM=16, BN=32)
    np.testing.assert_allclose(out, np.exp(a.astype(np.float64)) - a, rtol=2e-6, atol=1e-6)


@tilec.jit
def materialised(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x - tl.sum(x, 0) / n, mask=offs < n)  # x is kept in a buffer: used twice


def test_a_masked_tile_filled_into_a_buffer_matches_numpy():
    n = 300
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    materialised[(1,)](x, out, n, BLOCK=512)
    np.testing.assert_allclose(out, x - x.astype(np.float64).sum() / n, rtol=1e-5, atol=1e-5)


def _plan(kernel, *args, **kw):
    return kernel.warmup(*args, grid=(1,), **kw).asm["plan"]


@tilec.jit
def unknown_mask(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs % 3) != n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m, other=1.0), mask=m)


def test_known_masks_get_the_scalar_test_and_unknown_ones_do_not():
    x, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    assert "rows test 2 mask(s) at once" in _plan(edge_forms, x, out, 10, 0, FORM=3, BLOCK=64)
    assert "rows test" not in _plan(unknown_mask, x, out, 1, BLOCK=64)
    unknown_mask[(1,)](np.arange(64, dtype=np.float32), out, 1, BLOCK=64)
    np.testing.assert_array_equal(out, np.where(np.arange(64) % 3 != 1, np.arange(64), 0))


@tilec.jit
def store_forms(x_ptr, out_ptr, n, lo, FORM: tl.constexpr, BLOCK: tl.constexpr):
    """The mask forms of ``edge_forms`` on a store: chunks the scalar test finds all off are skipped."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0 + 1.0, mask=_form(offs, n, lo, FORM))


@pytest.mark.parametrize("form", [0, 3, 4, 6, 7])
@settings(max_examples=12, deadline=None, derandomize=True)
@given(n=st.integers(0, 700), lo=st.integers(-5, 300), block=st.sampled_from([64, 1024]))
def test_store_masks_skip_only_chunks_with_no_lane_on(form, n, lo, block):
    grid = max(1, (n + block - 1) // block + 1)   # one program past the end: all of it off
    size = grid * block
    x = np.random.default_rng(n).standard_normal(size).astype(np.float32)
    out = np.full(size, 7.0, np.float32)
    store_forms[(grid,)](x, out, n, lo, FORM=form, BLOCK=block)
    offs = np.arange(size)
    m = {0: offs < n, 3: (offs >= lo) & (offs < n), 4: n - 1 - offs >= 0, 6: (offs < n) & (lo > 0),
         7: (offs % 3 != 0) & (offs < n)}[form]
    np.testing.assert_array_equal(out, np.where(m, x * 2 + 1, np.float32(7.0)))
