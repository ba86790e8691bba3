"""stage-operands: every matrix-unit operand that does not come straight from registers reaches its dot through
shared memory, as a value.

accelerate-dot leaves each matrix-unit dot with ``convert_layout``s to its operand layouts. For each of those,
this pass walks back through conversions, transposes (``trans``, ``.T``) and widening casts (fp8 read as f16)
to the value that produced the operand, and when that value is

- loaded (``load``, ``descriptor_load``): staging it is what lets the software pipeliner turn the load into
  asynchronous copies (a load whose only user is a ``local_alloc`` is pipelined), and matrix loads
  (``ldmatrix``, descriptors) then read it;
- defined outside the loop around the dot (attention's ``q``): held in shared memory rather than in registers for
  the whole loop;
- reached through a transpose: a transpose of a buffer is a view (``local_trans``) that moves nothing;
- wanted in shared memory by the instructions themselves (``MatrixUnitLayout.operand_in_shared``: warpgroup
  units read B through a descriptor),

it becomes ``buf = local_alloc(value)`` right where the value is defined, the transposes become ``local_trans``
views of ``buf``, and the dot reads ``local_load(view)`` in its operand layout (widened after the read, so the
narrow bytes are what is copied). The placement follows the
producer's own order (a load's contiguous dimension, so copies stay 16-byte vectors), unless the instructions
need another (``MatrixUnitLayout.shared_operand_order``: k-contiguous 8-bit and tf32 operands for warpgroup
units), in which case the write into the buffer transposes. One value feeding several dots is staged once.
Operands computed in registers (attention's ``p``) stay in registers. What this leaves unused (the register
transposes and conversions) is removed at the end of the pass.
"""
from __future__ import annotations

from ...ir import ops as O
from ...ir.builder import Builder
from ...ir.core import BlockArgument, OpResult
from ...ir.types import SharedBufferType, i32
from .. import ops as G
from ..layouts import BlockedLayout, MatrixUnitLayout, MatrixUnitOperandLayout, shared_for_operand
from .common import Pass, elem_bytes

LOADS = (O.LoadOp, O.DescriptorLoadOp)


def register_order(t):
    """Dimensions of tile type ``t`` from fastest to slowest in its register layout (what a copy of it keeps
    contiguous): the dimension of the first register or lane basis that steps by one element (a thread's
    consecutive registers, else neighbouring lanes; registers that step rows apart do not make rows fast)."""
    ll = t.layout.to_linear(t.shape)
    for basis in ll.reg + ll.lane:
        nz = [d for d, v in enumerate(basis) if v]
        if len(nz) == 1 and basis[nz[0]] == 1:
            fast = nz[0]
            return (fast,) + tuple(d for d in range(t.rank - 1, -1, -1) if d != fast)
    return tuple(range(t.rank - 1, -1, -1))


def _widening(op) -> bool:
    """A ``cast`` to a wider float that only widens (fp8 -> f16, as accelerate-dot inserts where no fp8
    instruction exists): done after reading shared memory, so the narrow bytes are what is copied and held."""
    if not isinstance(op, O.CastOp):
        return False
    s, d = op.src.type.element, op.result.type.element
    return s.is_float and d.is_float and s.bits < d.bits and s.name.startswith("f8")


def producer(v):
    """(value, transposes, casts): walk back from a dot operand through ``convert_layout``, ``trans`` and
    widening ``cast``s to the value that produced it; ``transposes`` lists the ``trans`` orders from the producer
    towards the dot, ``casts`` the casts (re-applied in registers after the read)."""
    orders, casts = [], []
    while isinstance(v, OpResult) and (isinstance(v.op, (G.ConvertLayoutOp, O.TransOp)) or _widening(v.op)):
        if isinstance(v.op, O.TransOp):
            orders.append(tuple(v.op.attrs["order"]))
        elif isinstance(v.op, O.CastOp):
            casts.append(v.op)
        v = v.op.operands[0]
    return v, orders[::-1], casts[::-1]


def compose(orders, rank):
    """The single permutation that the transposes ``orders`` (producer first) amount to: view dimension ``i`` is
    the producer's dimension ``perm[i]``."""
    perm = tuple(range(rank))
    for o in orders:
        perm = tuple(perm[d] for d in o)
    return perm


def _enclosing_loop(op):
    p = op.parent_op
    while p is not None and not isinstance(p, (O.ForOp, O.WhileOp, O.FuncOp)):
        p = p.parent_op
    return p if isinstance(p, (O.ForOp, O.WhileOp)) else None


def _defined_outside(v, loop) -> bool:
    if isinstance(v, BlockArgument):
        return not loop.is_ancestor_of(v.block.parent_op) and v.block.parent_op is not loop
    return not loop.is_ancestor_of(v.op)


def _dce(func):
    changed = True
    while changed:
        changed = False
        for op in list(func.walk(post_order=True)):
            if op is func or op.parent is None or op.regions:
                continue
            if op.is_pure and op.results and not any(r.uses for r in op.results):
                op.erase()
                changed = True


class StageOperands(Pass):
    name = "stage-operands"

    def run(self, module):
        changed = False
        for f in module.funcs:
            staged = {}  # (producer, placement order) -> its buffer
            for dot in [o for o in f.walk() if isinstance(o, O.DotOp)]:
                acc = dot.acc.type.layout
                if not isinstance(acc, MatrixUnitLayout):
                    continue
                for idx in (0, 1):
                    changed |= self.stage(dot, idx, acc, staged)
            if changed:
                _dce(f)
        return changed

    def stage(self, dot, idx, acc, staged) -> bool:
        v = dot.operands[idx]
        if not (isinstance(v, OpResult) and isinstance(v.op, G.ConvertLayoutOp) and
                isinstance(v.type.layout, MatrixUnitOperandLayout)):
            return False
        p, orders, casts = producer(v)
        if not p.type.is_tile or p.type.rank not in (2, 3):
            return False
        rank = p.type.rank
        loop = _enclosing_loop(dot)
        outside = loop is not None and _defined_outside(p, loop)
        invariant = outside and acc.invariant_operands_in_shared
        # a load outside the loop is staged only where invariant operands are held in shared memory (a matrix
        # unit reading registers keeps it there, converted once, rather than reading it back every iteration)
        loaded = isinstance(p, OpResult) and isinstance(p.op, LOADS) and (invariant or not outside)
        if not (loaded or invariant or orders or acc.operand_in_shared(idx, v.type.element)):
            return False
        perm = compose(orders, rank)
        need = acc.shared_operand_order(idx, p.type.element)
        if need is not None:  # the instructions' order, said in the view's dimensions: back to the producer's
            order = tuple(perm[d] for d in need)
        elif loaded and isinstance(p.op, O.DescriptorLoadOp):
            order = tuple(range(rank - 1, -1, -1))  # a tensor copy writes whole rows
        elif loaded:
            order = register_order(p.op.ptr.type)
        elif isinstance(p.type.layout, BlockedLayout):
            order = register_order(p.type)
        else:  # computed in a matrix-unit layout: k contiguous, which every reader takes without transposing
            kd, od = (rank - 1, rank - 2) if idx == 0 else (rank - 2, rank - 1)
            order = (perm[kd], perm[od]) + tuple(perm[d] for d in range(rank - 2))
        key = (p, order)
        buf = staged.get(key)
        if buf is None:
            buf = staged[key] = self.alloc(p, order)
        b = Builder()
        b.set_insertion_point_before(dot)
        b.loc = dot.loc
        view = buf
        if perm != tuple(range(rank)):
            view = b.create(G.LocalTransOp, [buf], [G.LocalTransOp.view_type(buf.type, perm)],
                            {"order": perm}).result
        x = b.create(G.LocalLoadOp, [view, b.constant(0, i32)], [v.type.with_element(p.type.element)]).result
        for c in casts:  # widened in registers, in the operand layout
            x = b.op(O.CastOp, x, result_type=v.type.with_element(c.result.type.element), **dict(c.attrs))
        dot.set_operand(idx, x)
        return True

    @staticmethod
    def alloc(p, order):
        """``local_alloc(p)`` right after ``p`` is defined, placed in ``order``."""
        t = p.type
        b = Builder()
        if isinstance(p, BlockArgument):
            b.set_insertion_point_before(p.block.ops[0])
        else:
            b.set_insertion_point_after(p.op)
            b.loc = p.op.loc
        lay = shared_for_operand(t.shape, order, elem_bytes(t))
        return b.create(G.LocalAllocOp, [p], [SharedBufferType((1,) + tuple(t.shape), t.element, lay)]).result


__all__ = ["StageOperands", "producer", "compose", "register_order"]
