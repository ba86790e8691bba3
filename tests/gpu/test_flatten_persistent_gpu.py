"""Persistent matmuls flattened by ``tl.range(..., flatten=True)`` (and by ``warp_specialize=True``) run on the
GPU: tensor-descriptor loads, pointer tiles computed from the tile's offsets (09's pointer kernel, whose offsets
are carried across the flattened loop and renewed once per tile), and pointer tiles advanced in place (03's
spelling), each against float64 over ragged shapes, tile counts that leave some programs one tile more than
others, and K loops of one step and several."""
import math

import pytest

import tilec
import tilec.language as tl
from tc_kernels import grouped_tile, persistent_desc_matmul

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tilec.jit
def _store(c_ptr, acc, pid_m, pid_n, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def offsets_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_m, num_pid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    rk = tl.arange(0, BK)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = grouped_tile(tile_id, 4 * num_pid_n, num_pid_m, 4)
        offs_am = pid_m * BM + tl.arange(0, BM)
        offs_bn = pid_n * BN + tl.arange(0, BN)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + rk
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] + offs_bn[None, :] * stride_bn, mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        _store(c_ptr, acc, pid_m, pid_n, M, N, BM, BN)


@tilec.jit
def increment_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     NUM_SMS: tl.constexpr):
    num_pid_n = tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * num_pid_n, NUM_SMS, flatten=True):
        rm = (tile // num_pid_n) * BM + tl.arange(0, BM)
        rn = (tile % num_pid_n) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a_ptrs = a_ptr + (rm % M)[:, None] * K + rk[None, :]
        b_ptrs = b_ptr + rk[:, None] * N + (rn % N)[None, :]
        acc = tl.zeros((BM, BN), tl.float32)
        for kk in range(0, tl.cdiv(K, BK)):
            a = tl.load(a_ptrs, mask=rk[None, :] < K - kk * BK, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - kk * BK, other=0.0)
            acc += tl.dot(a, b)
            a_ptrs += BK
            b_ptrs += BK * N
        _store(c_ptr, acc, tile // num_pid_n, tile % num_pid_n, M, N, BM, BN)


SHAPES = [(256, 512, 64), (200, 264, 328), (517, 389, 1000), (64, 48, 16)]
CONFIGS = [(128, 128, 64, 8, 3), (64, 64, 32, 4, 4), (128, 256, 64, 8, 2)]


def _operands(M, N, K):
    g = torch.Generator(device="cuda").manual_seed(M * 31 + N * 7 + K)
    a = torch.randn(M, K, device="cuda", generator=g).half()
    b = torch.randn(K, N, device="cuda", generator=g).half()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    return a, b, c, a.double() @ b.double()


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", ["descriptor", "descriptor-ws", "offsets", "increment"])
def test_flattened_persistent_matmul(kind, shape, config):
    M, N, K = shape
    BM, BN, BK, nw, ns = config
    if kind.startswith("descriptor") and K % 8:
        pytest.skip(f"a tensor descriptor needs 16-byte aligned rows; K = {K} fp16 elements is not (no shape here is)")
    a, b, c, ref = _operands(M, N, K)
    programs = 5  # fewer programs than tiles: each runs several, some one more than others
    meta = dict(BM=BM, BN=BN, BK=BK, NUM_SMS=programs, num_warps=nw, num_stages=ns)
    if kind.startswith("descriptor"):
        bt = b.t().contiguous()
        ws = kind.endswith("ws")
        ck = persistent_desc_matmul[(programs,)](a, bt, c, M, N, K, FLATTEN=not ws, WS=ws, **meta)
    elif kind == "offsets":
        bt = b.t().contiguous()  # B stored [N, K], read k-contiguous like 09's pointer kernel
        ck = offsets_kernel[(programs,)](a, bt, c, M, N, K, a.stride(0), bt.stride(0), **meta)
    else:
        ck = increment_kernel[(programs,)](a, b, c, M, N, K, **meta)
    torch.testing.assert_close(c.double(), ref, atol=1e-2 * math.sqrt(K), rtol=1e-2)
    assert ck.asm["gir"].count("for %") >= 2  # the flattened loop and, for empty K loops, the nest
