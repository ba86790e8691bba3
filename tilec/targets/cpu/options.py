"""The CPU backend's options: the shared ones (:class:`tilec.targets.options.Options`) with the CPU's own
defaults, LLVM's optimisation level, and the host compiled for."""
from __future__ import annotations

from dataclasses import dataclass

from ..options import OptionError, Options


@dataclass(frozen=True, kw_only=True)
class CPUOptions(Options):
    #: f32 dots multiply f32 inputs unless a dot asks for tf32, as Triton's own CPU backend and interpreter do
    #: (rounding to tf32 costs a pass over each operand: a sixth of a matmul's time)
    default_dot_input_precision: str = "ieee"
    #: LLVM's optimisation level for the kernel (0..3)
    opt_level: int = 3
    #: the machine compiled for (``codegen.driver.host_identity``): part of the cache key
    host: str = ""

    backend = "CPU"
    FIXED = ("host",)

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.opt_level, int) or isinstance(self.opt_level, bool) or not 0 <= self.opt_level <= 3:
            raise OptionError(f"opt_level must be an int in 0..3, got {self.opt_level!r}")
