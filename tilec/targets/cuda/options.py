"""The NVIDIA backend's options: the shared ones (:class:`tilec.targets.options.Options`) and the compute
capability compiled for, which the backend fills in from its target."""
from __future__ import annotations

from dataclasses import dataclass

from ..options import OptionError, Options

#: threads per block a CUDA launch may have, in warps of 32
MAX_WARPS = 32


@dataclass(frozen=True, kw_only=True)
class CUDAOptions(Options):
    #: the compute capability compiled for (80, 90, ...): part of the cache key
    arch: int

    backend = "CUDA"
    FIXED = ("arch",)

    def __post_init__(self):
        super().__post_init__()
        if self.num_warps > MAX_WARPS:
            raise OptionError(f"num_warps must be at most {MAX_WARPS} on CUDA ({MAX_WARPS * 32} threads per block), "
                              f"got {self.num_warps}")
