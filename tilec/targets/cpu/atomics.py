"""Tile atomics: one ``atomicrmw``/``cmpxchg`` per element in a width-1 loop nest; old values go to a buffer."""
from __future__ import annotations

from .loops import nest
from .nodes import Point, ev
from ...ir import ops as O
from .registry import lowers


def _tile_atomic(L, op, emit_one):
    t = op.results[0].type
    shape = t.shape
    out = L.alloc(t) if op.results[0].uses else None
    L.note(op, "element-wise atomics (scalar loop)" + (f" -> buffer {out.where}" if out is not None else ""))

    def body(idx):
        pt = Point(shape, idx)
        old = emit_one(pt)
        if out is not None:
            out.store(L, idx, old, 1)
    nest(L.b, shape, 1, body)
    L.vals[op.results[0]] = out


@lowers(O.AtomicRMWOp)
def op_atomic_rmw(L, op):
    kind, sem = op.attrs["kind"], op.attrs.get("sem", "acq_rel")
    ptr, val = L.get(op.ptr), L.get(op.value)
    mask = L.get(op.mask) if op.mask is not None else None
    vt = op.value.type
    if not vt.is_tile:
        L.vals[op.results[0]] = L.mem.atomic_rmw(kind, sem, ptr, val, vt, mask)
        return
    _tile_atomic(L, op, lambda pt: L.mem.atomic_rmw(
        kind, sem, ev(L, ptr, pt, 1), ev(L, val, pt, 1), vt, ev(L, mask, pt, 1) if mask is not None else None))


@lowers(O.AtomicCASOp)
def op_atomic_cas(L, op):
    sem = op.attrs.get("sem", "acq_rel")
    ptr, cmp, val = (L.get(v) for v in op.operands)
    vt = op.operands[2].type
    if not vt.is_tile:
        L.vals[op.results[0]] = L.mem.atomic_cas(sem, ptr, cmp, val, vt)
        return
    _tile_atomic(L, op, lambda pt: L.mem.atomic_cas(
        sem, ev(L, ptr, pt, 1), ev(L, cmp, pt, 1), ev(L, val, pt, 1), vt))
