"""``a if c else b`` with a runtime scalar condition evaluates only the chosen side (loads, stores, calls),
compiled and interpreted."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng


@tilec.jit
def store_one_side(X, Out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(Out + offs, x * 2.0) if pid % 2 == 0 else tl.store(Out + offs, x - 1.0)


def test_void_ternary_runs_one_side(mode):
    r = rng(11)
    B, P = 16, 5
    x = r.standard_normal(B * P).astype(np.float32)
    out = np.zeros_like(x)
    launch(store_one_side, (P,), mode, x, out, BLOCK=B)
    for p in range(P):
        xs = x[p * B:(p + 1) * B].astype(np.float64)
        np.testing.assert_allclose(out[p * B:(p + 1) * B], xs * 2 if p % 2 == 0 else xs - 1, rtol=1e-6)


@tilec.jit
def guarded_load(X, Out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    # the load runs only for programs whose rows exist: the other side must not touch memory
    v = tl.load(X + pid * BLOCK + offs) if pid < n else tl.zeros([BLOCK], tl.float32) - 3.0
    tl.store(Out + pid * BLOCK + offs, v)


def test_value_ternary_only_reads_the_chosen_side(mode):
    r = rng(12)
    B, n, P = 8, 3, 5
    x = r.standard_normal(B * n).astype(np.float32)
    out = np.zeros(B * P, np.float32)
    launch(guarded_load, (P,), mode, x, out, n, BLOCK=B)
    np.testing.assert_array_equal(out[:B * n], x)
    assert (out[B * n:] == -3.0).all()


def test_ternary_with_inconsistent_types_is_an_error():
    @tilec.jit
    def k(X, flag):
        v = tl.load(X) if flag > 0 else tl.zeros([4], tl.float32)
        tl.store(X + tl.arange(0, 4), v)

    with pytest.raises(tilec.CompilationError, match="Ternary expression with dynamic condition has inconsistent"):
        k[(1,)](np.zeros(4, np.float32), 3)
