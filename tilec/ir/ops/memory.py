"""Memory ops: pointer loads and stores, tensor-descriptor block accesses and atomics."""
from __future__ import annotations

from ..core import Operation
from ..types import PointerType, TileType, i1, i32, i64
from .base import _check
from .arithmetic import AddOp, AndOp, MulOp
from .elementwise import AddPtrOp, CastOp, CmpOp
from .shape import BroadcastOp, ExpandDimsOp, SplatOp
from .sources import ArangeOp


class LoadOp(Operation):
    """Gather from pointers; masked-off lanes read nothing and give ``other`` (undefined if absent)."""
    name = "load"
    operand_names = ("ptr", "mask?", "other?")
    attr_types = {"cache": str, "eviction": str, "volatile": bool}
    attr_defaults = {"cache": "", "eviction": "", "volatile": False}
    traits = frozenset({"reads"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        return [t.with_element(t.element.pointee)]

    def verify_(self):
        p = self.ptr.type
        _check(p.is_ptr, self, f"needs pointers, got {p}")
        _check(self.result.type == p.with_element(p.element.pointee), self, "result must match the pointee")
        if self.mask is not None:
            _check(self.mask.type == p.with_element(i1), self, "mask must be i1 of the pointer's shape")
        if self.other is not None:
            _check(self.other.type == self.result.type, self, "other must match the result type")


def _descriptor_block(b, op):
    """The pointer tile and in-bounds mask of a descriptor op's block: element ``(i, j, ...)`` is at
    ``base + sum((offset_d + i_d) * stride_d)`` and in bounds where every ``0 <= offset_d + i_d < shape_d``."""
    shape = tuple(op.attrs["block_shape"])
    n = len(shape)
    ptr = b.op(SplatOp, op.base, result_type=TileType(shape, op.base.type))
    ok = None
    for d in range(n):
        idx = b.op(ArangeOp, start=0, end=shape[d])
        idx = b.op(AddOp, idx, b.op(SplatOp, op.offsets[d], result_type=TileType((shape[d],), i32)))
        for ax in range(n):  # size-1 axes everywhere but d
            if ax != d:
                idx = b.op(ExpandDimsOp, idx, axis=ax)
        idx = b.op(BroadcastOp, idx, result_type=TileType(shape, i32))
        wide = b.op(CastOp, idx, result_type=TileType(shape, i64))
        ptr = b.op(AddPtrOp, ptr, b.op(MulOp, wide, b.op(SplatOp, op.strides[d], result_type=TileType(shape, i64))))
        inside = b.op(AndOp, b.op(CmpOp, idx, b.constant(0, TileType(shape, i32)), predicate="ge"),
                      b.op(CmpOp, wide, b.op(SplatOp, op.shape[d], result_type=TileType(shape, i64)),
                           predicate="lt"))
        ok = inside if ok is None else b.op(AndOp, ok, inside)
    return ptr, ok


class _DescriptorAccess(Operation):
    """A tensor-descriptor block access: after ``leading`` operands (the base, and a store's value) come the
    tensor's ``shape`` (i64), ``strides`` (i64, in elements) and the block's ``offsets`` (i32), one each per
    dimension of ``block_shape``."""
    leading = 1

    @property
    def rank(self) -> int:
        return len(self.attrs["block_shape"])

    def _dims(self, k):
        first = self.leading + k * self.rank
        return self.operands[first:first + self.rank]

    @property
    def shape(self):
        return self._dims(0)

    @property
    def strides(self):
        return self._dims(1)

    @property
    def offsets(self):
        return self._dims(2)

    def _verify_dims(self):
        b, n = self.base.type, self.rank
        _check(isinstance(b, PointerType), self, f"needs a scalar pointer base, got {b}")
        _check(len(self.operands) == self.leading + 3 * n, self,
               f"needs {', '.join(self.operand_names[:self.leading])} + {3 * n} shape/stride/offset operands")
        _check(all(v.type == i64 for v in self.shape + self.strides), self, "shape and strides must be i64")
        _check(all(v.type == i32 for v in self.offsets), self, "offsets must be i32")


class DescriptorLoadOp(_DescriptorAccess):
    """One ``block_shape`` block of the tensor that ``base``, ``shape`` and ``strides`` describe
    (``tl.make_tensor_descriptor``), read at ``offsets``; elements outside ``[0, shape)`` in any dimension read
    ``padding`` (zero or NaN) and touch no memory. Operands: ``base``, then ``shape`` (i64), ``strides`` (i64,
    in elements) and ``offsets`` (i32), one each per dimension. A target with a tensor copy engine moves the
    block whole (TMA); ``expand-descriptors`` turns the others into the masked pointer load it means."""
    name = "descriptor_load"
    operand_names = ("base", "*dims")
    attr_types = {"block_shape": tuple, "padding": str}
    attr_defaults = {"padding": "zero"}
    traits = frozenset({"reads"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [TileType(attrs["block_shape"], operands[0].type.pointee)]

    def decompose(self, b):
        """Build, at builder ``b`` (placed before this op), the masked pointer load this op means; returns
        its result."""
        ptr, ok = _descriptor_block(b, self)
        shape, elt = tuple(self.attrs["block_shape"]), self.base.type.pointee
        nan = self.attrs["padding"] == "nan" and elt.kind == "float"
        other = b.constant(float("nan") if nan else (0.0 if elt.kind == "float" else 0), TileType(shape, elt))
        return b.op(LoadOp, ptr, ok, other)

    def verify_(self):
        self._verify_dims()
        b = self.base.type
        _check(self.attrs["padding"] in ("zero", "nan"), self, "padding must be 'zero' or 'nan'")
        r = self.result.type
        _check(r.is_tile and tuple(r.shape) == tuple(self.attrs["block_shape"]) and r.element == b.pointee, self,
               f"result must be a {list(self.attrs['block_shape'])} tile of {b.pointee}")


class DescriptorStoreOp(_DescriptorAccess):
    """``value`` (a ``block_shape`` tile) stored as the block at ``offsets`` of the tensor ``base``,
    ``shape`` and ``strides`` describe; elements outside ``[0, shape)`` are dropped. Operands: ``base``,
    ``value``, then shape, strides and offsets as in ``descriptor_load``."""
    name = "descriptor_store"
    operand_names = ("base", "value", "*dims")
    attr_types = {"block_shape": tuple}
    attr_defaults = {}
    traits = frozenset({"writes"})
    leading = 2

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return []

    def decompose(self, b):
        ptr, ok = _descriptor_block(b, self)
        b.create(StoreOp, [ptr, self.value, ok], [])

    def verify_(self):
        self._verify_dims()
        b = self.base.type
        v = self.value.type
        _check(v.is_tile and tuple(v.shape) == tuple(self.attrs["block_shape"]) and v.element == b.pointee, self,
               f"value must be a {list(self.attrs['block_shape'])} tile of {b.pointee}")


class StoreOp(Operation):
    name = "store"
    operand_names = ("ptr", "value", "mask?")
    attr_types = {"cache": str, "eviction": str}
    attr_defaults = {"cache": "", "eviction": ""}
    traits = frozenset({"writes"})

    def verify_(self):
        p = self.ptr.type
        _check(p.is_ptr, self, f"needs pointers, got {p}")
        _check(self.value.type == p.with_element(p.element.pointee), self,
               f"value {self.value.type} does not match pointers {p}")
        if self.mask is not None:
            _check(self.mask.type == p.with_element(i1), self, "mask must be i1 of the pointer's shape")


class AtomicRMWOp(Operation):
    """Atomic read-modify-write; returns the old values. ``kind``: add, max, min, and, or, xor, xchg."""
    name = "atomic_rmw"
    operand_names = ("ptr", "value", "mask?")
    attr_types = {"kind": str, "sem": str, "scope": str}
    attr_defaults = {"sem": "acq_rel", "scope": "gpu"}
    traits = frozenset({"reads", "writes"})
    KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")
    result_type_of = 1

    def verify_(self):
        _check(self.attrs["kind"] in self.KINDS, self, f"bad kind {self.attrs['kind']!r}")
        p = self.ptr.type
        _check(p.is_ptr and self.value.type == p.with_element(p.element.pointee), self, "value/pointer mismatch")


class AtomicCASOp(Operation):
    name = "atomic_cas"
    operand_names = ("ptr", "cmp", "value")
    attr_types = {"sem": str, "scope": str}
    attr_defaults = {"sem": "acq_rel", "scope": "gpu"}
    traits = frozenset({"reads", "writes"})
    result_type_of = 2
