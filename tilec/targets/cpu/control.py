"""Structured control flow -> basic blocks. Scalar carried values are phis; tile carried values live in buffers
written at each ``yield`` (through temporaries when one yielded tile reads another carried buffer, e.g. a
swap)."""
from __future__ import annotations

from ...codegen import llvm_types as LT
from ...errors import BackendError
from .nodes import Buf, Node


def _carry(L, values, types):
    """Loop-carried storage for ``values``: tiles get a buffer filled with their initial value."""
    out = []
    for v, t in zip(values, types):
        if t.is_tile:
            buf = L.alloc(t)
            L.fill(buf, v)
            out.append(buf)
        else:
            out.append(v)
    return out


def write_tiles(L, pairs):
    """Write yielded tile nodes into their carried buffers: ``pairs`` of (target Buf, node)."""
    pairs = [(t, v) for t, v in pairs if v is not t]
    bases = {t.base for t, _ in pairs}
    staged = []
    for t, v in pairs:
        if isinstance(v, Node) and (v.reads & (bases - {t.base})):
            v = _copy(L, v)
        staged.append((t, v))
    for t, v in staged:
        L.fill(t, v)


def _copy(L, buf):
    new = L.alloc(buf.type)
    L.fill(new, buf)
    return new


def _phis(L, pre, values):
    phis = []
    for v in values:
        if isinstance(v, Node):
            phis.append(v)
        else:
            p = L.b.phi(v.type)
            p.add_incoming(v, pre)
            phis.append(p)
    return phis


def _close(L, carried, nexts, latch):
    scal = [(p, n) for p, n in zip(carried, nexts) if not isinstance(p, Node)]
    for p, n in scal:
        p.add_incoming(n, latch)


def _yield_values(L, blk):
    """Lower ``blk`` up to its terminator; return the terminator's operand values (nodes or LLVM values)."""
    for op in blk.ops[:-1] if blk.terminator is not None else blk.ops:
        L.op(op)
    term = blk.terminator
    return term, ([L.get(v) for v in term.operands] if term is not None else [])


def _store_tiles(L, carried, nexts):
    write_tiles(L, [(c, n) for c, n in zip(carried, nexts) if isinstance(c, Buf)])


def op_for(L, op):
    b = L.b
    lb, ub, step = (L.get(v) for v in (op.lb, op.ub, op.step))
    t = op.lb.type
    carried0 = _carry(L, [L.get(v) for v in op.inits], [v.type for v in op.inits])
    pre = b.block
    head = b.append_basic_block("for.head")
    body = b.append_basic_block("for.body")
    done = b.append_basic_block("for.end")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(LT.scalar_type(t), name="iv")
    iv.add_incoming(lb, pre)
    carried = _phis(L, pre, carried0)
    cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned
    c = L.consts.get(op.step)
    if isinstance(c, int):
        cond = cmp("<", iv, ub) if c > 0 else cmp(">", iv, ub)
    else:
        pos = b.icmp_signed(">", step, LT.const(step.type, 0))
        cond = b.select(pos, cmp("<", iv, ub), cmp(">", iv, ub))
    b.cbranch(cond, body, done)
    b.position_at_end(body)
    L.vals[op.body.args[0]] = iv
    for a, v in zip(op.iter_args, carried):
        L.vals[a] = v
    _, nexts = _yield_values(L, op.body)
    _store_tiles(L, carried, nexts)
    nxt = b.add(iv, step)
    latch = b.block
    iv.add_incoming(nxt, latch)
    _close(L, carried, nexts, latch)
    b.branch(head)
    b.position_at_end(done)
    for r, v in zip(op.results, carried):
        L.vals[r] = v


def op_if(L, op):
    b = L.b
    types = [r.type for r in op.results]
    bufs = [L.alloc(t) if t.is_tile else None for t in types]
    then_bb = b.append_basic_block("if.then")
    else_bb = b.append_basic_block("if.else")
    merge = b.append_basic_block("if.end")
    b.cbranch(L.get(op.cond), then_bb, else_bb)
    incoming = []
    for region, bb in zip(op.regions, (then_bb, else_bb)):
        b.position_at_end(bb)
        if region.blocks:
            _, vals = _yield_values(L, region.block)
        else:
            vals = []
        if types and len(vals) != len(types):
            raise BackendError("'if' region yields the wrong number of values")
        write_tiles(L, [(buf, v) for buf, v in zip(bufs, vals) if buf is not None])
        incoming.append((b.block, vals))
        if not b.block.is_terminated:
            b.branch(merge)
    b.position_at_end(merge)
    for i, (r, t) in enumerate(zip(op.results, types)):
        if t.is_tile:
            L.vals[r] = bufs[i]
        else:
            p = b.phi(LT.scalar_type(t))
            for blk, vals in incoming:
                p.add_incoming(vals[i], blk)
            L.vals[r] = p


def op_while(L, op):
    b = L.b
    before, after = op.regions[0].block, op.regions[1].block
    carried0 = _carry(L, [L.get(v) for v in op.inits], [v.type for v in op.inits])
    pre = b.block
    head = b.append_basic_block("while.before")
    body = b.append_basic_block("while.after")
    done = b.append_basic_block("while.end")
    b.branch(head)
    b.position_at_end(head)
    carried = _phis(L, pre, carried0)
    for a, v in zip(before.args, carried):
        L.vals[a] = v
    term, vals = _yield_values(L, before)
    if term is None or term.name != "condition":
        raise BackendError("'while' before-region must end in 'condition'")
    cond, fwd = vals[0], vals[1:]
    b.cbranch(cond, body, done)
    b.position_at_end(body)
    for a, v in zip(after.args, fwd):
        L.vals[a] = v
    _, nexts = _yield_values(L, after)
    _store_tiles(L, carried, nexts)
    _close(L, carried, nexts, b.block)
    b.branch(head)
    b.position_at_end(done)
    for r, v in zip(op.results, fwd):
        L.vals[r] = v


HANDLERS = {"for": op_for, "if": op_if, "while": op_while}
