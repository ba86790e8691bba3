"""Tiles as lazy nodes: the mechanism that fuses elementwise chains into one loop nest.

A tile value is either a :class:`Lazy` node (an op over other nodes, evaluated on demand *inside* whichever loop
nest consumes it, so intermediates live in registers) or a :class:`Buf` (a strided view of memory in the
per-worker scratch area). Evaluation happens at a :class:`Point`: the indices of one iteration of a loop nest,
where the innermost index is the first of ``w`` consecutive lanes. ``ev`` memoises per point, so a value used
twice in one loop body is computed once.

Each node knows its *stride* along the innermost dimension (0: the same in every lane, k: affine with step k,
None: unknown). That is what turns ``splat(base) + arange`` pointers into contiguous vector loads and keeps
uniform values scalar.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import casts
from ...codegen import llvm_types as LT
from ...codegen.elementwise import emit_op
from ...ir import ops as O
from ...ir.dispatch import OpTable
from ...ir.types import i1

# cost of recomputing one element, by op class (others: 1); decides whether a value used twice is materialised
_U = O.UNARY_OPS
_COST = {_U["exp"]: 8, _U["exp2"]: 8, _U["log"]: 12, _U["log2"]: 12, _U["sin"]: 12, _U["cos"]: 12, _U["tan"]: 16,
         _U["tanh"]: 16, _U["erf"]: 16, _U["log1p"]: 16, _U["expm1"]: 16, O.PowOp: 20, O.Atan2Op: 20,
         _U["sigmoid"]: 10, O.DivOp: 4, O.RemOp: 4, O.FDivOp: 4, _U["sqrt"]: 4, _U["rsqrt"]: 5, O.LoadOp: 4,
         O.GatherOp: 4}
_FREE = (O.ConstantOp, O.SplatOp, O.ArangeOp, O.BroadcastOp, O.ExpandDimsOp, O.HintOp)


class Point:
    """One iteration of a loop nest over ``shape``: ``idx`` holds an i32 per dimension."""

    __slots__ = ("shape", "idx", "memo", "kids", "on")

    def __init__(self, shape, idx):
        self.shape, self.idx, self.memo, self.kids = tuple(shape), list(idx), {}, {}
        self.on = frozenset()  # mask nodes known on in every lane here (``unswitch``): their accesses are plain

    def child(self, key, shape, idx):
        p = self.kids.get(key)
        if p is None:
            p = self.kids[key] = Point(shape, idx)
        return p


class Node:
    shape: tuple = ()
    type = None        # the tir tile type
    stride = None
    cost = 1
    reads = frozenset()
    loads = False      # a load op among the lazy nodes it is computed from (buffers are not counted)
    const = None


class Lazy(Node):
    def __init__(self, op, args, type, stride, const=None):
        self.op, self.args, self.type, self.shape = op, args, type, type.shape
        self.stride, self.const = stride, const
        kids = [a for a in args if isinstance(a, Node)]
        own = 0 if isinstance(op, _FREE) else _COST.get(op.__class__, 1)
        self.cost = own + sum(k.cost for k in kids)
        self.reads = frozenset().union(*(k.reads for k in kids)) if kids else frozenset()
        self.loads = isinstance(op, O.LoadOp) or any(k.loads for k in kids)

    def emit(self, L, pt, w):
        return (EMIT.lookup(self.op) or _emit_elementwise)(L, self, pt, w)


class Buf(Node):
    """``shape`` elements at ``ptr`` with element ``strides``; ``base`` is the owning buffer of a view."""

    where = "view"

    def __init__(self, ptr, type, strides=None, base=None):
        self.ptr, self.type, self.shape = ptr, type, type.shape
        self.strides = row_major(self.shape) if strides is None else tuple(strides)
        self.base = base or self
        self.stride = 0 if self.strides and self.strides[-1] == 0 else None
        self.reads = frozenset({self.base})

    @property
    def owner(self):
        return self.base is self

    @property
    def contiguous(self):
        return self.owner

    def address(self, L, idx):
        b = L.b
        off = None
        for i, s in zip(idx, self.strides):
            if s == 0 or (isinstance(i, ir.Constant) and i.constant == 0):
                continue
            t = b.mul(b.sext(i, LT.I64), LT.const(LT.I64, s)) if s != 1 else b.sext(i, LT.I64)
            off = t if off is None else b.add(off, t)
        ety = LT.memory_type(self.type.element)
        return self.ptr if off is None else b.gep(self.ptr, [off], source_etype=ety)

    def emit(self, L, pt, w):
        b = L.b
        ety = LT.memory_type(self.type.element)
        p = self.address(L, pt.idx)
        align = LT.byte_size(ety)
        if w == 1:
            v = b.load(p, typ=ety, align=align)
        elif self.strides[-1] == 1:
            v = b.load(p, typ=LT.vec(ety, w), align=align)
        else:
            offs = ir.Constant(ir.VectorType(LT.I64, w), [LT.const(LT.I64, k * self.strides[-1]) for k in range(w)])
            pv = b.gep(p, [offs], source_etype=ety)
            pv.type = ir.VectorType(LT.PTR, w)
            v = L.mem.gather(pv, ety, w, None, None)
        return from_memory(b, v, self.type, w)

    def store(self, L, idx, value, w):
        b = L.b
        ety = LT.memory_type(self.type.element)
        p = self.address(L, idx)
        assert self.strides[-1] == 1 or w == 1
        b.store(to_memory(b, value, self.type, w), p, align=LT.byte_size(ety))


def row_major(shape) -> tuple:
    """Element strides of a dense row-major array of ``shape``."""
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


def from_memory(b, v, t, w):
    """Memory representation -> register (bytes back to i1)."""
    if t.element == i1:
        return b.icmp_unsigned("!=", v, LT.const(LT.I8, 0, w))
    return v


def to_memory(b, v, t, w):
    if t.element == i1:
        return b.zext(v, LT.vec(LT.I8, w))
    return v


def splat(b, v, w):
    if w == 1:
        return v
    if isinstance(v, ir.Constant):
        return ir.Constant(ir.VectorType(v.type, w), [v] * w)
    vt = ir.VectorType(v.type, w)
    one = b.insert_element(ir.Constant(vt, ir.Undefined), v, LT.const(LT.I32, 0))
    return b.shuffle_vector(one, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(LT.I32, w), [0] * w))


def iota(w):
    return ir.Constant(ir.VectorType(LT.I32, w), [LT.const(LT.I32, k) for k in range(w)])


def ev(L, node, pt, w):
    """The value of ``node`` at point ``pt`` in ``w`` lanes (a scalar for w == 1)."""
    if not isinstance(node, Node):
        return node if w == 1 else splat(L.b, node, w)
    key = (node, w)
    v = pt.memo.get(key)
    if v is None:
        # a fused op's code is located at its own line, not at the consumer that pulled it into the loop
        saved = L.b.debug_metadata
        if L.debug is not None and isinstance(node, Lazy):
            L.debug.locate(L.b, L.subprogram, getattr(node.op, "loc", None))  # made-up ops have none
        if w > 1 and node.stride == 0:
            v = splat(L.b, ev(L, node, pt, 1), w)
        else:
            v = node.emit(L, pt, w)
        L.b.debug_metadata = saved
        pt.memo[key] = v
    return v


# -- emission of lazy ops ---------------------------------------------------------------------------------------
def _emit_constant(L, n, pt, w):
    return LT.const_of(n.type, n.const, w)


def _emit_splat(L, n, pt, w):
    return splat(L.b, n.args[0], w)


def _emit_arange(L, n, pt, w):
    b = L.b
    base = b.add(pt.idx[-1], LT.const(LT.I32, n.op.attrs["start"])) if n.op.attrs["start"] else pt.idx[-1]
    if w == 1:
        return base
    return b.add(splat(b, base, w), iota(w))


def _emit_broadcast(L, n, pt, w):
    src = n.args[0]
    idx = [LT.const(LT.I32, 0) if s == 1 and d != 1 else i for i, s, d in zip(pt.idx, src.shape, n.shape)]
    child = pt.child(("bc", src.shape), src.shape, idx)
    if src.shape[-1] == 1 and n.shape[-1] != 1:
        return splat(L.b, ev(L, src, child, 1), w)
    return ev(L, src, child, w)


def _emit_expand_dims(L, n, pt, w):
    ax = n.op.attrs["axis"]
    src = n.args[0]
    idx = pt.idx[:ax] + pt.idx[ax + 1:]
    child = pt.child(("ed", ax), src.shape, idx)
    return ev(L, src, child, 1 if ax == len(n.shape) - 1 else w)


def _emit_hint(L, n, pt, w):
    return ev(L, n.args[0], pt, w)


def _emit_addptr(L, n, pt, w):
    p, off = n.args
    pv = ev(L, p, pt, 1) if (w > 1 and p.stride == 0) else ev(L, p, pt, w)
    return casts.addptr(L.b, pv, ev(L, off, pt, w), p.type, off.type, w)


def _emit_load(L, n, pt, w):
    return L.mem.load_node(n, pt, w)


def _emit_elementwise(L, n, pt, w):
    """Every other op, cast and bitcast included."""
    args = [ev(L, a, pt, w) for a in n.args]
    return emit_op(L.b, type(n.op), n.op.attrs, args, [a.type for a in n.args], n.type, w)


# how a lazy node of each op class computes its lanes; other ops are elementwise (``_emit_elementwise``)
EMIT = OpTable("CPU lazy tile")
for _cls, _fn in ((O.ConstantOp, _emit_constant), (O.SplatOp, _emit_splat), (O.ArangeOp, _emit_arange),
                  (O.BroadcastOp, _emit_broadcast), (O.ExpandDimsOp, _emit_expand_dims), (O.HintOp, _emit_hint),
                  (O.AddPtrOp, _emit_addptr), (O.LoadOp, _emit_load)):
    EMIT.register(_cls)(_fn)


# -- stride rules ----------------------------------------------------------------------------------------------
def _s(a):
    return a.stride if isinstance(a, Node) else 0


def stride_of(op, args, result_type):
    """Stride along the innermost dimension of ``op``'s tile result, from its operands' strides."""
    ss = [_s(a) for a in args]
    if isinstance(op, (O.ConstantOp, O.SplatOp)):
        return 0
    if isinstance(op, O.ArangeOp):
        return 1
    if isinstance(op, O.BroadcastOp):
        src = args[0]
        return 0 if src.shape[-1] == 1 and result_type.shape[-1] != 1 else ss[0]
    if isinstance(op, O.ExpandDimsOp):
        return 0 if op.attrs["axis"] == len(result_type.shape) - 1 else ss[0]
    if isinstance(op, (O.HintOp, O.BitcastOp)) or (isinstance(op, O.CastOp) and result_type.is_int
                                                   and args[0].type.is_int and result_type.element.bits > 1):
        return ss[0]
    if isinstance(op, (O.AddOp, O.AddPtrOp)) and None not in ss and result_type.is_int | result_type.is_ptr:
        return ss[0] + ss[1]
    if isinstance(op, O.SubOp) and None not in ss and result_type.is_int:
        return ss[0] - ss[1]
    if isinstance(op, O.MulOp) and result_type.is_int:
        a, b = args
        if ss == [0, 0]:
            return 0
        ca, cb = getattr(a, "const", None), getattr(b, "const", None)
        if ss[0] == 0 and isinstance(ca, int) and ss[1] is not None:
            return ca * ss[1]
        if ss[1] == 0 and isinstance(cb, int) and ss[0] is not None:
            return cb * ss[0]
        return None
    return 0 if all(s == 0 for s in ss) else None
