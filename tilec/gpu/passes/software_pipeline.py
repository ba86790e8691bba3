"""software-pipeline: a load in a ``for`` loop whose only user is a shared-memory allocation becomes a ring of
``num_stages`` buffers filled by asynchronous copies issued ``num_stages - 1`` iterations ahead.

stage-operands puts every matrix-unit operand that comes from memory into shared memory as
``buf = local_alloc(load(p))``, read through views (``local_trans``) and ``local_load``s or by the matrix units
themselves. That is the only pattern this pass knows, so it pipelines any vendor's matrix-unit operands and any
spelling of them (transposed or not) alike. In three steps, each its own function:

- **match** (:func:`match`): the loop's ``(load, alloc)`` pairs: a ``load`` of a 2-d or 3-d (batched) tile (``other`` absent or
  zero, not volatile) or a ``descriptor_load`` the copy engine can write in the buffer's placement, whose address
  can be recomputed for another iteration (pure ops of the body from the induction variable, carried values and
  values from outside; the carried values it reads must advance by such ops too);
- **schedule** (:func:`schedule`): where each buffer is first needed (the first op in the body that reads it,
  views included), the order of the copy groups (first needed first), and which tensor copies share a barrier
  (those first needed at the same place: the first announces all their bytes, one wait covers them);
- **emit** (:class:`Emitter`): a barrier (the rings may reuse scratch bytes of ops before the loop);
  ``S = num_stages`` (the loop's own from ``tl.range`` first, else the kernel's,
  fewer when the rings would not fit the target's shared memory, or when at least two stages would fit beside a
  second block on the multiprocessor and ``S`` would not: ``GpuTarget.shared_for_two_blocks``) and a ring ``smem<S x tile>`` per pair, in the
  allocation's placement; a prologue copying iterations ``0 .. S-2`` into stages ``0 .. S-2`` (masked off past
  the loop's end), each pointer load's copies their own commit group; where a buffer is first needed an
  ``async_wait`` (or ``mbarrier_wait`` for tensor copies) and a barrier, then ``local_index(ring, read stage)``
  replaces the allocation for all its users; behind the body's first barrier (every thread is done with
  iteration ``i - 1``) the copies of iteration ``i + S - 1`` into the stages iteration ``i - 1`` read; after the
  loop a final wait, a barrier and the rings' release.

Addresses for the iteration ahead come from extra carried copies of the loop values the address computations
read, advanced by the same ops the body uses; the stage read and the stage written (and, with tensor copies, the
read stage's barrier phase) are carried counters. How a copy happens is the target's business: a copy engine
where it has one for the vector width, else a plain load and store.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import ops as O
from ...ir.builder import Builder
from ...ir.core import BlockArgument, OpResult
from ...ir.types import PointerType, ScalarType, SharedBufferType, TileType, i1, i32, i64
from .. import ops as G
from ..layouts import SharedLayout, swizzle_bytes
from .common import Pass, elem_bytes, is_zero
from ...passes.utils import values_used_from_outside
from ...targets.options import Options
from .stage_operands import register_order
from ..scratch import scratch_bytes
from .allocate_shared import buffer_bytes


# -- match ------------------------------------------------------------------------------------------------------
@dataclass
class Staged:
    """One pipelined load: the load, the allocation it fills, and (filled by schedule/emit) where the buffer is
    first needed, its ring, its copy group or tensor-copy barrier."""
    load: object
    alloc: object
    first: int = 0
    ring: object = None
    group: int = -1          # commit group of a pointer load's copies within an iteration
    tma: tuple = None        # (descriptor, stage barriers, bytes announced) of a tensor copy
    registers: bool = False  # copied through registers (loaded an iteration ahead, stored into its stage)
    carried: object = None   # the register path's tile for the iteration ahead, as carried by the loop

    @property
    def is_tma(self) -> bool:
        return isinstance(self.load, O.DescriptorLoadOp)

    @property
    def is_async(self) -> bool:
        return not self.is_tma and not self.registers

    def address(self):
        """The values its address (and mask) are computed from."""
        if self.is_tma:
            return list(self.load.offsets)
        return [self.load.ptr] + ([self.load.mask] if self.load.mask is not None else [])


def recomputable(v, body, iv, args, seen=None):
    """True when ``v`` can be recomputed for another iteration: built by pure ops of ``body`` from the induction
    variable, carried values and values defined outside the loop."""
    seen = set() if seen is None else seen
    if v in seen:
        return True
    seen.add(v)
    if isinstance(v, BlockArgument):
        return v.block is not body or v is iv or v in args
    op = v.op
    if op.parent is not body:
        return not body.parent_op.is_ancestor_of(op)
    if op.regions:
        return pure_if(op) and all(recomputable(o, body, iv, args, seen) for o in values_used_from_outside(op))
    if not op.is_pure or isinstance(op, O.DotOp):
        return False
    return all(recomputable(o, body, iv, args, seen) for o in op.operands)


def pure_if(op) -> bool:
    """An ``if`` whose branches only compute (pure ops and nested such ``if``\\ s): flatten-loops renews carried
    values under one, and it can be recomputed for another iteration like a pure op."""
    return isinstance(op, O.IfOp) and all(
        o.is_terminator or isinstance(o, O.IfOp) or (o.is_pure and not o.regions and not isinstance(o, O.DotOp))
        for o in op.walk())



def tma_swizzle(alloc):
    """The copy engine's swizzle for writing the allocation's placement (None: it cannot)."""
    t = alloc.result.type
    lay = t.layout
    if lay.order[0] != len(t.tile_shape) - 1:
        return None  # the copy engine writes whole rows of the tensor's last dimension
    return swizzle_bytes(lay, t.tile_shape, elem_bytes(t))


def transposing(ld, alloc) -> bool:
    """Whether ``alloc``'s placement keeps a different dimension contiguous than ``ld``'s tile does in
    registers (and in memory): an 8-bit or tf32 operand that must be k-contiguous but is stored the other way.
    Asynchronous copies move contiguous bytes, so such a tile has to go through registers."""
    return alloc.result.type.layout.order[0] != register_order(ld.ptr.type)[0]


def match(loop, async_copies=True):
    """The loop's pipelinable ``(load, alloc)`` pairs as :class:`Staged`, in body order. A pointer load goes
    through registers (``Staged.registers``) where the target has no asynchronous copies or the placement
    transposes (``transposing``); copies narrower than the copy engine takes (unaligned rows) stay
    asynchronous copies that the lowering does synchronously, which costs no registers across iterations."""
    body, iv, args = loop.body, loop.induction_var, set(loop.iter_args)
    out = []
    for ld in body.ops:
        if not isinstance(ld, (O.LoadOp, O.DescriptorLoadOp)) or len(ld.result.uses) != 1:
            continue
        alloc = ld.result.uses[0][0]
        if not isinstance(alloc, G.LocalAllocOp) or alloc.parent is not body:
            continue
        s = Staged(ld, alloc)
        if s.is_tma:
            if tma_swizzle(alloc) is None:
                continue
        elif not (ld.result.type.is_tile and ld.result.type.rank in (2, 3)) or ld.attrs.get("volatile") or \
                (ld.other is not None and not is_zero(ld.other)):
            continue
        else:
            s.registers = not async_copies or transposing(ld, alloc)
        if all(recomputable(v, body, iv, args) for v in s.address()):
            out.append(s)
    return out


def carried_closure(loop, staged):
    """The carried values the addresses read, closed under what advances them; None when an advance is not
    recomputable."""
    body, iv, args = loop.body, loop.induction_var, list(loop.iter_args)
    y = body.terminator
    closure = _args_used([v for s in staged for v in s.address()], body, args)
    while True:
        more = [a for a in _args_used([y.operands[args.index(c)] for c in closure], body, args) if a not in closure]
        if not more:
            break
        closure += more
    if not all(recomputable(y.operands[args.index(a)], body, iv, set(args)) for a in closure):
        return None
    return sorted(closure, key=args.index)


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
            stack.extend(values_used_from_outside(v.op) if v.op.regions else v.op.operands)
    return sorted(out, key=args.index)


# -- schedule ---------------------------------------------------------------------------------------------------
def _top(op, block):
    while op.parent is not block:
        op = op.parent_op
    return op


def needed_at(user, body) -> int:
    """Index in ``body`` of the op that really needs a buffer ``user`` reads: for a ``local_load``, the first op
    using the loaded registers (the dot, not the load placed just before it), so that operands of one dot are
    waited for together."""
    if isinstance(user, G.LocalLoadOp) and user.result.uses:
        return min(body.ops.index(_top(u, body)) for u, _ in user.result.uses)
    return body.ops.index(_top(user, body))


def schedule(loop, staged):
    """Fill in where each buffer is first needed and each pointer load's commit group; return the pairs in the
    order they are first needed (that is the order their groups complete in)."""
    body = loop.body
    for s in staged:
        s.first = min(needed_at(u, body) for u, _ in G.buffer_users(s.alloc.result))
    staged = sorted(staged, key=lambda s: s.first)
    groups = 0
    for s in staged:
        if s.is_async:
            s.group, groups = groups, groups + 1
    return staged


def tma_groups(staged):
    """Tensor copies first needed at the same place, grouped: they share one barrier per stage."""
    groups = {}
    for s in staged:
        if s.is_tma:
            groups.setdefault(s.first, []).append(s)
    return list(groups.values())


# -- emit -------------------------------------------------------------------------------------------------------
def reserved_bytes(loop, staged) -> int:
    """Shared memory the loop needs besides its rings: buffers allocated outside it that it reads (a staged
    loop-invariant operand), buffers staged inside it that the pipeliner does not take, and the largest scratch
    space of one of its ops (they come and go, one at a time)."""
    taken = {id(s.alloc) for s in staged}
    outside, inside, scratch = set(), 0, 0
    for op in loop.walk():
        scratch = max(scratch, scratch_bytes(op))
        if isinstance(op, G.LocalAllocOp) and id(op) not in taken:
            inside += buffer_bytes(op.result.type)
        for v in op.operands:
            root = G.buffer_root(v) if isinstance(v.type, SharedBufferType) else None
            if root is not None and not loop.is_ancestor_of(root):
                outside.add(root)
    return sum(buffer_bytes(r.result.type) for r in outside) + inside + scratch


def stages_that_fit(S, staged, limit, reserved=0):
    """``S``, or fewer stages when the rings would take more than ``limit - reserved`` bytes of shared memory
    (at least 2: with fewer there is nothing to overlap; 0 when even 2 do not fit)."""
    per_stage = sum(t.tile_numel * elem_bytes(t) for t in (s.alloc.result.type for s in staged))
    if not limit:
        return S
    while S >= 2 and S * per_stage > limit - reserved:
        S -= 1
    return S if S >= 2 else 0


class Emitter:
    """Rebuilds one loop with its rings (see the module docstring); ``run`` returns the new loop."""

    def __init__(self, loop, staged, closure, S):
        self.loop, self.staged, self.closure, self.S = loop, staged, closure, S
        self.step = loop.step.op.attrs["value"]
        self.args = list(loop.iter_args)  # the loop is rebuilt: what is needed of the old one, kept

    def run(self):
        loop, S = self.loop, self.S
        b = Builder()
        b.set_insertion_point_before(loop)
        b.loc = loop.loc
        self.allocate_rings(b)
        ahead_inits, regs_inits = self.prologue(b)
        zero, last = b.constant(0, i32), b.constant(S - 1, i32)
        has_tma = any(s.is_tma for s in self.staged)
        counters = [zero, last] + ([zero] if has_tma else [])
        new = _add_carried(loop, ahead_inits + regs_inits + counters)
        body = new.body
        n = len(body.args) - len(counters)
        ahead = list(body.args[n - len(regs_inits) - len(self.closure):n - len(regs_inits)])
        for s, a in zip(self.by_registers, body.args[n - len(regs_inits):n]):
            s.carried = a
        rd, wr = body.args[n], body.args[n + 1]
        phase = body.args[n + 2] if has_tma else None
        self.waits(body, rd, phase)
        b, nexts, regs_next = self.ahead_copies(body, new, ahead, wr)
        for s in self.staged:
            s.alloc.erase()
            s.load.erase()
        self.advance(b, body, nexts, regs_next, rd, wr, phase, zero)
        self.epilogue(new)
        return new

    @property
    def by_registers(self):
        return [s for s in self.staged if s.registers]

    def allocate_rings(self, b):
        # the rings may take bytes that ops before the loop used as scratch (a layout conversion's): every
        # thread must be done with those before the first copy lands
        b.create(O.BarrierOp, [], [])
        for s in self.staged:
            t = s.alloc.result.type
            s.ring = b.create(G.LocalAllocOp, [], [SharedBufferType((self.S,) + t.tile_shape, t.element,
                                                                    t.layout)]).result
            if s.is_tma:
                s.tma = (self.descriptor(b, s), None, 0)
        for group in tma_groups(self.staged):
            bars = b.create(G.LocalAllocOp, [], [SharedBufferType((self.S, 1), i64,
                                                                  SharedLayout(1, 1, 1, (0,)))]).result
            b.create(G.MBarrierInitOp, [bars], [])
            total = sum(g.load.result.type.numel * g.load.result.type.element.bytes for g in group)
            for g in group:
                g.tma = (g.tma[0], bars, total if g is group[0] else 0)

    @staticmethod
    def descriptor(b, s):
        """Before the loop: the copy engine's descriptor of the load's tensor (boxes one column block wide)."""
        ld = s.load
        t = s.alloc.result.type
        box = (t.tile_shape[0], t.layout.block_cols(t.tile_shape))
        func = ld
        while not isinstance(func, O.FuncOp):
            func = func.parent_op
        slot = sum(1 for o in func.walk() if isinstance(o, G.TensormapCreateOp))
        return b.create(G.TensormapCreateOp, [ld.base, *ld.shape, *ld.strides], [i64],
                        {"box": box, "swizzle": tma_swizzle(s.alloc), "padding": ld.attrs["padding"],
                         "slot": slot}).result

    def prologue(self, b):
        """Iterations 0 .. S-2 into stages 0 .. S-2; returns the carried values for the iteration ahead."""
        loop, body = self.loop, self.loop.body
        args, y, iv = self.args, body.terminator, loop.induction_var
        state = {a: loop.inits[args.index(a)] for a in self.closure}
        for s in range(self.S - 1):
            it = loop.lb if s == 0 else b.op(O.AddOp, loop.lb, b.constant(s * self.step, iv.type))
            mapping = {iv: it, **state}
            cond = b.op(O.CmpOp, it, loop.ub, predicate="lt")
            self.copies(b, body, dict(mapping), cond, b.constant(s, i32))
            m2 = dict(mapping)
            state = {a: _clone(y.operands[args.index(a)], body, m2, b) for a in self.closure}
        # the register path's tiles for iteration S - 1, stored when the loop's first iteration copies
        it = b.op(O.AddOp, loop.lb, b.constant((self.S - 1) * self.step, iv.type))
        cond = b.op(O.CmpOp, it, loop.ub, predicate="lt")
        regs = [self.load_ahead(b, s, body, {iv: it, **state}, cond) for s in self.by_registers]
        return [state[a] for a in self.closure], regs

    @staticmethod
    def load_ahead(b, s, body, mapping, cond):
        """``s``'s tile loaded into registers for the iteration ``mapping`` describes, masked by ``cond`` (zero
        where masked off). Float elements whose registers differ from their memory form (bf16, fp8) are loaded
        as integers of their width: the tile only moves to shared memory, and ``local_store`` takes bits."""
        ld = s.load
        ptr = _clone(ld.ptr, body, mapping, b)
        t = ld.ptr.type
        guard = b.op(O.SplatOp, cond, result_type=TileType(t.shape, i1, t.layout))
        mask = guard if ld.mask is None else b.op(O.AndOp, _clone(ld.mask, body, mapping, b), guard)
        et = t.element.pointee
        rt = ld.result.type
        if et.name == "bf16" or et.name.startswith("f8"):
            bits = ScalarType(f"i{et.bits}")
            ptr = b.op(O.BitcastOp, ptr, result_type=t.with_element(PointerType(bits, t.element.address_space)))
            rt = rt.with_element(bits)
        other = b.constant(0, rt)
        return b.create(O.LoadOp, [ptr, mask, other], [rt], dict(ld.attrs)).result

    def waits(self, body, rd, phase):
        """Where buffers are first needed: the wait for the last of them (groups complete in order) or their
        tensor copies' barrier, a barrier, and the read stage in place of each allocation."""
        groups = sum(1 for s in self.staged if s.is_async)
        at_first = {}
        for s in self.staged:
            at_first.setdefault(s.first, []).append(s)
        for _, here in sorted(at_first.items()):
            anchor = min((_top(u, body) for s in here for u, _ in s.alloc.result.uses), key=body.ops.index)
            anchor = min(anchor, body.ops[here[0].first], key=body.ops.index)
            at = Builder()
            at.set_insertion_point_before(anchor)
            at.loc = anchor.loc
            for bars in dict.fromkeys(s.tma[1] for s in here if s.is_tma):
                at.create(G.MBarrierWaitOp, [bars, rd, phase], [])
            mine = [s.group for s in here if s.is_async]
            if mine:  # groups complete in order: waiting for the last one here covers those needed earlier
                last = max(mine)
                at.create(G.AsyncWaitOp, [], [], {"pending": 0, "group": last, "ahead": (self.S - 1) * groups})
            at.create(O.BarrierOp, [], [])
            for s in here:
                t = s.alloc.result.type
                stage = at.create(G.LocalIndexOp, [s.ring, rd], [SharedBufferType((1,) + t.tile_shape, t.element,
                                                                                  t.layout)]).result
                s.alloc.result.replace_all_uses_with(stage)

    def ahead_copies(self, body, new, ahead, wr):
        """The copies of iteration i + S - 1 into the stages iteration i - 1 read, behind the body's first
        barrier (every thread is done with iteration i - 1). Returns that iteration's induction value."""
        first_barrier = next(o for o in body.ops if isinstance(o, O.BarrierOp))
        b = Builder()
        b.set_insertion_point_after(first_barrier)
        iv = new.induction_var
        it = b.op(O.AddOp, iv, b.constant((self.S - 1) * self.step, iv.type))
        mapping = {iv: it, **dict(zip(self.closure, ahead))}
        cond = b.op(O.CmpOp, it, new.ub, predicate="lt")
        self.copies(b, body, mapping, cond, wr)
        recount_waits(body)
        # the carried loop values one iteration further, and the register path's loads for that iteration
        m2 = dict(mapping)
        nexts = [_clone(body.terminator.operands[self.args.index(a)], body, m2, b) for a in self.closure]
        it2 = b.op(O.AddOp, iv, b.constant(self.S * self.step, iv.type))
        cond2 = b.op(O.CmpOp, it2, new.ub, predicate="lt")
        m3 = {iv: it2, **dict(zip(self.closure, nexts))}
        regs = [self.load_ahead(b, s, body, dict(m3), cond2) for s in self.by_registers]
        return b, nexts, regs

    def advance(self, b, body, nexts, regs_next, rd, wr, phase, zero):
        """The yield carries the next iteration-ahead values and register tiles, the next stages and the
        barrier phase."""
        ny = body.terminator
        one, stages = b.constant(1, i32), b.constant(self.S, i32)
        rd1, wr1 = b.op(O.AddOp, rd, one), b.op(O.AddOp, wr, one)
        wraps = b.op(O.CmpOp, rd1, stages, predicate="eq")
        rd_n = b.op(O.SelectOp, wraps, zero, rd1)
        wr_n = b.op(O.SelectOp, b.op(O.CmpOp, wr1, stages, predicate="eq"), zero, wr1)
        ph_n = [b.op(O.SelectOp, wraps, b.op(O.XorOp, phase, one), phase)] if phase is not None else []
        ny.set_operands(list(ny.operands) + nexts + regs_next + [rd_n, wr_n] + ph_n)

    def epilogue(self, new):
        """After the loop: nothing in flight, every thread's last reads done, rings released."""
        b = Builder()
        b.set_insertion_point_after(new)
        b.create(G.AsyncWaitOp, [], [], {"pending": 0})
        b.create(O.BarrierOp, [], [])
        bars = list(dict.fromkeys(s.tma[1] for s in self.staged if s.is_tma))
        for x in bars:
            b.create(G.MBarrierInvalOp, [x], [])
        for buf in [s.ring for s in self.staged] + bars:
            b.create(G.LocalDeallocOp, [buf], [])

    def copies(self, b, body, mapping, cond, stage):
        """The copies of every staged load for the iteration ``mapping`` describes, masked by ``cond``: each
        pointer load's ``async_copy`` committed as its own group; each descriptor load's ``tma_copy``."""
        for s in self.staged:
            ld = s.load
            if s.is_tma:
                desc, bars, announce = s.tma
                coords = [_clone(o, body, mapping, b) for o in ld.offsets]
                b.create(G.TmaCopyOp, [s.ring, stage, bars, desc, cond, *coords], [], {"announce": announce})
                continue
            if s.registers:  # in the prologue a fresh load; in the loop the tile loaded an iteration earlier
                x = s.carried if s.carried is not None else self.load_ahead(b, s, body, mapping, cond)
                b.create(G.LocalStoreOp, [x, s.ring, stage], [])
                continue
            ptr = _clone(ld.ptr, body, mapping, b)
            t = ld.ptr.type
            guard = b.op(O.SplatOp, cond, result_type=TileType(t.shape, i1, t.layout))
            mask = guard if ld.mask is None else b.op(O.AndOp, _clone(ld.mask, body, mapping, b), guard)
            b.create(G.AsyncCopyOp, [s.ring, stage, ptr, mask], [], {"cache": ld.attrs.get("cache", "")})
            b.create(G.AsyncCommitOp, [], [])


class SoftwarePipeline(Pass):
    name = "software-pipeline"

    def __init__(self, num_stages: int = Options.num_stages, shared_limit: int = 0, async_copies: bool = True,
                 two_blocks: int = 0):
        self.num_stages = num_stages
        self.shared_limit = shared_limit  # bytes the rings may take (0: no limit)
        self.async_copies = async_copies  # the target copies global -> shared asynchronously
        self.two_blocks = two_blocks      # a block's shared memory with a second block beside it (0: no bound)

    def run(self, module):
        changed = False
        for f in module.funcs:
            for op in list(f.walk()):
                if isinstance(op, O.ForOp) and op.parent is not None:
                    changed |= self.pipeline(op) is not None
        return changed

    def pipeline(self, loop):
        """The rebuilt loop, or None when nothing in it is pipelined."""
        S = loop.attrs.get("num_stages", self.num_stages)
        step = loop.step
        if S < 2 or not (isinstance(step, OpResult) and isinstance(step.op, O.ConstantOp) and
                         step.op.attrs["value"] > 0):
            return None
        staged = match(loop, self.async_copies)
        if not staged:
            return None
        reserved = reserved_bytes(loop, staged) if self.shared_limit or self.two_blocks else 0
        S = stages_that_fit(S, staged, self.shared_limit, reserved)
        if S > 2 and self.two_blocks:  # fewer stages, if that is what lets a second block in
            S = stages_that_fit(S, staged, self.two_blocks, reserved) or S
        closure = carried_closure(loop, staged)
        if not S or closure is None:
            return None
        return Emitter(loop, schedule(loop, staged), closure, S).run()


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


def _clone(v, body, mapping, b):
    """``v`` recomputed under ``mapping`` (loop values -> values for another iteration), ops inserted at ``b``."""
    if v in mapping:
        return mapping[v]
    if isinstance(v, BlockArgument) or v.op.parent is not body:
        return v
    op = v.op
    for o in values_used_from_outside(op) if op.regions else op.operands:
        _clone(o, body, mapping, b)
    new = op.clone(mapping)
    b.insert(new)
    return mapping[v]


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


__all__ = ["SoftwarePipeline", "recount_waits", "match", "schedule"]
