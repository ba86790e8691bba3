"""software-pipeline: loads that feed matrix-unit dots in a ``for`` loop become asynchronous global -> shared
copies into a ring of ``num_stages`` buffers, issued ``num_stages - 1`` iterations ahead.

For a loop ``for i in range(lb, ub, step)`` whose body loads tiles ``x = load(p(i, args))`` that only feed dots
(through ``convert_layout`` to a matrix-unit operand layout), with ``S = num_stages`` (the loop's own
``num_stages`` from ``tl.range`` first, else the kernel's):

- one ``local_alloc`` per load: ``smem<S x tile>``, placed by :func:`tilec.gpu.layouts.shared_for_operand`;
- prologue: iterations ``0 .. S-2`` each copy their tiles into stages ``0 .. S-2`` (masked off past ``ub``) and
  ``async_commit``;
- each load's copies form their own commit group; where the body first uses a load, an ``async_wait`` (this
  thread's copies of that group, and the earlier ones, are done; the count follows from the groups committed by
  then, see :func:`recount_waits`) and a ``barrier`` (everybody's are) come before its ``local_load``, which reads
  the stage straight into the dot operand layout; so attention's ``q @ k`` starts while ``v`` still arrives;
- behind the body's first barrier (every thread is done with iteration ``i - 1``) go iteration ``i + S - 1``'s
  copies into the stages iteration ``i - 1`` used;
- after the loop, ``async_wait {pending = 0}``, a barrier and ``local_dealloc``.

Dot operands computed before the loop (attention's ``q``) go to a one-stage buffer written once before the
loop and read (``local_load``) where the dot needs them, instead of holding registers through the loop.

Addresses for the iteration ahead come from extra carried copies of the loop values the address computations
read, advanced by the same ops the body uses to advance them (so the pass applies when those are pure and do not
depend on the loop's other results); the stage read and the stage written are carried counters. ``other`` must
be absent or zero (masked-off elements of an asynchronous copy are zero). How a copy happens is the target's
business: a copy engine where the target has one for the vector width, else a plain load and store.
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.core import BlockArgument, OpResult
from ...ir.types import SharedBufferType, TileType, i1, i32, i64
from ..layouts import MmaOperandLayout, SharedLayout, shared_for_operand, swizzle_bytes
from .common import Pass, elem_bytes, pointee_bytes


def _chain_ok(v, body, iv, args, seen):
    """True when ``v`` can be recomputed for another iteration: built by pure ops of ``body`` from the induction
    variable, carried values and values defined outside the loop."""
    if v in seen:
        return True
    seen.add(v)
    if isinstance(v, BlockArgument):
        return v.block is not body or v is iv or v in args
    op = v.op
    if op.parent is not body:
        return not body.parent_op.is_ancestor_of(op)
    if not op.is_pure or op.regions or isinstance(op, O.DotOp):
        return False
    return all(_chain_ok(o, body, iv, args, seen) for o in op.operands)


def _clone(v, body, mapping, b):
    """``v`` recomputed under ``mapping`` (loop values -> values for another iteration), ops inserted at ``b``."""
    if v in mapping:
        return mapping[v]
    if isinstance(v, BlockArgument) or v.op.parent is not body:
        return v
    op = v.op
    for o in op.operands:
        _clone(o, body, mapping, b)
    new = op.clone(mapping)
    b.insert(new)
    return mapping[v]


def _args_used(values, body, args):
    """The carried values (block arguments in ``args``) that ``values`` are computed from inside ``body``."""
    out, stack, seen = [], list(values), set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in args:
            out.append(v)
        elif isinstance(v, OpResult) and v.op.parent is body:
            stack.extend(v.op.operands)
    return sorted(out, key=args.index)


def _is_zero(v) -> bool:
    while isinstance(v, OpResult) and isinstance(v.op, (O.SplatOp, G.ConvertLayoutOp)):
        v = v.op.operands[0]
    return isinstance(v, OpResult) and isinstance(v.op, O.ConstantOp) and v.op.attrs["value"] == 0


def operand_layout(ld):
    """The matrix-unit operand layout every use of load ``ld`` converts to (None: not only feeding dots)."""
    uses = ld.result.uses
    layouts = set()
    for user, _ in uses:
        if not isinstance(user, G.ConvertLayoutOp):
            return None
        lay = user.result.type.layout
        if not isinstance(lay, MmaOperandLayout):
            return None
        if not all(isinstance(u, O.DotOp) for u, _ in user.result.uses):
            return None
        layouts.add(lay)
    return layouts.pop() if len(layouts) == 1 else None


class SoftwarePipeline(Pass):
    name = "software-pipeline"

    def __init__(self, num_stages: int = 3):
        self.num_stages = num_stages

    def run(self, module):
        changed = False
        for f in module.funcs:
            for op in list(f.walk()):
                if isinstance(op, O.ForOp) and op.parent is not None:
                    new = self.pipeline(op)  # the rebuilt loop, or None
                    changed |= new is not None
                    changed |= self.stage_invariant_operands(new or op)
        return changed

    @staticmethod
    def stage_invariant_operands(loop) -> bool:
        """A dot operand computed before the loop (attention's ``q``) is kept in a one-stage shared buffer
        written once before the loop and read where the dot needs it each iteration, instead of holding its
        registers across the whole loop."""
        body = loop.body
        changed = False
        for dot in [o for o in body.ops if isinstance(o, O.DotOp)]:
            for idx in (0, 1):
                v = dot.operands[idx]
                if not (isinstance(v, OpResult) and isinstance(v.op, G.ConvertLayoutOp) and
                        isinstance(v.type.layout, MmaOperandLayout) and not loop.is_ancestor_of(v.op)):
                    continue
                src = v.op.src
                t = src.type
                b = Builder()
                b.set_insertion_point_before(loop)
                b.loc = loop.loc
                kdim = 1 if idx == 0 else 0
                lay = shared_for_operand(t.shape, (kdim, 1 - kdim), elem_bytes(t))
                buf = b.create(G.LocalAllocOp, [], [SharedBufferType((1,) + t.shape, t.element, lay)]).result
                zero = b.constant(0, i32)
                b.create(G.LocalStoreOp, [src, buf, zero], [])
                b.create(O.BarrierOp, [], [])
                r = Builder()
                r.set_insertion_point_before(dot)
                ld = r.create(G.LocalLoadOp, [buf, zero], [v.type]).result
                dot.set_operand(idx, ld)
                a = Builder()
                a.set_insertion_point_after(loop)
                a.create(O.BarrierOp, [], [])
                a.create(G.LocalDeallocOp, [buf], [])
                changed = True
        return changed

    # -- matching ------------------------------------------------------------------------------------------
    def candidates(self, loop):
        body, iv, args = loop.body, loop.induction_var, list(loop.iter_args)
        out = []
        for ld in body.ops:
            if isinstance(ld, O.DescriptorLoadOp):
                lay = operand_layout(ld)
                if lay is not None and self.tma_layout(ld) is not None and \
                        all(_chain_ok(v, body, iv, set(args), set()) for v in ld.offsets):
                    out.append((ld, lay))
                continue
            if not (isinstance(ld, O.LoadOp) and ld.result.type.is_tile and ld.result.type.rank == 2):
                continue
            if ld.other is not None and not _is_zero(ld.other):
                continue
            if ld.attrs.get("volatile"):
                continue
            lay = operand_layout(ld)
            if lay is None:
                continue
            addr = [ld.ptr] + ([ld.mask] if ld.mask is not None else [])
            if all(_chain_ok(v, body, iv, set(args), set()) for v in addr):
                out.append((ld, lay))
        return out

    @staticmethod
    def tma_layout(ld):
        """The shared layout of a descriptor load's stages and the copy engine's swizzle for it (None: the
        copy engine cannot write that layout)."""
        t = ld.result.type
        lay = shared_for_operand(t.shape, (1, 0), elem_bytes(t))
        sw = swizzle_bytes(lay, t.shape, elem_bytes(t))
        return None if sw is None else (lay, sw)

    def pipeline(self, loop: O.ForOp):
        S = loop.attrs.get("num_stages", self.num_stages)
        step = loop.step
        if S < 2 or not (isinstance(step, OpResult) and isinstance(step.op, O.ConstantOp) and
                         step.op.attrs["value"] > 0):
            return None
        body, iv, args = loop.body, loop.induction_var, list(loop.iter_args)
        loads = self.candidates(loop)
        if not loads:
            return None
        y = body.terminator
        used = _args_used([v for ld, _ in loads for v in _address(ld)], body, args)
        # the values advancing those carried values must themselves be recomputable from them alone
        closure = list(used)
        while True:
            more = [a for a in _args_used([y.operands[args.index(c)] for c in closure], body, args)
                    if a not in closure]
            if not more:
                break
            closure += more
        if not all(_chain_ok(y.operands[args.index(a)], body, iv, set(args), set()) for a in closure):
            return None
        closure.sort(key=args.index)
        t_iv = iv.type
        b = Builder()
        b.set_insertion_point_before(loop)
        b.loc = loop.loc
        bufs, tma = [], {}  # tma: id(descriptor load) -> (descriptor address, stage barriers, bytes it announces)
        for ld, lay in loads:
            if isinstance(ld, O.DescriptorLoadOp):
                smem, swizzle = self.tma_layout(ld)
                t = ld.result.type
                bufs.append(b.create(G.LocalAllocOp, [], [SharedBufferType((S,) + t.shape, t.element, smem)]).result)
                tma[id(ld)] = self.descriptor(b, ld, smem, swizzle)
                continue
            pt = ld.ptr.type
            smem = shared_for_operand(pt.shape, _order_of(pt), pointee_bytes(pt))
            bt = SharedBufferType((S,) + pt.shape, pt.element.pointee, smem)
            bufs.append(b.create(G.LocalAllocOp, [], [bt]).result)
        # each load its own copy group, numbered in the order the loop body first uses them
        def consumer(u):  # the dot a conversion feeds (the place the data is really needed)
            return min((body.ops.index(d) for d, _ in u.result.uses if d.parent is body), default=body.ops.index(u))
        first = {id(ld): min(consumer(u) for u, _ in ld.result.uses) for ld, _ in loads}
        order = sorted(range(len(loads)), key=lambda j: first[id(loads[j][0])])
        loads = [loads[j] for j in order]
        bufs = [bufs[j] for j in order]
        L = len(loads)
        # tensor copies first needed at the same place share one barrier per stage: the group's first copy
        # announces all of the group's bytes, and one wait covers them (a barrier each costs a wait and an
        # arrive per iteration)
        groups = {}
        for ld, _ in loads:
            if id(ld) in tma:
                groups.setdefault(first[id(ld)], []).append(ld)
        for group in groups.values():
            bars = self.stage_barriers(b, S)
            total = sum(g.result.type.numel * g.result.type.element.bytes for g in group)
            for g in group:
                tma[id(g)] = (tma[id(g)], bars, total if g is group[0] else 0)
        # prologue: iterations 0 .. S-2 into stages 0 .. S-2
        state = {a: loop.inits[args.index(a)] for a in closure}
        for s in range(S - 1):
            it = loop.lb if s == 0 else b.op(O.AddOp, loop.lb, b.constant(s * step.op.attrs["value"], t_iv))
            mapping = {iv: it, **state}
            cond = b.op(O.CmpOp, it, loop.ub, predicate="lt")
            self.copies(b, loads, bufs, body, dict(mapping), cond, b.constant(s, i32), tma)
            m2 = dict(mapping)
            state = {a: _clone(y.operands[args.index(a)], body, m2, b) for a in closure}
        ahead_inits = [state[a] for a in closure]
        zero, last = b.constant(0, i32), b.constant(S - 1, i32)
        # carried: the loop values for the iteration ahead, the stage read, the stage written, the parity of
        # the read stage's barrier phase
        # (the parity only with tensor copies)
        counters = [zero, last] + ([zero] if tma else [])
        new_loop = _add_carried(loop, ahead_inits + counters)
        body = new_loop.body
        n = len(body.args) - len(counters)
        ahead = list(body.args[n - len(closure):n])
        rd, wr = body.args[n], body.args[n + 1]
        phase = body.args[n + 2] if tma else None
        cp_group = {}  # id(pointer load) -> its copy group's number in an iteration
        for ld, _ in loads:
            if id(ld) not in tma:
                cp_group[id(ld)] = len(cp_group)
        # where the loads are first needed: wait for the group of the last load needed there (groups finish
        # in order), a barrier, then read the stages
        waits = []
        j = 0
        while j < L:
            k = j
            while k + 1 < L and first[id(loads[k + 1][0])] == first[id(loads[j][0])]:
                k += 1
            users = sorted((u for ld, _ in loads[j:k + 1] for u, _ in ld.result.uses), key=body.ops.index)
            at = Builder()
            at.set_insertion_point_before(users[0])
            at.loc = users[0].loc
            for bars in dict.fromkeys(tma[id(ld)][1] for ld, _ in loads[j:k + 1] if id(ld) in tma):
                at.create(G.MBarrierWaitOp, [bars, rd, phase], [])
            last_cp = [cp_group[id(ld)] for ld, _ in loads[:k + 1] if id(ld) in cp_group]
            if any(id(ld) in cp_group for ld, _ in loads[j:k + 1]):
                waits.append(at.create(G.AsyncWaitOp, [], [], {"pending": 0, "group": last_cp[-1],
                                                              "ahead": (S - 1) * len(cp_group)}))
            at.create(O.BarrierOp, [], [])
            for (ld, _), buf in zip(loads[j:k + 1], bufs[j:k + 1]):
                for user, _ in list(ld.result.uses):
                    r = Builder()
                    r.set_insertion_point_before(user)
                    v = r.create(G.LocalLoadOp, [buf, rd], [user.result.type]).result
                    user.result.replace_all_uses_with(v)
                    user.erase()
            j = k + 1
        # the copies for iteration i + S - 1, into the stages iteration i - 1 read: behind the first barrier,
        # when every thread is done with iteration i - 1
        first_barrier = next(o for o in body.ops if isinstance(o, O.BarrierOp))
        b.set_insertion_point_after(first_barrier)
        it = b.op(O.AddOp, iv, b.constant((S - 1) * step.op.attrs["value"], t_iv))
        mapping = {iv: it, **dict(zip(closure, ahead))}
        cond = b.op(O.CmpOp, it, new_loop.ub, predicate="lt")
        self.copies(b, loads, bufs, body, dict(mapping), cond, wr, tma)
        recount_waits(body)
        for ld, _ in loads:
            ld.erase()
        ny = body.terminator
        b.set_insertion_point_before(ny)
        m2 = {iv: it, **dict(zip(closure, ahead))}
        nexts = [_clone(ny.operands[args.index(a)], body, m2, b) for a in closure]
        one, stages = b.constant(1, i32), b.constant(S, i32)
        rd1, wr1 = b.op(O.AddOp, rd, one), b.op(O.AddOp, wr, one)
        wraps = b.op(O.CmpOp, rd1, stages, predicate="eq")
        rd_n = b.op(O.SelectOp, wraps, zero, rd1)
        wr_n = b.op(O.SelectOp, b.op(O.CmpOp, wr1, stages, predicate="eq"), zero, wr1)
        ph_n = [b.op(O.SelectOp, wraps, b.op(O.XorOp, phase, one), phase)] if tma else []
        ny.set_operands(list(ny.operands) + nexts + [rd_n, wr_n] + ph_n)
        # after the loop: nothing in flight, buffers released
        b.set_insertion_point_after(new_loop)
        b.create(G.AsyncWaitOp, [], [], {"pending": 0})
        b.create(O.BarrierOp, [], [])  # every thread's last reads are done before the bytes are reused
        rings = list(dict.fromkeys(bars for _, bars, _ in tma.values()))
        for bars in rings:
            b.create(G.MBarrierInvalOp, [bars], [])
        for buf in bufs + rings:
            b.create(G.LocalDeallocOp, [buf], [])
        return new_loop

    @staticmethod
    def descriptor(b, ld, smem, swizzle):
        """Before the loop: the copy engine's descriptor of ``ld``'s tensor (boxes one column block wide)."""
        t = ld.result.type
        box = (t.shape[0], smem.block_cols(t.shape))
        func = ld
        while not isinstance(func, O.FuncOp):
            func = func.parent_op
        slot = sum(1 for o in func.walk() if isinstance(o, G.TensormapCreateOp))
        desc = b.create(G.TensormapCreateOp, [ld.base, *ld.shape, *ld.strides], [i64],
                        {"box": box, "swizzle": swizzle, "padding": ld.attrs["padding"], "slot": slot}).result
        return desc

    @staticmethod
    def stage_barriers(b, S):
        """``S`` initialised barriers, one per stage, for the tensor copies first needed at one place."""
        bars = b.create(G.LocalAllocOp, [], [SharedBufferType((S, 1), i64, SharedLayout(1, 1, 1, (0,)))]).result
        b.create(G.MBarrierInitOp, [bars], [])
        return bars

    @staticmethod
    def copies(b, loads, bufs, body, mapping, cond, stage, tma):
        """``async_copy`` of every pointer load's tile for the iteration ``mapping`` describes, masked by
        ``cond``, each committed as its own group; ``tma_copy`` of every descriptor load's block."""
        for (ld, _), buf in zip(loads, bufs):
            if id(ld) in tma:
                desc, bars, announce = tma[id(ld)]
                coords = [_clone(o, body, mapping, b) for o in ld.offsets]
                b.create(G.TmaCopyOp, [buf, stage, bars, desc, cond, *coords], [], {"announce": announce})
                continue
            ptr = _clone(ld.ptr, body, mapping, b)
            t = ld.ptr.type
            guard = b.op(O.SplatOp, cond, result_type=TileType(t.shape, i1, t.layout))
            mask = guard if ld.mask is None else b.op(O.AndOp, _clone(ld.mask, body, mapping, b), guard)
            b.create(G.AsyncCopyOp, [buf, stage, ptr, mask], [], {"cache": ld.attrs.get("cache", "")})
            b.create(G.AsyncCommitOp, [], [])


def recount_waits(body):
    """Set each in-loop ``async_wait``'s pending count from where it stands: groups committed by then (the
    prologue's ``ahead`` plus the commits above it in this iteration) minus the groups up to the one it needs.
    Passes that move the copies call this again."""
    commits = 0
    for op in body.ops:
        if isinstance(op, G.AsyncCommitOp):
            commits += 1
        elif isinstance(op, G.AsyncWaitOp) and op.attrs.get("group", -1) >= 0:
            op.attrs["pending"] = max(0, op.attrs["ahead"] + commits - op.attrs["group"] - 1)


def _address(ld):
    """The values a pipelined load's address and mask are computed from."""
    if isinstance(ld, O.DescriptorLoadOp):
        return list(ld.offsets)
    return [ld.ptr] + ([ld.mask] if ld.mask is not None else [])


def _order_of(t):
    """Dimensions of tile type ``t`` from fastest to slowest in its register layout (the global order)."""
    ll = t.layout.to_linear(t.shape)
    for basis in ll.reg + ll.lane:
        nz = [d for d, v in enumerate(basis) if v]
        if len(nz) == 1:
            fast = nz[0]
            return (fast,) + tuple(d for d in range(t.rank - 1, -1, -1) if d != fast)
    return tuple(range(t.rank - 1, -1, -1))


def _add_carried(loop, extra_inits):
    """Rebuild ``loop`` with more carried values (appended), moving its body; returns the new loop."""
    body = loop.body
    for v in extra_inits:
        body.add_arg(v.type)
    region = loop.regions[0]
    loop.regions = []
    new = O.ForOp(list(loop.operands) + list(extra_inits), [r.type for r in loop.results] +
                  [v.type for v in extra_inits], dict(loop.attrs), [region], loop.loc)
    region.parent = new
    loop.parent.insert(loop.parent.ops.index(loop), new)
    for old, r in zip(loop.results, new.results):
        old.replace_all_uses_with(r)
    loop.erase()
    return new


__all__ = ["SoftwarePipeline"]
