"""``gather``/``flip`` reach AMD through the vendor-neutral GPU lowering: the source staged once in LDS with
128-bit accesses (the flip's reversed reads vectorised too), or, when each thread holds the gathered axis (wave32
lanes leave a 128 x 4 tile's rows whole in one thread), no LDS at all. No ROCm or GPU needed."""
import pytest

from hip_helpers import ARCHS, compile_case
from hsaco_check import validate_hsaco


def _lds_ops(asm):
    return {line.split()[0] for line in asm.splitlines() if line.strip().startswith("ds_")}


@pytest.mark.parametrize("arch,warp_size", ARCHS)
def test_flip_stages_through_lds_with_vectors(arch, warp_size):
    k = compile_case("flip_1024", arch, warp_size)
    validate_hsaco(k.asm["hsaco"], k.name, arch, warp_size)
    assert k.metadata["shared"] == 4096 and k.metadata["vgpr_spills"] == 0
    ops = _lds_ops(k.asm["amdgcn"])
    assert ops & {"ds_write_b128", "ds_store_b128"} and ops & {"ds_read_b128", "ds_load_b128"}
    assert "s_barrier" in k.asm["amdgcn"]


def test_gather_in_registers_on_wave32():
    k = compile_case("gather_in_registers", "gfx1100", 32)
    validate_hsaco(k.asm["hsaco"], k.name, "gfx1100", 32)
    assert k.metadata["shared"] == 0 and not _lds_ops(k.asm["amdgcn"])
