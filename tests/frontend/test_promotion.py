"""Triton's type promotion: result dtypes of mixed operations, and their values against numpy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl
from helpers import build, launch

NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
      "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "fp16": np.float16, "fp32": np.float32,
      "fp64": np.float64}
TL = {"int8": tl.int8, "int16": tl.int16, "int32": tl.int32, "int64": tl.int64, "uint8": tl.uint8,
      "uint16": tl.uint16, "uint32": tl.uint32, "uint64": tl.uint64, "fp16": tl.float16, "bf16": tl.bfloat16,
      "fp32": tl.float32, "fp64": tl.float64}


@tilec.jit
def binop_kernel(X, Y, Out, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "truediv":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "max":
        z = tl.maximum(x, y)
    else:
        z = tl.where(x < y, x, y)
    tl.static_assert(z.dtype == Out.dtype.element_ty, "unexpected result type")
    tl.store(Out + offs, z)


# (lhs, rhs, op, expected result dtype) following Triton's rules (C's usual conversions for ints)
CASES = [
    ("int8", "int16", "add", "int16"), ("int32", "uint32", "add", "uint32"), ("int64", "uint8", "mul", "int64"),
    ("uint8", "int8", "sub", "uint8"), ("uint16", "int32", "add", "int32"), ("fp16", "fp32", "add", "fp32"),
    ("fp16", "int32", "mul", "fp16"), ("int32", "fp16", "sub", "fp16"), ("fp64", "int8", "add", "fp64"),
    ("fp16", "fp16", "truediv", "fp32"), ("int32", "int32", "truediv", "fp32"), ("int8", "fp16", "truediv", "fp32"),
    ("fp16", "fp16", "mod", "fp32"),
    ("int16", "int16", "floordiv", "int16"), ("int32", "int32", "mod", "int32"), ("fp32", "fp32", "mod", "fp32"),
    ("int8", "uint8", "max", "uint8"), ("int16", "fp32", "where", "fp32"), ("int64", "int32", "floordiv", "int64"),
]


def _ref(x, y, op, out_dtype):
    a, b = x.astype(np.float64), y.astype(np.float64)
    if op == "truediv":
        return a / b
    if np.issubdtype(out_dtype, np.integer):
        xi, yi = x.astype(out_dtype), y.astype(out_dtype)
        if op == "floordiv":
            return np.trunc(a / b).astype(out_dtype) if np.issubdtype(out_dtype, np.signedinteger) else xi // yi
        if op == "mod":
            return np.fmod(xi, yi)
        return {"add": lambda: xi + yi, "sub": lambda: xi - yi, "mul": lambda: xi * yi,
                "max": lambda: np.maximum(xi, yi), "where": lambda: np.where(a < b, xi, yi)}[op]()
    xf, yf = x.astype(out_dtype), y.astype(out_dtype)
    return {"add": lambda: xf + yf, "sub": lambda: xf - yf, "mul": lambda: xf * yf, "mod": lambda: np.fmod(xf, yf),
            "max": lambda: np.maximum(xf, yf), "where": lambda: np.where(a < b, xf, yf)}[op]()


@pytest.mark.parametrize("lhs,rhs,op,expected", CASES)
def test_binary_promotion_matches_numpy(lhs, rhs, op, expected):
    rng = np.random.default_rng(hash((lhs, rhs, op)) % 2**32)
    n = 16

    def sample(name):
        if name.startswith("fp"):
            return rng.uniform(-20, 20, n).astype(NP[name])
        info = np.iinfo(NP[name])
        lo, hi = max(info.min, -100), min(info.max, 100)
        v = rng.integers(lo, hi, n).astype(NP[name])
        return np.where(v == 0, 1, v).astype(NP[name])

    x, y = sample(lhs), sample(rhs)
    out = np.zeros(n, NP[expected])
    launch(binop_kernel, 1, x, y, out, OP=op, BLOCK=n)
    ref = _ref(x, y, op, NP[expected])
    tol = 1e-2 if expected == "fp16" else 1e-6
    np.testing.assert_allclose(out.astype(np.float64), np.asarray(ref, np.float64), rtol=tol, atol=tol)


@tilec.jit
def weak_scalar_kernel(X, Out, BLOCK: tl.constexpr, OP: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    if OP == "add_int":
        z = x + 3
    elif OP == "mul_float":
        z = x * 2.5
    elif OP == "radd_int":
        z = 3 + x
    elif OP == "rtruediv_int":
        z = 1 / x
    else:
        z = x - 1
    tl.static_assert(z.dtype == Out.dtype.element_ty, "unexpected result type")
    tl.store(Out + tl.arange(0, BLOCK), z)


# Python scalars are weak: they adopt the tensor's type unless their kind (bool < integer < float) is higher
@pytest.mark.parametrize("xt,op,expected", [
    ("int8", "add_int", "int8"), ("fp16", "mul_float", "fp16"), ("int32", "mul_float", "fp32"),
    ("uint8", "add_int", "uint8"), ("int16", "radd_int", "int16"), ("fp16", "rtruediv_int", "fp32"),
    ("int64", "sub", "int64"),
])
def test_python_scalars_are_weak(xt, op, expected):
    x = np.arange(1, 17).astype(NP[xt])
    out = np.zeros(16, NP[expected])
    launch(weak_scalar_kernel, 1, x, out, BLOCK=16, OP=op)
    a = x.astype(np.float64)
    ref = {"add_int": a + 3, "mul_float": a * 2.5, "radd_int": a + 3, "rtruediv_int": 1 / a, "sub": a - 1}[op]
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-3)


def test_semantic_rules_directly():
    from tilec.language.semantic import Semantic
    s = Semantic(None)
    ct = s.computation_type
    assert ct(tl.bfloat16, False, tl.bfloat16, False, False) is tl.bfloat16
    assert ct(tl.bfloat16, False, tl.float16, False, False) is tl.float16  # fp16 wins, as in Triton
    assert ct(tl.bfloat16, False, tl.int32, False, False) is tl.float32
    assert ct(tl.bfloat16, False, tl.bfloat16, False, True) is tl.float32
    assert ct(tl.float8e4nv, False, tl.float8e5, False, False) is tl.float16
    assert ct(tl.int32, True, tl.bfloat16, False, False) is tl.bfloat16
    with pytest.raises(TypeError, match="different signedness"):
        ct(tl.int32, False, tl.uint32, False, True)


@tilec.jit
def negative_scalar_unsigned(X):
    x = tl.load(X)
    y = x + -1


def test_negative_scalar_with_unsigned_is_an_error():
    with pytest.raises(tilec.CompilationError, match="negative scalar"):
        build(negative_scalar_unsigned, np.zeros(4, np.uint32))


@tilec.jit
def int_ops_kernel(X, Y, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    tl.store(Out + offs, x // y)
    tl.store(Out + BLOCK + offs, x % y)
    tl.store(Out + 2 * BLOCK + offs, (x << 2) ^ (y >> 1) | (x & y))
    tl.store(Out + 3 * BLOCK + offs, -x + ~y)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=16, max_size=16),
       st.lists(st.integers(-50, 50).filter(lambda v: v != 0), min_size=16, max_size=16))
def test_integer_division_is_c_like(xs, ys):
    x, y = np.array(xs, np.int32), np.array(ys, np.int32)
    out = np.zeros(64, np.int32)
    launch(int_ops_kernel, 1, x, y, out, BLOCK=16)
    q = np.trunc(x / y).astype(np.int32)
    np.testing.assert_array_equal(out[:16], q)
    np.testing.assert_array_equal(out[16:32], x - q * y)
    np.testing.assert_array_equal(out[32:48], (x << 2) ^ (y >> 1) | (x & y))
    np.testing.assert_array_equal(out[48:], -x + ~y)
