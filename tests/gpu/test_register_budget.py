"""Register budget on sm_8x: tensor-core kernels state one resident block per SM (.minnctapersm 1), else ptxas caps
them at 32 registers and spills kilobytes; memory-bound kernels keep ptxas's own choice; sm_90 is unchanged."""
import shutil

import pytest

import tilec
import tilec.language as tl


@tilec.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@tilec.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def _mm(arch):
    src = tilec.ASTSource(mm, signature="*fp16,*fp16,*fp16,i32", constexprs={"BM": 128, "BN": 128, "BK": 64})
    return tilec.compile(src, target=tilec.Target("cuda", arch, 32), options={"num_warps": 8, "num_stages": 3})


def test_min_blocks_only_for_tensor_core_kernels_before_sm90():
    assert ".minnctapersm 1" in _mm(80).asm["ptx"]
    assert ".minnctapersm" not in _mm(90).asm["ptx"]
    k = tilec.compile(tilec.ASTSource(add, signature="*fp32,*fp32,i32", constexprs={"BLOCK": 1024}),
                      target=tilec.Target("cuda", 80, 32))
    assert ".minnctapersm" not in k.asm["ptx"] and ".maxntid 128" in k.asm["ptx"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_sm80_matmul_is_not_capped_at_32_registers():
    md = _mm(80).metadata
    assert md["num_regs"] > 128, md.get("ptxas_log")
