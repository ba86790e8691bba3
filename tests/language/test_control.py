"""Control flow (if/for/while with runtime and compile-time conditions, break-free loops carrying tuples),
tuples and nested @jit calls, static_range/range options, and value specialisation (ints equal to 1,
divisible by 16) giving the same results as the generic kernel."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def _scale(x, k):
    return x * k


@tilec.jit
def _pair(x, y):
    return x + y, x - y


@tilec.jit
def _nested(x, y):
    s, d = _pair(x, y)
    return _scale(s, 2), (d, _scale(d, 3))


@tilec.jit
def control_kernel(X, Z, n, ITERS, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32)
    pair = (acc, x)
    for i in range(ITERS):                                  # runtime loop carrying a tuple
        a, b = pair
        pair = (a + b, b * 0.5)
    tl.store(Z + o, pair[0], mask=m)
    w = x
    j = 0
    while j < ITERS:                                        # runtime while
        w = tl.where(w > 0, w - 1.0, w + 1.0)
        j += 1
    tl.store(Z + n + o, w, mask=m)
    if tl.program_id(0) == 0:                               # runtime if with results
        y = x * 2
    else:
        y = x * 3
    tl.store(Z + 2 * n + o, y, mask=m)
    s = x
    for k in tl.static_range(UNROLL):                      # compile-time unrolled
        s = s + k
    for k in tl.range(0, ITERS, 1, num_stages=2, loop_unroll_factor=2):
        s = s + 0.0
    tl.store(Z + 3 * n + o, s, mask=m)
    t, (u, v) = _nested(x, 1.0)
    tl.store(Z + 4 * n + o, t + u + v, mask=m)
    if UNROLL > 2:                                          # compile-time if
        tl.store(Z + 5 * n + o, x, mask=m)
    else:
        tl.store(Z + 5 * n + o, -x, mask=m)


def control_ref(x, iters, unroll):
    a, b = np.zeros_like(x), x.copy()
    for _ in range(iters):
        a, b = a + b, b * 0.5
    w = x.copy()
    for _ in range(iters):
        w = np.where(w > 0, w - 1, w + 1)
    t = (x + 1) * 2
    return np.stack([a, w, x * 2, x + sum(range(unroll)), t + (x - 1) + (x - 1) * 3, x if unroll > 2 else -x])


@pytest.mark.parametrize("iters,unroll", [(0, 1), (3, 3), (7, 4)])
def test_control_flow_tuples_nested_calls(mode, iters, unroll):
    n = 50
    x = rng(60).standard_normal(n).astype(np.float32)
    z = np.zeros(6 * n, np.float32)
    launch(control_kernel, (1,), mode, x, z, n, iters, BLOCK=64, UNROLL=unroll)
    np.testing.assert_allclose(z.reshape(6, n), control_ref(x, iters, unroll), rtol=1e-6, atol=1e-6)


@tilec.jit
def spec_kernel(X, Z, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = pid * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(Z + o, tl.load(X + o * stride, mask=m) + stride, mask=m)


@pytest.mark.parametrize("n,stride", [(100, 1), (128, 2), (64, 16), (37, 3), (33, 32)])
def test_value_specialisation(mode, n, stride):
    """n and stride specialise (== 1, % 16 == 0); every variant computes the same function."""
    x = rng(61).standard_normal(n * stride).astype(np.float32)
    z = np.zeros(n, np.float32)
    launch(spec_kernel, (tilec.cdiv(n, 32),), mode, x, z, n, stride, BLOCK=32)
    np.testing.assert_array_equal(z, x[::stride][:n] + np.float32(stride))


@tilec.jit(do_not_specialize=["stride"])
def nospec_kernel(X, Z, n, stride, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Z + o, tl.load(X + o * stride, mask=o < n), mask=o < n)


def test_do_not_specialize(mode):
    x = np.arange(256, dtype=np.float32)
    for stride in (1, 2, 16):
        z = np.zeros(16, np.float32)
        launch(nospec_kernel, (1,), mode, x, z, 16, stride, BLOCK=16)
        np.testing.assert_array_equal(z, x[::stride][:16])


@tilec.jit
def constexpr_kernel(Z, V: tl.constexpr, DT: tl.constexpr, FN: tl.constexpr):
    o = tl.arange(0, 4)
    tl.store(Z + o, FN(tl.full((4,), V, DT), 2))


def test_constexpr_values_functions_and_dtypes(mode):
    z = np.zeros(4, np.float32)
    launch(constexpr_kernel, (1,), mode, z, V=1.5, DT=tl.float32, FN=_scale)
    assert z.tolist() == [3.0] * 4
    launch(constexpr_kernel, (1,), mode, z, V=2, DT=tl.int32, FN=_scale)
    assert z.tolist() == [4.0] * 4


@tilec.jit
def grid_kernel(Z):
    x, y, w = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny = tl.num_programs(0), tl.num_programs(1)
    tl.store(Z + (w * ny + y) * nx + x, x + 10 * y + 100 * w + 1000 * tl.num_programs(2))


def test_3d_grid(mode):
    z = np.zeros((2, 3, 5), np.int32)
    launch(grid_kernel, (5, 3, 2), mode, z)
    w, y, x = np.meshgrid(range(2), range(3), range(5), indexing="ij")
    np.testing.assert_array_equal(z, x + 10 * y + 100 * w + 2000)
