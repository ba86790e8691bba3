"""8-bit operands and fp8 casts in the PTX for sm_90 and sm_80, without a GPU (test_chained_byte_dots_gpu.py and
test_fp8_convert_gpu.py run the same kernels on one): an fp8 or int8 accumulator handed to the next dot moves by
lane shuffles, not through shared memory; a tile's f32 -> fp8 cast converts two values per instruction, with no
fix-ups (the instruction's saturation is the one encoding's). ptxas accepts every kernel."""
import re

import pytest

import tilec

from test_chained_byte_dots_gpu import chained
from test_fp8_convert_gpu import to_fp8

FP8_NAMES = {0: "fp8e5", 1: "fp8e4nv"}


def _chained(kind, arch, BM=128, BN=64, D=64, nw=4):
    el = "i8" if kind == 2 else "fp16"
    v = "i8" if kind == 2 else FP8_NAMES[kind]
    out = "i32" if kind == 2 else "fp32"
    sig = f"*{el}:16,*{el}:16,*{v}:16,*{out}:16,i32"
    src = tilec.ASTSource(chained, sig, constexprs=dict(KIND=kind, BM=BM, BN=BN, D=D))
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": nw}).asm["ptx"]


def _between_dots(ptx):
    """The PTX between the two dots: the widest gap between consecutive matrix instructions."""
    lines = ptx.splitlines()
    at = [i for i, line in enumerate(lines) if re.search(r"wgmma\.mma_async|mma\.sync\.aligned", line)]
    a, b = max(zip(at, at[1:]), key=lambda ab: ab[1] - ab[0])
    return "\n".join(lines[a:b + 1])


@pytest.mark.parametrize("kind,arch", [(0, 90), (1, 90), (2, 90), (2, 80)])
def test_an_8bit_accumulator_reaches_the_next_dot_by_shuffles(kind, arch):
    ptx = _chained(kind, arch)
    mid = _between_dots(ptx)
    # 128x64 over 4 warps: 16 words of A per thread, one shuffle each, and nothing through shared memory
    assert mid.count("shfl.sync.idx") == 16, mid.count("shfl.sync.idx")
    assert "st.shared" not in mid and "bar.sync" not in mid


@pytest.mark.parametrize("kind", [0, 1])
def test_fp8_accumulators_feed_the_fp8_instruction_from_registers(kind):
    ptx = _chained(kind, 90)
    fmt = "e5m2" if kind == 0 else "e4m3"
    second = [l for l in ptx.splitlines() if "wgmma.mma_async" in l][-1]
    assert f".f32.{fmt}.{fmt}" in second
    assert re.search(r"\}, \{%r\d+,%r\d+,%r\d+,%r\d+\}, %rd\d+", second), second  # A: four registers


def _cast_ptx(e5m2, block, nw=4):
    src = tilec.ASTSource(to_fp8, "*fp32:16,*u8:16,i32", constexprs=dict(E5M2=e5m2, BLOCK=block))
    return tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": nw}).asm["ptx"]


@pytest.mark.parametrize("e5m2", [True, False])
@pytest.mark.parametrize("block", [256, 4096])
def test_a_tiles_fp8_cast_converts_pairs(e5m2, block):
    ptx = _cast_ptx(e5m2, block)
    per_thread = block // 128
    assert ptx.count("cvt.rn.satfinite") == per_thread // 2
    assert "setp.nan" not in ptx  # the instruction's NaN code is the one encoding's
    # the instruction's saturation is the one encoding's: no fix-ups, no test of the values' magnitudes
    assert "max.f32" not in ptx and "0f47700000" not in ptx
