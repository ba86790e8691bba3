"""Tensor-core kernels on a CUDA device against float64 references: the tutorial matmul (carried pointers,
grouped order) over dtypes, transposed operands, ragged M/N/K, tile configurations and pipeline depths, a fused
epilogue, and a flash-attention forward (causal or not, ragged sequence length). Run the suite a second time
with ``TILEC_CUDA_ARCH=80`` for the Ampere code path on a newer GPU."""
import math

import numpy as np
import pytest

import tilec

from tc_kernels import CONFIGS, SHAPES, attn_fwd_kernel, int8_matmul_kernel, matmul_kernel, single_dot_kernel

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def _matmul(a, b, out_dtype, config, prec="ieee", bias=None, imprecise=None, handle=False):
    BM, BN, BK, nw, ns = config
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    grid = (triton_cdiv(M, BM) * triton_cdiv(N, BN),)
    h = matmul_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K, a.stride(0), a.stride(1),
                            b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
                            GROUP_M=4, PREC=prec, EPILOGUE=bias is not None, IMPRECISE=imprecise, num_warps=nw,
                            num_stages=ns)
    return (c, h) if handle else c


def _native_fp8() -> bool:
    """Whether fp8 dots run on the fp8 warpgroup instructions here (sm_90 path), whose own accumulation is less
    precise than f32 (as in Triton), rather than widened exactly to f16."""
    import os
    from gpu_helpers import device_arch
    forced = os.environ.get("TILEC_CUDA_ARCH")
    return (int(forced.removeprefix("sm_").rstrip("a")) if forced else device_arch()) >= 90


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


@pytest.mark.parametrize("trans", ["", "B"])
@pytest.mark.parametrize("config", ["128x128x64 w8 s3", "64x64x32 w4 s2"])
@pytest.mark.parametrize("dtype", ["float8_e5m2", "float8_e4m3fn"])
def test_fp8_matmul(dtype, config, trans):
    """fp8 operands (the matmul tutorial's fp8 case: B K-major, and B stored the other way) on the tensor cores:
    the fp8 warpgroup instructions on sm_90 (their accumulation is less precise than f32, as Triton's default
    there), exact f16 dots on the Ampere path."""
    gen = torch.Generator(device="cuda").manual_seed(hash((dtype, config, trans)) % 2**31)
    M, N, K = 200, 136, 320
    dt = getattr(torch, dtype)
    a, b = _operand((M, K), dt, False, gen), _operand((K, N), dt, trans == "B", gen)
    c = _matmul(a, b, torch.float32, CONFIGS[config])
    _check(c, a.double() @ b.double(), 1e-3 if _native_fp8() else 1e-6)


@pytest.mark.parametrize("imprecise", [32, 64])
def test_fp8_max_num_imprecise_acc(imprecise):
    """``max_num_imprecise_acc``: the fp8 instructions accumulate that many products, then the partial sum is
    added in f32 (one add per accumulator register per chunk, as Triton emits on sm_90)."""
    gen = torch.Generator(device="cuda").manual_seed(imprecise)
    M, N, K = 256, 128, 512
    a = _operand((M, K), torch.float8_e4m3fn, False, gen)
    b = _operand((K, N), torch.float8_e4m3fn, True, gen)
    config = (128, 128, 64, 8, 3)
    c, h = _matmul(a, b, torch.float32, config, imprecise=imprecise, handle=True)
    _check(c, a.double() @ b.double(), 1e-3)
    if _native_fp8():
        assert h.asm["ptx"].count("add.f32") == 128 * 128 // (32 * 8) * (64 // imprecise)


@pytest.mark.parametrize("trans", ["A", "B", "AB"])
@pytest.mark.parametrize("config", ["128x128x64 w8 s3", "64x64x32 w4 s2"])
def test_matmul_transposed_operands(trans, config):
    gen = torch.Generator(device="cuda").manual_seed(7)
    M, N, K = 160, 96, 136
    a = _operand((M, K), torch.float16, "A" in trans, gen)
    b = _operand((K, N), torch.float16, "B" in trans, gen)
    c = _matmul(a, b, torch.float32, CONFIGS[config])
    _check(c, a.double() @ b.double(), 1e-5)


@pytest.mark.parametrize("prec,tol", [("tf32", 2e-3), ("tf32x3", 1e-5), ("ieee", 1e-6)])
def test_matmul_f32_inputs(prec, tol):
    """tf32x3 runs three tf32 products on the tensor cores (split operands), near f32 accuracy."""
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
    # refused when compiled (an OutOfResources, also a LaunchError as Triton code catches it), naming the kernel
    with pytest.raises(tilec.LaunchError, match=r"kernel 'matmul_kernel' needs [\d,]+ bytes of shared memory") as e:
        _matmul(a, b, torch.float32, (128, 256, 128, 8, 4))
    assert isinstance(e.value, tilec.errors.OutOfResources) and e.value.required > e.value.limit
    c = _matmul(a, b, torch.float32, CONFIGS["64x64x32 w4 s2"])  # the process is still usable
    _check(c, a.double() @ b.double(), 1e-5)


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("cfg", [(128, 128, 64, 8, 3), (64, 64, 32, 4, 2)])
def test_int8_matmul_is_exact(cfg, trans_b):
    """int8 x int8 -> int32 on the m16n8k32 tensor-core path, compared exactly with an int64 product."""
    BM, BN, BK, nw, ns = cfg
    gen = torch.Generator(device="cuda").manual_seed(11)
    M, N, K = 200, 150, 288
    a = torch.randint(-128, 128, (M, K), device="cuda", generator=gen, dtype=torch.int8)
    b = torch.randint(-128, 128, (N, K) if trans_b else (K, N), device="cuda", generator=gen, dtype=torch.int8)
    b = b.T if trans_b else b
    c = torch.full((M, N), -7, device="cuda", dtype=torch.int32)
    int8_matmul_kernel[(triton_cdiv(M, BM), triton_cdiv(N, BN))](a, b, c, M, N, K, a.stride(0), a.stride(1),
                                                                 b.stride(0), b.stride(1), BM=BM, BN=BN, BK=BK,
                                                                 num_warps=nw, num_stages=ns)
    ref = a.cpu().long() @ b.cpu().long()
    assert torch.equal(c.cpu().long(), ref)
