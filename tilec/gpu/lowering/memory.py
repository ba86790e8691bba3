"""Lowering of global memory ops: vectorised predicated loads/stores (widths from the axis analysis) and
atomics, each issued once per element by its owning thread."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.atomics import BFLOAT
from ...errors import BackendError, at_op
from ...ir import ops as O
from ..layouts import holds_copies
from ..passes.axis_info import vector_width
from ..target import AccessHints
from .layouts import StagingBuffer, owner_predicate, reg_coord_values
from .registry import lowers
from .scratch import scratch_of
from .types import FP8, I16, I32, from_memory, llvm_type, memory_bytes, memory_type, to_memory
from .values import ll_of, num_regs

def _width(L, op):
    t = op.ptr.type
    mask = getattr(op, "mask", None)
    eb = memory_bytes(t.element.pointee)
    return vector_width(ll_of(t), L.axis.info(op.ptr), L.axis.info(mask) if mask is not None else None, eb)


def _located(fn):
    """A target's refusal of an access (say, hints its instructions cannot combine) names the kernel line."""
    def lower(L, op):
        try:
            fn(L, op)
        except BackendError as e:
            raise at_op(op, str(e)) from None
    lower.__name__, lower.__doc__ = fn.__name__, fn.__doc__
    return lower


@lowers(O.LoadOp)
@_located
def lower_load(L, op):
    b = L.b
    pt = op.ptr.type
    et = pt.element.pointee
    mt = memory_type(et)
    hints = AccessHints.of(op)
    if not pt.is_tile:
        mask = L.get(op.mask) if op.mask is not None else None
        other = [to_memory(b, et, L.get(op.other))] if op.other is not None else None
        v = L.target.load_global(b, L.get(op.ptr), mt, 1, mask, other, hints)[0]
        L.bind(op.result, from_memory(b, et, v))
        return
    vec = _width(L, op)
    ptrs = L.get(op.ptr)
    masks = L.get(op.mask) if op.mask is not None else None
    others = L.get(op.other) if op.other is not None else None
    out = []
    for g in range(0, len(ptrs), vec):
        pred = masks[g] if masks is not None else None
        oth = [to_memory(b, et, o) for o in others[g:g + vec]] if others is not None else None
        vals = L.target.load_global(b, ptrs[g], mt, vec, pred, oth, hints)
        out.extend(from_memory(b, et, v) for v in vals)
    L.bind(op.result, out)


@lowers(O.StoreOp)
@_located
def lower_store(L, op):
    b = L.b
    pt = op.ptr.type
    et = pt.element.pointee
    if not pt.is_tile:
        mask = L.get(op.mask) if op.mask is not None else None
        pred = L._and(mask, L._scalar_owner())
        L.target.store_global(b, L.get(op.ptr), [to_memory(b, et, L.get(op.value))], pred, AccessHints.of(op))
        return
    vec = _width(L, op)
    owner = owner_predicate(L, ll_of(pt))
    ptrs, vals = L.get(op.ptr), L.get(op.value)
    masks = L.get(op.mask) if op.mask is not None else None
    hints = AccessHints.of(op)
    for g in range(0, len(ptrs), vec):
        pred = L._and(masks[g] if masks is not None else None, owner)
        L.target.store_global(b, ptrs[g], [to_memory(b, et, v) for v in vals[g:g + vec]], pred, hints)


def _elements(L, op, names):
    """Per register: the lowered operands ``names`` (scalars broadcast) and the owner/mask predicate."""
    pt = op.ptr.type
    if pt.is_tile:
        n = num_regs(pt)
        owner = owner_predicate(L, ll_of(pt))
    else:
        n, owner = 1, L._scalar_owner()
    cols = []
    for nm in names:
        v = getattr(op, nm)
        lv = L.get(v) if v is not None else None
        cols.append([None] * n if lv is None else (lv if isinstance(lv, list) else [lv]))
    mask_v = getattr(op, "mask", None)
    masks = L.get(mask_v) if mask_v is not None else None
    masks = masks if isinstance(masks, list) else ([masks] if masks is not None else [None] * n)
    return n, cols, [L._and(m, owner) for m in masks]


def _atomic_element(op, et):
    """(register -> atomic operand, atomic result -> register) for element type ``et``: atomics work on the
    memory form (a bf16 as LLVM's bfloat, 16 bits wide, not the f32 register that holds it)."""
    if et.is_float and et.name in FP8:
        raise BackendError(f"{op.name} on {et} is not supported (no GPU has 8-bit float atomics)")
    if et.name == "bf16":
        return (lambda b, v: b.bitcast(to_memory(b, et, v), BFLOAT),
                lambda b, r: from_memory(b, et, b.bitcast(r, I16)))
    return (lambda b, v: v), (lambda b, r: r)


@lowers(O.AtomicRMWOp)
def lower_atomic_rmw(L, op):
    b = L.b
    et = op.value.type.element
    kind = op.attrs["kind"]
    if et.is_float:
        llop = {"add": "fadd", "max": "fmax", "min": "fmin", "xchg": "xchg"}.get(kind)
    elif kind in ("max", "min"):
        llop = kind if et.is_signed else "u" + kind
    else:
        llop = kind
    if llop is None:
        raise BackendError(f"atomic '{kind}' on {et} is not supported")
    enter, leave = _atomic_element(op, et)
    sem, scope = op.attrs["sem"], op.attrs["scope"]
    n, (ptrs, vals), preds = _elements(L, op, ["ptr", "value"])

    def one(q, v):
        return leave(b, L.target.atomic_rmw(b, llop, q, enter(b, v), sem, scope))
    out = [L._guarded(p, lambda q=q, v=v: one(q, v), llvm_type(et)) for q, v, p in zip(ptrs, vals, preds)]
    L.bind(op.result, _to_copies(L, op, out) if op.result.type.is_tile else _from_thread0(L, op, out[0]))


def _to_copies(L, op, out):
    """A tile atomic runs in the owner of each element only (one update per element); where other threads
    hold copies of the element and the result is used, they get the owner's result through shared memory
    (their own registers hold zeros)."""
    t = op.result.type
    if not op.result.uses or not holds_copies(t):
        return out
    b = L.b
    ll = ll_of(t)
    eb = memory_bytes(t.element)
    result = scratch_of(L, op, "an atomic's result for the threads holding copies").array("result", eb)
    offs = StagingBuffer(ll, ll, result.shape, eb, vector=False).offsets(L, reg_coord_values(L, ll))
    with b.if_then(owner_predicate(L, ll)):
        for v, o in zip(out, offs):
            b.store(to_memory(b, t.element, v), result.ptr(o))
    L.target.barrier(b)
    return [from_memory(b, t.element, b.load(result.ptr(o), typ=memory_type(t.element))) for o in offs]


def _from_thread0(L, op, v):
    """A scalar atomic runs in thread 0 only; every thread sees its result through shared memory."""
    if not op.result.uses:
        return v
    b = L.b
    et = op.result.type
    slot = scratch_of(L, op, "a scalar atomic's result for every thread").array("result", memory_bytes(et))
    p = slot.ptr(ir.Constant(I32, 0))
    with b.if_then(L._scalar_owner()):
        b.store(to_memory(b, et, v), p)
    L.target.barrier(b)
    return from_memory(b, et, b.load(p, typ=memory_type(et)))


@lowers(O.AtomicCASOp)
def lower_atomic_cas(L, op):
    b = L.b
    et = op.value.type.element
    _atomic_element(op, et)
    mt = memory_type(et)
    bits = ir.IntType(mt.width if isinstance(mt, ir.IntType) else et.bits)
    sem, scope = op.attrs["sem"], op.attrs["scope"]
    n, (ptrs, cmps, vals), preds = _elements(L, op, ["ptr", "cmp", "value"])

    def word(v):  # cmpxchg takes integers: floats (bf16 as its memory bits) go as their bit patterns
        m = to_memory(b, et, v)
        return m if m.type == bits else b.bitcast(m, bits)

    def one(q, c, v):
        r = L.target.atomic_cas(b, q, word(c), word(v), sem, scope)
        return from_memory(b, et, r if mt == bits else b.bitcast(r, mt))
    out = [L._guarded(p, lambda q=q, c=c, v=v: one(q, c, v), llvm_type(et))
           for q, c, v, p in zip(ptrs, cmps, vals, preds)]
    L.bind(op.result, _to_copies(L, op, out) if op.result.type.is_tile else _from_thread0(L, op, out[0]))
