"""Barrier insertion: a ``barrier`` before every shared-memory user whose bytes overlap bytes that another
shared-memory user touched since the last barrier (threads of the earlier op may still be reading them).

Each user's own write -> barrier -> read sequence is emitted by its lowering; this pass only orders users
against each other: ops with scratch space, the buffers stage-operands makes from registers (written by
their ``local_alloc``, read by ``local_load`` and warpgroup dots), and calls to device functions (users of the
bytes the callee and its callees use); reads after reads need no barrier. Loops are walked twice so that accesses at the end of one iteration guard the start of the
next; ``if`` branches merge their pending sets.
"""
from __future__ import annotations

from ...ir import ops as O
from ...ir.builder import Builder
from ...ir.types import SharedBufferType
from .. import ops as G
from ..scratch import scratch_bytes
from .allocate_shared import buffer_bytes
from .common import Pass


def _staged_range(v):
    """Bytes of the buffer behind ``v`` when it was made from registers (``local_alloc`` with a source), whose
    accesses this pass orders; None for other buffers (rings order themselves with waits and barriers)."""
    root = G.buffer_root(v) if isinstance(v.type, SharedBufferType) else None
    if root is None or root.src is None or "smem_offset" not in root.attrs:
        return None
    off = root.attrs["smem_offset"]
    return (off, off + buffer_bytes(root.result.type))


def accesses(op, funcs=None):
    """((start, end), writes) for the shared memory ``op`` touches that this pass orders: its scratch space
    (written and read), buffers made from registers (written by their ``local_alloc``, read by ``local_load``
    and warpgroup dots through any view), and a device function's bytes (and its callees') for a call."""
    if isinstance(op, O.CallOp):
        f = (funcs or {}).get(op.attrs["callee"])
        if f is None or not f.attrs.get("smem_end"):
            return []
        return [((f.attrs.get("smem_base", 0), f.attrs["smem_end"]), True)]
    n = scratch_bytes(op)
    if n and "smem_offset" in op.attrs:
        off = op.attrs["smem_offset"]
        return [((off, off + n), True)]
    if isinstance(op, G.LocalAllocOp) and op.src is not None:
        r = _staged_range(op.result)
        return [(r, True)] if r else []
    if isinstance(op, (G.LocalLoadOp, G.WarpGroupDotOp)):
        return [(r, False) for r in map(_staged_range, op.operands) if r is not None]
    return []


def _conflicts(acc, pending):
    """Whether access ``acc`` must wait for a pending one: overlapping bytes, one of the two writing."""
    (a0, a1), w = acc
    return any(not (a1 <= b0 or b1 <= a0) and (w or w2) for (b0, b1), w2 in pending)


class InsertBarriers(Pass):
    name = "insert-barriers"

    def run(self, module):
        self.funcs = {f.sym_name: f for f in module.funcs}
        for f in module.funcs:
            self.block(f.body, frozenset(), insert=True)

    def block(self, block, pending, insert):
        for op in list(block.ops):
            if isinstance(op, O.BarrierOp):
                pending = frozenset()
                continue
            if op.regions and not isinstance(op, (O.ReduceOp, O.ScanOp)):
                pending = self.region_op(op, pending, insert)
                continue
            acc = accesses(op, self.funcs)
            if not acc:
                continue
            if any(_conflicts(a, pending) for a in acc):
                if insert:
                    b = Builder()
                    b.set_insertion_point_before(op)
                    b.loc = op.loc
                    b.create(O.BarrierOp, [], [])
                pending = frozenset()
            pending = pending | set(acc)
        return pending

    def region_op(self, op, pending, insert):
        if isinstance(op, (O.ForOp, O.WhileOp)):
            # first sweep without inserting: what is pending when the body loops back
            state = pending
            for r in op.regions:
                state = self.block(r.block, state, insert=False)
            entry = pending | state
            out = entry
            for r in op.regions:
                out = self.block(r.block, out, insert)
            return pending | out
        out = frozenset(pending)
        for r in op.regions:
            if r.blocks:
                out = out | self.block(r.block, pending, insert)
        return out
