"""warpgroup-dot: dots that accelerate-dot gave a version-3 matrix-unit layout read their operands from
shared memory.

Runs after software-pipeline. An operand that the pipeliner already reads from a stage ring
(``local_load``) is handed over as that stage (``local_index``); where the stage was written by ordinary stores
(``local_store``) a ``fence_async_shared`` follows them, since the matrix units read asynchronously. B from registers is staged through a one-stage buffer of its own (``local_store``, fence,
barrier, and a barrier after the dot before the bytes are reused). A from registers stays in registers (the
instructions take it there), as for attention's ``p @ v``; a loop-invariant A (attention's ``q``) already comes
from a stage (software-pipeline puts it there). Where a loop only carries the accumulator from one
dot to the next, the dot stays running across the back edge (see ``overlap``).
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.core import OpResult
from ...ir.types import SharedBufferType, i32
from ..layouts import MmaLayout, shared_for_operand
from .common import Pass, elem_bytes
from .software_pipeline import recount_waits


def uses_warpgroups(op) -> bool:
    lay = op.acc.type.layout
    return isinstance(op, O.DotOp) and isinstance(lay, MmaLayout) and lay.version == 3


def _stage_of(v):
    """The ``local_load`` ``v`` comes from when it has no other use (None otherwise)."""
    if isinstance(v, OpResult) and isinstance(v.op, G.LocalLoadOp) and len(v.uses) == 1:
        return v.op
    return None


def _top(op, block):
    """The op of ``block`` that is or contains ``op``."""
    while op.parent is not block:
        op = op.parent_op
    return op


def _fence_after_stores(buf):
    """A ``fence_async_shared`` after every ``local_store`` into ``buf`` (once): ordinary stores must be
    ordered before the matrix units' asynchronous reads. Copies (``cp.async``) need none, as their completion
    wait already publishes them."""
    for user, _ in list(buf.uses):
        if isinstance(user, G.LocalStoreOp):
            ops = user.parent.ops
            i = ops.index(user)
            if i + 1 < len(ops) and isinstance(ops[i + 1], G.FenceAsyncSharedOp):
                continue
            b = Builder()
            b.set_insertion_point_after(user)
            b.create(G.FenceAsyncSharedOp, [], [])


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
        """Keep a dot running across the back edge where its result is only carried to the next iteration:
        it returns with one group pending. Where the carried accumulator feeds just the next dot (a matmul),
        that dot's own wait retires the previous one; where other ops read it first (attention's rescaling),
        a ``warp_group_dot_wait`` goes before them. The stage copies issued in the loop move behind the first
        point where the previous iteration's dots are done, and a barrier (other warpgroups' too: the copies
        refill the stage they read). A wait after the loop hands the result over."""
        body = loop.body
        y = body.terminator
        args = list(loop.iter_args)
        moved = []
        for dot in [o for o in body.ops if isinstance(o, G.WarpGroupDotOp)]:
            if len(dot.result.uses) != 1 or dot.result.uses[0][0] is not y:
                continue
            i = dot.result.uses[0][1]
            arg = args[i]
            dot.attrs["pending"] = 1
            if not (dot.acc is arg and len(arg.uses) == 1):
                first = min((body.ops.index(_top(u, body)) for u, _ in arg.uses), default=None)
                if first is None:
                    continue
                # a dot that waits for everything before the first reader already retires this one: no wait
                # after this dot, and the hand-over before the reader needs no instruction
                retired = any(isinstance(o, G.WarpGroupDotOp) and o.attrs.get("pending", 0) == 0
                              for o in body.ops[:first])
                if retired:
                    dot.attrs["pending"] = -1
                b = Builder()
                b.set_insertion_point_before(body.ops[first])
                w = b.create(G.WarpGroupDotWaitOp, [arg], [arg.type], {"pending": 0, "hw": not retired})
                for user, idx in list(arg.uses):
                    if user is not w:
                        user.set_operand(idx, w.result)
            moved.append(i)
            res = loop.results[i]
            b = Builder()
            b.set_insertion_point_after(loop)
            w = b.create(G.WarpGroupDotWaitOp, [res], [res.type], {"pending": 0})
            for user, idx in list(res.uses):
                if user is not w:
                    user.set_operand(idx, w.result)
        if not moved:
            return
        # the first op after which no dot of the previous iteration is running, then the next barrier
        done_at = next(o for o in body.ops if isinstance(o, G.WarpGroupDotWaitOp) or
                       isinstance(o, G.WarpGroupDotOp))
        copies = [o for o in body.ops if isinstance(o, (G.AsyncCopyOp, G.AsyncCommitOp, G.TmaCopyOp))]
        if not copies:
            return
        i0 = body.ops.index(done_at)
        anchor = next((o for o in body.ops[i0 + 1:] if isinstance(o, O.BarrierOp)), None)
        if anchor is None:
            b = Builder()
            b.set_insertion_point_after(done_at)
            anchor = b.create(O.BarrierOp, [], [])
        for c in copies:
            c.detach()
            # behind the anchor, and behind the ops computing its operands (they may sit after the anchor)
            defs = [o.op for o in c.operands if isinstance(o, OpResult) and o.op.parent is body]
            anchor = max([anchor] + defs, key=body.ops.index)
            body.insert(body.ops.index(anchor) + 1, c)
            anchor = c
        recount_waits(body)
        _drop_wait_barrier(body)


    def rewrite(self, op):
        def before_op():  # a fresh position each time: staging inserts ops before the dot
            b = Builder()
            b.set_insertion_point_before(op)
            b.loc = op.loc
            return b
        staged, done = [], []
        a = self.from_stage(op.a, before_op(), done) if _stage_of(op.a) else op.a
        if _stage_of(op.b):
            bv = self.from_stage(op.b, before_op(), done)
        else:
            bv = self.from_registers(op, op.b, staged)
        b = before_op()
        new = b.create(G.WarpGroupDotOp, [a, bv, op.acc], [op.result.type], dict(op.attrs))
        op.replace_with([new.result])
        for ld in done:  # now: inserting earlier in the block would shift the builder's position
            _fence_after_stores(ld.buffer)
            ld.erase()
        for buf, where in staged:
            b.set_insertion_point_after(where if where is not None else new)
            b.create(O.BarrierOp, [], [])  # every warpgroup is done reading before the bytes are reused
            b.create(G.LocalDeallocOp, [buf], [])

    @staticmethod
    def from_registers(op, v, staged):
        """B from registers, staged through a one-stage buffer right before the dot (the pipeliner already
        moved loop-invariant operands to shared memory)."""
        src = v
        if isinstance(src, OpResult) and isinstance(src.op, G.ConvertLayoutOp):
            src = src.op.src
        at = Builder()
        at.set_insertion_point_before(op)
        at.loc = op.loc
        t = src.type
        lay = shared_for_operand(t.shape, (0, 1), elem_bytes(t))  # k contiguous: K-major
        buf = at.create(G.LocalAllocOp, [], [SharedBufferType((1,) + t.shape, t.element, lay)]).result
        zero = at.constant(0, i32)
        at.create(G.LocalStoreOp, [src, buf, zero], [])
        at.create(G.FenceAsyncSharedOp, [], [])
        at.create(O.BarrierOp, [], [])
        view = at.op(G.LocalIndexOp, buf, zero, result_type=buf.type)
        staged.append((buf, None))
        return view

    @staticmethod
    def from_stage(v, b, done):
        ld = _stage_of(v)
        buf = ld.buffer
        one = SharedBufferType((1,) + buf.type.tile_shape, buf.type.element, buf.type.layout)
        view = b.op(G.LocalIndexOp, buf, ld.index, result_type=one)
        done.append(ld)
        return view


def _drop_wait_barrier(body):
    """The barrier the pipeliner put behind waits for tensor copies only: with the copies moved behind the
    point where the previous iteration's dots are done (and its barrier), it orders nothing. A barrier-wait on
    the copy's stage barrier already makes the bytes visible to the waiting thread, and the stages are read by
    the warpgroup units (no thread reads them itself)."""
    if any(isinstance(o, (G.LocalLoadOp, G.AsyncWaitOp)) for o in body.ops):
        return
    first = next((o for o in body.ops if isinstance(o, O.BarrierOp)), None)
    i = body.ops.index(first) if first is not None else 0
    if first is None or i == 0 or not isinstance(body.ops[i - 1], G.MBarrierWaitOp):
        return
    if any(isinstance(o, (G.TmaCopyOp, G.AsyncCopyOp)) for o in body.ops[:i]):
        return
    later = [o for o in body.ops[i + 1:] if isinstance(o, O.BarrierOp)]
    copies = [o for o in body.ops if isinstance(o, G.TmaCopyOp)]
    if later and copies and all(body.ops.index(c) > body.ops.index(later[0]) for c in copies):
        first.erase()


__all__ = ["WarpGroupDot", "uses_warpgroups"]
