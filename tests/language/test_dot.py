"""tl.dot over shapes, dtypes and precisions (ieee/tf32/tf32x3, fp16/bf16 inputs with fp32 or fp16 out, int8 ->
int32, batched 3-d), with an accumulator, against float64 numpy."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from dtypes import TL
from langhelp import known_bug, launch, rng


@tilec.jit
def dot_kernel(A, B, C, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr,
               OUT: tl.constexpr, ACC: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    co = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    if ACC:
        d = tl.dot(a, b, acc=tl.load(C + co), input_precision=PREC, out_dtype=OUT)
    else:
        d = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
    tl.store(Z + co, d)


SHAPES = [(16, 16, 16), (32, 16, 64), (16, 64, 32), (64, 32, 16)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("prec", ["ieee", "tf32", "tf32x3"])
def test_fp32_dot(mode, m, n, k, prec):
    r = rng(50)
    a, b = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32)
    c = r.standard_normal((m, n)).astype(np.float32)
    z = np.zeros((m, n), np.float32)
    launch(dot_kernel, (1,), mode, a, b, c, z, M=m, N=n, K=k, PREC=prec, OUT=tl.float32, ACC=True)
    if prec == "tf32":  # f32 inputs rounded to tf32 first, on every backend (docs/language.md)
        want = _tf32(a) @ _tf32(b) + c
    else:
        want = a.astype(np.float64) @ b + c
    tol = 2e-3 if prec == "tf32" and mode == "cuda" else 1e-5  # tensor cores round ties away from zero
    np.testing.assert_allclose(z, want, rtol=tol, atol=tol * np.sqrt(k))


def _tf32(x):
    """f32 values rounded to tf32 (10 mantissa bits, to nearest even), in float64."""
    from tilec.ir.numerics import quantize_format
    return quantize_format(x.astype(np.float64), 10, -126, float(np.finfo(np.float32).max), True)


@tilec.jit
def default_dot_kernel(A, B, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Z + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b))


def test_fp32_dot_rounds_the_same_compiled_and_interpreted():
    """The compiled CPU path and the interpreter agree on f32 dots: f32 inputs by default (Triton's interpreter and
    CPU backend), inputs rounded to tf32 when asked (``default_dot_input_precision="tf32"`` or a dot's
    ``input_precision``), so they agree to the order of the f32 additions either way."""
    r = rng(51)
    m, n, k = 128, 64, 256
    a, b = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32)
    outs = {}
    for mode in ("cpu", "interpret"):
        for prec in (None, "tf32"):
            z = np.zeros((m, n), np.float32)
            extra = {} if prec is None else {"default_dot_input_precision": prec}
            launch(default_dot_kernel, (1,), mode, a, b, z, M=m, N=n, K=k, **extra)
            outs[mode, prec] = z
    tf32, ieee = _tf32(a) @ _tf32(b), a.astype(np.float64) @ b
    assert np.abs(ieee - tf32).max() > 1e-3  # the two roundings differ visibly on this case
    for mode in ("cpu", "interpret"):
        np.testing.assert_allclose(outs[mode, None], ieee, rtol=0, atol=1e-4)
        np.testing.assert_allclose(outs[mode, "tf32"], tf32, rtol=0, atol=1e-4)
    for prec in (None, "tf32"):
        np.testing.assert_allclose(outs["cpu", prec], outs["interpret", prec], rtol=0, atol=1e-4)


@pytest.mark.parametrize("dt,out", [("float16", "float32"), ("float16", "float16"), ("float64", "float64")])
def test_float_dot_dtypes(mode, dt, out):
    r = rng(51)
    a, b = r.standard_normal((32, 16)).astype(dt), r.standard_normal((16, 32)).astype(dt)
    z = np.zeros((32, 32), out)
    launch(dot_kernel, (1,), mode, a, b, z, z, M=32, N=32, K=16, PREC="ieee", OUT=TL[out], ACC=False)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}[out]
    np.testing.assert_allclose(z.astype(np.float64), want, rtol=tol, atol=tol * 4)


def test_int8_dot(mode):
    r = rng(52)
    a, b = r.integers(-128, 128, (16, 32)).astype(np.int8), r.integers(-128, 128, (32, 16)).astype(np.int8)
    c = r.integers(-1000, 1000, (16, 16)).astype(np.int32)
    z = np.zeros((16, 16), np.int32)
    launch(dot_kernel, (1,), mode, a, b, c, z, M=16, N=16, K=32, PREC="ieee", OUT=tl.int32, ACC=True)
    np.testing.assert_array_equal(z, a.astype(np.int32) @ b.astype(np.int32) + c)


@tilec.jit
def batched_kernel(A, B, Z, BS: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    bi = tl.arange(0, BS)[:, None, None]
    a = tl.load(A + bi * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(B + bi * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    tl.store(Z + bi * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :],
             tl.dot(a, b, input_precision="ieee"))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batched_dot(mode, dtype):
    r = rng(53)
    a, b = r.standard_normal((2, 16, 32)).astype(dtype), r.standard_normal((2, 32, 16)).astype(dtype)
    z = np.zeros((2, 16, 16), np.float32)
    launch(batched_kernel, (1,), mode, a, b, z, BS=2, M=16, N=16, K=32)
    np.testing.assert_allclose(z, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@tilec.jit
def matmul_kernel(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A masked tiled matmul over non-power-of-two sizes: the loop, masks and accumulator together."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(B + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_masked_tiled_matmul(mode):
    r = rng(54)
    m, n, k = 45, 37, 70
    a, b = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    launch(matmul_kernel, (3, 3), mode, a, b, c, m, n, k, BM=16, BN=16, BK=32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
