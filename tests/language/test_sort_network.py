"""The bitonic form of tl.sort/tl.topk (what the GPU backends compose: ``sort_network`` in their frontend
options), run here on the CPU by giving its backend the same option: every dtype, both directions, any axis,
non-power-of-two data behind masks; exact on bit patterns (the float keys order -0.0 before 0.0 and NaNs last by
their bits, and hand every pattern back)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl
from tilec.ir.printer import print_ir
from tilec.passes import PassManager, tir_pipeline
from tilec.targets.cpu.backend import CPUBackend
from langhelp import launch, random_array, rng


@pytest.fixture(autouse=True)
def network(monkeypatch):
    monkeypatch.setattr(CPUBackend, "frontend_options", {"sort_network": True}, raising=False)


@tilec.jit
def sort_rows(X, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DIM: tl.constexpr, DESC: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(X + r * N + c)
    tl.store(Z + r * N + c, tl.sort(x, dim=DIM, descending=DESC))
    if DIM == 1:
        tl.store(Z + M * N + r * K + tl.arange(0, K)[None, :], tl.topk(x, K))


def _key_order(x):
    """numpy's sort order made total on bits, as the network's float keys: -0.0 before 0.0, NaNs last (those
    with the sign clear first), each group by its bits."""
    if x.dtype.kind != "f":
        return np.argsort(x, axis=-1, kind="stable")
    w = x.dtype.itemsize * 8
    signed = x.view(f"i{w // 8}")
    low = np.array((1 << (w - 1)) - 1).astype(signed.dtype)
    flipped = np.where(signed < 0, signed ^ low, signed)  # two's complement order of sign-magnitude floats
    nan = np.isnan(x)
    return np.lexsort((flipped, nan & (signed < 0), nan), axis=-1)


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_sort_and_topk(dt, desc, dim):
    # N = 16, K = 4 takes every path of the networks that N = 32 does (runs of alternating direction merged, a
    # topk halving with flipped runs and a last one without) at a quarter of the compile time
    M, N, K = 4, 16, 4
    x = random_array(rng(51), (M, N), dt)
    x[0, :5] = x[0, 5:10]  # duplicates
    if dt.startswith("float"):
        x[1, ::3] = np.nan
        x[2, :6] = [0.0, -0.0, -0.0, 0.0, np.inf, -np.inf]
    z = np.zeros(M * N + M * K, dt)
    launch(sort_rows, (1,), "cpu", x, z, M=M, N=N, K=K, DIM=dim, DESC=desc)
    xs = np.moveaxis(x, dim, -1)
    order = _key_order(xs)
    want = np.take_along_axis(xs, order, -1)
    want = want[..., ::-1] if desc else want
    got = np.moveaxis(z[:M * N].reshape(M, N), dim, -1)
    bits = f"u{x.dtype.itemsize}"
    np.testing.assert_array_equal(got.view(bits), np.ascontiguousarray(want).view(bits))
    if dim == 1:
        top = np.take_along_axis(x, _key_order(x), -1)[:, ::-1][:, :K]
        np.testing.assert_array_equal(z[M * N:].reshape(M, K).view(bits), np.ascontiguousarray(top).view(bits))


@tilec.jit
def sort_1d(X, Z, BLOCK: tl.constexpr, K: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(Z + o, tl.sort(x))
    tl.store(Z + BLOCK + o, tl.sort(x, descending=True))
    tl.store(Z + 2 * BLOCK + tl.arange(0, K), tl.topk(x, K))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=16, max_size=16), st.sampled_from([1, 2, 4, 16]))
def test_every_float32_bit_pattern_comes_back(words, k):
    """Property: any 16 float32 bit patterns (NaN payloads of either sign, -0.0, subnormals) come out as the
    key order's permutation of themselves, ascending, descending and their top k."""
    x = np.array(words, np.uint32).view(np.float32)
    z = np.zeros(32 + k, np.float32)
    launch(sort_1d, (1,), "cpu", x, z, BLOCK=16, K=k)
    want = x[_key_order(x)]
    np.testing.assert_array_equal(z[:16].view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(z[16:32].view(np.uint32), want[::-1].view(np.uint32))
    np.testing.assert_array_equal(z[32:].view(np.uint32), want[::-1][:k].view(np.uint32))


def test_network_tiles_stay_linear_in_the_axis():
    """The network's intermediates are the tile regrouped (pairs on an axis of two), never ``n x n``."""
    # the tir a compile produces (the frontend with the backend's sort_network option, then the tir pipeline), without
    # lowering a 256-element network to machine code, which this test does not look at
    module = tilec.ASTSource(sort_1d, "*fp32,*fp32", constexprs={"BLOCK": 256, "K": 16}).make_ir({"sort_network": True})
    PassManager("sort_1d").run(module, tir_pipeline())
    tir = print_ir(module)
    assert "x256xf32" not in tir and "256x256" not in tir
