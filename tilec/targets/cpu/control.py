"""Structured control flow -> basic blocks. Scalar carried values are phis; tile carried values live in buffers
written at each ``yield`` (through temporaries when one yielded tile reads another carried buffer, e.g. a
swap).

A ``for`` tile that only ever advances by a uniform step (``ptrs += BLOCK * stride``: the yield is
``addptr``/``add`` of the carried tile and a splat) is strength-reduced: only the accumulated scalar step is
carried, and the tile stays lazy as ``init + splat(step)``, so pointer tiles keep their contiguity and loads
through them stay vector loads instead of gathers from a buffer of pointers.
"""
from __future__ import annotations

from ...codegen import llvm_types as LT
from ...codegen.blocks import enter_loop
from ...errors import BackendError
from ...ir import types as T
from ...ir.core import defining_op
from .nodes import Buf, Lazy, Node, stride_of
from ...ir import ops as O
from .registry import lowers


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
    """Write yielded tile nodes into their carried buffers: ``pairs`` of (target Buf, node). A node is staged in a
    temporary first when it reads another carried buffer (a swap) or reads its own buffer at elements other than
    the one being written (``x = tl.trans(x)``: a view of the buffer it overwrites)."""
    pairs = [(t, v) for t, v in pairs if v is not t]
    bases = {t.base for t, _ in pairs}
    staged = []
    for t, v in pairs:
        if isinstance(v, Node) and (v.reads & (bases - {t.base}) or not reads_in_place(v, t)):
            v = _copy(L, v)
        staged.append((t, v))
    for t, v in staged:
        L.fill(t, v)


def reads_in_place(node, target: Buf) -> bool:
    """Whether every read ``node`` makes of ``target``'s memory is of the element a fill of ``target`` writes at
    that point: only through elementwise ops (broadcast and expand_dims evaluate their operand at other indices)
    and only through a view laid out as ``target`` is (a transposed or reshaped view reads other elements)."""
    if target.base not in node.reads:
        return True
    if isinstance(node, Buf):
        return node.ptr is target.ptr and node.strides == target.strides and node.shape == target.shape
    if isinstance(node.op, (O.BroadcastOp, O.ExpandDimsOp)):
        return False
    return all(reads_in_place(a, target) for a in node.args if isinstance(a, Node))


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
    values = [L.get(v) for v in term.operands] if term is not None else []
    # the region's values go out of scope here (what it yields is carried on by the parent op), so a later write
    # must not try to materialise them at a point they don't dominate
    inside = {r for o in blk.ops for x in o.walk() for r in x.results}
    L.pending = [(v, n) for v, n in L.pending if v not in inside]
    return term, values


def _store_tiles(L, carried, nexts):
    write_tiles(L, [(c, n) for c, n in zip(carried, nexts) if isinstance(c, Buf)])


def _uniform_step(op, i):
    """The scalar by which tile iter arg ``i`` advances each iteration, if that is all the loop does to it."""
    arg = op.iter_args[i]
    if not arg.type.is_tile:
        return None
    y = op.body.terminator.operands[i] if op.body.terminator is not None else None
    d = defining_op(y) if y is not None else None
    if d is None or not isinstance(d, (O.AddPtrOp, O.AddOp)) or d.operands[0] is not arg or not arg.type.element.is_int \
            and isinstance(d, O.AddOp):
        return None
    s = defining_op(d.operands[1])
    if s is None or not isinstance(s, O.SplatOp):
        return None
    return s.operands[0]


def _advanced(L, init, offset, t):
    """Lazy ``init + splat(offset)`` of tile type ``t``."""
    st = t.with_element(T.i64 if t.is_ptr else t.element)
    sp = Lazy(O.stand_in(O.SplatOp), [offset], st, 0)
    op = O.stand_in(O.AddPtrOp if t.is_ptr else O.AddOp)
    return Lazy(op, [init, sp], t, stride_of(op, [init, sp], t))


@lowers(O.ForOp)
def op_for(L, op):
    b = L.b
    lb, ub, step = (L.get(v) for v in (op.lb, op.ub, op.step))
    t = op.lb.type
    inits = [L.get(v) for v in op.inits]
    steps = [_uniform_step(op, i) for i in range(len(inits))]
    for i, s in enumerate(steps):
        if s is not None:  # carry the accumulated offset instead of the tile
            ty = T.i64 if op.inits[i].type.is_ptr else op.inits[i].type.element
            inits[i] = LT.const(LT.scalar_type(ty), 0)
    carried0 = _carry(L, inits, [v.type if s is None else T.i64 for v, s in zip(op.inits, steps)])
    for i, (v, s) in enumerate(zip(op.inits, steps)):
        if v.type.is_tile:
            L.note(op, f"iter arg {i}: " + ("strength-reduced to a scalar step" if s is not None
                                            else f"buffer {carried0[i].where}"))
    pre, (head, body, done) = enter_loop(b, "for.head", "for.body", "for.end")
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
    init_nodes = [L.get(v) for v in op.inits]
    for i, (a, v) in enumerate(zip(op.iter_args, carried)):
        L.vals[a] = v if steps[i] is None else _advanced(L, init_nodes[i], v, a.type)
    _, nexts = _yield_values(L, op.body)
    for i, s in enumerate(steps):
        if s is not None:
            inc = L.get(s)
            if op.inits[i].type.is_ptr:
                e = s.type
                inc = inc if e.bits == 64 else (b.sext(inc, LT.I64) if e.is_signed else b.zext(inc, LT.I64))
            nexts[i] = b.add(carried[i], inc)
    _store_tiles(L, carried, nexts)
    nxt = b.add(iv, step)
    latch = b.block
    iv.add_incoming(nxt, latch)
    _close(L, carried, nexts, latch)
    b.branch(head)
    b.position_at_end(done)
    for i, (r, v) in enumerate(zip(op.results, carried)):
        L.vals[r] = v if steps[i] is None else _advanced(L, init_nodes[i], v, r.type)


@lowers(O.IfOp)
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


@lowers(O.WhileOp)
def op_while(L, op):
    b = L.b
    before, after = op.regions[0].block, op.regions[1].block
    carried0 = _carry(L, [L.get(v) for v in op.inits], [v.type for v in op.inits])
    pre, (head, body, done) = enter_loop(b, "while.before", "while.after", "while.end")
    carried = _phis(L, pre, carried0)
    for a, v in zip(before.args, carried):
        L.vals[a] = v
    term, vals = _yield_values(L, before)
    if term is None or not isinstance(term, O.ConditionOp):
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
