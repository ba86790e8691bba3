"""warpgroup-dot: dots that accelerate-dot gave a version-3 matrix-unit layout read their shared operands
through descriptors.

Runs after software-pipeline. An operand that stage-operands put in shared memory (``local_load`` of a buffer
or of a view of one: a ring stage, a transposed view, a one-stage buffer written from registers) is handed over
as that buffer; after ordinary writes into it (``local_alloc`` from registers, ``local_store``) a
``fence_async_shared`` follows, since the matrix units read asynchronously (insert-barriers orders the write
before the dot). A computed in registers stays in registers (the instructions take it there), as for
attention's ``p @ v``. Where a loop only carries the accumulator from one dot to the next, the dot stays
running across the back edge (see ``overlap``) unless it reads a buffer the loop rewrites from registers.
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.core import OpResult
from ...ir.types import SharedBufferType, i1
from ..layouts import MmaLayout
from .common import Pass, is_zero
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


def _fence_after_writes(view):
    """A ``fence_async_shared`` after every ordinary write of the buffer behind ``view`` (its ``local_alloc``
    from registers, ``local_store``s; once each): they must be ordered before the matrix units' asynchronous
    reads. Copies (``cp.async``, tensor copies) need none, as their completion wait already publishes them."""
    root = G.buffer_root(view)
    if root is None:
        return
    writes = ([root] if root.src is not None else []) + \
        [u for u, _ in G.buffer_users(root.result) if isinstance(u, G.LocalStoreOp)]
    for w in writes:
        ops = w.parent.ops
        i = ops.index(w)
        if i + 1 < len(ops) and isinstance(ops[i + 1], G.FenceAsyncSharedOp):
            continue
        b = Builder()
        b.set_insertion_point_after(w)
        b.create(G.FenceAsyncSharedOp, [], [])


def _rewritten_in(loop, dot) -> bool:
    """Whether a shared operand of ``dot`` is written from registers inside ``loop`` every iteration (the
    dot must then finish within its iteration, before the next write)."""
    for v in (dot.a, dot.b):
        root = G.buffer_root(v) if isinstance(v.type, SharedBufferType) else None
        if root is not None and root.src is not None and loop.is_ancestor_of(root):
            return True
    return False


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
            carried = [idx for u, idx in dot.result.uses if u is y]
            if len(carried) != 1 or _rewritten_in(loop, dot) or not _wait_in_branches(dot, y):
                continue
            i = carried[0]
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
        rings = {id(s) for s in (G.buffer_root(o.buffer) for o in body.ops if isinstance(o, G.LocalStoreOp))
                 if s is not None and s.src is None and s.result.type.num_buffers > 1}
        copies = [o for o in body.ops if isinstance(o, (G.AsyncCopyOp, G.AsyncCommitOp, G.TmaCopyOp)) or
                  isinstance(o, G.LocalStoreOp) and id(G.buffer_root(o.buffer)) in rings or
                  isinstance(o, G.FenceAsyncSharedOp)]
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
        """The dot on warpgroup units: an operand that stage-operands put in shared memory is handed over as
        the buffer it reads (its view), fenced after ordinary writes; A computed in registers stays there."""
        operands = []
        for v in (op.a, op.b):
            ld = _stage_of(v)
            if ld is None:
                operands.append(v)
                continue
            view = ld.buffer
            if view.type.num_buffers != 1:
                b = Builder()
                b.set_insertion_point_before(op)
                t = view.type
                view = b.create(G.LocalIndexOp, [view, ld.index],
                                [SharedBufferType((1,) + t.tile_shape, t.element, t.layout)]).result
            operands.append(view)
        if not isinstance(operands[1].type, SharedBufferType):
            raise ValueError("internal: a warpgroup dot's B must be staged in shared memory (stage-operands)")
        b = Builder()
        b.set_insertion_point_before(op)
        b.loc = op.loc
        old_acc = op.acc
        acc, use_acc = _restart(b, old_acc)
        new = b.create(G.WarpGroupDotOp, [operands[0], operands[1], acc] + ([use_acc] if use_acc else []),
                       [op.result.type], dict(op.attrs))
        loads = [_stage_of(v) for v in (op.a, op.b)]
        op.replace_with([new.result])
        if use_acc is not None and not old_acc.uses:  # the select the units now do: gone, so that the carried
            old_acc.op.erase()                          # accumulator feeds the next dot alone
        for ld in loads:
            if ld is not None:
                ld.erase()
        for v in operands[:2]:
            if isinstance(v.type, SharedBufferType):
                _fence_after_writes(v)


def _wait_in_branches(dot, y) -> bool:
    """Where ``dot``'s result is also read inside ``if``s after it (a flattened loop's epilogue, on a tile's last
    step), a ``warp_group_dot_wait`` at the top of each such branch hands it over there, so that the dot may
    stay running across the back edge on the other steps. False (nothing changed) for any other reader."""
    body = dot.parent
    at = body.ops.index(dot)
    branches = {}
    for u, idx in dot.result.uses:
        if u is y:
            continue
        top = _top(u, body)
        if not isinstance(top, O.IfOp) or body.ops.index(top) < at:
            return False
        blk = u.parent
        while blk.parent_op is not top:
            blk = blk.parent_op.parent
        branches.setdefault(id(blk), (blk, []))[1].append((u, idx))
    for blk, uses in branches.values():
        w = G.WarpGroupDotWaitOp([dot.result], [dot.result.type], {"pending": 0})
        blk.insert(0, w)
        for u, idx in uses:
            u.set_operand(idx, w.result)
    return True


def _restart(b, acc):
    """``(acc, None)``, or for an accumulator that is ``select(c, zeros, x)`` (or ``select(c, x, zeros)``) used by
    this dot alone, ``(x, use_acc)``: the units then start from the product where the accumulator restarts (a
    flattened loop's first step of a tile), and ``x`` stays the carried value the next dot reads in place."""
    if not (isinstance(acc, OpResult) and isinstance(acc.op, O.SelectOp) and len(acc.uses) == 1):
        return acc, None
    sel = acc.op
    if is_zero(sel.true_value):
        return sel.false_value, b.op(O.SelectOp, sel.cond, b.constant(False, i1), b.constant(True, i1))
    if is_zero(sel.false_value):
        return sel.true_value, sel.cond
    return acc, None



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
