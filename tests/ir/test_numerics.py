"""Narrow float formats against brute force over every code."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilec.ir.numerics import as_value, decode, encode, quantize
from tilec.ir.types import ScalarType, bf16, f8e4m3, f8e5m2, i8, u64

from .evalhelp import bf16_ref


def _codes(e):
    """(value, code) of every finite non-negative code, from the bit layout."""
    m = e.mantissa_bits
    bias = 2 ** (e.exponent_bits - 1) - 1
    out = []
    for c in range(128):
        ex, mant = c >> m, c & ((1 << m) - 1)
        if ex == (1 << e.exponent_bits) - 1 and (e.name == "f8e5m2" or mant == (1 << m) - 1):
            continue
        v = (mant / 2 ** m) * 2.0 ** (1 - bias) if ex == 0 else (1 + mant / 2 ** m) * 2.0 ** (ex - bias)
        out.append((v, c))
    return out


def _nearest_even(x, table):
    """Round-to-nearest-even by brute force (ties go to the even code)."""
    best = min(table, key=lambda vc: (abs(vc[0] - abs(x)), vc[1] & 1))
    return np.copysign(best[0], x)


@pytest.mark.parametrize("e", [f8e4m3, f8e5m2])
def test_fp8_codes_round_trip(e):
    codes = np.arange(256, dtype=np.uint8)
    vals = decode(codes, e)
    finite = ~np.isnan(vals)
    np.testing.assert_array_equal(encode(vals[finite], e), codes[finite])
    table = _codes(e)
    for v, c in table:
        assert decode(np.array([c], np.uint8), e)[0] == v
    assert max(v for v, _ in table) == (448.0 if e is f8e4m3 else 57344.0)


@pytest.mark.parametrize("e", [f8e4m3, f8e5m2])
@settings(max_examples=200, deadline=None)
@given(x=st.floats(-400, 400, allow_nan=False))
def test_fp8_rounding_matches_brute_force(e, x):
    assert quantize(np.array([x]), e)[0] == _nearest_even(x, _codes(e))


def test_fp8_overflow_saturates_in_both_formats():
    """Like ``cvt.rn.satfinite`` (Triton's fp8 casts on sm_89+): finite overflow and infinities go to the largest
    finite value, in both roundings; NaN stays NaN."""
    assert quantize(np.array([1e6]), f8e4m3)[0] == 448.0
    assert quantize(np.array([-1e6]), f8e4m3)[0] == -448.0
    for rounding in ("rtne", "rtz"):
        got = quantize(np.array([1e6, -61440.0, 57344.0, np.inf, -np.inf, 60000.0]), f8e5m2, rounding)
        np.testing.assert_array_equal(got, [57344.0, -57344.0, 57344.0, 57344.0, -57344.0, 57344.0])
    assert np.isnan(quantize(np.array([np.nan]), f8e5m2)[0])
    assert quantize(np.array([1e39]), bf16)[0] == np.inf  # the IEEE formats still overflow


@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=False, width=32))
def test_bf16_matches_bit_trick(x):
    """From float32 (from float64 the bit trick would round twice)."""
    got = quantize(np.array([x]), bf16).astype(np.float32)
    ref = bf16_ref(np.array([x]))
    assert got[0] == ref[0] or (np.isinf(got[0]) and np.isinf(ref[0]))


def test_bf16_memory_encoding():
    x = np.array([1.0, -2.5, np.inf], np.float32)
    np.testing.assert_array_equal(encode(x, bf16), (x.view(np.uint32) >> 16).astype(np.uint16))
    np.testing.assert_array_equal(decode(encode(x, bf16), bf16), x)


def test_as_value_wraps_and_broadcasts():
    assert as_value(200, i8) == -56
    assert as_value(2 ** 64 - 1, u64) == np.uint64(2 ** 64 - 1)
    assert as_value(-1, u64) == np.uint64(2 ** 64 - 1)
    v = as_value(1.5, ScalarType("f32").with_shape((2, 3)))
    assert v.shape == (2, 3) and v.dtype == np.float32


@pytest.mark.parametrize("e, big", [(ScalarType("f16"), 65504.0), (ScalarType("f32"), float(np.finfo(np.float32).max))])
def test_round_toward_zero_against_nextafter(e, big):
    """rtz = the round-to-nearest result, stepped one ulp toward zero when it overshot; overflow -> largest."""
    from tilec.ir.numerics import round_to
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000) * 10.0 ** rng.integers(-9, 6, 5000)
    x[:2] = [1e39, -1e39]
    got = round_to(x, e, "rtz").astype(np.float64)
    with np.errstate(over="ignore"):
        near = x.astype(e.numpy)
    step = np.nextafter(near, e.numpy.type(0)).astype(np.float64)
    ref = np.where(np.abs(near.astype(np.float64)) > np.abs(x), step, near.astype(np.float64))
    ref = np.where(np.isinf(near), np.copysign(big, x), ref)
    np.testing.assert_array_equal(got, ref)
