"""Kernel resources (registers, spills, LDS, scratch, occupancy) from the AMDGPU metadata LLVM writes, as a
dict for ``metadata`` and as the comment block that heads ``asm["amdgcn"]`` (llvmlite's assembly printer omits
LLVM's own ``; NumVgprs:`` comments)."""
from __future__ import annotations

import re

from .arch import Arch

#: metadata key -> tilec metadata name
KEYS = {".vgpr_count": "num_vgprs", ".sgpr_count": "num_sgprs", ".agpr_count": "num_agprs",
        ".vgpr_spill_count": "vgpr_spills", ".sgpr_spill_count": "sgpr_spills",
        ".group_segment_fixed_size": "lds_bytes", ".private_segment_fixed_size": "scratch_bytes",
        ".kernarg_segment_size": "kernarg_bytes", ".wavefront_size": "wavefront_size",
        ".max_flat_workgroup_size": "max_workgroup_size"}
_YAML = re.compile(r"^\s*(\.[a-z_]+):\s+(\d+)\s*$", re.M)


def from_assembly(text: str) -> dict:
    """Resource counts of the (single) kernel in an assembly text's ``.amdgpu_metadata`` block."""
    start = text.find(".amdgpu_metadata")
    found = {}
    for key, value in _YAML.findall(text[start:] if start >= 0 else ""):
        if key in KEYS and KEYS[key] not in found:
            found[KEYS[key]] = int(value)
    return found


def from_metadata(kernel: dict) -> dict:
    """Resource counts of one kernel entry of the decoded metadata note."""
    return {name: int(kernel[key]) for key, name in KEYS.items() if key in kernel}


def common_figures(res: dict, arch: Arch) -> dict:
    """The metadata every backend fills, in the units the CUDA backend uses: ``num_regs`` (VGPRs per thread),
    ``spill_stores`` (bytes a thread spills to scratch: 4 per spilled VGPR; SGPR spills go to VGPR lanes, not
    memory, and stay a count in ``sgpr_spills``), ``stack_bytes`` (the scratch a work-item uses), plus the
    register-limited ``occupancy``."""
    return {"num_regs": res.get("num_vgprs", 0), "spill_stores": 4 * res.get("vgpr_spills", 0),
            "stack_bytes": res.get("scratch_bytes", 0),
            "occupancy": occupancy(arch, res.get("num_vgprs", 0), res.get("num_agprs", 0))}


#: RDNA processors with the 1.5x vector register file (192 KB per SIMD): 1536 VGPRs a lane in wave32
LARGE_VGPR_FILE = ("gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201")


def register_file(arch: Arch) -> tuple:
    """(VGPRs a SIMD has per lane, allocation granule, most wavefronts a SIMD holds) for ``arch``'s wave size,
    as LLVM's AMDGPU backend counts them (``getTotalNumVGPRs``, ``getVGPRAllocGranule``, ``getMaxWavesPerEU``;
    the RDNA figures checked against the VGPR caps LLVM applies under ``amdgpu-waves-per-eu``)."""
    if arch.name in ("gfx90a", "gfx942", "gfx950"):
        return 512, 8, 8  # one file for VGPRs and AGPRs (accumulators)
    if arch.family == 9:
        return 256, 4, 10  # gfx908's AGPRs are a second file of the same size
    total, granule = (1536, 24) if arch.name in LARGE_VGPR_FILE else (1024, 16)  # gfx10.3 and later
    if arch.warp_size == 64:
        total, granule = total // 2, granule // 2
    return total, granule, 16


def occupancy(arch: Arch, vgprs: int, agprs: int = 0) -> int:
    """Wavefronts per SIMD that the vector registers allow (LDS and work-group limits aside). ``vgprs`` is the
    metadata's ``.vgpr_count``: on gfx90a/gfx942/gfx950 that already counts the accumulators (the one file holds
    VGPRs, aligned to 4, then AGPRs), on gfx908 the AGPRs are a file of their own. At least 1: a kernel that
    compiled fits one wavefront."""
    total, granule, max_waves = register_file(arch)
    used = max(vgprs, agprs) if arch.name == "gfx908" else vgprs
    used = max(granule, -(-used // granule) * granule)
    return max(1, min(max_waves, total // used))


def comment_block(name: str, res: dict, arch: Arch) -> str:
    lines = [f"; kernel {name} for {arch.name} (wave{arch.warp_size})"]
    for label, key in (("NumVgprs", "num_vgprs"), ("NumAgprs", "num_agprs"), ("NumSgprs", "num_sgprs"),
                       ("VgprSpill", "vgpr_spills"), ("SgprSpill", "sgpr_spills"), ("ScratchSize", "scratch_bytes"),
                       ("LDSByteSize (static)", "lds_bytes")):
        if key in res:
            lines.append(f"; {label}: {res[key]}")
    if "num_vgprs" in res:
        lines.append(f"; Occupancy (waves/SIMD, registers only): "
                     f"{occupancy(arch, res['num_vgprs'], res.get('num_agprs', 0))}")
    return "\n".join(lines) + "\n"
