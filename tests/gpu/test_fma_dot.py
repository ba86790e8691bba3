"""The FMA dot (batched 3-d dots, and 2-d dots the matrix units do not take) with a 16-bit float accumulator sums
in f32 and rounds once, as the matrix units and the CPU backend do: rounding every step to f16 put test_core's
test_dot3d[*-64-64-64-*-float16-float16] past its tolerance on the GPU."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, compile_jit, device_arch, to_device


@tilec.jit
def dot3(Q, K, O, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, KK: tl.constexpr, OUT: tl.constexpr):
    b = tl.arange(0, B)[:, None, None]
    q = tl.load(Q + b * M * KK + tl.arange(0, M)[None, :, None] * KK + tl.arange(0, KK)[None, None, :])
    k = tl.load(K + b * KK * N + tl.arange(0, KK)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    tl.store(O + b * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :],
             tl.dot(q, k, out_dtype=OUT))


CASES = [(2, 32, 32, 64, np.float16, tl.float16), (1, 64, 64, 64, np.float16, tl.float16),
         (2, 32, 32, 64, np.float16, tl.float32), (2, 16, 16, 32, np.float32, tl.float32)]


def _data(B, M, N, K, dt):
    r = np.random.default_rng(17)
    return r.standard_normal((B, M, K)).astype(dt), r.standard_normal((B, K, N)).astype(dt)


@pytest.mark.parametrize("arch", ARCHS)
def test_f16_accumulator_sums_in_f32(arch):
    q = np.zeros((2, 32, 64), np.float16)
    ptx = compile_jit(dot3, [q, q, np.zeros((2, 32, 32), np.float16)], arch, B=2, M=32, N=32, KK=64,
                      OUT=tl.float16).asm["ptx"]
    assert re.search(r"fma\.rn\.f32", ptx) and not re.search(r"fma\.rn\.(ftz\.)?f16", ptx)


@pytest.mark.gpu
@pytest.mark.parametrize("B, M, N, K, dt, out", CASES)
def test_batched_dot_runs(B, M, N, K, dt, out):
    q, k = _data(B, M, N, K, dt)
    o = np.zeros((B, M, N), np.float16 if out == tl.float16 else np.float32)
    dev = to_device([q, k, o])
    dot3[(1,)](*dev, B=B, M=M, N=N, KK=K, OUT=out, target=tilec.Target("cuda", device_arch(), 32))
    ref = np.matmul(q.astype(np.float64), k.astype(np.float64))
    got = dev[2].numpy().astype(np.float64)
    tol = 2e-3 if out == tl.float16 else 1e-5  # one f16 rounding of the exact sum (|ref| ~ 8)
    np.testing.assert_allclose(got, ref.astype(o.dtype).astype(np.float64), rtol=tol, atol=tol * 8)
