"""Remove ``convert_layout`` ops that are not needed.

A conversion moves data between threads through shared memory (two barriers); recomputing a cheap value in the
wanted layout instead costs a few ALU instructions. So, until nothing changes:

- a conversion to the layout the value already has disappears; a conversion of a conversion starts from the
  original value;
- *rematerialisation*: a conversion of a value computed only from constants, splats, ``arange``, elementwise
  arithmetic, broadcasts and ``expand_dims`` (a small bounded tree) is replaced by the same computation built in
  the target layout; broadcasts and ``expand_dims`` pass the layout to their operands (blocked to itself, to its
  slice);
- *sinking*: a conversion out of a matrix-unit result layout (the accumulator of a dot, its row slices) or a
  reshape's ``#linear`` layout moves past the elementwise ops, reductions, reshapes, transposes, ``expand_dims``
  and broadcasts that use it, when their other operands come in that layout for free (a conversion from it, or a
  cheap rematerialisation, or a conversion before the loop of a value defined outside it); the math then runs
  where the dot (or reshape) left the data and the conversion
  ends up before the store (or vanishes into the next dot's operand, which for a chained dot is the same
  threads' registers);
- *hoisting*: a conversion inside a loop of a value defined outside it moves before the loop;
- a ``gather`` reads its source in whatever layout it has (through shared memory, or in registers when the
  threads already hold the gathered axis, which a conversion could not improve): a conversion feeding its
  source is skipped;
- ops left without uses are dropped.
"""
from __future__ import annotations

from collections import deque

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.core import BlockArgument, OpResult
from ..layouts import BlockedLayout, LinearEncoding, MatrixUnitLayout, SliceLayout, reshape_coords, transpose_coords
from .common import Pass, convert_before, retype_behind_convert

MAX_REMAT_OPS = 40
#: layouts a broadcast or expand_dims can produce in place (not slices)
SPREAD = (BlockedLayout, LinearEncoding, MatrixUnitLayout)
#: ops whose results may be recomputed in another layout where they are needed (besides pure elementwise ones)
REMAT = (O.ConstantOp, O.SplatOp, O.ArangeOp, O.HintOp, O.ReshapeOp, O.BroadcastOp, O.ExpandDimsOp,
         G.ConvertLayoutOp)


def _rematerialisable(op, at=None) -> bool:
    if isinstance(op, O.LoadOp):
        return _small_load(op, at)
    return isinstance(op, REMAT) or (op.is_elementwise and "pure" in op.traits)


def _small_load(op, at) -> bool:
    """A load may be repeated in another layout where it is needed (``at``) when its tile has no more elements
    than the block has threads (an epilogue's bias row: each thread then loads the few elements it uses, rather
    than the whole accumulator moving between threads to meet it) and nothing between the two places writes
    memory."""
    t = op.result.type
    if at is None or not t.is_tile or op.attrs.get("volatile") or t.layout is None:
        return False
    threads = t.layout.num_warps * 32
    if t.numel > threads or op.parent is None:
        return False
    block = op.parent
    while at is not None and at.parent is not block:
        at = at.parent_op
    if at is None:
        return False
    ops = block.ops
    i, j = ops.index(op), ops.index(at)
    return i < j and not any(not o.is_pure for o in ops[i + 1:j] if not isinstance(o, (O.LoadOp, O.BarrierOp)))


def _operand_layout(op, i, layout):
    """The layout operand ``i`` must have for ``op``'s result to have ``layout`` (None: impossible)."""
    o = op.operands[i]
    if not o.type.is_tile:
        return "scalar"
    if isinstance(op, O.BroadcastOp):
        return layout if isinstance(layout, SPREAD) else None
    if isinstance(op, O.ExpandDimsOp):
        return SliceLayout(op.attrs["axis"], layout) if isinstance(layout, SPREAD) else None
    if isinstance(op, O.ReshapeOp):  # the source laid out so that its elements stay where they are
        dst, src = op.results[0].type.shape, o.type.shape
        if not hasattr(layout, "to_linear") or any(d & (d - 1) for d in (*dst, *src)):
            return None
        return LinearEncoding.image(layout.to_linear(dst), src, reshape_coords(dst, src))
    return layout if o.type.shape == op.results[0].type.shape else None


def _cost(v, layout, seen, budget, at=None):
    """Ops needed to rebuild ``v`` in ``layout``; None when impossible or over ``budget``."""
    if not v.type.is_tile or v.type.layout == layout:
        return 0
    key = (v, layout)
    if key in seen:
        return 0
    if not isinstance(v, OpResult):
        return 1 if _renewed(v) is not None else None  # converted itself; the loop rule then carries it so
    op = v.op
    if isinstance(op, G.ConvertLayoutOp):
        return _cost(op.src, layout, seen, budget, at)
    if not _rematerialisable(op, at) or len(op.results) != 1 or op.regions:
        return None
    seen.add(key)
    total = 1
    for i in range(len(op.operands)):
        lay = _operand_layout(op, i, layout)
        if lay is None:
            return None
        if lay == "scalar":
            continue
        c = _cost(op.operands[i], lay, seen, budget - total, at)
        if c is None:
            return None
        total += c
        if total > budget:
            return None
    return total


def _build(v, layout, builder, memo):
    if not v.type.is_tile or v.type.layout == layout:
        return v
    key = (v, layout)
    if key in memo:
        return memo[key]
    if isinstance(v, BlockArgument):  # a renewed carried tile (see _cost)
        memo[key] = builder.op(G.ConvertLayoutOp, v, result_type=v.type.with_layout(layout))
        return memo[key]
    op = v.op
    if isinstance(op, G.ConvertLayoutOp):
        out = _build(op.src, layout, builder, memo)
    else:
        new_operands = []
        for i, o in enumerate(op.operands):
            lay = _operand_layout(op, i, layout)
            new_operands.append(o if lay == "scalar" else _build(o, lay, builder, memo))
        new = op.clone({})
        new.set_operands(new_operands)
        new.results[0].type = v.type.with_layout(layout)
        new.loc = op.loc
        builder.insert(new)
        out = new.results[0]
    memo[key] = out
    return out


def anchored(layout) -> bool:
    """A matrix-unit result layout, a reshape's ``#linear`` one, or a slice of either: where dots and reshapes
    leave data, which the math after them should use rather than convert away from."""
    while isinstance(layout, SliceLayout):
        layout = layout.parent
    return isinstance(layout, (MatrixUnitLayout, LinearEncoding))


def _carried_layout(op, i):
    """The layout iter arg ``i`` of ``op`` would rather have: its body yields ``convert(x: L -> current)`` and
    every use of the argument converts it to ``L`` (or L is a matrix-unit layout: the uses then start from a
    conversion that sinking moves on), or the argument is advanced in place (:func:`_advanced_layout`). None
    when there is no such L."""
    arg = op.iter_args[i]
    if not arg.type.is_tile or not arg.uses:
        return None
    y = op.body.terminator
    v = y.operands[i]
    renewed = _renewed(arg)
    if renewed is not None:
        keep = renewed[0].regions[1 - renewed[2]].blocks[0].terminator
        wants = {u.result.type.layout for u, _ in arg.uses if isinstance(u, G.ConvertLayoutOp)}
        if len(wants) != 1 or any(not isinstance(u, G.ConvertLayoutOp) and u is not keep for u, _ in arg.uses):
            return None
        return wants.pop()
    if not (isinstance(v, OpResult) and isinstance(v.op, G.ConvertLayoutOp)):
        return _advanced_layout(arg, v)
    want = v.op.src.type.layout
    if want == arg.type.layout:
        return None
    if anchored(want) and not anchored(arg.type.layout):
        return want
    for use_op, _ in arg.uses:
        if not isinstance(use_op, G.ConvertLayoutOp) or use_op.result.type.layout != want:
            return None
    return want


def _renewed(arg):
    """For a carried tile renewed under an ``if`` (flatten-loops' form: the loop yields a result of an ``if``,
    used by nothing else, whose one branch yields ``arg`` unchanged): ``(the if, the result's index, the index
    of the branch that yields a fresh value)``; None for any other value."""
    if not _carried(arg):
        return None
    y = arg.block.terminator
    v = y.operands[arg.index - 1] if y is not None else None
    if not (isinstance(v, OpResult) and isinstance(v.op, O.IfOp)) or len(v.uses) != 1:
        return None
    yields = [r.blocks[0].terminator.operands[v.index] for r in v.op.regions]
    if yields[1] is arg and yields[0] is not arg:
        return v.op, v.index, 0
    if yields[0] is arg and yields[1] is not arg:
        return v.op, v.index, 1
    return None


def _advanced_layout(arg, v):
    """For a carried tile advanced in place (a pointer tile's ``ptrs += step``: ``v``, the value yielded, is
    elementwise arithmetic on ``arg`` and operands that are cheap to build anywhere) whose every other use
    converts it to one layout L: L, where it can be carried with the advance made in L too (a load that wants
    its pointers in another layout than the loop's then converts them once, before the loop, rather than at
    every iteration). None otherwise."""
    chain, others, x = [], [], v
    while isinstance(x, OpResult) and x is not arg:
        op = x.op
        if not (op.is_elementwise and "pure" in op.traits) or len(op.results) != 1 or len(x.uses) != 1:
            return None
        tiles = [o for o in op.operands if o.type.is_tile]
        on = [o for o in tiles if _reaches(o, arg)]
        if len(on) != 1:
            return None
        chain.append(op)
        others += [o for o in tiles if o is not on[0]]
        x = on[0]
    if x is not arg or not chain:
        return None
    wants = {u.result.type.layout for u, _ in arg.uses if isinstance(u, G.ConvertLayoutOp)}
    if len(wants) != 1 or any(not isinstance(u, G.ConvertLayoutOp) and u not in chain for u, _ in arg.uses):
        return None
    want = wants.pop()
    return None if any(_cost(o, want, set(), MAX_REMAT_OPS) is None for o in others) else want


def _reaches(v, arg) -> bool:
    """``v`` is ``arg`` or computed from it by single-result ops in the same block."""
    seen = set()
    work = [v]
    while work:
        x = work.pop()
        if x is arg:
            return True
        if not isinstance(x, OpResult) or x.op in seen or x.op.parent is not arg.block:
            continue
        seen.add(x.op)
        work.extend(o for o in x.op.operands if o.type.is_tile)
    return False


def _free_in(v, layout, b, budget=MAX_REMAT_OPS, at=None):
    """``v`` in ``layout`` without moving data between threads (a conversion's source, or a cheap
    rematerialisation built at ``b``); None when that is not possible."""
    if not v.type.is_tile or v.type.layout == layout:
        return v
    if isinstance(v, OpResult) and isinstance(v.op, G.ConvertLayoutOp) and v.op.src.type.layout == layout:
        return v.op.src
    if _cost(v, layout, set(), budget, at) is None:
        return None
    return _build(v, layout, b, {})


def _carried(v) -> bool:
    """``v`` is a loop-carried value of a ``for`` (not its induction variable)."""
    return isinstance(v, BlockArgument) and isinstance(v.block.parent_op, O.ForOp) and v.index > 0


def _defined_outside(v, loop) -> bool:
    """``v`` is defined outside ``loop`` (and so the same at every iteration)."""
    if isinstance(v, OpResult):
        return not loop.is_ancestor_of(v.op)
    owner = v.block.parent_op if isinstance(v, BlockArgument) else None
    return owner is not None and owner is not loop and not loop.is_ancestor_of(owner)


def _invariant_in_loop(v, user) -> bool:
    """``v`` is defined outside the innermost ``for`` around ``user``."""
    loop = user.parent_op
    while loop is not None and not isinstance(loop, O.ForOp):
        loop = loop.parent_op
    return loop is not None and _defined_outside(v, loop)


def _sunk_layouts(user, layout):
    """(operand layout, result layouts) for ``user`` to run on an operand in ``layout``; None: it cannot."""
    if not user.results or user.regions and not isinstance(user, O.ReduceOp):
        return None
    if isinstance(user, O.ReduceOp):
        return layout, [SliceLayout(user.attrs["axis"], layout)] * len(user.results)
    if isinstance(user, O.ExpandDimsOp):
        ok = isinstance(layout, SliceLayout) and layout.dim == user.attrs["axis"]
        return (layout, [layout.parent]) if ok else None
    if isinstance(user, O.BroadcastOp):
        return (layout, [layout]) if isinstance(layout, (MatrixUnitLayout, LinearEncoding)) else None
    if isinstance(user, O.ReshapeOp):  # its elements stay where they are
        s, d = user.src.type.shape, user.result.type.shape
        return layout, [LinearEncoding.image(layout.to_linear(s), d, reshape_coords(s, d))]
    if isinstance(user, O.TransOp) and user.src.type.is_tile:  # likewise: only the dimensions' names change
        s, d = user.src.type.shape, user.result.type.shape
        return layout, [LinearEncoding.image(layout.to_linear(s), d, transpose_coords(user.attrs["order"]))]
    if user.is_elementwise and user.is_pure and len(user.results) == 1 and \
            all(not o.type.is_tile or o.type.shape == user.result.type.shape for o in user.operands):
        return layout, [layout]
    return None


def _sinks(src, dst) -> bool:
    """Whether a conversion from ``src`` to ``dst`` should sink: out of an anchored layout into one that is not,
    or from one reshape's layout into another's (the later reshape follows where the data is)."""
    base = lambda lay: base(lay.parent) if isinstance(lay, SliceLayout) else lay  # noqa: E731
    if anchored(src) and not anchored(dst):
        return True
    return isinstance(base(src), LinearEncoding) and isinstance(base(dst), LinearEncoding)


def _sink(conv) -> list:
    """Move ``conv`` (out of an anchored layout) past the users that can run in its source layout; the
    conversions that now follow those users (empty: nothing moved)."""
    src = conv.src
    lay = src.type.layout
    moved = []
    for user, _ in list(conv.result.uses):
        if user.parent is None or isinstance(user, O.YieldOp):
            continue
        plan = _sunk_layouts(user, lay)
        if plan is None:
            continue
        op_lay, res_lays = plan
        b = Builder()
        b.set_insertion_point_before(user)
        b.loc = user.loc
        operands = []
        for o in user.operands:
            if not o.type.is_tile:
                operands.append(o)
                continue
            x = src if o is conv.result else _free_in(o, op_lay, b, at=user)
            if x is None and _invariant_in_loop(o, user):
                # defined before the loop: converted once, in front of it (the hoisting rule moves it there),
                # rather than the loop's own values converted at every iteration to meet it
                x = b.op(G.ConvertLayoutOp, o, result_type=o.type.with_layout(op_lay))
            if x is None and _carried(o):
                # a loop-carried value: converting it here makes the yield a conversion out of the anchored
                # layout, so the loop rule then carries the value in that layout and this conversion goes away
                x = b.op(G.ConvertLayoutOp, o, result_type=o.type.with_layout(op_lay))
            if x is None:
                break
            operands.append(x)
        else:
            new = user.clone({})
            new.set_operands(operands)
            for r, rl in zip(new.results, res_lays):
                r.type = r.type.with_layout(rl)
            b.insert(new)
            for old, r in zip(user.results, new.results):
                back = b.op(G.ConvertLayoutOp, r, result_type=old.type)
                old.replace_all_uses_with(back)
                moved.append(back.op)
            user.erase()
    return moved


def _hoist(conv) -> bool:
    """A conversion in a loop body of a value from outside the loop moves in front of the loop."""
    loop = conv.parent_op
    if not isinstance(loop, O.ForOp) or conv.parent is not loop.body:
        return False
    if not _defined_outside(conv.src, loop):
        return False
    conv.move_before(loop)
    return True


def _dce(func):
    changed = True
    while changed:
        changed = False
        for op in list(func.walk(post_order=True)):
            if op is func or op.parent is None:
                continue
            if op.is_pure and not op.regions and op.results and not any(r.uses for r in op.results):
                op.erase()
                changed = True


class RemoveLayoutConversions(Pass):
    """Also the loop rule: a ``for`` whose carried tile is converted to layout L at every use and converted
    back from L before every yield carries it in L instead (conversions move to the loop's entry and exit)."""
    name = "remove-layout-conversions"

    def loop_carried(self, op) -> bool:
        changed = False
        for i in range(len(op.iter_args)):
            want = _carried_layout(op, i)
            if want is None:
                continue
            arg, res = op.iter_args[i], op.results[i]
            old = arg.type
            renewed = _renewed(arg)
            convert_before(op, 3 + i, want)
            arg.type = arg.type.with_layout(want)
            if renewed is not None:  # the if renews it in ``want``; the branch keeping it yields it as it is
                self.renew_in(renewed, want)
                for use_op, _ in [(u, x) for u, x in arg.uses if isinstance(u, G.ConvertLayoutOp)]:
                    use_op.replace_with([arg])
                retype_behind_convert(res, want, op)
                changed = True
                continue
            uses = list(arg.uses)
            if all(isinstance(u, G.ConvertLayoutOp) and u.result.type.layout == want for u, _ in uses):
                for use_op, _ in uses:
                    use_op.replace_with([arg])
            else:  # the uses start from a conversion back, which sinking then moves on
                b = Builder()
                b.set_insertion_point_before(op.body.ops[0])
                b.loc = op.loc
                back = b.op(G.ConvertLayoutOp, arg, result_type=old)
                for use_op, idx in uses:
                    if isinstance(use_op, G.ConvertLayoutOp) and use_op.result.type.layout == want:
                        use_op.replace_with([arg])
                    else:
                        use_op.set_operand(idx, back)
            y = op.body.terminator
            v = y.operands[i]
            if isinstance(v, OpResult) and isinstance(v.op, G.ConvertLayoutOp):
                y.set_operand(i, v.op.src)
            else:  # advanced in place: the advance, converted here, is rebuilt in ``want`` by the next sweep
                b = Builder()
                b.set_insertion_point_before(y)
                b.loc = op.loc
                y.set_operand(i, b.op(G.ConvertLayoutOp, v, result_type=v.type.with_layout(want)))
            retype_behind_convert(res, want, op)
            changed = True
        return changed

    @staticmethod
    def renew_in(renewed, want):
        """The ``if`` result of a renewed carried tile in ``want``: its fresh branch converts what it yields."""
        ifop, k, fresh = renewed
        r = ifop.results[k]
        r.type = r.type.with_layout(want)
        convert_before(ifop.regions[fresh].blocks[0].terminator, k, want)

    def run(self, module):
        for f in module.funcs:
            cleaned = False
            for _ in range(16):
                if not self.sweep(f):
                    break
                _dce(f)  # what a sweep left unused must not hold the next one back (the loop rule counts uses)
                cleaned = True
            if not cleaned:
                _dce(f)

    def sweep(self, f) -> bool:
        changed = False
        for op in list(f.walk()):
            if isinstance(op, O.ForOp) and op.parent is not None:
                changed |= self.loop_carried(op)
            elif isinstance(op, O.GatherOp) and isinstance(op.src, OpResult) and \
                    isinstance(op.src.op, G.ConvertLayoutOp):
                op.set_operand(0, op.src.op.src)
                changed = True
        work = deque(op for op in f.walk() if isinstance(op, G.ConvertLayoutOp))
        while work:  # in program order; one sunk past an op goes on past the next at once (long chains of math)
            op = work.popleft()
            if op.parent is not None:
                if _hoist(op):
                    changed = True
                if _sinks(op.src.type.layout, op.result.type.layout):
                    moved = _sink(op)
                    work.extendleft(reversed(moved))
                    changed |= bool(moved)
        for op in list(f.walk()):
            if not isinstance(op, G.ConvertLayoutOp) or op.parent is None:
                continue
            want = op.result.type.layout
            src = op.src
            while isinstance(src, OpResult) and isinstance(src.op, G.ConvertLayoutOp):
                src = src.op.src
            if src.type.layout == want:
                op.replace_with([src])
                changed = True
                continue
            if src is not op.src:
                op.set_operand(0, src)
                changed = True
            if _cost(src, want, set(), MAX_REMAT_OPS, op) is not None:
                b = Builder()
                b.set_insertion_point_before(op)
                new = _build(src, want, b, {})
                op.replace_with([new])
                changed = True
        return changed
