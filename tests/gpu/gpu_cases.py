"""Test cases: a jit kernel (or a function building a tir module), host inputs (random, non-power-of-two sizes), a grid, and a numpy reference.

``make(rng)`` returns (args, constexprs, grid, outputs, reference) where ``outputs`` are the indices of the
arguments the kernel writes and ``reference(args)`` returns their expected values (float64 where sensible).
"""
from __future__ import annotations

import math

import numpy as np

import gpu_jit_kernels as J
import gpu_ir_kernels as K


def _softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def vector_add(rng, dtype=np.float32, n=100_003, block=1024):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    out = np.full(n, np.nan, dtype)
    return [x, y, out, n], {"BLOCK": block}, (math.ceil(n / block),), [2], lambda a: [a[0] + a[1]]


def vector_add_aligned(rng):
    return vector_add(rng, n=1 << 16)


def vector_add_f16(rng):
    return vector_add(rng, np.float16, n=12_345, block=2048)


def softmax(rng, rows=37, cols=781):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    return [out, x, cols, cols, cols], {"BLOCK": 1024}, (rows,), [0], lambda a: [_softmax_ref(a[1])]


def softmax2d(rng, rows=45, cols=100):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    return [out, x, rows, cols, cols], {"ROWS": 16, "BLOCK": 128}, (math.ceil(rows / 16),), [0], \
        lambda a: [_softmax_ref(a[1])]


def col_sum(rng, rows=300, cols=200):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full(cols, np.nan, np.float32)
    return [x, out, rows, cols, cols], {"ROWS": 32, "COLS": 64}, (math.ceil(cols / 64),), [1], \
        lambda a: [a[0].astype(np.float64).sum(axis=0)]


def matmul(rng, M=70, N=50, K=45):
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    return [a, b, c, M, N, K, K, 1, N, 1, N, 1], {"BM": 32, "BN": 32, "BK": 16}, \
        (math.ceil(M / 32), math.ceil(N / 32)), [2], lambda x: [x[0].astype(np.float64) @ x[1].astype(np.float64)]


def transpose(rng, M=77, N=130):
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((N, M), np.nan, np.float32)
    return [x, out, M, N], {"BM": 32, "BN": 64}, (math.ceil(M / 32), math.ceil(N / 64)), [1], lambda a: [a[0].T]


def histogram(rng, n=10_001, bins=37):
    x = rng.integers(0, bins, n).astype(np.int32)
    hist = np.zeros(bins, np.int32)
    return [x, hist, n], {"BLOCK": 512}, (math.ceil(n / 512),), [1], \
        lambda a: [np.bincount(a[0], minlength=bins).astype(np.int32)]


def math_ops(rng, n=5_000):
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    out = np.full(n, np.nan, np.float32)

    def ref(a):
        from math import erf
        v = a[0].astype(np.float64)
        return [np.exp(v) * 0.25 + np.log(np.abs(v) + 1) - np.sqrt(np.abs(v)) + np.sin(v) * np.cos(v)
                + np.vectorize(erf)(v) + 1 / (1 + np.exp(-v)) + 1 / np.sqrt(np.abs(v) + 1) + np.floor(v)
                + np.exp2(v * 0.5) + np.log2(np.abs(v) + 2) + np.maximum(v, 0.5) + np.minimum(v, -0.5)]
    return [x, out, n], {"BLOCK": 256}, (math.ceil(n / 256),), [1], ref


def while_loop(rng, n=300):
    x = (rng.random(n) * 1000).astype(np.float32)
    out = np.full(n, -1, np.int32)

    def ref(a):
        v = a[0].astype(np.float64)
        return [np.where(v >= 1, np.floor(np.log2(np.maximum(v, 1))) + 1, 0).astype(np.int32)]
    return [x, out, n], {"BLOCK": 1}, (n,), [1], ref


def casts(rng, n=3_001):
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    o16 = np.zeros(n, np.float16)
    oi = np.zeros(n, np.int32)
    return [x, o16, oi, n], {"BLOCK": 256}, (math.ceil(n / 256),), [1, 2], \
        lambda a: [a[0].astype(np.float16), np.trunc(a[0]).astype(np.int32)]


def grid3d(rng, n=700, ny=3, nz=2):
    x = rng.standard_normal((nz, ny, n)).astype(np.float32)
    flags = rng.integers(0, 2, (nz, ny)).astype(np.bool_)
    out = np.full_like(x, np.nan)

    def ref(a):
        x, f = a[0].astype(np.float64), a[2]
        y = np.where(f[:, :, None], x * 2, x + 1)
        m = np.zeros_like(y)
        for px in range(3):
            blk = np.abs(y[:, :, px * 256:(px + 1) * 256]).max(axis=2)
            m[:, :, px * 256:(px + 1) * 256] = blk[:, :, None]
        y[:, :, n - 1] = m[:, :, n - 1]
        return [y]
    return [x, out, flags, n], {"BLOCK": 256}, (3, ny, nz), [1], ref


CASES = {
    "vector_add": (J.add_kernel, vector_add, 1e-6),
    "vector_add_aligned": (J.add_kernel, vector_add_aligned, 1e-6),
    "vector_add_f16": (J.add_kernel, vector_add_f16, 1e-3),
    "softmax": (J.softmax_kernel, softmax, 1e-5),
    "softmax2d": (J.softmax2d_kernel, softmax2d, 1e-5),
    "col_sum": (J.col_sum_kernel, col_sum, 1e-5),
    "matmul": (J.matmul_kernel, matmul, 1e-5),
    "transpose": (J.transpose_kernel, transpose, 0),
    "histogram": (K.make_histogram, histogram, 0),
    "math": (J.math_kernel, math_ops, 1e-5),
    "while": (J.while_kernel, while_loop, 0),
    "casts": (J.cast_kernel, casts, 1e-3),
    "grid3d": (J.grid3d_kernel, grid3d, 1e-6),
}


def matmul_f16(rng, M=70, N=50, K=45, dtype=np.float16):
    args, cx, grid, outs, ref = matmul(rng, M, N, K)
    args[0], args[1] = args[0].astype(dtype), args[1].astype(dtype)
    cx = {"BM": 64, "BN": 32, "BK": 32}
    grid = (math.ceil(M / 64), math.ceil(N / 32))
    return args, cx, grid, outs, lambda x: [x[0].astype(np.float64) @ x[1].astype(np.float64)]


CASES["matmul_f16"] = (J.matmul_kernel, matmul_f16, 1e-3)


def cumsum_argmax(rng, rows=21, cols=300):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    cs = np.full_like(x, np.nan)
    am = np.full(rows, -1, np.int32)
    return [x, cs, am, cols, cols], {"BLOCK": 512}, (rows,), [1, 2], \
        lambda a: [np.cumsum(a[0].astype(np.float64), axis=1), np.argmax(a[0], axis=1).astype(np.int32)]


CASES["cumsum_argmax"] = (J.cumsum_argmax_kernel, cumsum_argmax, 1e-5)


def layer_norm(rng, rows=29, cols=2999, dtype=np.float16):
    x = rng.standard_normal((rows, cols)).astype(dtype)
    w, b_ = rng.standard_normal(cols).astype(dtype), rng.standard_normal(cols).astype(dtype)
    y = np.full_like(x, np.nan)
    mean, rstd = np.full(rows, np.nan, np.float32), np.full(rows, np.nan, np.float32)

    def ref(a):
        x = a[0].astype(np.float64)
        m = x.mean(axis=1)
        r = 1 / np.sqrt(((x - m[:, None]) ** 2).mean(axis=1) + 1e-5)
        return [(x - m[:, None]) * r[:, None] * a[2].astype(np.float64) + a[3], m, r]
    return [x, y, w, b_, mean, rstd, cols, cols, 1e-5], {"BLOCK": 1024}, (rows,), [1, 4, 5], ref


CASES["layer_norm_f16"] = (J.layer_norm_kernel, layer_norm, 2e-3)


def matmul_ieee(rng):
    args, cx, grid, outs, ref = matmul(rng)
    return args, dict(cx, PREC="ieee"), grid, outs, ref


def matmul_tf32_big(rng):
    return matmul(rng, M=130, N=96, K=77)


CASES["matmul"] = (J.matmul_kernel, matmul, 2e-3)  # tf32 inputs by default, like Triton
CASES["matmul_ieee"] = (J.matmul_kernel, matmul_ieee, 1e-5)
CASES["matmul_tf32_big"] = (J.matmul_kernel, matmul_tf32_big, 2e-3)


def flip_1024(rng, rows=3, n=1024):
    x = rng.standard_normal((rows, n)).astype(np.float32)
    return [x, np.full_like(x, np.nan)], {"N": n}, (rows,), [1], lambda a: [a[0][:, ::-1]]


def _gather2d(rng, shape, ishape, axis, dtype=np.float32, programs=2):
    x = rng.standard_normal((programs,) + shape).astype(dtype)
    idx = rng.integers(0, shape[axis], (programs,) + ishape).astype(np.int32)
    z = np.zeros((programs,) + ishape, dtype)
    cx = {"M": shape[0], "N": shape[1], "P": ishape[0], "Q": ishape[1], "AX": axis}
    return [x, idx, z], cx, (programs,), [2], lambda a: [np.take_along_axis(a[0], a[1].astype(np.int64), axis + 1)]


def gather_rows(rng):
    return _gather2d(rng, (32, 64), (64, 64), 0)


def gather_cols(rng):
    return _gather2d(rng, (32, 64), (32, 16), 1, np.float16)


def gather_in_registers(rng):  # each thread holds a whole row of 4: a select chain, no shared memory
    return _gather2d(rng, (128, 4), (128, 4), 1)


CASES["flip_1024"] = (J.flip_rows_kernel, flip_1024, 0)
CASES["gather_rows"] = (J.gather2d_kernel, gather_rows, 0)
CASES["gather_cols"] = (J.gather2d_kernel, gather_cols, 0)
CASES["gather_in_registers"] = (J.gather2d_kernel, gather_in_registers, 0)
