"""Lowering of ``dot``: the target's matrix units when accelerate-dot chose their layouts, else FMA over
operands staged in shared memory."""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import BackendError
from ...gpu.layouts import MmaOperandLayout
from ...ir import ops as O
from . import scalar
from .layouts import reg_coord_values, row_major_offsets, smem_ptr
from .registry import lowers
from .types import I32, from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of


@lowers(O.DotOp)
def lower_dot(L, op):
    """FMA dot (when accelerate-dot left it alone): both operands go to shared memory (row-major), then each
    thread accumulates its registers over K, reading each A row value and B column value it needs once per k."""
    if isinstance(op.a.type.layout, MmaOperandLayout):
        return L.target.lower_dot(L, op)
    b = L.b
    at, bt, ct = op.a.type, op.b.type, op.acc.type
    if len(ct.shape) != 2:
        raise BackendError(f"the {L.target.name} backend supports 2-d dot only")
    base = L._smem_base(op, "dot")
    M, K = at.shape
    N = bt.shape[1]
    ea, eb_ = memory_bytes(at.element), memory_bytes(bt.element)
    base_b = base + (M * K * ea + 15) // 16 * 16
    for vals, t, bs, eb in ((L.get(op.a), at, base, ea), (L.get(op.b), bt, base_b, eb_)):
        offs = row_major_offsets(L, reg_coord_values(L, ll_of(t)), t.shape)
        for v, off in zip(vals, offs):
            b.store(to_memory(b, t.element, v), smem_ptr(L, bs, off, eb))
    L.target.barrier(b)
    c_ll = ll_of(ct)
    coords = reg_coord_values(L, c_ll)
    rows, cols = {}, {}
    for (m, n), rc in zip(coords, c_ll.reg_coords()):
        rows.setdefault(rc[0], m)
        cols.setdefault(rc[1], n)
    ce = ct.element
    acc = list(L.get(op.acc))

    def read(t, bs, eb, off):
        v = from_memory(b, t.element, b.load(smem_ptr(L, bs, off, eb), typ=memory_type(t.element)))
        return v if t.element == ce else scalar.cast(b, t.element, ce, v)
    row_off = {r: b.mul(m, ir.Constant(I32, K)) for r, m in rows.items()}
    regs = list(enumerate(c_ll.reg_coords()))
    for k in range(K):
        kk = ir.Constant(I32, k)
        av = {r: read(at, base, ea, b.add(o, kk)) for r, o in row_off.items()}
        bv = {c: read(bt, base_b, eb_, b.add(n, ir.Constant(I32, k * N))) for c, n in cols.items()}
        for i, (rr, cc) in regs:
            if ce.is_float:
                acc[i] = scalar.fma(b, ce, av[rr], bv[cc], acc[i])
            else:
                acc[i] = b.add(acc[i], b.mul(av[rr], bv[cc]))
    L.bind(op.result, acc)
