"""Triton's language rules that its own test suite relies on: list-comparable shapes, tensor methods on Python
numbers, shift and bitwise promotion, fp8 abs, bf16 accumulation, expand_dims axes, store rank checks, small dots
in the interpreter, dtype facts. Each compares with numpy (float64 where it matters) on random data."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def shapes_and_scalars(Out, lo, hi, N: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)
    for i in range(lo, hi):
        acc += i
    one = 1
    ones = tl.full([N], value=one, dtype=one.dtype)
    x = tl.arange(0, N)
    tl.static_assert(x.shape == [N])
    tl.static_assert(x[None, :].shape == [1, N])
    tl.static_assert(x[:, None, None].shape == (N, 1, 1))
    tl.static_assert(tl.sum(x, 0).shape == [])
    tl.store(Out + x, ones.cast(tl.int64) * 100 + acc + x.cast(tl.int64))


def test_shapes_compare_with_lists_and_numbers_have_tensor_methods(mode):
    out = np.zeros(16, np.int64)
    launch(shapes_and_scalars, (1,), mode, out, 3, 11, N=16)
    np.testing.assert_array_equal(out, 100 + sum(range(3, 11)) + np.arange(16))


@tilec.jit
def shift_kernel(X, Y, Z, N: tl.constexpr, RIGHT: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    tl.store(Z + o, x >> y if RIGHT else x << y)


@pytest.mark.parametrize("xt,yt", [("int8", "uint16"), ("int16", "uint32"), ("uint8", "int16"), ("int32", "int8")])
@pytest.mark.parametrize("right", [True, False])
def test_shift_keeps_left_signedness_in_wider_width(mode, xt, yt, right):
    r = rng(21)
    n = 64
    bits = max(np.dtype(xt).itemsize, np.dtype(yt).itemsize) * 8
    zt = np.dtype(("int" if xt.startswith("int") else "uint") + str(bits))
    info = np.iinfo(xt)
    x = r.integers(info.min, info.max, n, endpoint=True).astype(xt)
    y = r.integers(0, bits, n).astype(yt)
    z = np.zeros(n, zt)
    launch(shift_kernel, (1,), mode, x, y, z, N=n, RIGHT=right)
    xs, ys = x.astype(zt), y.astype(zt)
    np.testing.assert_array_equal(z, xs >> ys if right else xs << ys)


@tilec.jit
def shift_by_constant(X, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    s = x << 7
    tl.static_assert(s.dtype == x.dtype)
    tl.store(Z + o, s)


def test_shift_by_python_int_keeps_the_tensor_type(mode):
    r = rng(22)
    x = r.integers(0, 256, 64).astype(np.uint16)
    z = np.zeros(64, np.uint16)
    launch(shift_by_constant, (1,), mode, x, z, N=64)
    np.testing.assert_array_equal(z, (x << 7).astype(np.uint16))


def test_bitwise_on_floats_names_the_operands():
    @tilec.jit
    def k(X):
        x = tl.load(X)
        tl.store(X, x & 3)

    with pytest.raises(tilec.CompilationError, match="invalid operands of type"):
        k[(1,)](np.zeros(1, np.float32))


@tilec.jit
def fp8_abs(X, Z, N: tl.constexpr):
    o = tl.arange(0, 512)
    m = o < N
    tl.store(Z + o, tl.abs(tl.load(X + o, mask=m)), mask=m)


@pytest.mark.parametrize("fp8", [tl.float8e5, tl.float8e4nv])
def test_fp8_abs_clears_the_sign_bit(mode, fp8):
    """Every code, in a shuffled non-power-of-two block: a number's code loses its sign bit; a NaN stays a NaN
    with the sign clear (the interpreter and the GPUs store every NaN as 0x7F, the CPU keeps its other bits)."""
    from tilec.language.reinterpret import reinterpret
    from tilec.ir import types as T
    from tilec.ir.numerics import decode
    bits = rng(23).permutation(np.concatenate([np.arange(256), np.arange(44)])).astype(np.uint8)
    out = np.zeros(300, np.uint8)
    launch(fp8_abs, (1,), mode, reinterpret(bits, fp8), reinterpret(out, fp8), N=300)
    ir_type = T.f8e5m2 if fp8 == tl.float8e5 else T.f8e4m3
    nan = np.isnan(decode(bits, ir_type))
    np.testing.assert_array_equal(out[~nan], bits[~nan] & 0x7F)
    assert (out[nan] < 0x80).all() and np.isnan(decode(out[nan], ir_type)).all()


@tilec.jit
def bf16_cumsum(X, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    c = tl.cumsum(tl.load(X + o), axis=0)
    tl.static_assert(c.dtype == tl.float32)
    tl.store(Z + o, c)


def test_bf16_cumsum_accumulates_in_fp32(mode):
    r = rng(24)
    n = 256
    f = r.standard_normal(n).astype(np.float32)
    bf = (f.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bf16 codes
    exact = (bf.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    z = np.zeros(n, np.float32)
    from tilec.language.reinterpret import reinterpret
    launch(bf16_cumsum, (1,), mode, reinterpret(bf, tl.bfloat16), z, N=n)
    np.testing.assert_allclose(z, np.cumsum(exact), rtol=1e-5, atol=1e-5)


@tilec.jit
def expand_many(Out, N: tl.constexpr):
    x = tl.arange(0, N)
    t = tl.expand_dims(x, (-4, 2, -1))
    tl.static_assert(t.shape == [1, N, 1, 1])
    t = tl.expand_dims(x, (0, -1))
    tl.static_assert(t.shape == [1, N, 1])
    tl.store(Out + x, tl.reshape(t, [N]))


def test_expand_dims_axes_refer_to_the_result(mode):
    out = np.zeros(8, np.int32)
    launch(expand_many, (1,), mode, out, N=8)
    np.testing.assert_array_equal(out, np.arange(8))


def test_expand_dims_bad_axis_message():
    @tilec.jit
    def k(Out, N: tl.constexpr):
        x = tl.arange(0, N)
        tl.store(Out + x, tl.reshape(tl.expand_dims(x, (0, -4)), [N]))

    with pytest.raises(tilec.CompilationError, match="invalid axis -4"):
        k[(1,)](np.zeros(8, np.int32), N=8)


@tilec.jit
def store_lower_rank(Z, N: tl.constexpr):
    m = tl.arange(0, N)
    x = m[None, :]
    tl.store(Z + m[:, None, None] * N * N + m[None, :, None] * N + m[None, None, :], x)


def test_store_of_lower_rank_tile_is_a_compile_error():
    z = np.zeros(32 * 32, np.int32)  # too small for the 3-d pointer block: must never be written
    with pytest.raises(tilec.CompilationError, match="rank mismatch"):
        store_lower_rank[(1,)](z, N=32)
    assert (z == 0).all()


@tilec.jit
def small_dot(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(A + m[:, None] * K + k[None, :])
    b = tl.load(B + k[:, None] * N + n[None, :])
    tl.store(C + m[:, None] * N + n[None, :], tl.dot(a, b, input_precision="ieee"))


def test_interpreter_takes_small_dots():
    r = rng(25)
    a = r.standard_normal((2, 8)).astype(np.float32)
    b = r.standard_normal((8, 4)).astype(np.float32)
    c = np.zeros((2, 4), np.float32)
    launch(small_dot, (1,), "interpret", a, b, c, M=2, N=4, K=8)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_dtype_facts():
    assert tl.float16.exponent_bias == 15 and tl.bfloat16.exponent_bias == 127
    assert tl.float32.exponent_bias == 127 and tl.float64.exponent_bias == 1023
    assert tl.float8e4nv.exponent_bias == 7 and tl.float8e5.exponent_bias == 15
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    assert "int8" in tl.dtype.SINT_TYPES and "uint8" in tl.dtype.UINT_TYPES


@tilec.jit
def narrow_descriptor(X, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(X, [16, 16], [16, 1], [2, BN])
    d.store([0, 0], d.load([0, 0]) + 1)


def test_descriptor_rows_of_fewer_than_16_bytes_are_rejected(mode):
    from langhelp import launch
    x = np.zeros(256, np.int32)
    with pytest.raises(tilec.TilecError, match="at least 16 bytes"):
        launch(narrow_descriptor, (1,), mode, x, BN=2)
    launch(narrow_descriptor, (1,), mode, x, BN=4)
    assert x.reshape(16, 16)[:2, :4].tolist() == [[1] * 4] * 2 and x.sum() == 8


@tilec.jit
def _pick(a, b, c):
    if c:
        return b
    else:
        return a


@tilec.jit(do_not_specialize=["choose"])
def const_params(inp: tl.const, out, c_out: tl.const, choose, MODE: tl.constexpr):
    o = tl.arange(0, 16)
    v = tl.load(inp + o) + 1.0
    if MODE == 0:
        final = c_out
    elif MODE == 1:
        final = _pick(out, c_out, choose)
    elif MODE == 2:
        final = c_out if choose else out
    elif MODE == 3:
        if choose:
            final = c_out
        else:
            final = out
    else:
        final = out
    tl.store(final + o, v)


@pytest.mark.parametrize("mode_,match", [(0, "Cannot store to a constant pointer"), (1, "Inconsistent return types"),
                                         (2, "Ternary expression with dynamic condition has inconsistent type"),
                                         (3, "Mismatched type for final")])
def test_const_pointer_parameters(mode_, match):
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(tilec.CompilationError, match=match):
        const_params[(1,)](x, y, y, 0, MODE=mode_)
    const_params[(1,)](x, y, y, 0, MODE=4)
    np.testing.assert_array_equal(y, x + 1)


def _e4b15_value(codes):
    s = np.where(codes & 0x80, -1.0, 1.0)
    e = ((codes >> 3) & 0xF).astype(np.int64)
    m = (codes & 7).astype(np.float64)
    return s * np.where(e == 0, m / 8 * 2.0 ** -14, (1 + m / 8) * 2.0 ** (e - 15))


@tilec.jit
def e4b15_convert(C, F, Back, N: tl.constexpr):
    o = tl.arange(0, N)
    f = tl.load(C + o).to(tl.float32)
    tl.store(F + o, f)
    tl.store(Back + o, (tl.load(F + N + o)).to(tl.float8e4b15))


def test_fp8e4b15_conversions(mode):
    from tilec.language.reinterpret import reinterpret
    r = rng(26)
    codes = np.arange(256, dtype=np.uint8)
    f = np.zeros(512, np.float32)
    f[256:] = (r.standard_normal(256) * 2.0 ** r.integers(-16, 2, 256)).astype(np.float32)
    back = np.zeros(256, np.uint8)
    launch(e4b15_convert, (1,), mode, reinterpret(codes, tl.float8e4b15), f, reinterpret(back, tl.float8e4b15), N=256)
    np.testing.assert_array_equal(f[:256], _e4b15_value(codes).astype(np.float32))  # decoding is exact
    # encoding: the nearest code (ties to even) of the float16 value, saturating at +-1.875
    table = _e4b15_value(codes)
    h = f[256:].astype(np.float16).astype(np.float64)
    got = _e4b15_value(back)
    best = np.abs(table[None, :] - np.clip(h, -1.875, 1.875)[:, None]).min(axis=1)
    np.testing.assert_array_equal(np.abs(got - np.clip(h, -1.875, 1.875)), best)
    assert ((back & 0x80) != 0).tolist() == np.signbit(h).tolist()


@tilec.jit
def fill_threads(Out):
    n: tl.constexpr = tl.extra.cuda.num_threads()
    tl.store(Out + tl.arange(0, n), 1)


@pytest.mark.parametrize("warps", [2, 8])
def test_num_threads_follows_the_launch(warps):
    out = np.zeros(512, np.int32)
    fill_threads[(1,)](out, num_warps=warps)
    assert out.sum() == warps * 32 and out[:warps * 32].all()


@tilec.jit
def float_literals(F32, F64, X, Y, N: tl.constexpr):
    big = 1e50
    tiny = 1e-40
    normal = 0.1
    tl.static_assert(big.dtype == tl.float64)
    tl.static_assert(tiny.dtype == tl.float64)
    tl.static_assert(normal.dtype == tl.float32)
    tl.static_assert(float("inf").dtype == tl.float32)
    tl.store(F64, big)
    tl.store(F64 + 1, tiny)
    tl.store(F32, normal)
    o = tl.arange(0, N)
    y = tl.load(X + o) * 1e-40  # a weak scalar still adopts the tensor's type
    tl.static_assert(y.dtype == tl.float32)
    tl.store(Y + o, y)


def test_float_literals_outside_float32_range_are_float64(mode):
    f32, f64 = np.zeros(1, np.float32), np.zeros(2, np.float64)
    x = rng(5).standard_normal(16).astype(np.float32) * np.float32(1e10)
    y = np.zeros(16, np.float32)
    launch(float_literals, (1,), mode, f32, f64, x, y, N=16)
    assert f64[0] == 1e50 and f64[1] == 1e-40 and f32[0] == np.float32(0.1)
    np.testing.assert_allclose(y, x * np.float32(1e-40), rtol=1e-6, atol=0)


# -- limits and loop-carried types, as Triton enforces them -----------------------------------------------------
@tilec.jit
def arange_too_long(Out, N: tl.constexpr):
    x = tl.arange(0, N)  # <-
    tl.store(Out + x, x)


def test_a_tile_beyond_the_element_limit_is_refused(mode):
    out = np.zeros(16, np.int32)
    with pytest.raises(tilec.CompilationError, match=r"numel \(16777216\) exceeds triton maximum tensor numel "
                                                     r"\(1048576\)") as e:
        launch(arange_too_long, (1,), mode, out, N=1 << 24)
    assert "# <-" in e.value.source_line


@tilec.jit
def int_becomes_float(Out, n, BLOCK: tl.constexpr):
    acc = 0
    for i in range(n):  # <-
        acc += 0.5
    tl.store(Out + tl.arange(0, BLOCK), acc)


@tilec.jit
def float_stays_float(Out, n, BLOCK: tl.constexpr):
    acc = 0.0
    for i in range(n):
        acc += 1
    tl.store(Out + tl.arange(0, BLOCK), acc)


def test_a_loop_carried_number_keeps_the_type_it_entered_with(mode):
    out = np.zeros(16, np.float32)
    with pytest.raises(tilec.CompilationError, match=r"Loop-carried variable acc has initial type int32 but is "
                                                     r"re-assigned to fp32 in loop! Please make sure that the type "
                                                     r"stays consistent\.") as e:
        launch(int_becomes_float, (1,), mode, out, 3, BLOCK=16)
    assert "# <-" in e.value.source_line
    launch(float_stays_float, (1,), mode, out, 3, BLOCK=16)  # an int added to a float: still a float
    np.testing.assert_array_equal(out, np.full(16, 3.0, np.float32))
