"""Smaller groups of Triton's test_core: cache modifiers and eviction policies accepted, 4-d permutes, pointer
parameters annotated ``tl.const``, chained reductions, integer overflow wrapping, and stores of constants."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def cache_kernel(X, Y, n, CM: tl.constexpr, EV: tl.constexpr, SCM: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, cache_modifier=CM, eviction_policy=EV, volatile=CM == ".cv")
    tl.store(Y + o, x, mask=o < n, cache_modifier=SCM, eviction_policy=EV)


@pytest.mark.parametrize("cm,ev,scm", [("", "", ""), (".ca", "evict_first", ".wb"), (".cg", "evict_last", ".cs"),
                                       (".cv", "evict_normal", ".wt")])
def test_cache_modifiers_are_accepted(mode, cm, ev, scm):
    x = rng(90).standard_normal(20).astype(np.float32)
    y = np.zeros(20, np.float32)
    launch(cache_kernel, (1,), mode, x, y, 20, CM=cm, EV=ev, SCM=scm, BLOCK=32)
    np.testing.assert_array_equal(y, x)


@tilec.jit
def permute4_kernel(X, Z, P0: tl.constexpr, P1: tl.constexpr, P2: tl.constexpr, P3: tl.constexpr):
    i = tl.arange(0, 2)[:, None, None, None] * 64 + tl.arange(0, 4)[None, :, None, None] * 16 + \
        tl.arange(0, 2)[None, None, :, None] * 8 + tl.arange(0, 8)[None, None, None, :]
    y = tl.permute(tl.load(X + i), (P0, P1, P2, P3))
    tl.store(Z + tl.arange(0, 128), tl.reshape(y, 128))


@pytest.mark.parametrize("perm", [(3, 2, 1, 0), (1, 3, 0, 2), (0, 1, 3, 2)])
def test_4d_permute(mode, perm):
    x = rng(91).standard_normal((2, 4, 2, 8)).astype(np.float32)
    z = np.zeros(128, np.float32)
    launch(permute4_kernel, (1,), mode, x, z, P0=perm[0], P1=perm[1], P2=perm[2], P3=perm[3])
    np.testing.assert_array_equal(z, x.transpose(perm).ravel())


@tilec.jit
def const_kernel(X: tl.const, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Z + o, tl.load(X + o) * 2)
    tl.store(Z + BLOCK + o, 7)                     # a Python constant broadcast over a pointer tile
    tl.store(Z + 2 * BLOCK, tl.num_programs(0))


def test_const_pointer_and_constant_stores(mode):
    x = np.arange(8, dtype=np.int32)
    z = np.zeros(17, np.int32)
    launch(const_kernel, (1,), mode, x, z, BLOCK=8)
    assert z.tolist() == list(range(0, 16, 2)) + [7] * 8 + [1]


@tilec.jit
def chain_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None, None] * N * K + tl.arange(0, N)[None, :, None] * K +
                tl.arange(0, K)[None, None, :])
    tl.store(Z + tl.arange(0, M), tl.max(tl.sum(x, 2), 1))
    tl.store(Z + M, tl.sum(tl.max(x, 0)))


def test_chained_reductions(mode):
    x = rng(92).integers(-50, 50, (2, 4, 8)).astype(np.int32)
    z = np.zeros(3, np.int32)
    launch(chain_kernel, (1,), mode, x, z, M=2, N=4, K=8)
    assert z.tolist() == list(x.sum(2).max(1)) + [x.max(0).sum()]


@tilec.jit
def overflow_kernel(X, Z, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Z + o, x * x + 2147483647)
    tl.store(Z + BLOCK + o, -x - 2147483647)


def test_int32_overflow_wraps(mode):
    x = np.array([2, 46341, -3, 65536], np.int32)
    z = np.zeros(8, np.int32)
    launch(overflow_kernel, (1,), mode, x, z, BLOCK=4)
    x64 = x.astype(np.int64)
    wrap = lambda v: ((v + 2**31) % 2**32 - 2**31).astype(np.int32)  # noqa: E731
    np.testing.assert_array_equal(z[:4], wrap(x64 * x64 + 2147483647))
    np.testing.assert_array_equal(z[4:], wrap(-x64 - 2147483647))
