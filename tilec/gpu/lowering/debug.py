"""Lowering of barriers, assumptions, device asserts and device prints."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...ir import ops as O
from .layouts import owner_predicate, reg_coord_values
from .registry import lowers
from .values import ll_of


@lowers(O.BarrierOp)
def lower_barrier(L, op):
    L.target.barrier(L.b)


@lowers(O.AssumeOp)
def lower_assume(L, op):
    intrinsic(L.b, "llvm.assume", ir.VoidType(), [L.get(op.cond)])


@lowers(O.AssertOp)
def lower_assert(L, op):
    if not L.options.debug:
        return
    cond = L.get(op.cond)
    conds = cond if isinstance(cond, list) else [cond]
    ok = conds[0]
    for c in conds[1:]:
        ok = L.b.and_(ok, c)
    with L.b.if_then(L.b.not_(ok)):
        L.target.trap(L.b)


@lowers(O.PrintOp)
def lower_print(L, op):
    """``vprintf`` per element (from the thread that owns it; scalars from thread 0):
    ``pid (x, y, z) idx (i, j) <prefix><value>``."""
    b = L.b
    pids = [L.target.block_id(L.entry, a) for a in range(3)]
    for v in op.operands:
        t = v.type
        lowered = L.get(v)
        e = t.element
        if e.is_float:
            spec, conv = ("%a" if op.attrs["hex"] else "%f"), (lambda x: b.fpext(x, ir.DoubleType())
                                                               if x.type != ir.DoubleType() else x)
        elif e.is_ptr:
            spec, conv = "%p", (lambda x: x)
        else:
            wide = e.bits > 32
            spec = ("0x%llx" if wide else "0x%x") if op.attrs["hex"] else \
                (("%lld" if wide else "%d") if e.is_signed else ("%llu" if wide else "%u"))
            conv = (lambda x, wide=wide, signed=e.is_signed: x if x.type.width == (64 if wide else 32) else
                    (b.sext if signed else b.zext)(x, ir.IntType(64 if wide else 32)))
        if t.is_tile:
            ll = ll_of(t)
            coords = reg_coord_values(L, ll)
            guard = owner_predicate(L, ll)
            items = [(list(c), x) for c, x in zip(coords, lowered)]
        else:
            guard, items = L._scalar_owner(), [([], lowered)]
        idx = ("idx (" + ", ".join(["%d"] * len(items[0][0])) + ") ") if items[0][0] else ""
        fmt = f"pid (%u, %u, %u) {idx}{op.attrs['prefix']}{spec}\n"
        for coord, x in items:
            L.target.printf(L, fmt, pids + coord + [conv(x)], guard)

