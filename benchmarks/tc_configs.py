"""Tile and warp choices of the tensor-core benchmark kernels per GPU (one table for gpu_tensorcores.py, which
times them, and amd_resources.py, which reports their registers): NVIDIA's, and AMD's where those do not fit
the register file (measured with amd_resources.py, docs/performance.md):

- gfx90a/gfx942/gfx950: a work-group of 8 wave64 warps has 2 waves on each SIMD, which caps a lane at 256 of
  the 512 unified registers; attention D128 at 8 warps spills ~120 VGPRs there, at 4 warps it fits (495).
- gfx11/gfx12 (wave32, 256 VGPRs a lane at most): the WMMA operands of a K step stay in registers, twice over
  (each lane half holds the same A rows). A 128x128x64 matmul fits (215 VGPRs) now that operands are staged in
  LDS and read per K step. Attention D64 fits with BLOCK_N 32 and 8 warps at 2 stages (252/256 VGPRs, causal
  or not; BLOCK_N 64 with 16 warps spills 44 bytes a lane at 2 stages, fits at 1). D128 fits with BLOCK_N 16
  and 8 warps (241/256 VGPRs) now that Q is held in LDS on WMMA targets; BLOCK_N 32 still spills 45-55 VGPRs.
"""
from __future__ import annotations

NVIDIA = {"matmul": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8),
          "attention64": dict(BLOCK_M=128, BLOCK_N=64, num_warps=4),
          "attention128": dict(BLOCK_M=128, BLOCK_N=64, num_warps=8)}
CDNA = dict(NVIDIA, attention128=dict(BLOCK_M=128, BLOCK_N=64, num_warps=4))
RDNA = {"matmul": dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8),
        "attention64": dict(BLOCK_M=128, BLOCK_N=32, num_warps=8),
        "attention128": dict(BLOCK_M=128, BLOCK_N=16, num_warps=8)}


def configs(arch: str | None) -> dict:
    """The choices for an AMD ``gfx`` architecture name, or NVIDIA's (``arch`` None)."""
    if not arch:
        return NVIDIA
    return CDNA if arch.startswith("gfx9") else RDNA
