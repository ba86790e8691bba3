"""Every spelling of a tensor-core operand on a CUDA device, against float64 (exact int64 for int8) references:
operands transposed in the kernel (``tl.trans``, ``x @ W.T``), fp8 and int8 on their own instructions, batched
3-d dots, attention with ``k.T``; ragged sizes, so every mask matters. Run again with ``TILEC_CUDA_ARCH=80`` for
the Ampere path."""
import math

import pytest

import tilec

import spelling_kernels as S

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def _cdiv(a, b):
    return (a + b - 1) // b


def _rand(shape, dt, gen):
    if dt == torch.int8:
        return torch.randint(-128, 128, shape, device="cuda", generator=gen, dtype=torch.int8)
    return torch.randn(shape, device="cuda", generator=gen).to(dt)


def _native_fp8() -> bool:
    import os
    from gpu_helpers import device_arch
    forced = os.environ.get("TILEC_CUDA_ARCH")
    return (int(forced.removeprefix("sm_").rstrip("a")) if forced else device_arch()) >= 90


def _rel(out, ref):
    out = out.double()
    assert not torch.isnan(out).any(), "unwritten output elements"
    return ((out - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("trans_a,trans_b", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn", "int8"])
@pytest.mark.parametrize("cfg", [(128, 128, 64, 8, 3), (64, 64, 32, 4, 2)])
def test_transposed_in_the_kernel(dtype, trans_a, trans_b, cfg):
    BM, BN, BK, nw, ns = cfg
    if dtype in ("float8_e4m3fn", "int8"):
        BK *= 2
    dt = getattr(torch, dtype)
    gen = torch.Generator(device="cuda").manual_seed(hash((dtype, trans_a, trans_b, cfg)) % 2**31)
    M, N, K = 200, 152, 3 * BK + 40
    a, b = _rand((M, K), dt, gen), _rand((K, N), dt, gen)
    a_st = a.t().contiguous() if trans_a else a          # what is stored: A^T [K, M] or A [M, K]
    b_st = b.t().contiguous() if trans_b else b          # W = B^T [N, K] or B [K, N]
    integer = dt == torch.int8
    c = torch.full((M, N), -7 if integer else float("nan"), device="cuda",
                   dtype=torch.int32 if integer else torch.float32)
    sa = (a_st.stride(1), a_st.stride(0)) if trans_a else (a_st.stride(0), a_st.stride(1))
    sb = (b_st.stride(1), b_st.stride(0)) if trans_b else (b_st.stride(0), b_st.stride(1))
    S.mm_spelled[(_cdiv(M, BM), _cdiv(N, BN))](a_st, b_st, c, M, N, K, *sa, *sb, c.stride(0), c.stride(1), BM=BM,
                                               BN=BN, BK=BK, TRANS_A=trans_a, TRANS_B=trans_b,
                                               ACC=tilec.language.int32 if integer else tilec.language.float32,
                                               num_warps=nw, num_stages=ns)
    if integer:
        assert torch.equal(c.cpu().long(), a.cpu().long() @ b.cpu().long())
        return
    tol = 1e-3 if dtype.startswith("float8") and _native_fp8() else 1e-5
    assert _rel(c, a.double() @ b.double()) < tol


@pytest.mark.parametrize("dtype", ["float16", "int8"])
@pytest.mark.parametrize("bt,nw", [(2, 4), (4, 8), (1, 4)])
def test_batched_dots(dtype, bt, nw):
    dt = getattr(torch, dtype)
    gen = torch.Generator(device="cuda").manual_seed(bt * 10 + nw)
    B, M, N, K = 11, 80, 72, 100
    BK = 64 if dt == torch.int8 else 32
    a, b = _rand((B, M, K), dt, gen), _rand((B, K, N), dt, gen)
    integer = dt == torch.int8
    c = torch.full((B, M, N), -7 if integer else float("nan"), device="cuda",
                   dtype=torch.int32 if integer else torch.float32)
    S.bmm_kernel[(_cdiv(B, bt), _cdiv(M, 64), _cdiv(N, 64))](a, b, c, B, M, N, K, BT=bt, BM=64, BN=64, BK=BK,
                                                             ACC=tilec.language.int32 if integer else
                                                             tilec.language.float32, num_warps=nw, num_stages=3)
    if integer:
        assert torch.equal(c.cpu().long(), a.cpu().long() @ b.cpu().long())
    else:
        assert _rel(c, a.double() @ b.double()) < 1e-5


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("D,nw", [(64, 4), (128, 8)])
def test_attention_with_k_transposed(trans, D, nw):
    gen = torch.Generator(device="cuda").manual_seed(trans + D)
    B, H, S_ = 2, 3, 333
    q, k, v = (torch.randn((B, H, S_, D), device="cuda", generator=gen, dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 1.0 / math.sqrt(D)
    S.attn_kt_kernel[(_cdiv(S_, 128), B * H)](q, k, v, o, scale, q.stride(1), q.stride(2), S_, HEAD_DIM=D,
                                              BLOCK_M=128, BLOCK_N=64, TRANS=trans, num_warps=nw, num_stages=3)
    ref = torch.softmax((q.double() @ k.double().transpose(-1, -2)) * scale, -1) @ v.double()
    assert _rel(o, ref) < 3e-3
