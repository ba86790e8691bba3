"""The generic f32 math library (``tilec/gpu/lowering/mathlib32.py``, ``trig32.py``, ``pow32.py``), without a GPU:
the very LLVM IR the GPU targets build, JIT-compiled for the host CPU (``f32_host.py``), compared with numpy in
float64 over the whole f32 range (``f32_math_cases.py``: subnormals, huge sin/cos arguments, exp near overflow and
into the subnormal results, NaN, infinities, signed zeros). Two instantiations: over an exact 2**x, and the CUDA
target's own composition over a stand-in for ``ex2.approx.ftz`` that is 2**-22 off and flushes subnormals."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import f32_host as H
import f32_math_cases as C
from tilec.gpu.lowering import trig32

PRIMITIVES = {"exact": H.exact, "cuda": H.cuda_like, "reduced": H.exact_reduced_only}
_compiled = {}


def fn(name, prims="exact"):
    key = (name, prims)
    if key not in _compiled:
        _compiled[key] = H.compile_fn(name, PRIMITIVES[prims](), 2 if name in C.BINARY else 1)
    return _compiled[key]


@pytest.mark.parametrize("prims", sorted(PRIMITIVES))
@pytest.mark.parametrize("name", sorted(C.BOUNDS))
def test_accurate_over_the_whole_range(name, prims):
    args = C.inputs(name)
    got = fn(name, prims)(*args)
    msg = C.check(name, args, got, exp2_flushes=PRIMITIVES[prims]().exp2_flushes_subnormals)
    assert msg is None, msg


@pytest.mark.parametrize("prims", sorted(PRIMITIVES))
def test_the_fuzzers_cuda_seeds(prims):
    """The arguments of the 23 seeds where CUDA f32 math was wrong: sin/cos of 2**31 .. 2**64 (orders of magnitude
    off with a Cody-Waite reduction alone), exp of 63 .. 100 (2e-6 off when x log2e is rounded first)."""
    for name, x in (("sin", C.FUZZ_TRIG), ("cos", C.FUZZ_TRIG), ("exp", C.FUZZ_EXP)):
        got = fn(name, prims)(x)
        assert C.worst_ulps(name, (x,), got) <= (5 if prims == "cuda" else 2), name
        assert C.check(name, (x,), got) is None


def test_subnormal_logarithms_and_pow_bases():
    """Subnormal inputs are normalised with integer operations: log2 of 2**-149 .. 2**-127 is exact-ish, never
    -inf, and pow with a subnormal base gives normal and subnormal results alike."""
    x = np.exp2(np.arange(-149, -126)).astype(np.float32)
    np.testing.assert_allclose(fn("log2")(x), np.arange(-149, -126), rtol=0, atol=1e-5)
    np.testing.assert_allclose(fn("log")(x), np.arange(-149, -126) * math.log(2), rtol=3e-7)
    np.testing.assert_allclose(fn("log1p")(x), x, rtol=0)
    got = fn("pow")(x, np.full_like(x, np.float32(0.5)))
    np.testing.assert_allclose(got, np.sqrt(x.astype(np.float64)), rtol=3e-7)
    assert fn("pow")(np.float32(2.0 ** -149), np.float32(1.0))[0] == np.float32(2.0 ** -149)
    assert fn("pow")(np.float32(0.5), np.float32(140.0))[0] == np.float32(2.0 ** -140)  # a subnormal result


def test_exp_near_overflow_and_underflow():
    x = np.array([88.72, 88.7228, 88.72284, 88.7229, 89.0, -87.3, -88.0, -100.0, -103.27, -103.28, -103.98, -104.0,
                  -150.0], np.float32)
    want = np.exp(x.astype(np.float64))
    got = fn("exp")(x)
    assert np.isinf(got[3:5]).all()
    assert (C.ulp_error(got, want) <= 1).all(), (got, want)  # subnormal results within a subnormal ulp
    assert (got[5:10] > 0).all() and (got[10:] == 0).all()


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_huge_arguments_are_reduced_exactly(name):
    """Payne-Hanek: up to 3.4e38, the largest arguments; each power of two from 2**17 on, and their neighbours."""
    x = np.exp2(np.arange(17, 128)).astype(np.float32)
    x = np.concatenate([x, np.nextafter(x, np.float32(0)), -np.nextafter(x, np.float32(np.inf)),
                        np.float32([C.FLT_MAX, -C.FLT_MAX, trig32.FAST_LIMIT])])
    assert C.check(name, (x,), fn(name)(x)) is None


def test_the_fast_path_limit_keeps_both_sides_accurate():
    x = np.float32(trig32.FAST_LIMIT)
    xs = np.array([np.nextafter(x, np.float32(0)), x, np.nextafter(x, np.float32(np.inf))] * 2, np.float32)
    xs[3:] = -xs[3:]
    for name in ("sin", "cos"):
        assert C.worst_ulps(name, (xs,), fn(name)(xs)) <= 1.5


def test_constants():
    """pi from integers agrees with the double; 2/pi's leading bits are the known 0xA2F9836E4E441529...; the
    Cody-Waite parts add up to pi/2 within 2**-70; the table's windows overlap consistently."""
    assert float(trig32._PI) == math.pi
    assert math.floor(2 / trig32._PI * 2 ** 64) == 0xA2F9836E4E441529
    assert 0 <= trig32._PI / 2 - (trig32.C1 + trig32.C2 + trig32.C3) < 2.0 ** -70
    assert min(trig32.C1, trig32.C2, trig32.C3) > 0  # (-k) C_i = -0 for k = +0: sin(-0) = -0
    words = trig32.TABLE
    windows = [(words[3 * i] << 64) | (words[3 * i + 1] << 32) | words[3 * i + 2] for i in range(len(words) // 3)]
    for a, b in zip(windows, windows[1:]):  # each window is the previous one 8 bits further, mod 2**96
        assert b >> 8 == a % (1 << 88)


def test_special_values():
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    cases = {"exp": [(inf, inf), (-inf, 0.0), (nan, nan), (-0.0, 1.0)],
             "log": [(0.0, -inf), (-0.0, -inf), (-1.0, nan), (inf, inf), (nan, nan)],
             "log2": [(0.0, -inf), (-2.0 ** -149, nan), (inf, inf)],
             "sin": [(inf, nan), (-inf, nan), (nan, nan), (-0.0, -0.0), (0.0, 0.0)],
             "cos": [(inf, nan), (nan, nan), (-0.0, 1.0)],
             "tan": [(inf, nan), (-0.0, -0.0)],
             "expm1": [(-0.0, -0.0), (inf, inf), (-inf, -1.0), (nan, nan)],
             "log1p": [(-1.0, -inf), (-0.0, -0.0), (inf, inf), (-2.0, nan)],
             "tanh": [(inf, 1.0), (-inf, -1.0), (-0.0, -0.0)],
             "erf": [(inf, 1.0), (-inf, -1.0), (-0.0, -0.0), (nan, nan)],
             "sigmoid": [(inf, 1.0), (-inf, 0.0), (nan, nan)]}
    for name, pairs in cases.items():
        for x, want in pairs:
            got = fn(name)(np.float32(x))[0]
            assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
                (name, x, got, want)
    for y, x, want in ((nan, 0.0, nan), (0.0, nan, nan), (inf, inf, math.pi / 4), (-inf, -inf, -3 * math.pi / 4),
                       (-0.0, -1.0, -math.pi), (0.0, -0.0, math.pi), (-0.0, 0.0, -0.0)):
        got = fn("atan2")(np.float32(y), np.float32(x))[0]
        want = np.float32(want)
        assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
            (y, x, got, want)
    for x, y, want in ((-2.0, 3.0, -8.0), (-2.0, 0.5, nan), (-0.0, -3.0, -inf), (0.0, -1.0, inf), (-1.0, inf, 1.0),
                       (nan, 0.0, 1.0), (1.0, nan, 1.0), (inf, -0.5, 0.0), (-inf, 3.0, -inf), (0.5, inf, 0.0)):
        got = fn("pow")(np.float32(x), np.float32(y))[0]
        assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
            (x, y, got, want)


any_f32 = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)
UNARY = sorted(set(C.BOUNDS) - set(C.BINARY))


@given(st.sampled_from(UNARY), st.lists(any_f32, min_size=1, max_size=64))
def test_any_float_within_bounds(name, xs):
    x = np.array(xs, np.float32)
    msg = C.check(name, (x,), fn(name, "cuda")(x), exp2_flushes=True)
    assert msg is None, msg


@given(st.sampled_from(C.BINARY), st.lists(st.tuples(any_f32, any_f32), min_size=1, max_size=64))
def test_any_pair_within_bounds(name, pairs):
    a, b = (np.array(v, np.float32) for v in zip(*pairs))
    msg = C.check(name, (a, b), fn(name, "cuda")(a, b))
    assert msg is None, msg
