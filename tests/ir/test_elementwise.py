"""Every elementwise op against independent references, over integer and float types and odd shapes."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilec.ir.types import ScalarType

from .evalhelp import FLOATS, INTS, one_op, random_floats, random_ints, round_ref, wrap

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # from the float64 references

SHAPES = [(), (7,), (3, 5)]


def tt(name, shape):
    return f"tile<{''.join(f'{s}x' for s in shape)}{name}>" if shape else name


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INT_REF = {
    "add": lambda a, b, e: a + b,
    "sub": lambda a, b, e: a - b,
    "mul": lambda a, b, e: a * b,
    "div": lambda a, b, e: _tdiv(a, b),
    "rem": lambda a, b, e: a - b * _tdiv(a, b),
    "and": lambda a, b, e: a & b,
    "or": lambda a, b, e: a | b,
    "xor": lambda a, b, e: a ^ b,
    "shl": lambda a, b, e: a << (b % (1 << e.bits)) if b % (1 << e.bits) < e.bits else 0,
    "shr": lambda a, b, e: (a >> min(b % (1 << e.bits), e.bits - 1)) if e.kind == "int"
    else (a >> b if b < e.bits else 0),
    "max": lambda a, b, e: max(a, b),
    "min": lambda a, b, e: min(a, b),
    "umulhi": lambda a, b, e: ((a % (1 << e.bits)) * (b % (1 << e.bits))) >> e.bits,
}


@pytest.mark.parametrize("name", INTS)
@pytest.mark.parametrize("op", sorted(INT_REF))
def test_integer_binary(op, name):
    e = ScalarType(name)
    rng = np.random.default_rng(hash((op, name)) % 2**32)
    for shape in SHAPES:
        a = random_ints(rng, e, shape)
        b = random_ints(rng, e, shape)
        if op in ("div", "rem"):
            b = np.where(b == 0, 3, b).astype(e.numpy)
        if op in ("shl", "shr"):
            b = rng.integers(0, e.bits + 4, size=shape).astype(e.numpy)
        got = np.asarray(one_op(op, [tt(name, shape)] * 2, tt(name, shape), [a, b]))
        ref = np.array([wrap(INT_REF[op](int(x), int(y), e), e) for x, y in zip(a.reshape(-1), b.reshape(-1))],
                       dtype=e.numpy).reshape(shape)
        assert got.dtype == e.numpy
        np.testing.assert_array_equal(got, ref, err_msg=f"{op} {name} a={a} b={b}")


def test_signed_corner_cases():
    assert one_op("div", ["i8", "i8"], "i8", [-128, -1]) == -128
    assert one_op("div", ["i32", "i32"], "i32", [-7, 2]) == -3
    assert one_op("rem", ["i32", "i32"], "i32", [-7, 2]) == -1
    assert one_op("rem", ["i32", "i32"], "i32", [7, -2]) == 1
    assert one_op("shr", ["i8", "i8"], "i8", [-128, 3]) == -16
    assert one_op("shr", ["u8", "u8"], "u8", [128, 3]) == 16
    assert one_op("add", ["i1", "i1"], "i1", [True, True]) == np.False_


FLOAT_REF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "fdiv": np.divide,
    "rem": np.fmod, "max": np.fmax, "min": np.fmin,
}


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("op", sorted(FLOAT_REF))
def test_float_binary_exact(op, name):
    """+ - * / are correctly rounded at every width (double rounding through float32 is innocuous)."""
    rng = np.random.default_rng(7)
    for shape in SHAPES:
        a, b = random_floats(rng, name, shape), random_floats(rng, name, shape)
        if shape:
            a.reshape(-1)[:3] = [np.nan, np.inf, -0.0]
        got = np.asarray(one_op(op, [tt(name, shape)] * 2, tt(name, shape), [a, b]))
        ref = round_ref(FLOAT_REF[op](a.astype(np.float64), b.astype(np.float64)), name)
        np.testing.assert_array_equal(got, ref, err_msg=f"{op} {name}")


def test_max_min_nan_handling():
    nan = float("nan")
    assert one_op("max", ["f32", "f32"], "f32", [nan, 1.0]) == 1.0
    assert math.isnan(one_op("max", ["f32", "f32"], "f32", [nan, 1.0], "propagate_nan = true"))
    assert math.isnan(one_op("min", ["f32", "f32"], "f32", [2.0, nan], "propagate_nan = true"))


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("op, ref", [("pow", np.power), ("atan2", np.arctan2)])
def test_float_binary_math(op, ref, name):
    rng = np.random.default_rng(3)
    a = np.abs(random_floats(rng, name, (3, 5))) + 0.5
    b = random_floats(rng, name, (3, 5)) / 4
    got = one_op(op, [tt(name, (3, 5))] * 2, tt(name, (3, 5)), [a, b])
    np.testing.assert_allclose(got.astype(np.float64), ref(a.astype(np.float64), b.astype(np.float64)),
                               rtol={"f16": 2e-3, "bf16": 1e-2}.get(name, 1e-6))


def _round_away(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


UNARY_REF = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": _round_away, "erf": np.vectorize(math.erf), "log1p": np.log1p, "expm1": np.expm1,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}
POSITIVE = {"log", "log2", "sqrt", "sqrt_rn", "rsqrt", "log1p"}


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY_REF))
def test_float_unary(op, name):
    rng = np.random.default_rng(11)
    x = random_floats(rng, name, (3, 5)) / 2
    if op in POSITIVE:
        x = np.abs(x) + np.asarray(0.25, x.dtype)
    if op == "round":
        x.reshape(-1)[:4] = [0.5, -0.5, 2.5, -1.5]
    got = one_op(op, [tt(name, (3, 5))], tt(name, (3, 5)), [x])
    ref = UNARY_REF[op](x.astype(np.float64))
    tol = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 2e-6, "f64": 1e-13}[name]
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol, err_msg=f"{op} {name}")
    np.testing.assert_array_equal(got, round_ref(got.astype(np.float64), name))  # stays on the type's grid


@pytest.mark.parametrize("name", INTS)
def test_integer_unary(name):
    e = ScalarType(name)
    rng = np.random.default_rng(5)
    x = random_ints(rng, e, (4, 3))
    t = tt(name, (4, 3))
    refs = {
        "neg": lambda v: -v, "not": lambda v: ~v, "abs": abs,
        "popc": lambda v: bin(v % (1 << e.bits)).count("1"),
        "clz": lambda v: e.bits - (v % (1 << e.bits)).bit_length(),
    }
    for op, ref in refs.items():
        got = one_op(op, [t], t, [x])
        exp = np.array([wrap(ref(int(v)), e) for v in x.reshape(-1)], dtype=e.numpy).reshape(x.shape)
        np.testing.assert_array_equal(got, exp, err_msg=op)


@pytest.mark.parametrize("name", FLOATS + INTS)
def test_cmp_and_select(name):
    rng = np.random.default_rng(1)
    e = ScalarType(name)
    gen = (lambda: random_floats(rng, name, (2, 7))) if e.kind == "float" else (lambda: random_ints(rng, e, (2, 7)))
    a, b = gen(), gen()
    b.reshape(-1)[:4] = a.reshape(-1)[:4]
    if e.kind == "float":
        a.reshape(-1)[5] = np.nan
    t, tb = tt(name, (2, 7)), tt("i1", (2, 7))
    for pred, ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                      ("gt", np.greater), ("ge", np.greater_equal)]:
        got = one_op("cmp", [t, t], tb, [a, b], f'predicate = "{pred}"')
        np.testing.assert_array_equal(got, ref(a, b), err_msg=pred)
    c = a > b
    np.testing.assert_array_equal(one_op("select", [tb, t, t], t, [c, a, b]), np.where(c, a, b))


@pytest.mark.parametrize("src", INTS + ["i1"])
@pytest.mark.parametrize("dst", INTS + ["i1"])
def test_int_casts(src, dst):
    s, d = ScalarType(src), ScalarType(dst)
    rng = np.random.default_rng(2)
    x = random_ints(rng, s, (9,)) if src != "i1" else rng.random(9) < 0.5
    got = one_op("cast", [tt(src, (9,))], tt(dst, (9,)), [x])
    ref = [(int(v) != 0) if dst == "i1" else wrap(int(v), d) for v in x]
    np.testing.assert_array_equal(got, np.array(ref, dtype=d.numpy))


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", INTS)
def test_float_to_int_truncates_and_saturates(src, dst):
    d = ScalarType(dst)
    x = np.array([2.75, -2.75, 0.5, -0.0, 1e30, -1e30, np.nan, 100.0, -100.0], dtype=np.float64)
    x = round_ref(x, src)
    got = one_op("cast", [tt(src, (9,))], tt(dst, (9,)), [x])
    info = np.iinfo(d.numpy)
    ref = [0 if math.isnan(v) else max(int(info.min), min(int(info.max), math.trunc(max(-1e300, min(1e300, v)))))
           for v in x.astype(np.float64)]
    np.testing.assert_array_equal(got, np.array(ref, dtype=d.numpy))


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", FLOATS)
def test_float_casts_rtne(src, dst):
    rng = np.random.default_rng(4)
    x = round_ref(rng.standard_normal(11) * 1e3, src)
    x[:3] = [np.inf, -0.0, np.nan]
    got = one_op("cast", [tt(src, (11,))], tt(dst, (11,)), [x])
    np.testing.assert_array_equal(got, round_ref(x.astype(np.float64), dst))


def test_float_cast_rtz_and_overflow():
    x = np.array([1.0 + 2 ** -9, -(1.0 + 2 ** -7 + 2 ** -9), 1e39, -1e39, 70000.0], dtype=np.float64)
    got = one_op("cast", ["tile<5xf64>"], "tile<5xbf16>", [x], 'rounding = "rtz"')
    big = float(np.float32(3.3895313892515355e38))
    np.testing.assert_array_equal(got, np.array([1.0, -(1.0 + 2 ** -7), big, -big, 69632.0], np.float32))
    h = one_op("cast", ["tile<2xf32>"], "tile<2xf16>", [np.array([70000.0, 1 + 2 ** -11 * 3], np.float32)])
    assert np.isinf(h[0]) and h[1] == np.float16(1 + 2 ** -9)


@pytest.mark.parametrize("name", INTS)
def test_int_to_float(name):
    rng = np.random.default_rng(9)
    x = random_ints(rng, ScalarType(name), (8,))
    for dst in FLOATS:
        got = one_op("cast", [tt(name, (8,))], tt(dst, (8,)), [x])
        np.testing.assert_array_equal(got, round_ref(np.array([float(int(v)) for v in x]), dst))


def test_bitcasts():
    x = np.array([1.5, -2.0, np.inf], np.float32)
    np.testing.assert_array_equal(one_op("bitcast", ["tile<3xf32>"], "tile<3xi32>", [x]), x.view(np.int32))
    b = one_op("bitcast", ["tile<3xbf16>"], "tile<3xu16>", [x])
    np.testing.assert_array_equal(b, (x.view(np.uint32) >> 16).astype(np.uint16))
    back = one_op("bitcast", ["tile<3xu16>"], "tile<3xbf16>", [b])
    np.testing.assert_array_equal(back, x)
    h = np.array([0.1, -3], np.float16)
    np.testing.assert_array_equal(one_op("bitcast", ["tile<2xf16>"], "tile<2xi16>", [h]), h.view(np.int16))
    assert one_op("bitcast", ["f8e4m3"], "u8", [448.0]) == 0x7E
    assert one_op("bitcast", ["u8"], "f8e5m2", [0x7C]) == np.inf


def test_fma_and_umulhi_64():
    a = np.array([1 + 2 ** -23], np.float32)
    got = one_op("fma", ["tile<1xf32>"] * 3, "tile<1xf32>", [a, a, -np.float32(1 + 2 ** -22)])
    assert got[0] == np.float32(2 ** -46)  # the product is not rounded before the add
    x = 0xFFFF_FFFF_FFFF_FFFF
    assert one_op("umulhi", ["u64", "u64"], "u64", [x, x]) == x - 1
    assert one_op("umulhi", ["i32", "i32"], "i32", [-1, 2]) == 1


def test_addptr_scales_by_pointee_size():
    got = one_op("addptr", ["tile<3xptr<f64>>", "tile<3xi32>"], "tile<3xptr<f64>>",
                 [np.array([1000, 1000, 1000], np.uint64), np.array([0, 1, -1], np.int32)])
    np.testing.assert_array_equal(got, np.array([1000, 1008, 992], np.uint64))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_random_shapes_and_types(data):
    """Any binary op on any type over a random (often non-power-of-two) shape."""
    name = data.draw(st.sampled_from(INTS + FLOATS))
    e = ScalarType(name)
    ops_ = sorted(INT_REF) if e.kind != "float" else sorted(FLOAT_REF)
    op = data.draw(st.sampled_from(ops_))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=0, max_size=3)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    if e.kind == "float":
        a, b = random_floats(rng, name, shape), random_floats(rng, name, shape)
        ref = round_ref(FLOAT_REF[op](a.astype(np.float64), b.astype(np.float64)), name)
    else:
        a, b = random_ints(rng, e, shape), random_ints(rng, e, shape)
        if op in ("div", "rem"):
            b = np.where(b == 0, 1, b).astype(e.numpy)
        if op in ("shl", "shr"):
            b = rng.integers(0, e.bits + 2, size=shape).astype(e.numpy)
        ref = np.array([wrap(INT_REF[op](int(x), int(y), e), e) for x, y in zip(a.reshape(-1), b.reshape(-1))],
                       dtype=e.numpy).reshape(shape)
    got = one_op(op, [tt(name, shape)] * 2, tt(name, shape), [a, b])
    assert np.shape(got) == shape
    np.testing.assert_array_equal(got, ref)
