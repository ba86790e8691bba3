"""Barrier insertion: a ``barrier`` before every shared-memory user whose bytes overlap bytes that another
shared-memory user touched since the last barrier (threads of the earlier op may still be reading them).

Each user's own write -> barrier -> read sequence is emitted by its lowering; this pass only orders users
against each other. A call to a device function counts as a user of the bytes it and its callees use. Loops are walked twice so that accesses at the end of one iteration guard the start of the
next; ``if`` branches merge their pending sets.
"""
from __future__ import annotations

from ...ir import ops as O
from ...ir.builder import Builder
from .allocate_shared import scratch_bytes
from .common import Pass


def _range(op, funcs=None):
    if isinstance(op, O.CallOp):  # a device function's bytes (and its callees') from its base on
        f = (funcs or {}).get(op.attrs["callee"])
        if f is None or not f.attrs.get("smem_end"):
            return None
        return (f.attrs.get("smem_base", 0), f.attrs["smem_end"])
    n = scratch_bytes(op)
    if not n or "smem_offset" not in op.attrs:
        return None
    off = op.attrs["smem_offset"]
    return (off, off + n)


def _overlaps(r, pending):
    return any(not (r[1] <= a or b <= r[0]) for a, b in pending)


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
            r = _range(op, self.funcs)
            if r is None:
                continue
            if _overlaps(r, pending):
                if insert:
                    b = Builder()
                    b.set_insertion_point_before(op)
                    b.loc = op.loc
                    b.create(O.BarrierOp, [], [])
                pending = frozenset()
            pending = pending | {r}
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
