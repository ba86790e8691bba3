"""Binary arithmetic, comparison, bitwise and shift ops over dtype pairs against numpy, with Triton's
promotion (checked with static_assert in the kernel) and C-like integer division and remainder."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tilec
import tilec.language as tl
from dtypes import FLOATS, INTS, TL, promote
from langhelp import launch, random_array, rng

N = 37  # not a power of two: the masks matter


@tilec.jit
def arith_kernel(X, Y, Z, n, OUT: tl.constexpr, INT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m)
    y = tl.load(Y + o, mask=m)
    tl.static_assert((x + y).dtype == OUT)
    tl.store(Z + o, x + y, mask=m)
    tl.store(Z + n + o, x - y, mask=m)
    tl.store(Z + 2 * n + o, x * y, mask=m)
    tl.store(Z + 3 * n + o, x % y, mask=m)
    if INT:
        tl.store(Z + 4 * n + o, x // y, mask=m)
    tl.store(Z + 5 * n + o, (x / y).to(Z.dtype.element_ty), mask=m)


def c_div(x, y):
    """C's truncating integer division and remainder (Python ints, so no overflow)."""
    q = [abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) for a, b in zip(x.tolist(), y.tolist())]
    return np.array(q, dtype=object), np.array([a - b * qq for a, b, qq in zip(x.tolist(), y.tolist(), q)],
                                               dtype=object)


PAIRS = [(t, t) for t in INTS + FLOATS] + [
    ("int8", "int32"), ("int32", "int64"), ("uint8", "uint32"), ("int16", "float32"), ("float16", "float32"),
    ("float32", "float64"), ("int64", "float16"), ("uint8", "uint16"), ("uint32", "uint64"),
]


@pytest.mark.parametrize("tx,ty", PAIRS)
def test_arith(mode, tx, ty):
    r = rng(1)
    x, y = random_array(r, N, tx), random_array(r, N, ty)
    if tx.startswith("u") or ty.startswith("u"):
        x, y = np.abs(x.astype(np.float64)).astype(tx) + 1, np.abs(y.astype(np.float64)).astype(ty) + 1
    out = promote(tx, ty)
    is_int = out in INTS
    z = np.zeros(6 * N, out)
    launch(arith_kernel, (1,), mode, x, y, z, N, OUT=TL[out], INT=is_int, BLOCK=64)
    z = z.reshape(6, N)
    if is_int:
        xo, yo = x.astype(object), y.astype(object)
        q, rem = c_div(xo.astype(np.int64).astype(object), yo.astype(np.int64).astype(object))
        wrap = lambda v: np.array(v.tolist(), dtype=object).astype(np.int64).astype(out) \
            if out != "uint64" else np.array([int(a) % 2**64 for a in v.tolist()], np.uint64)
        np.testing.assert_array_equal(z[0], (x.astype(out) + y.astype(out)))
        np.testing.assert_array_equal(z[1], (x.astype(out) - y.astype(out)))
        np.testing.assert_array_equal(z[2], (x.astype(out) * y.astype(out)))
        np.testing.assert_array_equal(z[3], wrap(rem))
        np.testing.assert_array_equal(z[4], wrap(q))
        np.testing.assert_allclose(z[5].astype(np.float64), np.trunc(x.astype(np.float64) / y.astype(np.float64)),
                                   atol=1)
    else:
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-15}[out]
        for row, ref in zip(z, [x64 + y64, x64 - y64, x64 * y64, np.fmod(x64, y64)]):
            np.testing.assert_allclose(row.astype(np.float64), ref, rtol=tol, atol=tol * 4)
        np.testing.assert_allclose(z[5].astype(np.float64), x64 / y64, rtol=tol * 2)


@tilec.jit
def scalar_kernel(X, Z, n, OUT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m)
    tl.static_assert((x + 3).dtype == OUT)
    tl.store(Z + o, x + 3, mask=m)
    tl.store(Z + n + o, 7 - x, mask=m)
    tl.store(Z + 2 * n + o, x * 2, mask=m)


@pytest.mark.parametrize("t", INTS + FLOATS)
def test_python_scalars_adopt_the_tensor_type(mode, t):
    """``x + 3`` keeps ``x``'s dtype (Python scalars are weakly typed)."""
    x = np.abs(random_array(rng(2), N, t).astype(np.float64)).astype(t) + 1
    z = np.zeros(3 * N, t)
    launch(scalar_kernel, (1,), mode, x, z, N, OUT=TL[t], BLOCK=64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(z.reshape(3, N), np.stack([x + t_(3, t), t_(7, t) - x, x * t_(2, t)]))


def t_(v, t):
    return np.array(v, t)


@tilec.jit
def compare_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m)
    y = tl.load(Y + o, mask=m)
    tl.store(Z + o, x < y, mask=m)
    tl.store(Z + n + o, x <= y, mask=m)
    tl.store(Z + 2 * n + o, x > y, mask=m)
    tl.store(Z + 3 * n + o, x >= y, mask=m)
    tl.store(Z + 4 * n + o, x == y, mask=m)
    tl.store(Z + 5 * n + o, x != y, mask=m)


@pytest.mark.parametrize("tx,ty", [(t, t) for t in INTS + FLOATS] + [("int8", "int64"), ("uint8", "int32"),
                                                                     ("int32", "float32")])
def test_compare(mode, tx, ty):
    r = rng(3)
    x, y = random_array(r, N, tx), random_array(r, N, ty)
    y[::3] = x[::3].astype(ty)  # equal elements
    if tx in FLOATS:
        x[5] = np.nan
    z = np.zeros(6 * N, bool)
    launch(compare_kernel, (1,), mode, x, y, z, N, BLOCK=64)
    t = promote(tx, ty)
    a, b = x.astype(t), y.astype(t)
    with np.errstate(invalid="ignore"):
        want = np.stack([a < b, a <= b, a > b, a >= b, a == b, a != b])
    np.testing.assert_array_equal(z.reshape(6, N), want)


@tilec.jit
def bitwise_kernel(X, Y, Z, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m)
    y = tl.load(Y + o, mask=m)
    tl.store(Z + o, x & y, mask=m)
    tl.store(Z + n + o, x | y, mask=m)
    tl.store(Z + 2 * n + o, x ^ y, mask=m)
    tl.store(Z + 3 * n + o, ~x, mask=m)
    tl.store(Z + 4 * n + o, x << (y & 7), mask=m)
    tl.store(Z + 5 * n + o, x >> (y & 7), mask=m)


@pytest.mark.parametrize("t", INTS)
def test_bitwise_and_shifts(mode, t):
    """``>>`` is arithmetic for signed and logical for unsigned types, like C."""
    info = np.iinfo(t)
    r = rng(4)
    x = r.integers(info.min, info.max, N, dtype=t, endpoint=True)
    y = r.integers(info.min, info.max, N, dtype=t, endpoint=True)
    z = np.zeros(6 * N, t)
    launch(bitwise_kernel, (1,), mode, x, y, z, N, BLOCK=64)
    s = y & t_(7, t)
    want = np.stack([x & y, x | y, x ^ y, ~x, (x << s).astype(t), x >> s])
    np.testing.assert_array_equal(z.reshape(6, N), want)


@tilec.jit
def int_div_kernel(X, Y, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    y = tl.load(Y + o)
    tl.store(Z + o, x // y)
    tl.store(Z + BLOCK + o, x % y)


@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1).filter(lambda v: v != 0)),
                min_size=16, max_size=16))
def test_int32_division_is_c_like(pairs):
    """Property: int32 ``//`` truncates toward zero and ``%`` takes the dividend's sign (except INT_MIN // -1)."""
    pairs = [(a, b) for a, b in pairs if not (a == -2**31 and b == -1)] + [(7, -2)] * 16
    x = np.array([a for a, _ in pairs[:16]], np.int32)
    y = np.array([b for _, b in pairs[:16]], np.int32)
    z = np.zeros(32, np.int32)
    launch(int_div_kernel, (1,), "cpu", x, y, z, BLOCK=16)
    q, rem = c_div(x.astype(np.int64), y.astype(np.int64))
    np.testing.assert_array_equal(z[:16], q.astype(np.int64))
    np.testing.assert_array_equal(z[16:], rem.astype(np.int64))


def test_mixed_signedness_division_is_an_error(mode):
    x, y = np.ones(4, np.int32), np.ones(4, np.uint32)
    with pytest.raises(tilec.CompilationError, match="signedness"):
        launch(int_div_kernel, (1,), mode, x, y, np.zeros(8, np.int32), BLOCK=4)
