"""Interpreter mode: the same kernels run as Python over numpy through the same Semantic layer."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
import test_control_flow as cf
import test_kernels as kk
from tilec.runtime.jit import JITFunction

rng = np.random.default_rng(5)


def interpreted(k: JITFunction) -> JITFunction:
    """A copy of ``k`` (and nothing else) in interpreter mode."""
    return JITFunction(k.fn, interpret=True)


def test_vector_add_and_softmax():
    n = 300
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    interpreted(kk.add_kernel)[(tilec.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    x = rng.standard_normal((5, 50)).astype(np.float32)
    out = np.zeros_like(x)
    interpreted(kk.softmax_kernel)[(5,)](out, x, 50, 50, 50, BLOCK=64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_matmul_and_loops():
    M, N, K = 20, 18, 40
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    interpreted(kk.matmul_kernel)[(2, 2)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    out = np.zeros(1, np.int32)
    interpreted(cf.collatz)[(1,)](out, 27)
    assert out[0] == 111
    out = np.zeros(1, np.int32)
    interpreted(cf.nested_loops)[(1,)](out, 7, 11)
    assert out[0] == 3


def test_calls_reductions_scans_atomics():
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(18, np.float32)
    interpreted(cf.caller)[(1,)](x, out, BLOCK=16)
    np.testing.assert_allclose(out[:16], np.clip(x, -0.5, 0.5) * 2, rtol=1e-6)
    np.testing.assert_allclose(out[16:], [x.sum() * 7, x.max()], rtol=1e-5)
    x = rng.integers(-5, 5, (8, 8)).astype(np.float32)
    out = np.zeros(80, np.float32)
    idx = np.zeros(16, np.int32)
    interpreted(kk.scan_arg_kernel)[(1,)](x, out, idx, BLOCK=8)
    np.testing.assert_allclose(out[:64].reshape(8, 8), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(idx[:8], np.argmax(x, axis=1))
    np.testing.assert_array_equal(idx[8:], np.argmin(x, axis=0))
    v = rng.integers(0, 10, 100).astype(np.int32)
    hist, flags = np.zeros(10, np.int32), np.zeros(2, np.int32)
    interpreted(kk.histogram_kernel)[(2,)](v, hist, flags, 100, BLOCK=64)
    np.testing.assert_array_equal(hist, np.bincount(v, minlength=10))


def test_runtime_values_and_printing(capsys):
    @tilec.jit(interpret=True)
    def k(X, n):
        total = 0.0
        for i in range(n):
            v = tl.load(X + i)
            if v > 0:
                total += v
        print("total", total)
        tl.store(X, total)

    x = np.array([1.5, -2.0, 3.0, 0.25], np.float32)
    k[(1,)](x, 4)
    assert x[0] == pytest.approx(4.75)
    assert "total" in capsys.readouterr().out


def test_env_variable(monkeypatch):
    monkeypatch.setenv("TILEC_INTERPRET", "1")
    k = tilec.jit(kk.add_kernel.fn)
    assert k.interpret
    monkeypatch.setenv("TILEC_INTERPRET", "0")
    assert not tilec.jit(kk.add_kernel.fn).interpret


def test_block_pointers_interpreted():
    M, N, K = 20, 17, 40
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    interpreted(kk.block_ptr_matmul)[(2, 2)](a, b, c, M, N, K, BM=16, BN=16, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
