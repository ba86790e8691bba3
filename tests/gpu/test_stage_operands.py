"""The operand model without a GPU: every spelling of a tensor-core operand reaches shared memory as a value
(``local_alloc`` of its producer, transposes as free ``local_trans`` views), the software pipeliner turns those
loads into rings, and a transposed spelling compiles to the same loop as the pre-transposed one. Every PTX is
assembled by ptxas where it is on PATH (``compile_jit``)."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
from tilec.gpu.layouts import shared_for_operand
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir

import spelling_kernels as S


def _sig(dt, n_int, acc="fp32"):
    return ",".join([f"*{dt}:16", f"*{dt}:16", f"*{acc}:16"] + ["i32:16"] * n_int)


def _mm(arch, trans_a=False, trans_b=False, dt="fp16", acc_dt="fp32", bk=64, nw=8, ns=3, target="cuda", ws=32):
    # strides: the unit one of each operand specialised as 1 (as a contiguous tensor gives), the rest by 16
    sig = [f"*{dt}:16", f"*{dt}:16", f"*{acc_dt}:16", "i32:16", "i32:16", "i32:16"]
    sig += ["i32:1", "i32:16"] if trans_a else ["i32:16", "i32:1"]      # stride_am, stride_ak
    sig += ["i32:1", "i32:16"] if trans_b else ["i32:16", "i32:1"]      # stride_bk, stride_bn
    sig += ["i32:16", "i32:1"]
    acc = {"fp32": tilec.language.float32, "i32": tilec.language.int32}[acc_dt]
    src = tilec.ASTSource(S.mm_spelled, ",".join(sig), constexprs=dict(BM=128, BN=128, BK=bk, TRANS_A=trans_a,
                                                                       TRANS_B=trans_b, ACC=acc))
    return tilec.compile(src, tilec.Target(target, arch, ws), {"num_warps": nw, "num_stages": ns})


MOVING = ("async_wait", "barrier", "async_copy", "async_commit", "tma_copy", "mbarrier_wait", "local_index",
          "local_load", "local_store", "dot", "warp_group_dot", "warp_group_dot_wait", "convert_layout", "trans",
          "load", "fence_async_shared")


def _loop_ops(gir):
    """What moves data in the innermost loop body holding a dot (address arithmetic and views left out)."""
    m = parse_module(gir)
    loops = [op for op in m.walk() if op.name == "for" and
             any(o.name in ("dot", "warp_group_dot") for o in op.body.ops)]
    return [o.name for o in loops[-1].body.ops if o.name in MOVING]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("trans_a,trans_b", [(False, True), (True, False), (True, True)])
def test_transposed_spellings_compile_to_the_pre_transposed_loop(arch, trans_a, trans_b):
    """``x @ W.T`` and ``tl.trans(a)`` stage the loaded tile as it is stored and read a transposed view: no
    conversion, no register transpose and no shared-memory shuffle left in the loop."""
    plain, spelled = _mm(arch), _mm(arch, trans_a, trans_b)
    gir = spelled.asm["gir"]
    assert "local_trans" in gir and " trans " not in gir
    ops = _loop_ops(gir)
    assert ops == _loop_ops(plain.asm["gir"]) and "convert_layout" not in ops and "trans" not in ops
    assert "convert_layout" not in "\n".join(ln for ln in gir.splitlines() if "local_load" in ln)
    if "cubin" in spelled.asm:
        assert spelled.metadata["spill_stores"] == 0


def test_warpgroup_operands_transposed_in_the_descriptor():
    """On sm_90 the warpgroup instruction reads the view: a k-contiguous B for x @ W.T (no transpose flag), an
    mn-contiguous A for trans(A)."""
    ptx = _mm(90, trans_b=True).asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    ptx_a = _mm(90, trans_a=True).asm["ptx"]
    assert ptx_a.count("wgmma.mma_async") == ptx.count("wgmma.mma_async")


@pytest.mark.parametrize("trans", [1, 2])
def test_attention_with_k_transposed_in_the_kernel(trans):
    sig = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,fp32,i32:16,i32:16,i32"
    base = dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64)
    opts = {"num_warps": 4, "num_stages": 3}
    pre = tilec.compile(tilec.ASTSource(S.attn_kt_kernel, sig, constexprs=dict(base, TRANS=0)),
                        tilec.Target("cuda", 90, 32), opts)
    kt = tilec.compile(tilec.ASTSource(S.attn_kt_kernel, sig, constexprs=dict(base, TRANS=trans)),
                       tilec.Target("cuda", 90, 32), opts)
    assert _loop_ops(kt.asm["gir"]) == _loop_ops(pre.asm["gir"])
    if "cubin" in kt.asm:
        assert kt.metadata["num_regs"] <= pre.metadata["num_regs"] + 8 and kt.metadata["spill_stores"] == 0


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("dt,acc", [("fp8e4nv", "fp32"), ("fp8e5", "fp32"), ("i8", "i32")])
def test_8bit_operands_on_warpgroup_units(dt, acc, trans_b):
    """8-bit operands are read k-contiguous by the warpgroup units: x @ W.T as stored (asynchronous copies),
    A @ B (n-contiguous B) transposed on its way through registers, loaded an iteration ahead as bits."""
    ck = _mm(90, trans_b=trans_b, dt=dt, acc_dt=acc, bk=128)
    ptx, gir = ck.asm["ptx"], ck.asm["gir"]
    kind = {"fp8e4nv": "f32.e4m3.e4m3", "fp8e5": "f32.e5m2.e5m2", "i8": "s32.s8.s8"}[dt]
    assert f"wgmma.mma_async.sync.aligned.m64n128k32.{kind}" in ptx
    if trans_b:
        assert gir.count("async_copy") >= 4 and "local_store" not in gir
    else:  # B: a ring written by local_store from a carried tile of integer bits
        assert "local_store" in gir and "tile<64x128xi8" in gir or "tile<128x128xi8" in gir
    if "cubin" in ck.asm:
        assert ck.metadata["spill_stores"] == 0


def test_batched_dots_take_the_tensor_cores_and_rings():
    sig = "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16,i32:16"
    src = tilec.ASTSource(S.bmm_kernel, sig, constexprs=dict(BT=2, BM=64, BN=64, BK=32,
                                                             ACC=tilec.language.float32))
    for arch in (80, 90):
        ck = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 4, "num_stages": 3})
        assert "mma.sync.aligned.m16n8k16" in ck.asm["ptx"] and "ldmatrix" in ck.asm["ptx"]
        assert "smem<3x2x64x32xf16" in ck.asm["gir"] and "cp.async" in ck.asm["ptx"]


def test_mfma_operands_pipelined_through_registers_within_the_lds():
    """AMD has no asynchronous copies: the same rings are filled from loads issued an iteration ahead, and the
    stages fit the 64 KB of LDS (with what the loop also keeps)."""
    ck = _mm("gfx942", target="hip", ws=64, ns=3)
    gir = ck.asm["gir"]
    assert "async_copy" not in gir and gir.count("local_store") >= 2 and "smem<2x" in gir
    assert ck.metadata["shared"] <= 64 * 1024


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.sampled_from([(16, 64), (64, 64), (128, 64), (64, 128), (32, 16), (8, 256)]),
       st.sampled_from([1, 2, 4]), st.booleans())
def test_a_transposed_view_keeps_every_address(shape, eb, flip):
    """``SharedLayout.permuted``: the element (i, j) of a buffer and (j, i) of its transposed view are one byte
    address, for every swizzle ``shared_for_operand`` makes."""
    order = (0, 1) if flip else (1, 0)
    lay = shared_for_operand(shape, order, eb)
    view = lay.permuted((1, 0))
    vshape = shape[::-1]
    for i, j in itertools.product(range(shape[0]), range(shape[1])):
        assert lay.offset((i, j), shape) == view.offset((j, i), vshape)
    offs = {lay.offset((i, j), shape) for i, j in itertools.product(range(shape[0]), range(shape[1]))}
    assert offs == set(range(shape[0] * shape[1]))  # a bijection onto the buffer


def test_views_print_parse_and_verify():
    gir = _mm(90, trans_b=True).asm["gir"]
    m = parse_module(gir)
    assert print_ir(m) == gir
    views = [op for op in m.walk() if op.name == "local_trans"]
    assert views and all(v.result.type.tile_shape == v.buffer.type.tile_shape[::-1] for v in views)
    bad = gir.replace("local_trans %", "local_trans %", 1).replace("order = [1, 0]} : smem<1x64x128",
                                                                   "order = [0, 1]} : smem<1x64x128", 1)
    if bad != gir:
        with pytest.raises(Exception, match="result must be|bad order"):
            from tilec.ir.verifier import verify
            verify(parse_module(bad))


def test_staging_needs_no_copy_of_np_data():
    """The spelled kernels also run on the CPU backend (the passes above are GPU-only): same results as numpy."""
    rng = np.random.default_rng(0)
    M, N, K = 37, 45, 70
    a = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    S.mm_spelled[(2, 2)](a, w, c, M, N, K, a.strides[0] // 4, 1, 1, w.strides[0] // 4, c.strides[0] // 4, 1,
                         BM=32, BN=32, BK=32, TRANS_A=False, TRANS_B=True, ACC=tilec.language.float32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4, atol=1e-4)
