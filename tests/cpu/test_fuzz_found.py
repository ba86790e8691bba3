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
