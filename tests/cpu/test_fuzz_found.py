"""Compiled CPU kernels that disagreed with the interpreter (found by ``python -m tilec.tools.fuzz``, reduced)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl


@tilec.jit
def int_to_f16_times(a_ptr, x_ptr, out_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    a = tl.load(a_ptr + r)
    x = tl.load(x_ptr + r)
    tl.store(out_ptr + r, x * (a << 59))  # int64 past f16's range: inf; 0 * inf is NaN


@pytest.mark.parametrize("dtype", [np.uint64, np.int64])
def test_integer_past_f16_range_is_infinite_in_arithmetic(dtype):
    a = np.array([4, 1, 0, -1 if dtype == np.int64 else 3], dtype)
    x = np.array([0.0, 1.5, 2.0, -1.0], np.float16)
    with np.errstate(invalid="ignore", over="ignore"):
        expect = x * (a << 59).astype(np.float64).astype(np.float16)  # numpy: 0 * inf = nan, exact products
        for interpret in (True, False):
            out = np.zeros(4, np.float16)
            tilec.jit(int_to_f16_times.fn, interpret=interpret)[(1,)](a, x, out, B=4)
            np.testing.assert_array_equal(out, expect)


@tilec.jit
def int_to_f16(a_ptr, out_ptr, B: tl.constexpr):
    r = tl.arange(0, B)
    tl.store(out_ptr + r, tl.load(a_ptr + r).to(tl.float16).to(tl.float32))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.uint16])
def test_int_to_f16_rounds_to_infinity_at_65520(dtype):
    vals = [65504, 65519, 65520, 65535, 0, 1, 2048, 2049]
    if np.dtype(dtype).kind == "i":
        vals[4:6] = [-65520, -65519]
    a = np.array(vals, dtype)
    out = np.zeros(8, np.float32)
    int_to_f16[(1,)](a, out, B=8)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a.astype(np.float64).astype(np.float16).astype(np.float32))


@tilec.jit
def row_max_2d(x_ptr, out_ptr, n0, n1, OTHER: tl.constexpr, B0: tl.constexpr, B1: tl.constexpr):
    rows = tl.program_id(0) * B0 + tl.arange(0, B0)
    cols = tl.arange(0, B1)
    mask = (rows[:, None] < n0) & (cols[None, :] < n1)  # used twice: the CPU keeps it in memory as bytes
    offs = rows[:, None] * n1 + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=OTHER)
    tl.store(out_ptr + offs, tl.max(x, axis=1)[:, None] + tl.zeros((B0, B1), x.dtype), mask=mask)


@pytest.mark.parametrize("dtype,cols", [(np.float32, 16), (np.float64, 8), (np.int32, 16), (np.float32, 32),
                                        (np.float64, 16)])
def test_masked_load_with_upper_half_off_reads_other(dtype, cols):
    """LLVM 22 on AVX2 splits a masked load wider than a vector register and, when the mask is also stored as
    bytes and one half is provably off (``n1 == 1`` compiled as a constant), loads that half plainly: masked-off
    lanes read memory instead of ``other``. Masked loads are emitted no wider than the host's vectors."""
    rng = np.random.default_rng(cols)
    n0 = int(rng.integers(3, 8))
    x = np.full(n0 + 4 * cols, 100, dtype)  # what the masked-off lanes must not read
    x[:n0] = rng.integers(-9, 9, n0)
    out = np.zeros(n0, dtype)
    other = 0.5 if np.dtype(dtype).kind == "f" else -3
    row_max_2d[(1,)](x, out, n0, 1, OTHER=other, B0=8, B1=cols)
    np.testing.assert_array_equal(out, np.maximum(x[:n0], dtype(other)))
    with_interpreter = np.zeros(n0, dtype)
    tilec.jit(row_max_2d.fn, interpret=True)[(1,)](x, with_interpreter, n0, 1, OTHER=other, B0=8, B1=cols)
    np.testing.assert_array_equal(out, with_interpreter)


@tilec.jit
def zero_signs(x_ptr, y_ptr, mx_ptr, mn_ptr, rmx_ptr, rmn_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    tl.store(mx_ptr + offs, 1.0 / tl.maximum(x, y), mask=m)
    tl.store(mn_ptr + offs, 1.0 / tl.minimum(x, y), mask=m)
    tl.store(rmx_ptr, 1.0 / tl.max(tl.where(m, x, -1.0)))
    tl.store(rmn_ptr, 1.0 / tl.min(tl.where(m, y, 1.0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [3, 13, 37])
def test_max_min_order_negative_zero_below_positive_zero(dtype, n):
    """``tl.maximum(-0.0, +0.0)`` is +0.0 and ``tl.minimum`` -0.0 in every mode (the fuzzer saw 1 / max differ in
    sign: LLVM's maxnum and numpy's fmax may return either zero)."""
    rng = np.random.default_rng(n)
    x = rng.choice(np.array([0.0, -0.0, 1.5, -2.0], dtype), n)
    y = np.where(rng.random(n) < 0.7, -x, rng.choice(np.array([0.0, -0.0], dtype), n)).astype(dtype)
    x[0], y[0] = -0.0, 0.0
    def ref(a, b, is_max):
        if a == b == 0:
            neg = (np.signbit(a) and np.signbit(b)) if is_max else (np.signbit(a) or np.signbit(b))
            return -0.0 if neg else 0.0
        return max(a, b) if is_max else min(a, b)
    with np.errstate(divide="ignore"):
        want = [1 / np.array([ref(a, b, is_max) for a, b in zip(x, y)], dtype) for is_max in (True, False)]
    for interpret in (True, False):
        outs = [np.zeros(n, dtype) for _ in range(2)] + [np.zeros(1, dtype) for _ in range(2)]
        xs, ys = x.copy(), y.copy()
        xs[:] = -0.0  # the reductions: all -0.0 but one +0.0 gives +0.0 for max; all +0.0 but one -0.0 min: -0.0
        xs[n // 2] = 0.0
        ys[:] = 0.0
        ys[n - 1] = -0.0
        tilec.jit(zero_signs.fn, interpret=interpret)[(1,)](x, y, *outs[:2], np.zeros(1, dtype), np.zeros(1, dtype),
                                                            n, B=64)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(outs[0], want[0], err_msg=f"max, interpret={interpret}")
            np.testing.assert_array_equal(outs[1], want[1], err_msg=f"min, interpret={interpret}")
        tilec.jit(zero_signs.fn, interpret=interpret)[(1,)](xs, ys, np.zeros(n, dtype), np.zeros(n, dtype),
                                                            *outs[2:], n, B=64)
        assert outs[2][0] == np.inf and outs[3][0] == -np.inf, (interpret, outs[2:])


@tilec.jit
def trans_in_loop(x_ptr, out_ptr, n, MIX: tl.constexpr, B: tl.constexpr):
    r = tl.arange(0, B)
    offs = r[:, None] * B + r[None, :]
    x = tl.load(x_ptr + offs)
    for i in tl.range(n):
        if MIX:
            x = tl.trans(x) * 2 + x  # reads both its own buffer in place and a transposed view of it
        else:
            x = tl.trans(x)  # the carried buffer's own transposed view
    tl.store(out_ptr + offs, x)


@pytest.mark.parametrize("mix", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_tile_transposed_into_its_own_loop_buffer(mix, n):
    """Seeds 300947 and 303042: a carried tile's yield ``x = tl.trans(x)`` was written into the loop's buffer
    while being read from it as a transposed view, so the second iteration saw half-overwritten elements."""
    x = np.arange(16, dtype=np.int32).reshape(4, 4) - 5
    want = x.copy()
    for _ in range(n):
        want = want.T * 2 + want if mix else want.T
    for interpret in (True, False):
        out = np.zeros_like(x)
        tilec.jit(trans_in_loop.fn, interpret=interpret)[(1,)](x, out, n, MIX=mix, B=4)
        np.testing.assert_array_equal(out, want, err_msg=f"interpret={interpret}")
