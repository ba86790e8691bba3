"""Every test kernel compiles to PTX for sm_80 and sm_90 without a GPU, and ptxas accepts it (when present)."""
import numpy as np
import pytest

from gpu_cases import CASES
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_case, compile_jit


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_assembles(name, arch):
    kernel, make, _ = CASES[name]
    args, constexprs, grid, outs, ref = make(np.random.default_rng(0))
    k = compile_case(kernel, args, arch, **constexprs)
    assert set(k.asm) >= {"tir", "gir", "llir", "ptx"}
    assert f".target sm_{arch}" in k.asm["ptx"]
    assert "ptx_kernel" in k.asm["llir"]
    if HAVE_PTXAS:
        assert isinstance(k.asm["cubin"], bytes) and k.asm["cubin"][:4] == b"\x7fELF"
        assert k.metadata["num_regs"] > 0 and k.metadata["spill_stores"] == 0


def test_aligned_vector_add_uses_16_byte_accesses():
    kernel, make, _ = CASES["vector_add_aligned"]
    args, constexprs, *_ = make(np.random.default_rng(0))
    ptx = compile_jit(kernel, args, 90, **constexprs).asm["ptx"]
    assert ptx.count("ld.global.v4.b32") == 2 * 2  # two inputs, 1024 / (128 threads * 4) = 2 vectors each
    assert "st.global.v4.b32" in ptx


def test_f16_vector_add_uses_16_byte_accesses():
    x = np.zeros(4096, np.float16)
    from gpu_jit_kernels import add_kernel
    ptx = compile_jit(add_kernel, [x, x, x, 4096], 90, BLOCK=1024).asm["ptx"]
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx


def test_unaligned_size_falls_back_to_scalar_accesses():
    kernel, make, _ = CASES["vector_add"]
    args, constexprs, *_ = make(np.random.default_rng(0))
    ptx = compile_jit(kernel, args, 90, **constexprs).asm["ptx"]
    assert "ld.global.v4" not in ptx and "ld.global.b32" in ptx


def test_reduction_uses_warp_shuffles_and_one_barrier_between_reductions():
    kernel, make, _ = CASES["softmax"]
    args, constexprs, *_ = make(np.random.default_rng(0))
    k = compile_jit(kernel, args, 90, **constexprs)
    assert "shfl.sync.bfly.b32" in k.asm["ptx"]
    assert k.asm["gir"].count("barrier\n") == 1
    assert k.metadata["shared"] == 16  # 4 warps x one f32 partial


def test_num_warps_option_sets_block_size():
    kernel, make, _ = CASES["softmax"]
    args, constexprs, *_ = make(np.random.default_rng(0))
    k = compile_jit(kernel, args, 90, options={"num_warps": 8}, **constexprs)
    assert "wpc = [8]" in k.asm["gir"] and k.metadata["num_warps"] == 8


def test_device_print_compiles_to_vprintf():
    from gpu_jit_kernels import print_kernel
    x = np.arange(8, dtype=np.int32)
    k = compile_jit(print_kernel, [x], 90, BLOCK=8)
    assert "vprintf" in k.asm["ptx"]
