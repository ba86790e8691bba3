"""Lowering of structured control flow: ``for``/``if``/``while`` become basic blocks with one phi per
carried register."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.blocks import enter_loop
from ...errors import BackendError
from ...ir import ops as O
from . import packed_phis
from .registry import lowers
from .values import num_regs


def _enter_loop(L, kind: str, names, values):
    """Branch from the current block into a new loop: a block ``kind.name`` per name (the first is the loop's
    head, where the builder is left) and at the head a phi per register of ``values``, which enter with them.
    Returns (the blocks, the phis)."""
    b = L.b
    pre, blocks = enter_loop(b, *(f"{kind}.{name}" for name in names))
    phis = [b.phi(v.type) for v in values]
    for p, v in zip(phis, values):
        p.add_incoming(v, pre)
    return blocks, phis


def _loop_back(L, head, phis, values):
    """End an iteration: each phi takes the matching register of ``values`` from the current block (the latch),
    which branches back to ``head``."""
    latch = L.b.block
    for p, v in zip(phis, values):
        p.add_incoming(v, latch)
    L.b.branch(head)


@lowers(O.ForOp)
def lower_for(L, op):
    b = L.b
    lb, ub, step = L.get(op.lb), L.get(op.ub), L.get(op.step)
    flat, shapes = L._flatten([L.get(v) for v in op.inits])
    groups = packed_phis.plan(flat, shapes)  # 8-bit registers cross the back edge as 32-bit words
    init = packed_phis.pack(b, flat, groups)
    (header, body, exit_), (iv, *phis) = _enter_loop(L, "for", ("header", "body", "exit"), [lb, *init])
    carried = packed_phis.unpack(b, phis, groups)
    signed = op.lb.type.is_signed
    cmp = b.icmp_signed if signed else b.icmp_unsigned
    sc = step.constant if isinstance(step, ir.Constant) else None
    if sc is not None and (not signed or sc < (1 << (step.type.width - 1))):
        cond = cmp("<", iv, ub)
    elif sc is not None:
        cond = cmp(">", iv, ub)
    else:
        pos = b.icmp_signed(">", step, ir.Constant(step.type, 0))
        cond = b.select(pos, cmp("<", iv, ub), cmp(">", iv, ub))
    b.cbranch(cond, body, exit_)
    b.position_at_end(body)
    L.bind(op.induction_var, iv)
    L.bind_flat(op.iter_args, carried, shapes)
    y = L.block(op.body)
    nxt, _ = L._flatten([L.get(v) for v in y.operands]) if y is not None else ([], [])
    _loop_back(L, header, [iv, *phis], [b.add(iv, step), *packed_phis.pack(b, nxt, groups)])
    b.position_at_end(exit_)
    L.bind_flat(op.results, carried, shapes)


@lowers(O.IfOp)
def lower_if(L, op):
    b = L.b
    cond = L.get(op.cond)
    then_bb = L.fn.append_basic_block("if.then")
    else_bb = L.fn.append_basic_block("if.else")
    merge = L.fn.append_basic_block("if.end")
    b.cbranch(cond, then_bb, else_bb)
    incoming = []
    shapes = None
    for region, bb in zip(op.regions, (then_bb, else_bb)):
        b.position_at_end(bb)
        y = L.block(region.block) if region.blocks else None
        vals = [L.get(v) for v in y.operands] if y is not None else []
        flat, shapes_ = L._flatten(vals)
        shapes = shapes_ if vals else shapes
        incoming.append((flat, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    if op.results:
        nflat = len(incoming[0][0])
        phis = []
        for i in range(nflat):
            p = b.phi(incoming[0][0][i].type)
            for flat, blk in incoming:
                p.add_incoming(flat[i], blk)
            phis.append(p)
        L.bind_flat(op.results, phis, shapes)


@lowers(O.WhileOp)
def lower_while(L, op):
    b = L.b
    before, after = op.regions[0].block, op.regions[1].block
    flat, shapes = L._flatten([L.get(v) for v in op.inits])
    (head, body, exit_), phis = _enter_loop(L, "while", ("before", "after", "exit"), flat)
    L.bind_flat(before.args, phis, shapes)
    c = L.block(before)
    fwd = [L.get(v) for v in c.values]
    b.cbranch(L.get(c.cond), body, exit_)
    b.position_at_end(body)
    for a, v in zip(after.args, fwd):
        L.bind(a, v)
    y = L.block(after)
    nxt, _ = L._flatten([L.get(v) for v in y.operands])
    _loop_back(L, head, phis, nxt)
    b.position_at_end(exit_)
    for r, v in zip(op.results, fwd):
        L.bind(r, v)


@lowers(O.CallOp)
def lower_call(L, op):
    """A call to a device function: the arguments' registers in, the results' registers out (caller and callee
    agree on the layouts: call-boundaries)."""
    fn = L.module.globals.get(op.attrs["callee"])
    if fn is None:
        raise BackendError(f"internal: call to @{op.attrs['callee']}, which is not a device function")
    flat, _ = L._flatten([L.get(v) for v in op.operands])
    r = L.b.call(fn, flat)
    n = [num_regs(t.type) if t.type.is_tile else None for t in op.results]
    total = sum(k or 1 for k in n)
    regs = [r] if total == 1 else [L.b.extract_value(r, i) for i in range(total)]
    L.bind_flat(op.results, regs, n)
