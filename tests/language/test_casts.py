"""Casts between every integer width and float type (wrap-around, truncation toward zero, round to nearest
even, rtz down-casts, bf16 and fp8), bitcasts and bool conversion, against numpy bit-exact references."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tilec
import tilec.language as tl
from dtypes import FLOATS, INTS, TL
from langhelp import launch, rng

N = 50


@tilec.jit
def cast_kernel(X, Y, n, DST: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(Y + o, tl.load(X + o, mask=m).to(DST), mask=m)


def ints_of(t, r):
    info = np.iinfo(t)
    return r.integers(info.min, info.max, N, dtype=t, endpoint=True)


@pytest.mark.interpreter_sample(lambda p: p["src"] in ("int8", "uint32", "int64") or p["dst"] in ("int16", "float32"))
@pytest.mark.parametrize("src", INTS)
@pytest.mark.parametrize("dst", INTS + FLOATS)
def test_int_to_any(mode, src, dst):
    """Integer casts wrap (two's complement); int -> float rounds to nearest even."""
    x = ints_of(src, rng(8))
    y = np.zeros(N, dst)
    launch(cast_kernel, (1,), mode, x, y, N, DST=TL[dst], BLOCK=64)
    np.testing.assert_array_equal(y, x.astype(dst))


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", INTS)
def test_float_to_int_truncates(mode, src, dst):
    info = np.iinfo(dst)
    lo, hi = max(info.min, -60000), min(info.max, 60000)  # in range: out-of-range casts are undefined
    if src == "float16":
        lo, hi = max(lo, -2000), min(hi, 2000)
    x = rng(9).uniform(lo, hi, N).astype(src)
    y = np.zeros(N, dst)
    launch(cast_kernel, (1,), mode, x, y, N, DST=TL[dst], BLOCK=64)
    np.testing.assert_array_equal(y, np.trunc(x.astype(np.float64)).astype(dst))


@pytest.mark.parametrize("src,dst", [("float64", "float32"), ("float64", "float16"), ("float32", "float16"),
                                     ("float16", "float32"), ("float32", "float64"), ("float16", "float64")])
def test_float_to_float(mode, src, dst):
    r = rng(10)
    x = (r.standard_normal(N) * 2.0 ** r.integers(-20, 20, N)).astype(src)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    y = np.zeros(N, dst)
    launch(cast_kernel, (1,), mode, x, y, N, DST=TL[dst], BLOCK=64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, x.astype(dst))


@tilec.jit
def rtz_kernel(X, Y, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Y + o, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(Z + o, tl.cast(x, tl.float16, fp_downcast_rounding="rtne"))


def test_fp_downcast_rounding(mode, request):
    x = rng(11).standard_normal(64).astype(np.float32)
    y, z = np.zeros(64, np.float16), np.zeros(64, np.float16)
    launch(rtz_kernel, (1,), mode, x, y, z, BLOCK=64)
    np.testing.assert_array_equal(z, x.astype(np.float16))
    up = y.astype(np.float32)
    assert np.all(np.abs(up) <= np.abs(x))  # toward zero
    nxt = np.nextafter(y, np.copysign(np.float16(np.inf), y)).astype(np.float32)
    assert np.all(np.abs(nxt) > np.abs(x))  # the largest magnitude not above |x|


@tilec.jit
def bf16_kernel(X, Bits, Back, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b = tl.load(X + o).to(tl.bfloat16)
    tl.store(Bits + o, b.to(tl.uint16, bitcast=True))
    tl.store(Back + o, b.to(tl.float32))


def bf16_rne(x):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept quiet)."""
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), (u >> 16).astype(np.uint16) | 0x40, r)


def test_bfloat16(mode, request):
    x = (rng(12).standard_normal(64) * 1000).astype(np.float32)
    x[:3] = [np.inf, -np.inf, -0.0]
    bits, back = np.zeros(64, np.uint16), np.zeros(64, np.float32)
    launch(bf16_kernel, (1,), mode, x, bits, back, BLOCK=64)
    np.testing.assert_array_equal(bits, bf16_rne(x))
    np.testing.assert_array_equal(back, (bits.astype(np.uint32) << 16).view(np.float32))


@tilec.jit
def bf16_chain_kernel(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(X + o).to(tl.bfloat16)
    for i in range(3):
        v = v * 1.0078125 + 0.37
        v = v - 0.1
    tl.store(Y + o, v.to(tl.float32))


def test_bfloat16_arithmetic_rounds_every_op(mode):
    """bf16 values stay bf16 through arithmetic: each op's result is rounded to bf16 (on the GPU too, where
    they live in f32 registers), so a chain agrees with a step-by-step bf16 emulation."""
    x = (rng(19).standard_normal(128) * 300).astype(np.float32)
    y = np.zeros(128, np.float32)
    launch(bf16_chain_kernel, (1,), mode, x, y, BLOCK=128)

    def r(a):  # round float32 values to bfloat16 (kept as float32)
        return (bf16_rne(np.asarray(a, np.float32)).astype(np.uint32) << 16).view(np.float32)
    v = r(x)
    for _ in range(3):
        v = r(r(v * np.float32(1.0078125)) + np.float32(0.37))
        v = r(v - np.float32(0.1))
    np.testing.assert_array_equal(y, v)


@tilec.jit
def fp8_kernel(X, Bits, Back, FP8: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b = tl.load(X + o).to(FP8)
    tl.store(Bits + o, b.to(tl.uint8, bitcast=True))
    tl.store(Back + o, b.to(tl.float32))


def fp8_table(exp_bits, man_bits, finite_only_nan):
    """Every fp8 code's float value (e4m3fn: no infinities, only S.1111.111 is NaN; e5m2: IEEE-like)."""
    vals = []
    bias = 2 ** (exp_bits - 1) - 1
    for code in range(256):
        s, e, m = code >> 7, (code >> man_bits) & (2 ** exp_bits - 1), code & (2 ** man_bits - 1)
        if finite_only_nan and e == 2 ** exp_bits - 1 and m == 2 ** man_bits - 1:
            v = np.nan
        elif not finite_only_nan and e == 2 ** exp_bits - 1:
            v = np.inf if m == 0 else np.nan
        elif e == 0:
            v = m * 2.0 ** (1 - bias - man_bits)
        else:
            v = (1 + m / 2 ** man_bits) * 2.0 ** (e - bias)
        vals.append(-v if s else v)
    return np.array(vals)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_round_trip(mode, fmt):
    """Every representable fp8 value survives f32 -> fp8 -> f32; values between two codes round to nearest."""
    table = fp8_table(4, 3, True) if fmt == "e4m3" else fp8_table(5, 2, False)
    finite = np.isfinite(table)
    x = table[finite].astype(np.float32)
    codes = np.arange(256)[finite]
    n = 256
    xs = np.zeros(n, np.float32)
    xs[:len(x)] = x
    bits, back = np.zeros(n, np.uint8), np.zeros(n, np.float32)
    dt = tl.float8e4nv if fmt == "e4m3" else tl.float8e5
    launch(fp8_kernel, (1,), mode, xs, bits, back, FP8=dt, BLOCK=n)
    np.testing.assert_array_equal(back[:len(x)], x)
    same = (bits[:len(x)] == codes) | (x == 0)  # +-0 may share a code
    assert same.all()
    # midpoints-ish: a value slightly above a code rounds to it
    pos = np.sort(np.unique(np.abs(x)))
    between = (pos[1:-1] * 0.75 + pos[2:] * 0.25).astype(np.float32)[:200]
    xs2 = np.zeros(n, np.float32)
    xs2[:len(between)] = between
    launch(fp8_kernel, (1,), mode, xs2, bits, back, FP8=dt, BLOCK=n)
    np.testing.assert_array_equal(back[:len(between)], pos[1:-1][:len(between)].astype(np.float32))


@tilec.jit
def bitcast_kernel(X, Y, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Y + o, x.to(tl.int32, bitcast=True))
    tl.store(Z + o, tl.cast(x != 0.0, tl.int8) + (x.to(tl.int1)).to(tl.int8))


def test_bitcast_and_bool(mode):
    x = rng(13).standard_normal(32).astype(np.float32)
    x[::4] = 0.0
    y, z = np.zeros(32, np.int32), np.zeros(32, np.int8)
    launch(bitcast_kernel, (1,), mode, x, y, z, BLOCK=32)
    np.testing.assert_array_equal(y, x.view(np.int32))
    np.testing.assert_array_equal(z, 2 * (x != 0))


def test_bitcast_width_mismatch_is_an_error(mode):
    @tilec.jit
    def bad(X, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(X + o, tl.load(X + o).to(tl.int16, bitcast=True).to(tl.float32))
    with pytest.raises(tilec.CompilationError, match="bitcast"):
        launch(bad, (1,), mode, np.zeros(4, np.float32), BLOCK=4)


@tilec.jit
def f32_to_f16_kernel(X, Y, B, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Y + o, x.to(tl.float16))
    tl.store(B + o, x.to(tl.bfloat16).to(tl.float32))


@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=32, max_size=32))
def test_f32_down_casts_property(values):
    """Property: f32 -> f16 and f32 -> bf16 round to nearest even over every f32 (subnormals, overflow, NaN)."""
    x = np.array(values, np.float32)
    y, b = np.zeros(32, np.float16), np.zeros(32, np.float32)
    launch(f32_to_f16_kernel, (1,), "cpu", x, y, b, BLOCK=32)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(y.view(np.uint16)[~np.isnan(x)], want.view(np.uint16)[~np.isnan(x)])
    assert np.isnan(y[np.isnan(x)]).all()
    wb = (bf16_rne(x).astype(np.uint32) << 16).view(np.float32)
    normal = ~np.isnan(x) & (np.abs(x) >= np.finfo(np.float32).tiny)  # subnormals: test_bfloat16_subnormals
    np.testing.assert_array_equal(b[normal], wb[normal])


def test_bfloat16_subnormals(mode):
    x = np.array([1.8367e-40, 1e-39, -3e-40, 5e-42] * 8, np.float32)
    y, b = np.zeros(32, np.float16), np.zeros(32, np.float32)
    launch(f32_to_f16_kernel, (1,), mode, x, y, b, BLOCK=32)
    np.testing.assert_array_equal(b, (bf16_rne(x).astype(np.uint32) << 16).view(np.float32))


@tilec.jit
def f64_narrow_kernel(X, H, B, HZ, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(H + o, x.to(tl.float16))
    tl.store(B + o, x.to(tl.bfloat16).to(tl.float32))
    tl.store(HZ + o, x.to(tl.float16, fp_downcast_rounding="rtz"))


def test_f64_to_16_bit_floats(mode, request):
    """One correctly rounded step from f64 (no double rounding through f32), rtne and rtz."""
    r = rng(14)
    # values just off f16/bf16 midpoints, where rounding through f32 first would go wrong
    h = r.standard_normal(64).astype(np.float16).astype(np.float64)
    x = h + np.spacing(h.astype(np.float16)).astype(np.float64) * (0.5 + np.ldexp(1.0, -30))
    x[:4] = [np.inf, -0.0, 1e-300, 70000.0]
    hh, bb, hz = np.zeros(64, np.float16), np.zeros(64, np.float32), np.zeros(64, np.float16)
    launch(f64_narrow_kernel, (1,), mode, x, hh, bb, hz, BLOCK=64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(hh.view(np.uint16), x.astype(np.float16).view(np.uint16))
    from tilec.ir.numerics import quantize
    from tilec.ir import types as T
    np.testing.assert_array_equal(bb, quantize(x, T.bf16).astype(np.float32))
    np.testing.assert_array_equal(hz, quantize(x, T.f16, "rtz").astype(np.float16))


@tilec.jit
def fp8_diff_kernel(X, D, I, Codes, Back, FP8: tl.constexpr, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    q = x.to(FP8)
    tl.store(Codes + o, q.to(tl.uint8, bitcast=True))
    tl.store(Codes + BLOCK + o, x.to(FP8, fp_downcast_rounding="rtz").to(tl.uint8, bitcast=True))
    tl.store(Codes + 2 * BLOCK + o, tl.load(D + o).to(FP8).to(tl.uint8, bitcast=True))
    tl.store(Codes + 3 * BLOCK + o, x.to(tl.bfloat16).to(FP8).to(tl.uint8, bitcast=True))
    tl.store(Codes + 4 * BLOCK + o, tl.load(I + o).to(FP8).to(tl.uint8, bitcast=True))
    tl.store(Codes + 5 * BLOCK + o, q.to(OTHER).to(tl.uint8, bitcast=True))
    y = tl.load(X + BLOCK - 1 - o).to(FP8)  # q reversed (tl.flip would be a BLOCK x BLOCK reduce on GPUs)
    tl.store(Codes + 6 * BLOCK + o, (q + y).to(tl.uint8, bitcast=True))
    tl.store(Codes + 7 * BLOCK + o, (q * y).to(tl.uint8, bitcast=True))
    tl.store(Codes + 8 * BLOCK + o, tl.where(q > y, q, y).to(tl.uint8, bitcast=True))
    tl.store(Codes + 9 * BLOCK + o, tl.full((BLOCK,), 0.3, FP8).to(tl.uint8, bitcast=True))
    tl.store(Back + o, q.to(tl.float32))
    tl.store(Back + BLOCK + o, q.to(tl.float16).to(tl.float32))
    tl.store(Back + 2 * BLOCK + o, q.to(tl.int32).to(tl.float32))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_compiled_matches_the_evaluator(fmt):
    """Differential: every fp8 conversion and arithmetic path of the CPU backend gives the evaluator's bits."""
    table = fp8_table(4, 3, True) if fmt == "e4m3" else fp8_table(5, 2, False)
    pos = np.unique(np.abs(table[np.isfinite(table)]))
    r = rng(15)
    mids = (pos[:-1] + pos[1:]) / 2                                   # exact ties: to even
    x = np.concatenate([mids, pos, pos[1:] * 1.0001, [1e6, -1e6, np.inf, -np.inf, np.nan, -0.0, 1e-9, 470, 500,
                                                      57344, 61440, 65536]])
    x = np.concatenate([x, -x, r.standard_normal(1024) * 10.0 ** r.integers(-4, 4, 1024)])[:1024]
    x = x[:1024] if len(x) >= 1024 else np.pad(x, (0, 1024 - len(x)))
    x32 = x.astype(np.float32)
    ints = r.integers(-600, 600, 1024).astype(np.int32)
    fp8 = tl.float8e4nv if fmt == "e4m3" else tl.float8e5
    other = tl.float8e5 if fmt == "e4m3" else tl.float8e4nv
    outs = {}
    for mode in ("cpu", "interpret"):
        codes, back = np.zeros(10 * 1024, np.uint8), np.zeros(3 * 1024, np.float32)
        launch(fp8_diff_kernel, (1,), mode, x32, x, ints, codes, back, FP8=fp8, OTHER=other, BLOCK=1024)
        outs[mode] = (codes.reshape(10, 1024), back.reshape(3, 1024))
    for k in range(10):
        np.testing.assert_array_equal(outs["cpu"][0][k], outs["interpret"][0][k], err_msg=f"row {k}")
    canon = [np.where(np.isnan(b), np.float32(np.nan), b).view(np.uint32) for b in (outs["cpu"][1],
                                                                                      outs["interpret"][1])]
    np.testing.assert_array_equal(*canon)  # the sign of a NaN is not part of the contract


@tilec.jit
def fp8_move_kernel(Codes, Copied, Selected, Cast, FP8: tl.constexpr):
    o = tl.arange(0, 256)
    v = tl.load(Codes + o).to(FP8, bitcast=True)
    tl.store(Copied + o, v.to(tl.uint8, bitcast=True))
    w = tl.where(o % 3 == 0, v, tl.load(Codes + 255 - o).to(FP8, bitcast=True))
    tl.store(Selected + o, w.to(tl.uint8, bitcast=True))
    tl.store(Cast + o, v.to(tl.float32).to(FP8).to(tl.uint8, bitcast=True))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_values_moved_keep_their_codes_and_casts_saturate(mode, fmt):
    """Bitcast, select and copy move codes unchanged (an e5m2 infinity stays one); a cast rounds, saturating
    infinities at the largest finite value as ``cvt.rn.satfinite`` does; a NaN cast becomes 0x7F."""
    fp8 = tl.float8e4nv if fmt == "e4m3" else tl.float8e5
    codes = np.arange(256, dtype=np.uint8)
    copied, selected, cast = (np.zeros(256, np.uint8) for _ in range(3))
    launch(fp8_move_kernel, (1,), mode, codes, copied, selected, cast, FP8=fp8)
    values = fp8_table(4, 3, True) if fmt == "e4m3" else fp8_table(5, 2, False)
    nan = np.isnan(values)
    np.testing.assert_array_equal(copied[~nan], codes[~nan])
    o = np.arange(256)
    want = np.where(o % 3 == 0, codes, codes[::-1])
    np.testing.assert_array_equal(selected[~nan[want]], want[~nan[want]])
    big = 0x7E if fmt == "e4m3" else 0x7B
    want_cast = np.where(nan, 0x7F, np.where(np.isinf(values), np.where(values > 0, big, big | 0x80), codes))
    np.testing.assert_array_equal(cast, want_cast)
