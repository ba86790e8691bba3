"""warpgroup-dot: dots that accelerate-dot gave a version-3 matrix-unit layout read their operands from
shared memory.

Runs after software-pipeline. An operand that the pipeliner already reads from a stage ring
(``local_load``) is handed over as that stage (``local_index``), and a ``fence_async_shared`` goes before the
barrier that publishes the stage (the copies wrote it through ordinary memory; the matrix units read it
asynchronously). B from registers is staged through a one-stage buffer of its own (``local_store``, fence,
barrier, and a barrier after the dot before the bytes are reused). A from registers stays in registers (the
instructions take it there), as for attention's ``p @ v``. Where a loop only carries the accumulator from one
dot to the next, the dot stays running across the back edge (see ``overlap``).
"""
from __future__ import annotations

from ...ir import ops as O
from ...ir.builder import Builder
from ...ir.core import OpResult
from ...ir.types import SharedBufferType, i32
from ..layouts import MmaLayout, shared_for_operand
from .common import Pass, elem_bytes


def uses_warpgroups(op) -> bool:
    lay = op.acc.type.layout
    return isinstance(op, O.DotOp) and isinstance(lay, MmaLayout) and lay.version == 3


def _stage_of(v):
    """The ``local_load`` ``v`` comes from when it has no other use (None otherwise)."""
    if isinstance(v, OpResult) and isinstance(v.op, O.LocalLoadOp) and len(v.uses) == 1:
        return v.op
    return None


def _fence_before_publishing(ld):
    """A ``fence_async_shared`` before the barrier that precedes ``ld`` in its block (once)."""
    ops = ld.parent.ops
    for op in reversed(ops[:ops.index(ld)]):
        if isinstance(op, O.BarrierOp):
            i = ops.index(op)
            if i == 0 or not isinstance(ops[i - 1], O.FenceAsyncSharedOp):
                b = Builder()
                b.set_insertion_point_before(op)
                b.create(O.FenceAsyncSharedOp, [], [])
            return


class WarpGroupDot(Pass):
    name = "warpgroup-dot"

    def run(self, module):
        changed = False
        for f in module.funcs:
            for op in list(f.walk()):
                if isinstance(op, O.DotOp) and uses_warpgroups(op):
                    self.rewrite(op)
                    changed = True
            for op in list(f.walk()):
                if isinstance(op, O.ForOp) and op.parent is not None:
                    self.overlap(op)
        return changed

    @staticmethod
    def overlap(loop):
        """Keep one dot running across the back edge where the accumulator is only carried from one dot to
        the next: the dot returns with one group pending, the stage copies issued in the loop move behind it
        and a barrier (every warpgroup's previous dot, which read the stage about to be refilled, is done by
        then), and a wait after the loop hands the accumulator over."""
        body = loop.body
        y = body.terminator
        for dot in [o for o in body.ops if isinstance(o, O.WarpGroupDotOp)]:
            acc = dot.acc
            if acc not in loop.iter_args or len(acc.uses) != 1 or len(dot.result.uses) != 1:
                continue
            i = loop.iter_args.index(acc)
            if dot.result.uses[0] != (y, i):
                continue
            copies = [o for o in body.ops[:body.ops.index(dot)] if isinstance(o, (O.AsyncCopyOp, O.AsyncCommitOp))]
            dot.attrs["pending"] = 1
            b = Builder()
            b.set_insertion_point_after(dot)
            b.loc = dot.loc
            bar = b.create(O.BarrierOp, [], [])
            anchor = bar
            for c in copies:
                c.detach()
                anchor.parent.insert(anchor.parent.ops.index(anchor) + 1, c)
                anchor = c
            res = loop.results[i]
            b.set_insertion_point_after(loop)
            w = b.create(O.WarpGroupDotWaitOp, [res], [res.type], {"pending": 0})
            for user, idx in list(res.uses):
                if user is not w:
                    user.set_operand(idx, w.result)

    def rewrite(self, op):
        b = Builder()
        b.set_insertion_point_before(op)
        b.loc = op.loc
        staged, done = None, []
        a = self.from_stage(op.a, b, done) if _stage_of(op.a) else op.a
        if _stage_of(op.b):
            bv = self.from_stage(op.b, b, done)
        else:
            src = op.b
            if isinstance(src, OpResult) and isinstance(src.op, O.ConvertLayoutOp):
                src = src.op.src
            t = src.type
            lay = shared_for_operand(t.shape, (1, 0), elem_bytes(t))
            buf = b.create(O.LocalAllocOp, [], [SharedBufferType((1,) + t.shape, t.element, lay)]).result
            zero = b.constant(0, i32)
            b.create(O.LocalStoreOp, [src, buf, zero], [])
            b.create(O.FenceAsyncSharedOp, [], [])
            b.create(O.BarrierOp, [], [])
            bv = b.op(O.LocalIndexOp, buf, zero, result_type=buf.type)
            staged = buf
        new = b.create(O.WarpGroupDotOp, [a, bv, op.acc], [op.result.type], dict(op.attrs))
        op.replace_with([new.result])
        for ld in done:  # now: inserting earlier in the block would shift the builder's position
            _fence_before_publishing(ld)
            ld.erase()
        if staged is not None:
            b.set_insertion_point_after(new)
            b.create(O.BarrierOp, [], [])  # every warpgroup is done reading before the bytes are reused
            b.create(O.LocalDeallocOp, [staged], [])

    @staticmethod
    def from_stage(v, b, done):
        ld = _stage_of(v)
        buf = ld.buffer
        one = SharedBufferType((1,) + buf.type.tile_shape, buf.type.element, buf.type.layout)
        view = b.op(O.LocalIndexOp, buf, ld.index, result_type=one)
        done.append(ld)
        return view


__all__ = ["WarpGroupDot", "uses_warpgroups"]
