"""f32 -> bf16 on NVIDIA: from sm_80 the conversion instruction (``targets/cuda/bf16_convert.py``), once per value
even when a cast is stored right away or a tile goes through shared memory; before it (and on every other target)
the integer rounding. Both give the same bits: to nearest even, infinities kept, overflow to infinity, subnormals
rounded, a NaN 0x7FC0 (the CPU keeps a NaN's sign and payload). A bf16 copied from memory to memory keeps its bits (NaN payloads too). The PTX tests run
anywhere (assembled with ptxas when it is on PATH); the device tests need a GPU (``-m gpu``)."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import HAVE_PTXAS


@tilec.jit
def to_bf16(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n)
    tl.store(out + o, v.to(tl.bfloat16).to(tl.uint16, bitcast=True), mask=o < n)


@tilec.jit
def store_bf16(x, out, n, BLOCK: tl.constexpr):
    """An f32 stored through a bf16 pointer: the store converts."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@tilec.jit
def copy_bf16(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


def bf16_bits(x):
    """Reference: f32 -> bf16 bits, to nearest even, a NaN 0x7FC0."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def inputs(n=5000, seed=7):
    rng = np.random.default_rng(seed)
    hi = rng.integers(0, 1 << 16, n, dtype=np.uint32) << 16
    special = np.array([0x8000, 0x7FFF, 0x8001, 0x18000, 0x28000, 0xFFFF, 0x1, 0x7F7F8000, 0x7F7FFFFF, 0x7F800000,
                        0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345, 0x7FFFFFFF, 0x0, 0x80000000,
                        0x00800000, 0x007FFFFF, 0x3F808000, 0x3F818000], np.uint32)
    low = np.concatenate([np.full(n // 2, 0x8000, np.uint32),  # ties
                          rng.integers(0, 1 << 16, n - n // 2, dtype=np.uint32)])
    return np.concatenate([special, hi | low]).view(np.float32)


@pytest.mark.parametrize("arch", [75, 80, 90])
def test_one_conversion_per_value(arch):
    """The cast and the store's conversion are one: a cast stored right away is converted once (one NaN test
    per value; before bits were remembered, two)."""
    k = tilec.compile(tilec.ASTSource(to_bf16, "*fp32,*u16,i32", {"BLOCK": 1024}), tilec.Target("cuda", arch, 32))
    ptx = k.asm["ptx"]
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"
    assert len(re.findall(r"setp\.nan\.f32", ptx)) == 1024 // (32 * 4)


@pytest.mark.skipif(not HAVE_PTXAS, reason="the serialisation note is ptxas's")
def test_bf16_matmul_keeps_its_warpgroup_dots_asynchronous():
    import spelling_kernels as S
    sig = "*bf16,*bf16,*bf16," + ",".join(["i32:16"] * 4 + ["i32:1", "i32:16", "i32:1", "i32:16", "i32:1"])
    src = tilec.ASTSource(S.mm_spelled, sig, dict(BM=128, BN=128, BK=64, TRANS_A=False, TRANS_B=False,
                                                  ACC=tl.float32))
    k = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 8, "num_stages": 3})
    assert "wgmma.mma_async" in k.asm["ptx"] and "wgmma_serialized" not in k.metadata, k.metadata.get("ptxas_log")


def test_the_reference_is_tilecs_everywhere():
    """The bits the device tests expect are the CPU backend's (the same kernel, numpy arrays), NaNs aside: the
    CPU keeps a NaN's sign and upper payload (quieted), the GPU stores 0x7FC0."""
    xs = inputs(997)
    out = np.zeros(len(xs), np.uint16)
    to_bf16[(tilec.cdiv(len(xs), 256),)](xs, out, len(xs), BLOCK=256)
    nan = np.isnan(xs)
    np.testing.assert_array_equal(out[~nan], bf16_bits(xs)[~nan])
    assert nan.sum() >= 6 and np.all(((out[nan] & 0x7F80) == 0x7F80) & ((out[nan] & 0x7F) != 0))  # NaNs


@pytest.mark.gpu
@pytest.mark.parametrize("arch", [None, 80])
@pytest.mark.parametrize("kernel", [to_bf16, store_bf16], ids=["cast", "store"])
def test_device_bf16_bits_are_round_to_nearest_even(kernel, arch, monkeypatch):
    import torch
    if arch is not None:
        monkeypatch.setenv("TILEC_CUDA_ARCH", str(arch))
    xs = inputs()
    x = torch.from_numpy(xs).cuda()
    out = torch.zeros(len(xs), dtype=torch.int16 if kernel is to_bf16 else torch.bfloat16, device="cuda")
    kernel[(tilec.cdiv(len(xs), 512),)](x, out, len(xs), BLOCK=512)
    got, want = out.view(torch.int16).cpu().numpy().view(np.uint16), bf16_bits(xs)
    bad = np.nonzero(got != want)[0]
    assert not len(bad), [(hex(int(xs.view(np.uint32)[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:8]]


@pytest.mark.gpu
def test_device_bf16_copy_keeps_every_bit_pattern():
    import torch
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = torch.from_numpy(bits.view(np.int16)).cuda().view(torch.bfloat16)
    out = torch.empty_like(x)
    copy_bf16[(tilec.cdiv(len(bits), 1024),)](x, out, len(bits), BLOCK=1024)
    np.testing.assert_array_equal(out.view(torch.int16).cpu().numpy().view(np.uint16), bits)
