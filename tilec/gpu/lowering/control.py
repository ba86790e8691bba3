"""Lowering of structured control flow: ``for``/``if``/``while`` become basic blocks with one phi per
carried register."""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import BackendError
from ...ir import ops as O
from .registry import lowers
from .values import num_regs


@lowers(O.ForOp)
def lower_for(L, op):
    b = L.b
    lb, ub, step = L.get(op.lb), L.get(op.ub), L.get(op.step)
    flat, shapes = L._flatten([L.get(v) for v in op.inits])
    pre = b.block
    header = L.fn.append_basic_block("for.header")
    body = L.fn.append_basic_block("for.body")
    exit_ = L.fn.append_basic_block("for.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lb.type)
    iv.add_incoming(lb, pre)
    phis = [b.phi(v.type) for v in flat]
    for p, v in zip(phis, flat):
        p.add_incoming(v, pre)
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
    L.bind_flat(op.iter_args, phis, shapes)
    y = L.block(op.body)
    nxt, _ = L._flatten([L.get(v) for v in y.operands]) if y is not None else ([], [])
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for p, v in zip(phis, nxt):
        p.add_incoming(v, latch)
    b.branch(header)
    b.position_at_end(exit_)
    L.bind_flat(op.results, phis, shapes)


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
    pre = b.block
    head = L.fn.append_basic_block("while.before")
    body = L.fn.append_basic_block("while.after")
    exit_ = L.fn.append_basic_block("while.exit")
    b.branch(head)
    b.position_at_end(head)
    phis = [b.phi(v.type) for v in flat]
    for p, v in zip(phis, flat):
        p.add_incoming(v, pre)
    L.bind_flat(before.args, phis, shapes)
    c = L.block(before)
    fwd = [L.get(v) for v in c.values]
    b.cbranch(L.get(c.cond), body, exit_)
    b.position_at_end(body)
    for a, v in zip(after.args, fwd):
        L.bind(a, v)
    y = L.block(after)
    nxt, _ = L._flatten([L.get(v) for v in y.operands])
    latch = b.block
    for p, v in zip(phis, nxt):
        p.add_incoming(v, latch)
    b.branch(head)
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
