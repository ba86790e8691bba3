"""flatten-loops: a ``for`` that asks for it (``tl.range(..., flatten=True)``) and holds one inner ``for`` becomes
one loop over all the inner iterations, so that the software pipeliner runs one pipeline across the outer
iterations instead of filling and draining it for each (a persistent matmul: the next tile's first copies are in
flight while the current tile's last dots run).

The outer body must be ``P; inner loop; E``: ``P`` pure ops (the tile's coordinates), the inner loop with constant
positive step and bounds defined outside the outer loop (the same trip count ``n`` for every outer iteration),
``E`` anything (the epilogue: stores). The outer loop needs a constant positive step too. Then, when the nest
runs at least one inner iteration (otherwise the original nest runs: the two versions sit in the branches of one
``if``)::

    P(lb)                                         # the first tile's values, computed once before the loop
    for t in range(0, outer_trips * n)  carrying (i, j, outer values, inner values, P's values the body reads):
        inner values = select(j == lb_j, init, inner values)   # inits from outside P (an accumulator's zeros)
        inner body(j, P's values, inner values) -> inner values
        if j + step_j >= ub_j:  outer values = E(i, ...)       # the epilogue, on a tile's last step
        P's values = if j + step_j >= ub_j: P(i + step) else P's values          # the next tile's, once per tile
        inner values from P = if j + step_j >= ub_j: their inits from P(i + step) else the body's
        i, j = (i + step, lb_j) if j + step_j >= ub_j else (i, j + step_j)

So ``P`` (integer divisions, for a grouped tile order) runs once per tile, not on every step. The values carried
are those the inner body reads, taken back through shape ops (``splat``, ``expand_dims``, ``broadcast``, which
cost nothing to redo), so a broadcast address tile is carried as its narrow source. Both ``if``\\ s that advance
carried values hold only pure ops, which the pipeliner can recompute for the iterations ahead. Only GPU
pipelines run this pass (on a CPU the nest is as fast).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.core import OpResult
from .base import Pass
from .utils import defined_outside

#: ops that only rearrange or repeat their operand: redone in the flattened body rather than carried
_SHAPE_OPS = (O.SplatOp, O.ExpandDimsOp, O.BroadcastOp)


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


def carried_values(pre, inner):
    """``(roots, redone)``: the values of ``P`` the inner body reads, taken back through shape ops to what is
    carried (``roots``), and the shape ops redone in the body from them (``redone``)."""
    defined = {r for op in pre for r in op.results}
    roots, redone = [], set()
    for op in pre:
        for r in op.results:
            if not any(u is not inner and inner.is_ancestor_of(u) for u, _ in r.uses):
                continue
            v = r
            while isinstance(v.op, _SHAPE_OPS) and v.op.operands[0] in defined:
                redone.add(v.op)
                v = v.op.operands[0]
            if v not in roots:
                roots.append(v)
    return roots, redone


def _clone_all(b, ops, mapping):
    """Clone ``ops`` under ``mapping`` at ``b``, except those whose results are mapped already."""
    for op in ops:
        if not all(r in mapping for r in op.results):
            b.insert(op.clone(mapping))


def _advance_if(b, cond, pre, base, then_values, else_values, loc):
    """``if cond: P under base; yield then_values(mapping) else: yield else_values`` (pure: recomputable)."""
    types = [v.type for v in else_values]
    op = b.if_(cond, types)
    tb = Builder(op.regions[0].block)
    tb.loc = loc
    m = dict(base)
    _clone_all(tb, pre, m)
    tb.yield_(*then_values(m))
    Builder(op.regions[1].block).yield_(*else_values)
    return op.results


def flatten(outer) -> bool:
    parts = nest(outer)
    if parts is None:
        return False
    pre, inner, post = parts
    defined = {r for op in pre for r in op.results}
    roots, redone = carried_values(pre, inner)
    from_p = [k for k, v in enumerate(inner.inits) if v in defined]  # inner values whose init P computes
    t = outer.lb.type
    b = Builder()
    b.set_insertion_point_before(outer)
    b.loc = outer.loc
    n_inner = _trips(b, inner.lb, inner.ub, inner.step)
    total = b.op(O.MulOp, _trips(b, outer.lb, outer.ub, outer.step), n_inner)
    version = b.if_(b.op(O.CmpOp, total, b.constant(0, t), predicate="gt"), [r.type for r in outer.results])
    for old, new in zip(outer.results, version.results):
        old.replace_all_uses_with(new)
    # then: the first tile's P, and the flattened loop
    tb = Builder(version.regions[0].block)
    tb.loc = outer.loc
    m0 = {outer.induction_var: outer.lb, **dict(zip(outer.iter_args, outer.inits))}
    _clone_all(tb, pre, m0)
    inner_inits = [m0.get(v, v) for v in inner.inits]
    flat = tb.for_(tb.constant(0, t), total, tb.constant(1, t),
                   [outer.lb, inner.lb, *outer.inits, *inner_inits, *[m0[r] for r in roots]])
    for key in ("num_stages",):
        if key in outer.attrs or key in inner.attrs:
            flat.attrs[key] = outer.attrs.get(key, inner.attrs.get(key))
    body, no, ni = flat.body, len(outer.inits), len(inner.inits)
    i, j = body.args[1], body.args[2]
    o_args = body.args[3:3 + no]
    i_args = body.args[3 + no:3 + no + ni]
    p_args = body.args[3 + no + ni:]
    fb = Builder(body)
    fb.loc = outer.loc
    m = {outer.induction_var: i, **dict(zip(outer.iter_args, o_args)), **dict(zip(roots, p_args))}
    for op in pre:
        if op in redone:
            fb.insert(op.clone(m))
    first = fb.op(O.CmpOp, j, inner.lb, predicate="eq") if len(from_p) < ni else None
    current = [a if k in from_p else fb.op(O.SelectOp, first, v, a)
               for k, (v, a) in enumerate(zip(inner.inits, i_args))]
    m.update({inner.induction_var: j, **dict(zip(inner.iter_args, current))})
    for op in inner.body.ops[:-1]:
        fb.insert(op.clone(m))
    inner_next = [m.get(v, v) for v in inner.body.terminator.operands]
    m.update(dict(zip(inner.results, inner_next)))
    j_step = fb.op(O.AddOp, j, inner.step)
    last = fb.op(O.CmpOp, j_step, inner.ub, predicate="ge")
    # the epilogue, with P's values it reads recomputed there
    epi = fb.if_(last, [v.type for v in o_args])
    eb = Builder(epi.regions[0].block)
    eb.loc = outer.loc
    me = dict(m)
    _clone_all(eb, pre, me)
    for op in post:
        eb.insert(op.clone(me))
    eb.yield_(*[me.get(v, v) for v in outer.body.terminator.operands])
    Builder(epi.regions[1].block).yield_(*o_args)
    i_step = fb.op(O.AddOp, i, outer.step)
    base = {outer.induction_var: i_step, **dict(zip(outer.iter_args, epi.results))}
    p_next = _advance_if(fb, last, pre, base, lambda mp: [mp[r] for r in roots], list(p_args), outer.loc) \
        if roots else []
    if from_p:
        inits_next = _advance_if(fb, last, pre, base, lambda mp: [mp[inner.inits[k]] for k in from_p],
                                 [inner_next[k] for k in from_p], outer.loc)
        for k, v in zip(from_p, inits_next):
            inner_next[k] = v
    i_next = fb.op(O.SelectOp, last, i_step, i)
    j_next = fb.op(O.SelectOp, last, inner.lb, j_step)
    fb.yield_(i_next, j_next, *epi.results, *inner_next, *p_next)
    tb.yield_(*flat.results[2:2 + no])
    # else: the original nest, unchanged (an inner loop that runs no iterations, or no outer iterations)
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


__all__ = ["FlattenLoops", "carried_values", "flatten", "nest"]
