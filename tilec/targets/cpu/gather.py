"""``gather`` on the CPU: the source tile in a buffer, each result element one indexed read of it.

The result stays a lazy node, so the reads fuse into whichever loop nest consumes the gather. How a point's
``w`` lanes read depends on what the index does across them (its stride along the innermost dimension):

- the same index in every lane while the gathered axis is not the innermost one (``flip`` along rows): the
  lanes read one row of the buffer, i.e. the buffer's own access at a moved point (a vector load);
- consecutive or reversed indices along the innermost axis (``flip`` of a row: stride -1): one vector load
  (reversed by a shuffle) when a run-time check of the first and last lane sees that no index wrapped, else a
  gather;
- anything else: ``llvm.masked.gather`` of the lanes' addresses.

Indices wrap modulo the axis size (the op's definition), so no read ever leaves the buffer.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import llvm_types as LT
from ...codegen.indices import wrap_index
from ...ir import ops as O
from .nodes import EMIT, Buf, Lazy, ev, from_memory, iota, splat
from .registry import lowers


@lowers(O.GatherOp)
def op_gather(L, op):
    src = L.get(op.src)
    buf = src if isinstance(src, Buf) else L.materialise(src)
    index = L.get(op.index)
    t = op.result.type
    last = len(t.shape) - 1
    uniform = op.attrs["axis"] == last and getattr(index, "stride", 0) == 0
    L.note(op, f"gather axis {op.attrs['axis']} from {'buffer ' + buf.where if buf.owner else 'a view'}")
    L.set_tile(op, Lazy(op, [buf, index], t, 0 if uniform else None))


def _emit_gather(L, n, pt, w):
    b = L.b
    buf, index = n.args
    axis = n.op.attrs["axis"]
    size = buf.shape[axis]
    last = len(n.shape) - 1
    it = n.op.index.type
    stride = getattr(index, "stride", 0)
    if w == 1 or (stride == 0 and axis != last):  # one index for every lane: the buffer's read at a moved point
        idx = list(pt.idx)
        idx[axis] = wrap_index(b, ev(L, index, pt, 1), it, size, 1)
        return ev(L, buf, pt.child(("gather", id(n)), buf.shape, idx), w)
    if stride == 0:  # the gathered axis is the innermost one and every lane reads the same element
        return splat(b, _emit_gather(L, n, pt, 1), w)
    ety = LT.memory_type(n.type.element)
    ks = wrap_index(b, ev(L, index, pt, w), it, size, w)
    idx = list(pt.idx)
    idx[axis] = LT.const(LT.I32, 0)
    base = buf.address(L, idx)

    def lanes():
        offs = b.mul(b.sext(ks, LT.vec(LT.I64, w)), LT.const(LT.I64, buf.strides[axis], w))
        if axis != last:  # lanes also step along the innermost dimension
            offs = b.add(offs, b.sext(b.mul(iota(w), LT.const(LT.I32, buf.strides[-1], w)), LT.vec(LT.I64, w)))
        pv = b.gep(base, [offs], source_etype=ety)
        pv.type = ir.VectorType(LT.PTR, w)
        return L.mem.gather(pv, ety, w, None, None)
    if axis == last and stride in (1, -1) and buf.strides[axis] == 1:
        v = _consecutive(L, base, ks, ety, w, stride, lanes)
    else:
        v = lanes()
    return from_memory(b, v, n.type, w)


def _consecutive(L, base, ks, ety, w, step, lanes):
    """Lanes whose indices step by ``step`` (1 or -1) before wrapping: when the wrapped first and last ones are
    still ``w - 1`` apart, no lane wrapped and they read one vector (reversed by a shuffle for -1); else
    ``lanes()`` reads them one by one."""
    b = L.b
    first = b.extract_element(ks, LT.const(LT.I32, 0))
    last = b.extract_element(ks, LT.const(LT.I32, w - 1))
    ok = b.icmp_signed("==", b.sub(last, first), LT.const(LT.I32, (w - 1) * step))

    def vector():
        lowest = first if step == 1 else last
        v = b.load(b.gep(base, [b.sext(lowest, LT.I64)], source_etype=ety), typ=LT.vec(ety, w),
                   align=LT.byte_size(ety))
        if step == -1:
            rev = ir.Constant(ir.VectorType(LT.I32, w), [LT.const(LT.I32, w - 1 - k) for k in range(w)])
            v = b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), rev)
        return v
    return L.mem.two_way(ok, vector, lanes)


EMIT.register(O.GatherOp)(_emit_gather)

__all__ = ["op_gather"]
