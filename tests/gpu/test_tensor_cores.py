"""Tensor-core kernels on a CUDA device against float64 references: the tutorial matmul (carried pointers,
grouped order) over dtypes, transposed operands, ragged M/N/K, tile configurations and pipeline depths, a fused
epilogue, and a flash-attention forward (causal or not, ragged sequence length). Run the suite a second time
with ``TILEC_CUDA_ARCH=80`` for the Ampere code path on a newer GPU."""
import math

import numpy as np
import pytest

import tilec
import tilec.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, PREC: tl.constexpr, EPILOGUE: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    group = pid // per_group
    first_m = group * GROUP_M
    group_size = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % group_size)
    pid_n = (pid % per_group) // group_size
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if EPILOGUE:
        acc = tl.maximum(acc + tl.load(bias_ptr + cn, mask=cn < N, other=0.0)[None, :], 0.0)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _matmul(a, b, out_dtype, config, prec="ieee", bias=None):
    BM, BN, BK, nw, ns = config
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    grid = (triton_cdiv(M, BM) * triton_cdiv(N, BN),)
    matmul_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=4,
                        PREC=prec, EPILOGUE=bias is not None, num_warps=nw, num_stages=ns)
    return c


def triton_cdiv(a, b):
    return (a + b - 1) // b


def _operand(shape, dtype, trans, gen):
    """A random operand of ``shape``; transposed ones are views of a column-major buffer."""
    if trans:
        return torch.randn(shape[::-1], device="cuda", generator=gen).to(dtype).T
    return torch.randn(shape, device="cuda", generator=gen).to(dtype)


def _check(out, ref, tol):
    out = out.double()
    assert not torch.isnan(out).any(), "unwritten output elements"
    err = (out - ref).norm() / ref.norm()
    assert err < tol, f"relative error {err:.3g} >= {tol}"


CONFIGS = {"128x128x64 w8 s3": (128, 128, 64, 8, 3), "64x64x32 w4 s2": (64, 64, 32, 4, 2),
           "128x64x32 w4 s4": (128, 64, 32, 4, 4), "64x128x64 w4 s3": (64, 128, 64, 4, 3),
           "32x32x16 w1 s3": (32, 32, 16, 1, 3), "64x64x32 w4 s1": (64, 64, 32, 4, 1)}
SHAPES = {"square": (256, 256, 256), "ragged": (197, 131, 100), "ragged K16": (200, 72, 144),
          "long K": (64, 64, 1040)}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul(dtype, shape, config):
    gen = torch.Generator(device="cuda").manual_seed(hash((dtype, shape, config)) % 2**31)
    M, N, K = SHAPES[shape]
    dt = getattr(torch, dtype)
    a, b = _operand((M, K), dt, False, gen), _operand((K, N), dt, False, gen)
    c = _matmul(a, b, torch.float32, CONFIGS[config])
    _check(c, a.double() @ b.double(), 1e-5)


@pytest.mark.parametrize("trans", ["A", "B", "AB"])
@pytest.mark.parametrize("config", ["128x128x64 w8 s3", "64x64x32 w4 s2"])
def test_matmul_transposed_operands(trans, config):
    gen = torch.Generator(device="cuda").manual_seed(7)
    M, N, K = 160, 96, 136
    a = _operand((M, K), torch.float16, "A" in trans, gen)
    b = _operand((K, N), torch.float16, "B" in trans, gen)
    c = _matmul(a, b, torch.float32, CONFIGS[config])
    _check(c, a.double() @ b.double(), 1e-5)


@pytest.mark.parametrize("prec,tol", [("tf32", 2e-3), ("ieee", 1e-6)])
def test_matmul_f32_inputs(prec, tol):
    gen = torch.Generator(device="cuda").manual_seed(3)
    a, b = _operand((150, 70), torch.float32, False, gen), _operand((70, 90), torch.float32, False, gen)
    c = _matmul(a, b, torch.float32, (64, 64, 32, 4, 3), prec)
    _check(c, a.double() @ b.double(), tol)


def test_matmul_fused_epilogue_fp16_out():
    gen = torch.Generator(device="cuda").manual_seed(5)
    M, N, K = 300, 200, 192
    a, b = _operand((M, K), torch.float16, False, gen), _operand((K, N), torch.float16, False, gen)
    bias = torch.randn(N, device="cuda", generator=gen, dtype=torch.float32)
    c = _matmul(a, b, torch.float16, CONFIGS["128x128x64 w8 s3"], bias=bias)
    _check(c, torch.relu(a.double() @ b.double() + bias.double()), 2e-3)


@tilec.jit
def attn_fwd_kernel(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + base + cols[None, :] * stride_m + offs_d[:, None], mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16),
             mask=offs_m[:, None] < N_CTX)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D,S,nw,ns", [(64, 1000, 4, 3), (128, 515, 8, 3), (64, 256, 4, 2)])
def test_attention_forward(D, S, nw, ns, causal):
    gen = torch.Generator(device="cuda").manual_seed(D + S)
    B, H = 2, 3
    q, k, v = (torch.randn((B, H, S, D), device="cuda", generator=gen, dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 1.0 / math.sqrt(D)
    grid = (triton_cdiv(S, 128), B * H)
    attn_fwd_kernel[grid](q, k, v, o, scale, q.stride(1), q.stride(2), S, HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64,
                          CAUSAL=causal, num_warps=nw, num_stages=ns)
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(s, -1) @ v.double()
    _check(o, ref, 3e-3)


@tilec.jit
def single_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    c = tl.dot(a, b) * 2.0
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("nw", [4, 8])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_dot_outside_loops(dtype, nw):
    """No loop to pipeline: operands come from registers (B staged through shared memory on warpgroups)."""
    gen = torch.Generator(device="cuda").manual_seed(nw)
    M, N, K = 250, 190, 64
    dt = getattr(torch, dtype)
    a, b = _operand((M, K), dt, False, gen), _operand((K, N), dt, False, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    single_dot_kernel[(triton_cdiv(M, 128), triton_cdiv(N, 128))](a, b, c, M, N, K, BM=128, BN=128, BK=64,
                                                                  num_warps=nw)
    _check(c, 2 * (a.double() @ b.double()), 1e-5)


def test_too_much_shared_memory_is_a_clear_error():
    gen = torch.Generator(device="cuda").manual_seed(1)
    a, b = _operand((512, 512), torch.float16, False, gen), _operand((512, 512), torch.float16, False, gen)
    with pytest.raises(tilec.LaunchError, match=r"out of resources: kernel 'matmul_kernel' needs \d+ bytes"):
        _matmul(a, b, torch.float32, (128, 256, 128, 8, 4))
    c = _matmul(a, b, torch.float32, CONFIGS["64x64x32 w4 s2"])  # the process is still usable
    _check(c, a.double() @ b.double(), 1e-5)
