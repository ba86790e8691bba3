"""The tensor-core kernels of test_tensor_cores.py compiled for sm_80 and sm_90 without a GPU: the instructions
each path must use (ldmatrix + mma.sync + cp.async on sm_80; wgmma on sm_90 where rows fill warpgroups), ptxas
accepting the PTX, and the benchmark configurations compiling without register spills."""
import re
import shutil

import numpy as np
import pytest

import tilec
import tilec.language as tl

from gpu_helpers import compile_jit

import tc_kernels as T

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas for the resource report")


def _mm(arch, cfg, dtype="fp16", epilogue=False, trans=""):
    """Compile the matmul from a signature (as a launch with 16-byte aligned arrays and unit strides would)."""
    BM, BN, BK, nw, ns = cfg
    sa = ("i32:1", "i32:16") if "A" in trans else ("i32:16", "i32:1")
    sb = ("i32:1", "i32:16") if "B" in trans else ("i32:16", "i32:1")
    sig = ",".join([f"*{dtype}:16", f"*{dtype}:16", "*fp32:16", "*fp32:16", "i32:16", "i32:16", "i32:16",
                    *sa, *sb, "i32:16", "i32:1"])
    src = tilec.ASTSource(T.matmul_kernel, sig, constexprs=dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=4,
                                                                PREC="ieee", EPILOGUE=epilogue))
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": nw, "num_stages": ns})


def _attn(arch, D, nw, causal=False):
    q = np.zeros((2, 3, 256, D), np.float16)
    k = compile_jit(T.attn_fwd_kernel, (q, q, q, q, 0.125, 256 * D, D, 256), arch,
                    {"num_warps": nw, "num_stages": 3}, HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64, CAUSAL=causal)
    return k[0] if isinstance(k, tuple) else k


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("config", sorted(T.CONFIGS))
def test_matmul_paths(config, arch):
    cfg = T.CONFIGS[config]
    ptx = _mm(arch, cfg).asm["ptx"]
    BM, BN, BK, nw, ns = cfg
    warpgroups = arch >= 90 and nw % 4 == 0 and BM % (16 * nw) == 0
    assert ("wgmma.mma_async" in ptx) == warpgroups
    if not warpgroups:
        assert "mma.sync.aligned.m16n8k16" in ptx
    if ns > 1:
        assert warpgroups or "ldmatrix.sync.aligned" in ptx
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx


VARIANTS = [("128x128x64 w8 s3", "fp16", t) for t in ("A", "B", "AB")] + [
    ("128x128x64 w8 s3", "bf16", ""), ("64x64x32 w4 s2", "bf16", "AB"), ("64x64x32 w4 s2", "fp32", "")]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("config,dtype,trans", VARIANTS)
def test_matmul_variants_compile(config, dtype, trans, arch):
    """Transposed operands (the other dimension contiguous: ldmatrix.trans / MN-major descriptors), bf16, and
    f32 inputs (ieee precision: the FMA path)."""
    ptx = _mm(arch, T.CONFIGS[config], dtype, trans=trans).asm["ptx"]
    assert ("mma" in ptx) == (dtype != "fp32")


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
def test_benchmark_matmul_has_no_spills(arch):
    md = _mm(arch, (128, 128, 64, 8, 3)).metadata
    assert md["spill_stores"] == 0 and md["spill_loads"] == 0, md.get("ptxas_log")


@needs_ptxas
@pytest.mark.parametrize("D,nw", [(64, 4), (128, 8)])
def test_attention_on_warpgroups(D, nw):
    k = _attn(90, D, nw)
    ptx, md = k.asm["ptx"], k.metadata
    assert ptx.count("wgmma.mma_async") >= 2 and "cp.async.cg" in ptx
    assert md["spill_stores"] == 0, md.get("ptxas_log")
    assert "C7519" not in md["ptxas_log"] and "C7517" not in md["ptxas_log"]  # no serialised warpgroups


def test_single_dot_and_epilogue_compile():
    a = np.zeros((256, 64), np.float16)
    c = np.zeros((256, 256), np.float32)
    for arch in (80, 90):
        k = compile_jit(T.single_dot_kernel, (a, a, c, 256, 256, 64), arch, {"num_warps": 8}, BM=128, BN=128,
                        BK=64)
        k = k[0] if isinstance(k, tuple) else k
        assert ("wgmma.mma_async" in k.asm["ptx"]) == (arch == 90)
        _mm(arch, (128, 128, 64, 8, 3), epilogue=True)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("trans_b", [False, True])
def test_int8_dots_use_tensor_cores(arch, trans_b):
    sb = ("i32:1", "i32:16") if trans_b else ("i32:16", "i32:1")
    sig = ",".join(["*i8:16", "*i8:16", "*i32:16", "i32:16", "i32:16", "i32:16", "i32:16", "i32:1", *sb])
    src = tilec.ASTSource(T.int8_matmul_kernel, sig, constexprs=dict(BM=128, BN=128, BK=64))
    k = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 8, "num_stages": 3})
    ptx = k.asm["ptx"]
    assert "cp.async.cg" in ptx  # A (k-contiguous) is copied asynchronously
    if arch >= 90:  # the s8 warpgroup instructions, both operands k-contiguous in shared memory
        assert "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8" in ptx and "mma.sync" not in ptx
        # B stored n-contiguous is transposed on its way through registers (loaded an iteration ahead); its
        # [64, 128] tile shares one layout with A's [128, 64], whose lanes a four-k layout would leave holding
        # copies, so here it is stored a byte at a time (tiles alike in shape go as words: test_transposed_bytes)
        assert trans_b or ("ld.global.v4.b32" in ptx and "st.shared.b8" in ptx)
    else:
        assert "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32" in ptx
        assert ptx.count("ldmatrix") >= (12 if trans_b else 4)  # k-contiguous operands load as 8x8 matrices


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("dtype", ["fp8e5", "fp8e4nv"])
def test_fp8_dots_take_the_tensor_cores(dtype, arch):
    """fp8 dots take the fp8 warpgroup instructions on sm_90 (k32, e4m3/e5m2 named in the instruction) and are
    widened to f16 (exactly, after the shared-memory read) on the Ampere path: seconds to compile, where the
    FMA path of a 128x128x64 tile took minutes."""
    import time
    t0 = time.perf_counter()
    ptx = _mm(arch, T.CONFIGS["128x128x64 w8 s3"], dtype=dtype).asm["ptx"]
    assert time.perf_counter() - t0 < 60
    kind = "e5m2" if dtype == "fp8e5" else "e4m3"
    if arch >= 90:
        assert f"wgmma.mma_async.sync.aligned.m64n128k32.f32.{kind}.{kind}" in ptx
    else:
        assert "mma.sync.aligned.m16n8k16" in ptx


@tilec.jit
def f32_dot(x, y, z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, P: tl.constexpr):
    a = tl.load(x + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(y + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(z + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b, input_precision=P))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("shape", [(16, 16, 16), (64, 64, 32)])
def test_tf32x3_is_three_tf32_products(arch, shape):
    """tf32x3: operands split into a tf32 part and the remainder (``and`` with 0xffffe000, ``sub``), three times
    as many tf32 tensor-core instructions as tf32, none on the FMA path."""
    M, N, K = shape
    sig = "*fp32:16,*fp32:16,*fp32:16"
    ptx = {p: tilec.compile(tilec.ASTSource(f32_dot, sig, constexprs=dict(M=M, N=N, K=K, P=p)),
                            tilec.Target("cuda", arch), {"num_warps": 4}).asm["ptx"] for p in ("tf32", "tf32x3")}
    count = {p: len(re.findall(r"(?:mma\.sync|wgmma\.mma_async)\.\S*tf32", t)) for p, t in ptx.items()}
    assert count["tf32"] > 0 and count["tf32x3"] == 3 * count["tf32"], count
    assert "and.b32" in ptx["tf32x3"] and "fma.rn.f32" not in ptx["tf32x3"]


def test_wide_offsets_become_shifts():
    """Widening multiplies by a power of two (element to byte offsets) are written as a widening convert and a
    shift; other multiplies stay."""
    from tilec.targets.cuda.ptx import wide_offsets_as_shifts
    ptx = ("\tmul.wide.s32 \t%rd7, %r12, 2;\n\tmul.wide.u32 \t%rd8, %r3, 16;\n\tmul.wide.s32 \t%rd9, %r4, 6;\n"
           "\tmad.wide.s32 \t%rd10, %r5, 2, %rd1;\n")
    assert wide_offsets_as_shifts(ptx) == (
        "\t{ .reg .b64 \t%wide0; cvt.s64.s32 \t%wide0, %r12; shl.b64 \t%rd7, %wide0, 1; }\n"
        "\t{ .reg .b64 \t%wide1; cvt.u64.u32 \t%wide1, %r3; shl.b64 \t%rd8, %wide1, 4; }\n"
        "\tmul.wide.s32 \t%rd9, %r4, 6;\n\tmad.wide.s32 \t%rd10, %r5, 2, %rd1;\n")


@pytest.mark.parametrize("trans", ["", "A", "B"])
def test_matmul_offsets_are_not_widening_multiplies(trans):
    """ptxas turns a widening multiply feeding a loop's address add into one IMAD.WIDE per address per
    iteration, which stalled the warps at dispatch (a k-major A ran at 0.89x of Triton on an H200)."""
    ptx = _mm(90, (128, 128, 64, 8, 3), trans=trans).asm["ptx"]
    assert not re.search(r"mul\.wide\.[su]32 \t%rd\d+, %r\d+, (2|4|8|16);", ptx)
    assert "shl.b64" in ptx


@pytest.mark.parametrize("trans", ["A", "B", "AB"])
def test_operands_stored_the_other_way_keep_their_pointers(trans):
    """An operand read k-contiguous (B given [N, K]) or m-contiguous (A given [K, M]) through its strides: its
    pointer tile is carried in its own load's layout, converted once before the loop, never through shared memory
    at every iteration (a 64x128 tile of pointers is 64 KB); the copies stay 16 bytes wide."""
    k = _mm(90, (128, 128, 64, 8, 3), trans=trans)
    gir = str(k.asm["gir"])
    assert not [ln for ln in gir.splitlines() if "convert_layout" in ln and "xptr<" in ln and "smem_offset" in ln]
    assert k.metadata["shared"] <= 3 * (128 * 64 + 64 * 128) * 2
    assert "cp.async.cg.shared.global" in k.asm["ptx"] and ", 16, " in k.asm["ptx"]


@tilec.jit
def subtiled_epilogue(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A dot whose accumulator is split in two column halves for the store (Triton's persistent-matmul
    tutorial's ``EPILOGUE_SUBTILE``: reshape, permute, split)."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    c0, c1 = tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))
    rh = tl.arange(0, BN // 2)
    tl.store(c_ptr + rm[:, None] * BN + rh[None, :], c0.to(tl.float16))
    tl.store(c_ptr + rm[:, None] * BN + BN // 2 + rh[None, :], c1.to(tl.float16))


@needs_ptxas
def test_a_split_accumulator_stays_in_registers():
    """The reshape and the permute keep every element in its thread (the permute takes its source's layout with
    the dimensions renamed), so the split picks registers: no trip through shared memory, no spills (it spilled
    20 KB per thread and took 51 s to compile when the permute converted to a blocked layout first)."""
    k = tilec.compile(tilec.ASTSource(subtiled_epilogue, "*fp16,*fp16,*fp16", constexprs=dict(BM=128, BN=128, BK=64)),
                      tilec.Target("cuda", 90, 32), {"num_warps": 8})
    gir = str(k.asm["gir"])
    assert not [ln for ln in gir.splitlines() if " trans " in ln and "smem_offset" in ln]
    assert k.metadata["spill_stores"] == 0


@tilec.jit
def _scores_minus_invariant(q, k, v, do, m, dq_out, out, N, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """06's backward dq loop in small: scores minus a row vector loaded before the loop, a store in between (so the
    load cannot simply be repeated inside the loop), times a second dot's result, into a third dot."""
    rows = tl.arange(0, BM)
    d = tl.arange(0, D)
    qt = tl.load(q + rows[:, None] * D + d[None, :])
    dot_ = tl.load(do + rows[:, None] * D + d[None, :])
    mi = tl.load(m + rows)[:, None]
    tl.store(out + rows, rows.to(tl.float32))
    dq = tl.zeros([BM, D], tl.float32)
    kt_ptrs = k + d[:, None] + tl.arange(0, BN)[None, :] * D
    vt_ptrs = v + d[:, None] + tl.arange(0, BN)[None, :] * D
    for start in range(0, N, BN):
        kt = tl.load(kt_ptrs)
        vt = tl.load(vt_ptrs)
        p = tl.math.exp2(tl.dot(qt, kt) - mi)
        dp = tl.dot(dot_, vt)
        ds = (p * dp).to(tl.float16)
        dq += tl.dot(ds, tl.trans(kt))
        kt_ptrs += BN * D
        vt_ptrs += BN * D
    tl.store(dq_out + rows[:, None] * D + d[None, :], dq)


@pytest.mark.parametrize("arch", [80, 90])
def test_a_loop_invariant_operand_is_converted_once_before_the_loop(arch):
    """The loop's math runs in the dot's layout; the invariant row vector is what converts, once, outside."""
    src = tilec.ASTSource(_scores_minus_invariant, "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,*fp32:16,i32:16",
                          constexprs=dict(D=64, BM=128, BN=32))
    k = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 4, "num_stages": 3})
    lines = str(k.asm["gir"]).splitlines()
    loop = next(i for i, ln in enumerate(lines) if " = for " in ln)
    body = []
    for ln in lines[loop + 1:]:
        if ln.strip() == "}":
            break
        body.append(ln)
    moved = [ln for ln in body if "convert_layout" in ln and "xf32" in ln]
    assert not moved, moved
