"""Early ``return`` inside runtime control flow (``if pid >= n: return``, returns in loops, in nested helpers),
compiled and interpreted, checked against numpy on random data."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def guard_first(X, Y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Y + offs, tl.load(X + offs, mask=m) * 2.0 + 1.0, mask=m)


def test_guard_clause(mode):
    r = rng(1)
    n = 77
    x = r.standard_normal(n).astype(np.float32)
    y = np.full(128, -5.0, np.float32)
    launch(guard_first, (8,), mode, x, y, n, BLOCK=16)
    np.testing.assert_allclose(y[:n], x.astype(np.float64) * 2 + 1, rtol=1e-6)
    assert (y[n:] == -5.0).all()


@tilec.jit
def branchy(X, Y, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if pid % 3 == 0:
        tl.store(Y + offs, x + 10.0)
        return
    elif pid % 3 == 1:
        x = x * 4.0
    else:
        if pid > n:
            return
        x = -x
    tl.store(Y + offs, x)


def test_returns_in_some_branches(mode):
    r = rng(2)
    B, P, n = 8, 7, 4
    x = r.standard_normal(B * P).astype(np.float32)
    y = np.zeros(B * P, np.float32)
    launch(branchy, (P,), mode, x, y, n, BLOCK=B)
    want = np.zeros(B * P)
    for p in range(P):
        s = slice(p * B, (p + 1) * B)
        xs = x[s].astype(np.float64)
        want[s] = xs + 10 if p % 3 == 0 else (xs * 4 if p % 3 == 1 else (0 if p > n else -xs))
    np.testing.assert_allclose(y, want, rtol=1e-6)


@tilec.jit
def piecewise(x, k):
    if k > 0:
        return x + 1.0
    else:
        if k < -5:
            return x - 100.0
    return x * 3.0


@tilec.jit
def call_piecewise(X, Y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(Y + pid * BLOCK + offs, piecewise(tl.load(X + offs), 4 - pid * 3))


def test_helper_returning_values_from_branches(mode):
    r = rng(3)
    B, P = 16, 5
    x = r.standard_normal(B).astype(np.float32)
    y = np.zeros(B * P, np.float32)
    launch(call_piecewise, (P,), mode, x, y, BLOCK=B)
    xs = x.astype(np.float64)
    for p in range(P):
        k = 4 - 3 * p
        want = xs + 1 if k > 0 else (xs - 100 if k < -5 else xs * 3)
        np.testing.assert_allclose(y[p * B:(p + 1) * B], want, rtol=1e-6)


@tilec.jit
def sum_until(X, Y, n, stop):
    acc = 0
    for i in range(n):
        if tl.load(X + i) == stop:
            tl.store(Y, acc)
            return
        acc += tl.load(X + i)
    tl.store(Y, acc + 1000000)


@tilec.jit
def sum_until_while(X, Y, n, stop):
    acc = 0
    i = 0
    while i < n:
        for j in range(3):
            v = tl.load(X + 3 * i + j)
            if v == stop:
                tl.store(Y, acc)
                return
            acc += v
        i += 1
    tl.store(Y, acc + 1000000)


@pytest.mark.parametrize("kernel", [sum_until, sum_until_while])
def test_return_inside_loops(mode, kernel):
    r = rng(4)
    x = r.permutation(30).astype(np.int32)
    y = np.zeros(1, np.int32)
    for stop in (int(x[0]), int(x[17]), 1000):
        n = 30 if kernel is sum_until else 10
        launch(kernel, (1,), mode, x, y, n, stop)
        hit = np.nonzero(x == stop)[0]
        want = int(x[:hit[0]].sum()) if len(hit) else int(x.sum()) + 1000000
        assert int(y[0]) == want, (stop, int(y[0]), want)


@tilec.jit
def unrolled_return(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.static_range(4):
        if i == 2:
            tl.store(Y + offs, acc)
            return
        acc += tl.load(X + i * BLOCK + offs)
    tl.store(Y + offs, acc - 1.0)


def test_return_in_static_loop(mode):
    r = rng(5)
    x = r.standard_normal(4 * 8).astype(np.float32)
    y = np.zeros(8, np.float32)
    launch(unrolled_return, (1,), mode, x, y, BLOCK=8)
    np.testing.assert_allclose(y, x[:8].astype(np.float64) + x[8:16], rtol=1e-6)


def test_return_value_in_loop_is_an_error():
    @tilec.jit
    def first_positive(x, n):
        for i in range(n):
            return x
        return x

    @tilec.jit
    def k(Y, n):
        tl.store(Y, first_positive(1.0, n))

    with pytest.raises(tilec.CompilationError, match="return with a value inside a loop"):
        k[(1,)](np.zeros(1, np.float32), 3)


@tilec.jit
def nested_in_static_if(Flag, Out, DYNAMIC: tl.constexpr):
    if DYNAMIC:
        if tl.load(Flag) != 0:
            tl.store(Out, 0)
            return
    tl.store(Out, 1)


@pytest.mark.parametrize("flag", [0, 1])
def test_runtime_return_inside_compile_time_if(mode, flag):
    out = np.full(1, -1, np.int32)
    launch(nested_in_static_if, (1,), mode, np.array([flag], np.int32), out, DYNAMIC=True)
    assert out[0] == (0 if flag else 1)
