"""Warpgroup dots whose rows do not fill every warpgroup (a 64-row tile with 8 warps) split N instead: each
warpgroup computes its own contiguous block of columns with ``m64nN/2`` instructions, as Triton does, rather than
falling back to ``mma.sync``. The PTX is checked here (assembled by ptxas where it is on PATH); the results on a
GPU against torch."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.gpu.layouts import MmaLayout


@tilec.jit
def dot_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    m = pid_m * BM + tl.arange(0, BM)
    n = pid_n * BN + tl.arange(0, BN)
    kk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=c.dtype.element_ty)
    for k0 in range(0, K, BK):
        x = tl.load(a + m[:, None] * K + (k0 + kk)[None, :], mask=(m[:, None] < M) & ((k0 + kk)[None, :] < K),
                    other=0)
        y = tl.load(b + (k0 + kk)[:, None] * N + n[None, :], mask=((k0 + kk)[:, None] < K) & (n[None, :] < N),
                    other=0)
        acc += tl.dot(x, y, out_dtype=c.dtype.element_ty)
    tl.store(c + m[:, None] * N + n[None, :], acc, mask=(m[:, None] < M) & (n[None, :] < N))


CASES = [("fp16", "fp32", 64, 64, 64, 8), ("fp16", "fp32", 64, 128, 32, 8), ("bf16", "fp32", 64, 256, 32, 8),
         ("fp8e4nv", "fp32", 64, 64, 64, 8), ("i8", "i32", 64, 64, 64, 8), ("fp16", "fp32", 128, 64, 32, 16)]


def _compile(dt, acc, bm, bn, bk, nw, arch=90):
    sig = f"*{dt}:16,*{dt}:16,*{acc}:16,i32,i32,i32"
    src = tilec.ASTSource(dot_kernel, sig, constexprs=dict(BM=bm, BN=bn, BK=bk))
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": nw, "num_stages": 2})


@pytest.mark.parametrize("dt,acc,bm,bn,bk,nw", CASES)
def test_rows_short_of_the_warpgroups_split_columns(dt, acc, bm, bn, bk, nw):
    ck = _compile(dt, acc, bm, bn, bk, nw)
    wm = bm // 16
    wn = nw // wm
    n = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k", ck.asm["ptx"])
    assert n and {int(x) for x in n} == {min(bn // wn, 256)}
    assert f"#mma<wpc = [{wm}, {wn}], version = 3>" in ck.asm["gir"]
    assert "mma.sync" not in ck.asm["ptx"]
    if "cubin" in ck.asm:
        assert ck.metadata["spill_stores"] == 0


def test_column_blocks_are_contiguous_per_warpgroup():
    ll = MmaLayout((4, 2), 3).to_linear((64, 64))
    for warp in range(8):
        cols = {ll.coord(r, lane, warp)[1] for r in range(1 << len(ll.reg)) for lane in range(32)}
        lo = 32 * (warp // 4)
        assert cols == set(range(lo, lo + 32))
    assert MmaLayout((4, 2), 2).to_linear((64, 64)).coord(0, 0, 4)[1] == 8  # mma.sync interleaves 8 columns


@pytest.mark.gpu
@pytest.mark.parametrize("dt,acc,bm,bn,bk,nw", CASES)
def test_split_warpgroup_dots_match_torch(dt, acc, bm, bn, bk, nw):
    torch = pytest.importorskip("torch")
    tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8e4nv": torch.float8_e4m3fn, "i8": torch.int8}[dt]
    M, N, K = 150, 300, 200  # ragged: the masks matter
    g = torch.Generator(device="cuda").manual_seed(7)
    if dt == "i8":
        a = torch.randint(-100, 100, (M, K), device="cuda", generator=g, dtype=torch.int8)
        b = torch.randint(-100, 100, (K, N), device="cuda", generator=g, dtype=torch.int8)
        ref = a.cpu().numpy().astype(np.int64) @ b.cpu().numpy().astype(np.int64)
        c = torch.empty((M, N), device="cuda", dtype=torch.int32)
    else:
        a = torch.randn((M, K), device="cuda", generator=g).to(tdt)
        b = torch.randn((K, N), device="cuda", generator=g).to(tdt)
        ref = a.float().cpu().double().numpy() @ b.float().cpu().double().numpy()
        c = torch.empty((M, N), device="cuda", dtype=torch.float32)
    grid = (tilec.cdiv(M, bm), tilec.cdiv(N, bn))
    dot_kernel[grid](a, b, c, M, N, K, BM=bm, BN=bn, BK=bk, num_warps=nw, num_stages=2)
    out = c.cpu().numpy()
    if dt == "i8":
        np.testing.assert_array_equal(out, ref)
    else:
        np.testing.assert_allclose(out, ref, rtol=2e-2, atol=2e-2 * np.sqrt(K))
