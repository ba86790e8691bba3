"""Dots with a 16-bit float accumulator: on the matrix units (m16n8k16 with f16 accumulators, rounding once per k16
step as Triton's do) and on the FMA path where those do not take them, which sums in f32 and rounds once:
rounding every step to f16 put test_core's test_dot3d[*-64-64-64-*-float16-float16] past its tolerance."""
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
             tl.dot(q, k, out_dtype=OUT, input_precision="ieee"))  # f32 inputs exact (CUDA's default is tf32)


CASES = [(2, 32, 32, 64, np.float16, tl.float16), (1, 64, 64, 64, np.float16, tl.float16),
         (2, 32, 32, 64, np.float16, tl.float32), (2, 16, 16, 32, np.float32, tl.float32)]


def _data(B, M, N, K, dt):
    r = np.random.default_rng(17)
    return r.standard_normal((B, M, K)).astype(dt), r.standard_normal((B, K, N)).astype(dt)


def test_f16_accumulator_sums_in_f32():
    """sm_75 (no m16n8k16 path here): the FMA path, summing in f32."""
    q = np.zeros((2, 32, 64), np.float16)
    ptx = compile_jit(dot3, [q, q, np.zeros((2, 32, 32), np.float16)], 75, B=2, M=32, N=32, KK=64,
                      OUT=tl.float16).asm["ptx"]
    assert re.search(r"fma\.rn\.f32", ptx) and not re.search(r"fma\.rn\.(ftz\.)?f16", ptx) and "mma" not in ptx


@pytest.mark.parametrize("arch", ARCHS)
def test_f16_accumulator_on_the_matrix_units(arch):
    """out_dtype=float16 with f16 inputs: m16n8k16 with f16 accumulators, as Triton emits (test_core's test_dot
    looks for it)."""
    q = np.zeros((2, 32, 64), np.float16)
    ptx = compile_jit(dot3, [q, q, np.zeros((2, 32, 32), np.float16)], arch, B=2, M=32, N=32, KK=64,
                      OUT=tl.float16).asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in ptx and not re.search(r"fma\.rn", ptx)


@pytest.mark.gpu
@pytest.mark.parametrize("B, M, N, K, dt, out", CASES)
def test_batched_dot_runs(B, M, N, K, dt, out):
    q, k = _data(B, M, N, K, dt)
    o = np.zeros((B, M, N), np.float16 if out == tl.float16 else np.float32)
    dev = to_device([q, k, o])
    dot3[(1,)](*dev, B=B, M=M, N=N, KK=K, OUT=out, target=tilec.Target("cuda", device_arch(), 32))
    ref = np.matmul(q.astype(np.float64), k.astype(np.float64))
    got = dev[2].numpy().astype(np.float64)
    # f16 accumulators round to f16 once per k16 step on the matrix units (|ref| ~ 8: 4e-3 a rounding); f32 exact
    tol = (1e-2, 2e-2) if out == tl.float16 else (1e-5, 8e-5)
    np.testing.assert_allclose(got, ref, rtol=tol[0], atol=tol[1])
