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


def occupancy(arch: Arch, vgprs: int, agprs: int = 0) -> int:
    """Wavefronts per SIMD that the vector registers allow (LDS and work-group limits aside): an estimate from
    the register file sizes and allocation granules of each generation."""
    if arch.family == 9:
        unified = arch.name in ("gfx90a", "gfx942", "gfx950")
        total, granule, max_waves = (512, 8, 8) if unified else (256, 4, 10)
        used = (-(-vgprs // 4) * 4 + agprs) if unified else max(vgprs, agprs)
    else:
        total = 1536 if arch.warp_size == 32 and arch.family >= 11 else 1024
        total = total if arch.warp_size == 32 else total // 2
        granule, max_waves, used = 8, 16, vgprs
    used = max(granule, -(-used // granule) * granule)
    return max(0, min(max_waves, total // used))


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
