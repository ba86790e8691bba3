"""A grouped matmul whose pointers and leading dimensions are read from device arrays (Triton's grouped-GEMM
spelling) on the GPU: problems whose pointers and strides are multiples of 16 run the aligned version
(16-byte asynchronous copies), the others the loop as written; every problem of one launch checked against
float64, with both kinds mixed in one launch."""
import math

import pytest

import tilec
import tilec.language as tl

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


@tilec.jit
def grouped(a_ptrs, b_ptrs, c_ptrs, dims, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(2)
    M, N, K = tl.load(dims + 6 * g), tl.load(dims + 6 * g + 1), tl.load(dims + 6 * g + 2)
    lda, ldb, ldc = tl.load(dims + 6 * g + 3), tl.load(dims + 6 * g + 4), tl.load(dims + 6 * g + 5)
    a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
    b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
    c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + (rm % M)[:, None] * lda + rk[None, :]
    b = b_ptr + rk[:, None] * ldb + (rn % N)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        a += BK
        b += BK * ldb
    tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _problem(M, N, K, lda, ldb, shift, g):
    """Operands laid out with leading dimensions ``lda``/``ldb``, starting ``shift`` elements into their
    allocation (a shift of 1 makes the pointer 2-byte aligned only)."""
    a = torch.randn(M * lda + shift, device="cuda", generator=g).half()[shift:].as_strided((M, K), (lda, 1))
    b = torch.randn(K * ldb + shift, device="cuda", generator=g).half()[shift:].as_strided((K, N), (ldb, 1))
    c = torch.full((M, N), float("nan"), device="cuda")
    return a, b, c


@pytest.mark.parametrize("config", [(64, 64, 32, 4, 3), (128, 128, 64, 8, 3)])
def test_aligned_and_unaligned_problems_in_one_launch(config):
    BM, BN, BK, nw, ns = config
    g = torch.Generator(device="cuda").manual_seed(BM)
    specs = [(256, 192, 320, 320, 192, 0), (200, 136, 328, 336, 144, 0),   # aligned
             (130, 72, 200, 200, 72, 0),                                     # strides multiples of 8, not 16
             (96, 80, 160, 160, 80, 1)]                                      # pointers 2 bytes off
    probs = [_problem(*s, g) for s in specs]
    ptrs = [torch.tensor([p[i].data_ptr() for p in probs], device="cuda", dtype=torch.int64) for i in range(3)]
    dims = torch.tensor([v for (M, N, K, lda, ldb, _), p in zip(specs, probs) for v in (M, N, K, lda, ldb, N)],
                        device="cuda", dtype=torch.int32)
    grid = (max(s[0] for s in specs) // BM + 1, max(s[1] for s in specs) // BN + 1, len(specs))
    ck = grouped[grid](*ptrs, dims, BM=BM, BN=BN, BK=BK, num_warps=nw, num_stages=ns)
    for (M, N, K, *_), (a, b, c) in zip(specs, probs):
        torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-2 * math.sqrt(K), rtol=1e-2)
    assert ck.asm["gir"].count("for %") == 2
