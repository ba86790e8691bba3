"""Every GPU test case cross-compiles for gfx942 (wave64) and gfx1100 (wave32) into a linked code object that
passes structural validation; no ROCm or GPU is needed."""
import numpy as np
import pytest

import tilec
from gpu_cases import CASES
from hip_helpers import ARCHS, compile_case, compile_jit
from hsaco_check import validate_hsaco
from tilec.errors import BackendError

NAMES = sorted(CASES)


@pytest.mark.parametrize("arch,warp_size", ARCHS)
@pytest.mark.parametrize("name", NAMES)
def test_case_cross_compiles(name, arch, warp_size):
    k = compile_case(name, arch, warp_size)
    assert set(k.asm) >= {"tir", "gir", "llir", "amdgcn", "hsaco"}
    assert "amdgpu_kernel" in k.asm["llir"] and f'"amdgpu-flat-work-group-size"="1,{4 * warp_size}"' in k.asm["llir"]
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}' in k.asm["amdgcn"]
    assert ".amdhsa_code_object_version 5" in k.asm["amdgcn"]
    assert "; NumVgprs:" in k.asm["amdgcn"] and "; Occupancy" in k.asm["amdgcn"]
    entry = validate_hsaco(k.asm["hsaco"], k.name, arch, warp_size)
    assert k.metadata["num_vgprs"] == entry[".vgpr_count"] == k.n_regs > 0
    assert k.metadata["vgpr_spills"] == 0 and k.metadata["occupancy"] >= 1
    assert entry[".max_flat_workgroup_size"] == 4 * warp_size


def test_gfx90a_and_num_warps():
    for nw in (1, 2, 8):
        k = compile_case("softmax", "gfx90a", 64, num_warps=nw)
        entry = validate_hsaco(k.asm["hsaco"], k.name, "gfx90a", 64)
        assert entry[".max_flat_workgroup_size"] == 64 * nw


def test_native_wave_size_is_the_default():
    for arch, ws in (("gfx942", 64), ("gfx1100", 32)):
        k = compile_case("vector_add", arch, None)
        assert k.metadata["warp_size"] == ws
        validate_hsaco(k.asm["hsaco"], k.name, arch, ws)


def test_wave64_on_rdna():
    k = compile_case("softmax", "gfx1100", 64)
    validate_hsaco(k.asm["hsaco"], k.name, "gfx1100", 64)


@pytest.mark.parametrize("arch,warp_size", ARCHS)
def test_reductions_shuffle_with_ds_bpermute(arch, warp_size):
    for name in ("softmax", "cumsum_argmax", "layer_norm_f16"):
        asm = compile_case(name, arch, warp_size).asm["amdgcn"]
        assert "ds_bpermute_b32" in asm
        assert "s_barrier" in asm or name == "softmax"


def test_vector_accesses_and_predicated_loads():
    asm = compile_case("vector_add_aligned").asm["amdgcn"]
    assert "global_load_dwordx4" in asm and "global_store_dwordx4" in asm
    masked = compile_case("vector_add").asm["amdgcn"]
    assert "s_and_saveexec" in masked  # masked lanes branch around their loads and stores


def test_program_id_and_num_programs():
    k = compile_case("grid3d")
    args = {a.get(".value_kind") for a in validate_hsaco(k.asm["hsaco"], k.name, "gfx942", 64)[".args"]}
    assert "hidden_block_count_x" in args  # tl.num_programs reads the code object v5 hidden arguments


def test_printf_is_a_clear_error():
    from gpu_jit_kernels import print_kernel
    with pytest.raises(BackendError, match="printf.*not supported by the HIP backend"):
        compile_jit(print_kernel, [np.zeros(64, np.float32)], BLOCK=64)


def test_the_f64_math_kernel_compiles():
    from gpu_jit_kernels import math_kernel
    x = np.zeros(64, np.float64)
    k = compile_jit(math_kernel, [x, x, 64], BLOCK=64)  # exp, log, sin, cos, erf, sigmoid, ... in f64
    validate_hsaco(k.asm["hsaco"], k.name, "gfx942", 64)


def test_f64_math_compiles():
    import tilec.language as tl
    from tilec.language.extra import libdevice

    @tilec.jit
    def k64(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        y = tl.sqrt(x) + tl.floor(x) + tl.math.rsqrt(x + 1.0) + tl.exp(x) + tl.log(x) + tl.sin(x) * tl.cos(x)
        y += libdevice.tanh(x) + libdevice.log1p(x) + libdevice.expm1(x) + tl.exp2(x) + tl.log2(x) + tl.sigmoid(x)
        tl.store(out_ptr + offs, y + libdevice.atan2(x, y) + libdevice.tan(x) + libdevice.asin(x)
                 + libdevice.pow(x, y), mask=m)
    x = np.zeros(64, np.float64)
    k = compile_jit(k64, [x, x, 64], BLOCK=64)
    validate_hsaco(k.asm["hsaco"], k.name, "gfx942", 64)


def test_the_hsaco_is_deterministic():
    a, b = compile_case("softmax").asm["hsaco"], compile_case("softmax").asm["hsaco"]
    assert a == b


def test_resources_in_metadata_and_the_report():
    from tilec.targets.hip.arch import parse_arch
    from tilec.targets.hip.resources import common_figures
    from tilec.tools.resources import rows
    k = compile_case("softmax")
    got = dict(rows(k))
    md = k.metadata
    assert got["backend"] == "hip gfx942 (wave64)"
    assert got["registers"] == f"{md['num_vgprs']} VGPRs, {md['num_agprs']} AGPRs per thread, {md['num_sgprs']} " \
                               "SGPRs per wave"
    assert got["spills"] == "0 bytes stored (0 VGPRs), 0 SGPRs to VGPR lanes"
    assert got["shared memory"] == f"{md['shared']} bytes LDS" and md["shared"] > 0
    assert got["local/stack"] == "0 bytes scratch per thread"
    assert got["occupancy"] == f"{md['occupancy']} waves per SIMD (registers)" and md["occupancy"] >= 1
    # spills are bytes per thread, like ptxas's figures: 4 per spilled VGPR
    figures = common_figures({"num_vgprs": 512, "vgpr_spills": 3, "sgpr_spills": 5, "scratch_bytes": 16},
                             parse_arch("gfx90a"))
    assert figures == {"num_regs": 512, "spill_stores": 12, "stack_bytes": 16, "occupancy": 1}


@pytest.mark.parametrize("arch,ws,vgprs,agprs,waves", [
    ("gfx942", 64, 345, 89, 1),    # .vgpr_count counts the accumulators already: 352 of 512
    ("gfx942", 64, 512, 256, 1),   # all of the file: one wave, not 0
    ("gfx942", 64, 128, 64, 4), ("gfx942", 64, 24, 0, 8), ("gfx90a", 64, 250, 120, 2),
    ("gfx908", 64, 100, 200, 1),   # a separate AGPR file: the larger of the two counts
    ("gfx908", 64, 24, 0, 10),
    ("gfx1100", 32, 96, 0, 16), ("gfx1100", 32, 97, 0, 12),  # 1536 VGPRs in granules of 24
    ("gfx1100", 64, 97, 0, 7), ("gfx1201", 32, 256, 0, 5),  # 256 -> 264 in granules of 24
    ("gfx1030", 32, 64, 0, 16), ("gfx1030", 32, 65, 0, 12), ("gfx1102", 32, 128, 0, 8)])
def test_occupancy_follows_each_register_file(arch, ws, vgprs, agprs, waves):
    from tilec.targets.hip.arch import parse_arch
    from tilec.targets.hip.resources import occupancy
    assert occupancy(parse_arch(arch, ws), vgprs, agprs) == waves


def test_occupancy_of_a_compiled_matrix_kernel_counts_its_accumulators_once():
    """An MFMA kernel on gfx942: ``.vgpr_count`` already holds its AGPRs (the unified file), so the occupancy
    divides the 512 registers by that count alone; the assembly's header and the report say the same."""
    from tilec.tools.resources import rows
    k = compile_case("matmul_f16", num_warps=4)
    md = k.metadata
    assert "v_mfma" in k.asm["amdgcn"]
    assert md["occupancy"] == min(8, 512 // (-(-md["num_vgprs"] // 8) * 8)) >= 1
    assert f"; Occupancy (waves/SIMD, registers only): {md['occupancy']}" in k.asm["amdgcn"]
    assert dict(rows(k))["occupancy"] == f"{md['occupancy']} waves per SIMD (registers)"


@pytest.mark.parametrize("case", ["matmul_f16", "softmax"])
def test_gfx11_code_keeps_16_bit_values_in_whole_registers(case):
    """No true16 half-register operands (``v3.l``) on gfx1100: the code ROCm 6's tools disassemble."""
    import re
    k = compile_case(case, "gfx1100", 32)
    validate_hsaco(k.asm["hsaco"], k.name, "gfx1100", 32)
    assert not re.search(r"\bv\d+\.[lh]\b", k.asm["amdgcn"])
