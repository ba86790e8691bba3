"""Lowering of ``dot``: the target's matrix units when accelerate-dot chose their layouts, else FMA over
operands staged in shared memory."""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import BackendError
from ...gpu.layouts import MatrixUnitOperandLayout
from ...ir import ops as O
from ...ir.types import f32
from . import scalar
from .layouts import reg_coord_values, row_major_offsets
from .registry import lowers
from .scratch import scratch_of
from .types import I32, from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of


@lowers(O.DotOp)
def lower_dot(L, op):
    """FMA dot (when accelerate-dot left it alone), 2-d or batched 3-d: both operands go to shared memory
    (row-major, the scratch plan's arrays ``a`` and ``b``), then each thread accumulates its registers over K,
    reading each A row value and B column value it needs once per k."""
    if isinstance(op.a.type.layout, MatrixUnitOperandLayout):
        return L.target.lower_dot(L, op)
    b = L.b
    at, bt, ct = op.a.type, op.b.type, op.acc.type
    if len(ct.shape) not in (2, 3):
        raise BackendError(f"the {L.target.name} backend supports 2-d and batched 3-d dot only")
    scratch = scratch_of(L, op, "dot")
    sa, sb = scratch.array("a", memory_bytes(at.element)), scratch.array("b", memory_bytes(bt.element))
    *_, M, K = sa.shape
    N = sb.shape[-1]
    batched = len(ct.shape) == 3
    for vals, t, arr in ((L.get(op.a), at, sa), (L.get(op.b), bt, sb)):
        offs = row_major_offsets(L, reg_coord_values(L, ll_of(t)), arr.shape)
        for v, off in zip(vals, offs):
            b.store(to_memory(b, t.element, v), arr.ptr(off))
    L.target.barrier(b)
    c_ll = ll_of(ct)
    coords = reg_coord_values(L, c_ll)
    rows, cols = {}, {}
    for c, rc in zip(coords, c_ll.reg_coords()):
        # a row of A is (batch, m), a column of B (batch, n): their element offsets at k = 0
        if batched:
            rows.setdefault((rc[0], rc[1]), b.add(b.mul(c[0], ir.Constant(I32, M * K)),
                                                  b.mul(c[1], ir.Constant(I32, K))))
            cols.setdefault((rc[0], rc[2]), b.add(b.mul(c[0], ir.Constant(I32, K * N)), c[2]))
        else:
            rows.setdefault((rc[0],), b.mul(c[0], ir.Constant(I32, K)))
            cols.setdefault((rc[1],), c[1])
    ce = ct.element
    # 16-bit float accumulators sum in f32 and round once at the end (as matrix units and the CPU do): rounding
    # every step to f16 drifts past test tolerances by K = 64
    we = f32 if ce.is_float and ce.bits < 32 else ce
    acc = [v if we == ce else scalar.cast(b, ce, we, v) for v in L.get(op.acc)]

    def read(t, arr, off):
        v = from_memory(b, t.element, b.load(arr.ptr(off), typ=memory_type(t.element)))
        return v if t.element == we else scalar.cast(b, t.element, we, v)
    keys = [((rc[0], rc[1]), (rc[0], rc[2])) if batched else ((rc[0],), (rc[1],)) for rc in c_ll.reg_coords()]
    for k in range(K):
        kk = ir.Constant(I32, k)
        av = {r: read(at, sa, b.add(o, kk)) for r, o in rows.items()}
        bv = {c: read(bt, sb, b.add(n, ir.Constant(I32, k * N))) for c, n in cols.items()}
        for i, (rk, ck) in enumerate(keys):
            if we.is_float:
                acc[i] = scalar.fma(b, we, av[rk], bv[ck], acc[i])
            else:
                acc[i] = b.add(acc[i], b.mul(av[rk], bv[ck]))
    L.bind(op.result, acc if we == ce else [scalar.cast(b, we, ce, v) for v in acc])
