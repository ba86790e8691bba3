"""gir -> NVVM LLVM IR: the generic GPU lowering (:mod:`tilec.gpu.lowering`) with NVIDIA's target."""
from __future__ import annotations

from ...gpu import lowering
from .target import DATA_LAYOUT, TRIPLE, CudaTarget


def lower_module(module, options):
    """``options``: the compile's :class:`~tilec.targets.cuda.options.CUDAOptions` (its ``arch`` picks the
    instructions)."""
    return lowering.lower_module(module, options, CudaTarget(options.arch))


def lower_module_text(module, options) -> str:
    return lowering.lower_module_text(module, options, CudaTarget(options.arch))


__all__ = ["lower_module", "lower_module_text", "TRIPLE", "DATA_LAYOUT"]
