"""The AMD backend's options: the shared ones (:class:`tilec.targets.options.Options`) with AMD's default
pipeline depth, Triton's AMD-only options, and the processor and wavefront size compiled for, which the backend
fills in from its target."""
from __future__ import annotations

from dataclasses import dataclass

from ..options import OptionError, Options

#: work-items a workgroup may have
MAX_THREADS = 1024


@dataclass(frozen=True, kw_only=True)
class HIPOptions(Options):
    #: operand rings are filled through registers an iteration ahead, within the workgroup's LDS: two stages
    num_stages: int = 2
    #: Triton's occupancy hint (accepted; the register allocator decides)
    waves_per_eu: int = 0
    #: the MFMA tile's M and N: 16 or 32 forces one, 0 lets the target choose
    matrix_instr_nonkdim: int = 0
    #: Triton's operand packing along k (accepted; the matrix instruction decides)
    kpack: int = 1
    #: Triton's scheduling variant (accepted; LLVM's scheduler decides)
    instruction_sched_variant: str = "none"
    #: the processor compiled for, with its features (``gfx942``, ``gfx942:+sramecc``): part of the cache key
    arch: str
    #: lanes per wavefront on that processor
    warp_size: int

    backend = "HIP"
    FIXED = ("arch", "warp_size")

    def __post_init__(self):
        super().__post_init__()
        if self.num_warps * self.warp_size > MAX_THREADS:
            raise OptionError(f"num_warps must keep num_warps * {self.warp_size} <= {MAX_THREADS} on {self.arch} "
                              f"(work-items per workgroup), got {self.num_warps}")
        if self.matrix_instr_nonkdim not in (0, 16, 32):
            raise OptionError(f"matrix_instr_nonkdim must be 0 (choose), 16 or 32, got {self.matrix_instr_nonkdim!r}")
        for name in ("waves_per_eu", "kpack"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise OptionError(f"{name} must be a non-negative int, got {v!r}")
