"""Operators built on tilec kernels that the torch tests (CPU and GPU) trace, compile, export and differentiate."""
import torch

import tilec
import tilec.language as tl
import tilec.torch
from tilec.torch import like


@tilec.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, a * x + tl.load(y_ptr + offs, mask=m), mask=m)


@tilec.jit
def softplus_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x))), mask=m)


@tilec.jit
def sigmoid_mul_kernel(x_ptr, g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.load(g_ptr + offs, mask=m) / (1.0 + tl.exp(-x)), mask=m)


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def moments_kernel(x_ptr, mean_ptr, var_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(m, x - mean, 0.0)
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, tl.sum(d * d, axis=0) / cols)


def grid1(n, block=256):
    return (tilec.cdiv(n, block),)


@tilec.torch.op("tilec_tests::scale_add", out=like("x"))
def scale_add(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    out = torch.empty_like(x)
    scale_add_kernel[grid1(x.numel())](x, y, out, a, x.numel(), BLOCK=256)
    return out


@tilec.torch.op("tilec_tests::sigmoid_mul", out=like("x", contiguous=True))
def sigmoid_mul(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    x, g = x.contiguous(), g.contiguous()
    out = torch.empty_like(x)
    sigmoid_mul_kernel[grid1(x.numel())](x, g, out, x.numel(), BLOCK=256)
    return out


def _softplus_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _softplus_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return sigmoid_mul(x, grad)  # d softplus / dx = sigmoid(x), a second tilec operator


@tilec.torch.op("tilec_tests::softplus", out=like("x", contiguous=True), backward=_softplus_backward,
                setup_context=_softplus_setup)
def softplus(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    softplus_kernel[grid1(x.numel())](x, out, x.numel(), BLOCK=256)
    return out


@tilec.torch.op("tilec_tests::matmul", out=like("a", shape=lambda a, b: (a.shape[0], b.shape[1])))
def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    matmul_kernel[(tilec.cdiv(M, 32), tilec.cdiv(N, 32))](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(),
                                                          BM=32, BN=32, BK=32)
    return c


@tilec.torch.op("tilec_tests::moments", out=(like("x", shape=lambda x: x.shape[:1]),) * 2)
def moments(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = x.contiguous()
    rows, cols = x.shape
    mean, var = x.new_empty(rows), x.new_empty(rows)
    moments_kernel[(rows,)](x, mean, var, cols, BLOCK=tilec.next_power_of_2(cols))
    return mean, var


@tilec.torch.op("tilec_tests::scale_add_", mutates_args=("out",))
def scale_add_(x: torch.Tensor, y: torch.Tensor, a: float, out: torch.Tensor) -> None:
    scale_add_kernel[grid1(x.numel())](x, y, out, a, x.numel(), BLOCK=256)
