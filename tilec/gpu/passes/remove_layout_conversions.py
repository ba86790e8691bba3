"""Remove ``convert_layout`` ops that are not needed.

A conversion moves data between threads through shared memory (two barriers); recomputing a cheap value in the
wanted layout instead costs a few ALU instructions. So, until nothing changes:

- a conversion to the layout the value already has disappears; a conversion of a conversion starts from the
  original value;
- *rematerialisation*: a conversion of a value computed only from constants, splats, ``arange``, elementwise
  arithmetic, broadcasts and ``expand_dims`` (a small bounded tree) is replaced by the same computation built in
  the target layout; broadcasts and ``expand_dims`` pass the layout to their operands (blocked to itself, to its
  slice);
- ops left without uses are dropped.
"""
from __future__ import annotations

from ...ir import ops as O
from ...ir.builder import Builder
from ...ir.core import OpResult
from ..layouts import BlockedLayout, SliceLayout
from .common import Pass, convert_before, retype_behind_convert

MAX_REMAT_OPS = 40
FREE = ("constant", "splat", "arange")
REMAT = ("addptr", "cmp", "select", "cast", "hint", "bitcast", "fma")


def _rematerialisable(op) -> bool:
    return op.name in FREE or op.name in REMAT or (op.is_elementwise and "pure" in op.traits) \
        or isinstance(op, (O.BroadcastOp, O.ExpandDimsOp, O.ConvertLayoutOp))


def _operand_layout(op, i, layout):
    """The layout operand ``i`` must have for ``op``'s result to have ``layout`` (None: impossible)."""
    o = op.operands[i]
    if not o.type.is_tile:
        return "scalar"
    if isinstance(op, O.BroadcastOp):
        return layout if isinstance(layout, BlockedLayout) else None
    if isinstance(op, O.ExpandDimsOp):
        return SliceLayout(op.attrs["axis"], layout) if isinstance(layout, BlockedLayout) else None
    return layout if o.type.shape == op.results[0].type.shape else None


def _cost(v, layout, seen, budget):
    """Ops needed to rebuild ``v`` in ``layout``; None when impossible or over ``budget``."""
    if not v.type.is_tile or v.type.layout == layout:
        return 0
    key = (v, layout)
    if key in seen:
        return 0
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, O.ConvertLayoutOp):
        return _cost(op.src, layout, seen, budget)
    if not _rematerialisable(op) or len(op.results) != 1 or op.regions:
        return None
    seen.add(key)
    total = 1
    for i in range(len(op.operands)):
        lay = _operand_layout(op, i, layout)
        if lay is None:
            return None
        if lay == "scalar":
            continue
        c = _cost(op.operands[i], lay, seen, budget - total)
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
    op = v.op
    if isinstance(op, O.ConvertLayoutOp):
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


def _carried_layout(op, i):
    """The layout iter arg ``i`` of ``op`` would rather have: its body yields ``convert(x: L -> current)`` and
    every use of the argument converts it to ``L``. None when there is no such L."""
    arg = op.iter_args[i]
    if not arg.type.is_tile or not arg.uses:
        return None
    y = op.body.terminator
    v = y.operands[i]
    if not (isinstance(v, OpResult) and isinstance(v.op, O.ConvertLayoutOp)):
        return None
    want = v.op.src.type.layout
    if want == arg.type.layout:
        return None
    for use_op, _ in arg.uses:
        if not isinstance(use_op, O.ConvertLayoutOp) or use_op.result.type.layout != want:
            return None
    return want


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
            convert_before(op, 3 + i, want)
            arg.type = arg.type.with_layout(want)
            for use_op, _ in list(arg.uses):
                use_op.replace_with([arg])
            y = op.body.terminator
            y.set_operand(i, y.operands[i].op.src)
            retype_behind_convert(res, want, op)
            changed = True
        return changed

    def run(self, module):
        for f in module.funcs:
            for _ in range(8):
                if not self.sweep(f):
                    break
            _dce(f)

    def sweep(self, f) -> bool:
        changed = False
        for op in list(f.walk()):
            if isinstance(op, O.ForOp) and op.parent is not None:
                changed |= self.loop_carried(op)
        for op in list(f.walk()):
            if not isinstance(op, O.ConvertLayoutOp) or op.parent is None:
                continue
            want = op.result.type.layout
            src = op.src
            while isinstance(src, OpResult) and isinstance(src.op, O.ConvertLayoutOp):
                src = src.op.src
            if src.type.layout == want:
                op.replace_with([src])
                changed = True
                continue
            if src is not op.src:
                op.set_operand(0, src)
                changed = True
            if _cost(src, want, set(), MAX_REMAT_OPS) is not None:
                b = Builder()
                b.set_insertion_point_before(op)
                new = _build(src, want, b, {})
                op.replace_with([new])
                changed = True
        return changed
