"""expand-descriptors: each ``descriptor_load`` becomes the masked pointer load it means.

A tensor descriptor's load is a block-pointer load with every dimension bounds-checked; targets without a
tensor copy engine (the CPU, sm_8x, AMD) run this pass first, so their lowerings never see the op. The
expansion is the language's own (``Semantic.expand_descriptor_load``), run through a builder placed before the
op, so compiled and interpreted kernels agree by construction.

``keep`` (a predicate on the op) leaves the loads a target moves whole: the CUDA backend keeps, on sm_90, those
its tensor copy engine can take (see ``tilec/targets/cuda/tma.py``).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.types import PointerType, ScalarType
from .manager import Pass


def tl_type(t):
    """The language dtype of a scalar or pointer IR type."""
    from ..language import core as tlc
    if isinstance(t, PointerType):
        return tlc.pointer_type(tl_type(t.pointee), t.address_space)
    assert isinstance(t, ScalarType), t
    by_ir = {}
    for n in sorted(tlc.dtype._INFO, key=lambda n: n.startswith("fp8")):  # fp8 kinds share their storage's name
        by_ir.setdefault(tlc.dtype(n).ir_name, tlc.dtype(n))
    return by_ir[t.name]


def expand(op: O.DescriptorLoadOp):
    """Replace ``op`` by its expansion (ops inserted before it); returns the new result value."""
    from ..frontend.tir_builder import TirBuilder
    from ..language.core import tensor
    from ..language.semantic import Semantic
    b = Builder()
    b.set_insertion_point_before(op)
    sem = Semantic(TirBuilder(b))

    def wrap(v):
        return tensor(v, tl_type(v.type))
    with b.at_loc(op.loc):
        out = sem.expand_descriptor_load(wrap(op.base), [wrap(v) for v in op.shape], [wrap(v) for v in op.strides],
                                         [wrap(v) for v in op.offsets], list(op.attrs["block_shape"]),
                                         op.attrs["padding"])
    op.result.replace_all_uses_with(out.handle)
    op.erase()
    return out.handle


class ExpandDescriptors(Pass):
    name = "expand-descriptors"
    summary = "descriptor_load -> the masked pointer load it means (targets without a tensor copy engine)"

    def __init__(self, keep=None):
        self.keep = keep

    def run(self, module) -> bool:
        found = [op for op in module.walk() if isinstance(op, O.DescriptorLoadOp)]
        todo = [op for op in found if self.keep is None or not self.keep(op)]
        for op in todo:
            expand(op)
        return bool(todo)
