"""descriptor-copies: the tensor descriptor ops the target kept for its copy engine that the software
pipeliner did not take.

- A ``descriptor_store`` (kept only outside loops: the epilogue) goes through shared memory: the tile is written
  (from whatever register layout it has, after a barrier: the bytes may be an earlier user's scratch) to a
  one-stage buffer in the layout the copy engine's swizzle describes, fenced for the async proxy, and after
  a barrier copied out whole (``tensormap_create`` + ``tma_store``, which waits for the copy), then a barrier
  before the bytes are reused.
- A ``descriptor_load`` no pipeline took becomes the masked pointer load it means, its new ops given layouts as
  convert-to-gir would (the tile's own layout as the anchor) and converted back where the users need it.
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.core import OpResult
from ...ir.types import SharedBufferType, i32, i64
from ...passes.expand_descriptors import expand
from ..layouts import shared_for_operand, swizzle_bytes
from .common import Pass, convert_before, elem_bytes
from .convert_to_gir import ConvertToGIR
from ...targets.options import num_warps_of


def expand_in_gir(op, num_warps: int):
    """``op``'s decomposition in place, with layouts."""
    block = op.parent
    t = op.result.type if isinstance(op, O.DescriptorLoadOp) else op.value.type
    lay = t.layout
    warp_size = 1
    for k in getattr(lay, "tpw", (32,)):
        warp_size *= k
    users = list(op.result.uses) if isinstance(op, O.DescriptorLoadOp) else []
    before = {id(o) for o in block.ops}
    new = expand(op)
    cv = ConvertToGIR(num_warps, warp_size)
    cv.anchors = {t.rank: lay}
    for o in [o for o in block.ops if id(o) not in before]:
        cv.op(o)
    if new is not None and new.type != t:
        for u, i in users:
            convert_before(u, i, lay)


def _slot(func) -> int:
    return sum(1 for o in func.walk() if isinstance(o, G.TensormapCreateOp))


def store_through_copy_engine(op, func) -> bool:
    """Rewrite descriptor store ``op`` as a staged copy-engine store; False when no swizzle fits."""
    t = op.value.type
    eb = elem_bytes(t)
    lay = shared_for_operand(t.shape, (1, 0), eb)
    sw = swizzle_bytes(lay, t.shape, eb)
    if sw is None:
        return False
    b = Builder()
    b.set_insertion_point_before(op)
    b.loc = op.loc
    buf = b.create(G.LocalAllocOp, [], [SharedBufferType((1,) + tuple(t.shape), t.element, lay)]).result
    zero = b.constant(0, i32)
    value, converts = op.value, []
    while isinstance(value, OpResult) and isinstance(value.op, G.ConvertLayoutOp):
        converts.append(value.op)
        value = value.op.src  # the stage is written from any register layout: no conversion first
    # the buffer may reuse bytes an earlier shared-memory user (a conversion's scratch) still reads
    b.create(O.BarrierOp, [], [])
    b.create(G.LocalStoreOp, [value, buf, zero], [])
    b.create(G.FenceAsyncSharedOp, [], [])
    b.create(O.BarrierOp, [], [])
    box = (t.shape[0], lay.block_cols(t.shape))
    desc = b.create(G.TensormapCreateOp, [op.base, *op.shape, *op.strides], [i64],
                    {"box": box, "swizzle": sw, "padding": "zero", "slot": _slot(func)}).result
    b.create(G.TmaStoreOp, [buf, zero, desc, *op.offsets], [])
    b.create(O.BarrierOp, [], [])  # the stage is read out before anybody reuses its bytes
    b.create(G.LocalDeallocOp, [buf], [])
    op.erase()
    for c in converts:  # outermost first; each only if nothing else reads it
        if not c.result.uses:
            c.erase()
    return True


class DescriptorCopies(Pass):
    name = "descriptor-copies"

    def run(self, module):
        changed = False
        for f in module.funcs:
            nw = num_warps_of(f, self.options)
            for op in [o for o in f.walk() if isinstance(o, (O.DescriptorLoadOp, O.DescriptorStoreOp))]:
                if not (isinstance(op, O.DescriptorStoreOp) and store_through_copy_engine(op, f)):
                    expand_in_gir(op, nw)
                changed = True
        return changed


__all__ = ["DescriptorCopies", "expand_in_gir"]
