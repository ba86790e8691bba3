"""Tensor descriptors on a CUDA device: ``tl.make_tensor_descriptor`` loads feeding dots in a loop go through
the tensor copy engine on sm_90 (and through the pointer path on sm_80, or with ``TILEC_CUDA_ARCH=80``),
checked against float64 references over ragged shapes, dtypes, tile shapes and pipeline depths; the launch's
descriptor scratch from tilec's own buffers and from ``tilec.set_allocator``, descriptors written by the launch
(leaves that are parameters) and by each program (computed in the kernel)."""
import math

import pytest

import tilec

from tc_kernels import desc_attn_kernel, desc_matmul_kernel, host_desc_matmul_kernel

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def _desc_matmul(a, b, config, desc_store=False):
    BM, BN, BK, nw, ns = config
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
    grid = ((M + BM - 1) // BM, (N + BN - 1) // BN)
    return desc_matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=BM,
                                    BLOCK_N=BN, BLOCK_K=BK, DESC_STORE=desc_store, num_warps=nw, num_stages=ns), c


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("config", [(128, 128, 64, 8, 3), (64, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                                    (128, 64, 32, 4, 2), (64, 64, 128, 4, 3)])
@pytest.mark.parametrize("shape", [(256, 256, 512, 16), (200, 136, 328, 16), (77, 301, 1000, 16),
                                   (200, 136, 328, 8)])
def test_descriptor_matmul(dtype, config, shape):
    """Row strides padded to ``pad`` elements: with 16 the specialisation proves the 16-byte aligned strides the
    copy engine needs; with 8 (328 and 136) it cannot, and those operands take the pointer path (as do operands
    whose rows, K or N elements, are not a multiple of 16)."""
    M, N, K, pad = shape
    g = torch.Generator(device="cuda").manual_seed(M * 7 + N)
    dt = getattr(torch, dtype)
    a = torch.randn(M, (K + pad - 1) // pad * pad, device="cuda", generator=g).to(dt)[:, :K]
    b = torch.randn(K, (N + pad - 1) // pad * pad, device="cuda", generator=g).to(dt)[:, :N]
    ck, c = _desc_matmul(a, b, config)
    ref = a.double() @ b.double()
    torch.testing.assert_close(c.double(), ref, atol=1e-2 * math.sqrt(K), rtol=1e-2)
    if ck.metadata["arch"] >= 90:  # strides and row lengths the specialisation proves 16-byte aligned
        copied = sum(s % 16 == 0 and n % 16 == 0 for s, n in ((a.stride(0), K), (b.stride(0), N)))
        # the descriptors' leaves are parameters: the launch writes them once (none per program)
        assert len(ck.metadata["launch_tensormaps"]) == copied and ck.metadata["global_scratch_size"] == 0
        assert ("cp.async.bulk.tensor" in ck.asm["ptx"]) == bool(copied)


@pytest.mark.parametrize("config", [(128, 128, 64, 8, 3), (64, 64, 32, 4, 2)])
@pytest.mark.parametrize("shape", [(256, 256, 256), (200, 144, 320), (77, 301, 1000)])
def test_descriptor_store_epilogue(config, shape):
    """The result leaves through a descriptor: on sm_90 staged in shared memory and copied out by the copy
    engine, which drops the out-of-bounds part of edge tiles (the canary columns beyond N must survive)."""
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(K)
    a = torch.randn(M, (K + 15) // 16 * 16, device="cuda", generator=g).half()[:, :K]
    b = torch.randn(K, (N + 15) // 16 * 16, device="cuda", generator=g).half()[:, :N]
    BM, BN, BK, nw, ns = config
    Np = (N + 15) // 16 * 16 + 16
    c_full = torch.full((M, Np), -7.0, device="cuda")
    c = c_full[:, :N]
    ck = desc_matmul_kernel[((M + BM - 1) // BM, (N + BN - 1) // BN)](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
        DESC_STORE=True, num_warps=nw, num_stages=ns)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-2 * math.sqrt(K), rtol=1e-2)
    assert bool((c_full[:, N:] == -7.0).all())
    if ck.metadata["arch"] >= 90:  # only rows of whole 16-byte chunks leave by the copy engine
        assert ("cp.async.bulk.tensor.2d.global.shared::cta" in ck.asm["ptx"]) == (N % 16 == 0)


def test_descriptor_matmul_fp32_tf32():
    M, N, K = 130, 96, 200
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(M, K, device="cuda", generator=g)
    b = torch.randn(K, N, device="cuda", generator=g)
    _, c = _desc_matmul(a, b, (64, 64, 32, 4, 3))
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=5e-2 * math.sqrt(K), rtol=1e-2)


def test_set_allocator_provides_the_scratch():
    calls = []

    def alloc(size, alignment, stream):
        calls.append((size, alignment))
        return torch.empty(size, dtype=torch.int8, device="cuda")
    M = N = K = 192
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(K, N, device="cuda").half()
    tilec.set_allocator(alloc)
    try:
        ck, c = _desc_matmul(a, b, (64, 64, 64, 4, 3))
    finally:
        tilec.set_allocator(None)
    torch.testing.assert_close(c, (a.float() @ b.float()), atol=0.1, rtol=1e-2)
    # the descriptors' leaves are parameters: the launch writes them in its own buffer and the programs need no
    # scratch, so the allocator is not asked (as Triton asks it only for descriptors made in the kernel)
    assert ck.metadata["arch"] < 90 or (ck.metadata["launch_tensormaps"] and calls == [])
    calls.clear()
    c.fill_(float("nan"))
    tilec.set_allocator(alloc)
    try:  # A's shape computed in the kernel: each program writes A's descriptor, in the allocator's memory
        ck = desc_matmul_kernel[(3, 3)](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=64,
                                        BLOCK_N=64, BLOCK_K=64, KERNEL_SHAPE=True, num_warps=4, num_stages=3)
    finally:
        tilec.set_allocator(None)
    torch.testing.assert_close(c, (a.float() @ b.float()), atol=0.1, rtol=1e-2)
    if ck.metadata["global_scratch_size"]:
        header = 128 * len(ck.metadata["launch_tensormaps"])  # B's, then A's per program
        assert calls == [(header + ck.metadata["global_scratch_size"] * 9, 128)]  # 3 x 3 programs
    with pytest.raises(TypeError, match="callable"):
        tilec.set_allocator(42)


@pytest.mark.parametrize("D,nw", [(64, 4), (128, 8)])
@pytest.mark.parametrize("S", [256, 333])
def test_descriptor_attention(D, nw, S):
    Z_H = 3
    g = torch.Generator(device="cuda").manual_seed(S + D)
    q, k, v = (torch.randn(Z_H, S, D, device="cuda", generator=g).half() for _ in range(3))
    o = torch.empty_like(q)
    grid = ((S + 127) // 128, Z_H)
    desc_attn_kernel[grid](q, k, v, o, 1.0 / math.sqrt(D), Z_H, S, HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64,
                           num_warps=nw, num_stages=3)
    ref = torch.softmax((q.double() @ k.double().transpose(1, 2)) / math.sqrt(D), dim=-1) @ v.double()
    torch.testing.assert_close(o.double(), ref, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(256, 192, 320), (200, 136, 328), (77, 304, 1000)])
def test_host_descriptor_matmul(dtype, shape):
    """``tilec.TensorDescriptor`` arguments (Triton's host descriptors): correct on ragged shapes; on sm_90 the
    loads whose rows the specialisation proves 16-byte aligned go by the copy engine."""
    M, N, K = shape
    g = torch.Generator(device="cuda").manual_seed(M + N + K)
    dt = getattr(torch, dtype)
    a = torch.randn(M, K, device="cuda", generator=g).to(dt)
    b = torch.randn(K, N, device="cuda", generator=g).to(dt)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
    BM, BN, BK = 128, 128, 64
    descs = [tilec.TensorDescriptor.from_tensor(a, [BM, BK]), tilec.TensorDescriptor.from_tensor(b, [BK, BN]),
             tilec.TensorDescriptor.from_tensor(c, [BM, BN])]
    ck = host_desc_matmul_kernel[((M + BM - 1) // BM, (N + BN - 1) // BN)](*descs, K, BLOCK_M=BM, BLOCK_N=BN,
                                                                           BLOCK_K=BK, num_warps=8, num_stages=3)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=2e-2 * math.sqrt(K), rtol=2e-2)
    if ck.metadata["arch"] >= 90 and K % 16 == 0 and N % 16 == 0:
        assert "cp.async.bulk.tensor" in ck.asm["ptx"]


@pytest.mark.parametrize("kernel_shape", [False, True, "product"])
def test_relaunches_with_other_tensors_use_their_own_descriptors(kernel_shape):
    """The launch encodes its descriptors from each launch's arguments (tilec's scratch buffer is reused, so a
    stale header would read the previous tensors); with A's shape computed in the kernel, A's descriptor is the
    programs' and B's the launch's; with A's rows arithmetic of parameters, the launch computes them too."""
    for seed, (M, N, K) in enumerate([(256, 192, 320), (128, 128, 128), (256, 192, 320), (200, 144, 256)]):
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.randn(M, K, device="cuda", generator=g).half()
        b = torch.randn(K, N, device="cuda", generator=g).half()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
        ck = desc_matmul_kernel[((M + 63) // 64, (N + 63) // 64)](
            a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=64, BLOCK_N=64, BLOCK_K=64,
            KERNEL_SHAPE=kernel_shape, num_warps=4, num_stages=3)
        torch.testing.assert_close(c, a.float() @ b.float(), atol=0.1, rtol=1e-2)
        if ck.metadata["arch"] >= 90:
            assert len(ck.metadata["launch_tensormaps"]) == (1 if kernel_shape is True else 2)
