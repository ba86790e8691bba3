"""expand-descriptors: each ``descriptor_load`` / ``descriptor_store`` becomes the masked pointer access it
means.

A tensor descriptor's load is a block-pointer load with every dimension bounds-checked
(``DescriptorLoadOp.decompose`` builds it); targets without a tensor copy engine (the CPU, sm_8x, AMD) run this
pass first, so their lowerings never see the op. Backends follow it with the tir cleanups
(``manager.cleanup_passes``: canonicalize, cse, licm, dce, each its own pass in the dumps), so the expansions'
address arithmetic is hoisted and shared as if the kernel had spelled it out.

``keep`` (a predicate on the op) leaves the loads a target moves whole: on sm_90 the CUDA backend keeps those
its tensor copy engine can take (``tilec/targets/cuda/tma.py``).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from .base import Pass


def expand(op):
    """Replace descriptor op ``op`` by its decomposition (ops inserted before it); returns the new result
    value of a load (None for a store)."""
    b = Builder()
    b.set_insertion_point_before(op)
    with b.at_loc(op.loc):
        out = op.decompose(b)
    if out is not None:
        op.result.replace_all_uses_with(out)
    op.erase()
    return out


class ExpandDescriptors(Pass):
    name = "expand-descriptors"
    summary = "descriptor_load -> the masked pointer load it means (targets without a tensor copy engine)"

    def __init__(self, keep=None):
        self.keep = keep

    def run(self, module) -> bool:
        found = [op for op in module.walk() if isinstance(op, (O.DescriptorLoadOp, O.DescriptorStoreOp))]
        todo = [op for op in found if self.keep is None or not self.keep(op)]
        for op in todo:
            expand(op)
        return bool(todo)
