"""Tensor descriptors compiled without a GPU: on sm_90 the loads feeding dots in a loop become tensor copies
(stage barriers, ``cp.async.bulk.tensor``) through descriptors the launch writes (their leaves are parameters:
``metadata["launch_tensormaps"]``) or each program writes (computed in the kernel), in the global scratch the
launch provides; what the copy engine cannot take (sm_80, unaligned strides, loads outside loops or
read transposed) is the pointer path. Every PTX is assembled by ptxas where it is on PATH."""
import pytest

import tilec

import tc_kernels as T


def _mm(arch, stride_spec="i32:16", dtype="fp16", cfg=(128, 128, 64, 8, 3), desc_store=False, kernel_shape=False):
    BM, BN, BK, nw, ns = cfg
    sig = f"*{dtype}:16,*{dtype}:16,*fp32:16,i32:16,i32:16,i32:16,{stride_spec},{stride_spec},{stride_spec}"
    src = tilec.ASTSource(T.desc_matmul_kernel, sig, constexprs=dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
                                                                     DESC_STORE=desc_store, KERNEL_SHAPE=kernel_shape))
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": nw, "num_stages": ns})


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_sm90_descriptor_loads_use_the_copy_engine(dtype):
    ck = _mm(90, dtype=dtype)
    ptx, gir = ck.asm["ptx"], ck.asm["gir"]
    assert ptx.count("cp.async.bulk.tensor.2d") >= 2
    assert "mbarrier.try_wait.parity" in ptx
    # the descriptors' bases, shapes and strides are parameters (or 1): the launch writes them, not the programs
    assert "tensormap.replace" not in ptx and "fence.proxy.tensormap" not in ptx
    assert "cp.async.cg" not in ptx  # no pointer copies left
    for op in ("tensormap_create", "tma_copy", "mbarrier_init", "mbarrier_wait", "mbarrier_inval"):
        assert op in gir
    # tf32 warpgroup dots read k-contiguous operands only: B (stored n-contiguous) cannot come from the copy
    # engine as it is, and is transposed on its way through registers instead (one descriptor, A's)
    descriptors = 1 if dtype == "fp32" else 2
    maps = ck.metadata["launch_tensormaps"]
    assert ck.metadata["global_scratch_size"] == 0 and ck.metadata["global_scratch_align"] == 128
    assert [m["offset"] for m in maps] == [128 * k for k in range(descriptors)]
    eb = {"fp16": 2, "bf16": 2, "fp32": 4}[dtype]
    # A: a_ptr (parameter 0), shape [M, K] (3, 5), strides [stride_am, 1] (6, the constant 1), box [BM, BK]
    assert maps[0]["leaves"] == [["param", 0], ["param", 3], ["param", 5], ["param", 6], ["const", 1]]
    assert maps[0]["box"] == [128, 64 * 2 // eb] and maps[0]["elem_bytes"] == eb and maps[0]["padding"] == "zero"
    if "cubin" in ck.asm:
        assert ck.metadata["spill_stores"] == 0


def test_operands_of_one_dot_share_a_stage_barrier():
    """A and B of the dot are copied into stages announced on one barrier (their bytes together), waited on
    once per iteration; the lane that issues the copies is elected without a predicate (so ptxas issues each
    copy once, not in a loop over lanes)."""
    ck = _mm(90)
    gir, ptx = ck.asm["gir"], ck.asm["ptx"]
    BM, BN, BK, S = 128, 128, 64, 3
    assert gir.count("mbarrier_init") == 1 and gir.count("mbarrier_wait") == 1
    assert f"announce = {(BM * BK + BK * BN) * 2}" in gir and "announce = 0" in gir
    assert ptx.count("mbarrier.arrive.expect_tx") == S  # prologue S - 1 stages, one in the loop
    assert "@w elect.sync" not in ptx and "elect.sync _|p, 0xffffffff;" in ptx


def test_descriptor_store_in_the_epilogue_is_a_copy_engine_store():
    ck = _mm(90, desc_store=True)  # fp32 rows of 512 bytes: four column blocks
    ptx, gir = ck.asm["ptx"], ck.asm["gir"]
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 4 and "cp.async.bulk.wait_group.read 0" in ptx
    assert "tma_store" in gir and "descriptor_store" not in gir
    assert ck.metadata["global_scratch_size"] == 0 and len(ck.metadata["launch_tensormaps"]) == 3
    for other in (_mm(80, desc_store=True), _mm(90, stride_spec="i32", desc_store=True)):
        assert "cp.async.bulk" not in other.asm["ptx"] and "descriptor_store" in other.asm["tir"]
        assert "st.global" in other.asm["ptx"]


def test_a_descriptor_computed_in_the_kernel_is_written_by_each_program():
    ck = _mm(90, kernel_shape=True)
    ptx = ck.asm["ptx"]
    assert ptx.count("tensormap.replace.tile.global_address") == 1 and "fence.proxy.tensormap" in ptx
    assert ck.metadata["global_scratch_size"] == 128  # A's, per program
    maps = ck.metadata["launch_tensormaps"]
    assert len(maps) == 1 and maps[0]["leaves"][0] == ["param", 1]  # B's, the launch's


def test_shapes_computed_from_parameters_are_computed_by_the_launch():
    """A's rows are ``(M + K) * 2 - K - M - K`` (i32, wrapping): the metadata carries the expression and the launch
    evaluates it as the kernel would, so no program writes a descriptor."""
    from tilec.gpu.launch_tensormaps import leaf_value
    ck = _mm(90, kernel_shape="product")
    assert "tensormap.replace" not in ck.asm["ptx"] and ck.metadata["global_scratch_size"] == 0
    maps = ck.metadata["launch_tensormaps"]
    assert len(maps) == 2
    rows = maps[0]["leaves"][1]
    assert rows[0] in ("add", "sub", "mul") and rows[1] == 32 and rows[2] is True
    args = {3: 1000, 5: 320}  # M, K
    assert leaf_value(rows, args.__getitem__) == 1000
    args = {3: 2 ** 30 + 5, 5: 7}  # (M + K) * 2 wraps in i32: so does the launch's value, then back to M
    assert leaf_value(rows, args.__getitem__) == 2 ** 30 + 5
    assert leaf_value(["mul", 32, True, ["param", 0], ["const", 3]], [2 ** 30].__getitem__) == -(2 ** 30)
    assert leaf_value(["add", 32, False, ["param", 0], ["const", 1]], [2 ** 32 - 1].__getitem__) == 0


def test_wide_rows_go_as_column_blocks():
    ck = _mm(90, cfg=(128, 256, 64, 8, 3))  # B rows of 512 bytes: four 128-byte column blocks per stage
    assert ck.asm["ptx"].count("cp.async.bulk.tensor.2d") >= 5
    assert "box = [64, 64]" in ck.asm["gir"]


def test_ragged_rows_take_the_pointer_path():
    """Rows whose length is not a proven multiple of 16 bytes: the copy engine's bounds work in 16-byte chunks."""
    sig = "*fp16:16,*fp16:16,*fp32:16,i32:16,i32,i32,i32:16,i32:16,i32:16"  # N and K unproven
    src = tilec.ASTSource(T.desc_matmul_kernel, sig, constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64))
    ck = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 4, "num_stages": 3})
    assert "cp.async.bulk.tensor" not in ck.asm["ptx"] and ck.metadata["global_scratch_size"] == 0


def test_sm80_and_unproven_alignment_take_the_pointer_path():
    for ck in (_mm(80), _mm(90, stride_spec="i32")):
        assert "cp.async.bulk.tensor" not in ck.asm["ptx"]
        assert "descriptor_load" not in ck.asm["gir"] and "tensormap_create" not in ck.asm["gir"]
        assert ck.metadata["global_scratch_size"] == 0
        # still pipelined into 3-stage rings: through pointer copies, or where the strides leave less than 4
        # provably contiguous bytes per copy, through registers an iteration ahead
        assert "smem<3x" in ck.asm["gir"]
        assert "cp.async.c" in ck.asm["ptx"] or ck.asm["gir"].count("local_store") >= 2


def test_transposed_and_outside_loop_loads_are_expanded():
    sig = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,fp32,i32,i32:16"
    src = tilec.ASTSource(T.desc_attn_kernel, sig, constexprs=dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64))
    ck = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 4, "num_stages": 3})
    gir = ck.asm["gir"]
    assert gir.count("tma_copy") >= 1  # v
    assert "descriptor_load" not in gir  # q (outside the loop) and k (transposed) expanded


def test_descriptor_load_in_tir_and_expanded_for_cpu():
    ck = _mm(80)
    assert "descriptor_load" in ck.asm["tir"]
