"""flatten-loops: a ``for`` that asks for it (``tl.range(..., flatten=True)``) and holds one inner ``for`` becomes
one loop over all the inner iterations, so that the software pipeliner runs one pipeline across the outer
iterations instead of filling and draining it for each (a persistent matmul: the next tile's first copies are in
flight while the current tile's last dots run).

The outer body must be ``P; inner loop; E``: ``P`` pure ops (the tile's coordinates), the inner loop with constant
positive step and bounds defined outside the outer loop (the same trip count ``n`` for every outer iteration),
``E`` anything (the epilogue: stores). The outer loop needs a constant positive step too. Then, when ``n > 0``
(otherwise the original nest runs: the two versions sit in the branches of one ``if``)::

    for t in range(0, outer_trips * n)  carrying (i, j, outer values, inner values):
        P(i, outer values)                           # recomputed every iteration: pure
        inner values = select(j == lb_j, inner inits from P, inner values)
        inner body(j, inner values) -> inner values
        if j + step_j >= ub_j:  outer values = E(i, outer values, inner values)
        i, j = (i + step, lb_j) if j + step_j >= ub_j else (i, j + step_j)

Every value the inner body's loads need is computed from the carried ``i`` and ``j`` by pure ops and selects, which
the pipeliner recomputes for the iterations ahead. Only GPU pipelines run this pass (on a CPU the nest is as fast).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.core import OpResult
from .base import Pass
from .utils import defined_outside


def _positive_constant(v) -> bool:
    return isinstance(v, OpResult) and isinstance(v.op, O.ConstantOp) and isinstance(v.op.attrs["value"], int) \
        and v.op.attrs["value"] > 0


def _pure(op) -> bool:
    return not op.regions and "pure" in op.traits


def nest(outer):
    """``(P ops, inner loop, E ops)`` when ``outer`` can be flattened (see the module), else None."""
    if not outer.attrs.get("flatten") or not _positive_constant(outer.step):
        return None
    ops = outer.body.ops[:-1]
    loops = [op for op in ops if isinstance(op, (O.ForOp, O.WhileOp))]
    if len(loops) != 1 or not isinstance(loops[0], O.ForOp):
        return None
    inner = loops[0]
    k = ops.index(inner)
    pre, post = ops[:k], ops[k + 1:]
    if not all(_pure(op) for op in pre) or not _positive_constant(inner.step):
        return None
    if not all(defined_outside(v, outer) for v in (inner.lb, inner.ub, inner.step)):
        return None
    if inner.lb.type != outer.lb.type:
        return None
    return pre, inner, post


def _trips(b, lb, ub, step):
    """max(0, ceil((ub - lb) / step)) for a positive step."""
    t = lb.type
    one = b.constant(1, t)
    span = b.op(O.SubOp, ub, lb)
    n = b.op(O.DivOp, b.op(O.AddOp, span, b.op(O.SubOp, step, one)), step)
    return b.op(O.SelectOp, b.op(O.CmpOp, ub, lb, predicate="gt"), n, b.constant(0, t))


def flatten(outer) -> bool:
    parts = nest(outer)
    if parts is None:
        return False
    pre, inner, post = parts
    t = outer.lb.type
    b = Builder()
    b.set_insertion_point_before(outer)
    b.loc = outer.loc
    n_inner = _trips(b, inner.lb, inner.ub, inner.step)
    total = b.op(O.MulOp, _trips(b, outer.lb, outer.ub, outer.step), n_inner)
    version = b.if_(b.op(O.CmpOp, n_inner, b.constant(0, t), predicate="gt"), [r.type for r in outer.results])
    for old, new in zip(outer.results, version.results):
        old.replace_all_uses_with(new)
    # then: the flattened loop
    tb = Builder(version.regions[0].block)
    tb.loc = outer.loc
    dummies = [tb.constant(0, v.type) for v in inner.inits]  # overwritten by the first iteration's select
    flat = tb.for_(tb.constant(0, t), total, tb.constant(1, t), [outer.lb, inner.lb, *outer.inits, *dummies])
    for key in ("num_stages",):
        if key in outer.attrs or key in inner.attrs:
            flat.attrs[key] = outer.attrs.get(key, inner.attrs.get(key))
    body, no = flat.body, len(outer.inits)
    i, j = body.args[1], body.args[2]
    o_args, i_args = body.args[3:3 + no], body.args[3 + no:]
    fb = Builder(body)
    fb.loc = outer.loc
    m = {outer.induction_var: i, **dict(zip(outer.iter_args, o_args))}
    for op in pre:
        fb.insert(op.clone(m))
    first = fb.op(O.CmpOp, j, inner.lb, predicate="eq")
    selected = [fb.op(O.SelectOp, first, m.get(v, v), a) for v, a in zip(inner.inits, i_args)]
    m.update({inner.induction_var: j, **dict(zip(inner.iter_args, selected))})
    for op in inner.body.ops[:-1]:
        fb.insert(op.clone(m))
    inner_next = [m.get(v, v) for v in inner.body.terminator.operands]
    m.update(dict(zip(inner.results, inner_next)))
    j_step = fb.op(O.AddOp, j, inner.step)
    last = fb.op(O.CmpOp, j_step, inner.ub, predicate="ge")
    epi = fb.if_(last, [v.type for v in o_args])
    ib = Builder(epi.regions[0].block)
    ib.loc = outer.loc
    for op in post:
        ib.insert(op.clone(m))
    ib.yield_(*[m.get(v, v) for v in outer.body.terminator.operands])
    Builder(epi.regions[1].block).yield_(*o_args)
    i_next = fb.op(O.SelectOp, last, fb.op(O.AddOp, i, outer.step), i)
    j_next = fb.op(O.SelectOp, last, inner.lb, j_step)
    fb.yield_(i_next, j_next, *epi.results, *inner_next)
    tb.yield_(*flat.results[2:2 + no])
    # else: the original nest, unchanged (an inner loop that runs no iterations)
    outer.detach()
    else_block = version.regions[1].block
    else_block.append(outer)
    Builder(else_block).yield_(*outer.results)
    outer.attrs.pop("flatten", None)
    return True


class FlattenLoops(Pass):
    name = "flatten-loops"

    def run(self, module):
        changed = False
        for op in list(module.walk()):
            if isinstance(op, O.ForOp) and op.parent is not None and op.attrs.get("flatten"):
                changed |= flatten(op)
        return changed


__all__ = ["FlattenLoops", "flatten", "nest"]
