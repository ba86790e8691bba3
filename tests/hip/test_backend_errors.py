"""Every way to misuse the AMD backend is a clear tilec error raised before LLVM sees anything (LLVM aborts the
process, or silently emits nothing, on several bad combinations)."""
import numpy as np
import pytest

from gpu_jit_kernels import add_kernel
from hip_helpers import compile_case, compile_jit
from tilec.errors import BackendError
from tilec.targets.hip.arch import parse_arch


@pytest.mark.parametrize("arch,ws,expected", [
    ("gfx942", 64, (64, "")), ("gfx942", None, (64, "")), ("gfx90a", 1, (64, "")), ("gfx950", 64, (64, "")),
    ("gfx1100", None, (32, "")), ("gfx1100", 64, (64, "+wavefrontsize64")), ("gfx1201", 32, (32, "")),
    ("gfx942:sramecc+:xnack-", 64, (64, "+sramecc,-xnack")),
])
def test_architectures(arch, ws, expected):
    a = parse_arch(arch, ws)
    assert (a.warp_size, a.features) == expected


@pytest.mark.parametrize("arch,ws,message", [
    ("gfx942", 32, "gfx942 runs 64-lane wavefronts only"),
    ("gfx90a", 16, "32 or 64 lanes"),
    ("gfx9999", 64, "unknown AMD GPU architecture"),
    ("sm_90", 64, "unknown AMD GPU architecture"),
    (None, 64, "architecture name"),
    ("gfx942:foo+", 64, "unknown feature"),
])
def test_bad_architectures(arch, ws, message):
    with pytest.raises(BackendError, match=message):
        parse_arch(arch, ws)


def test_bad_target_fails_at_compile():
    x = np.zeros(64, np.float32)
    with pytest.raises(BackendError, match="64-lane wavefronts only"):
        compile_jit(add_kernel, [x, x, x, 64], "gfx942", 32, BLOCK=64)


@pytest.mark.parametrize("options,message", [
    ({"num_warps": 3}, "num_warps must be a power of 2"),
    ({"num_warps": 32}, "num_warps \\* 64 <= 1024"),
    ({"num_stages": 0}, "num_stages"),
    ({"bogus": 1}, "unknown HIP option 'bogus'"),
    ({"matrix_instr_nonkdim": 8}, "matrix_instr_nonkdim must be 0"),
    ({"kpak": 2}, "did you mean 'kpack'"),
])
def test_bad_options(options, message):
    with pytest.raises(BackendError, match=message):
        compile_case("vector_add", **options)


def test_triton_amd_options_are_accepted():
    k = compile_case("vector_add", waves_per_eu=2, matrix_instr_nonkdim=16, kpack=1)
    assert k.asm["hsaco"][:4] == b"\x7fELF"


def test_launching_without_rocm_is_a_clear_error():
    k = compile_case("vector_add")
    x = np.zeros(16, np.float32)
    with pytest.raises(BackendError, match="hip-python|ROCm|not implemented"):
        k.run((1,), [x, x, x, 16])
