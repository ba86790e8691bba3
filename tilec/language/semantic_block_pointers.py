"""Block pointers (``tl.make_block_ptr``, ``tl.advance``) and tensor descriptors' loads and stores.

A block pointer is expanded here into a tile of pointers and a bounds mask, which the memory rules then load or
store; a tensor descriptor's access stays one ``descriptor_load``/``descriptor_store`` op (lowered later by
``expand-descriptors``) unless its meaning has to be spelled out now, as a bounds-checked block-pointer access.
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_ptr, block_type, tensor


class BlockPointerRules:
    """Block pointers and tensor descriptors, for :class:`~tilec.language.semantic.Semantic`."""

    def make_block_ptr(self, base, shape, strides, offsets, block_shape, order) -> block_ptr:
        base = self.to_tensor(base)
        if not base.dtype.is_ptr() or base.shape:
            raise TypeError(f"make_block_ptr needs a scalar pointer base, got {base.type}")
        shape, strides, offsets = (list(_unwrap(v)) for v in (shape, strides, offsets))
        block_shape = [_unwrap(b) for b in _unwrap(block_shape)]
        order = [_unwrap(o) for o in _unwrap(order)]
        n = len(block_shape)
        if not (len(shape) == len(strides) == len(offsets) == n):
            raise ValueError(f"make_block_ptr: shape, strides, offsets and block_shape need {n} entries each")
        self.check_block_shape(block_shape)
        if sorted(order) != list(range(n)):
            raise ValueError(f"make_block_ptr: order {order} is not a permutation of {n} dimensions")
        shape = [self.cast(self.to_tensor(v), tlc.int64) for v in shape]
        strides = [self.cast(self.to_tensor(v), tlc.int64) for v in strides]
        offsets = [self.cast(self.to_tensor(v), tlc.int32) for v in offsets]
        return block_ptr(base, shape, strides, offsets, block_shape, order)

    def advance(self, bp, offsets) -> block_ptr:
        if not isinstance(bp, block_ptr):
            raise TypeError(f"advance needs a block pointer, got {type(bp).__name__}")
        offsets = list(_unwrap(offsets))
        if len(offsets) != len(bp.block_shape):
            raise ValueError(f"advance needs {len(bp.block_shape)} offsets, got {len(offsets)}")
        new = [o if (not isinstance(d, tensor) and d == 0) else self.add(o, self.cast(self.to_tensor(d), tlc.int32))
               for o, d in zip(bp.offsets, (_unwrap(d) for d in offsets))]
        return block_ptr(bp.base, bp.shape, bp.strides, new, bp.block_shape, bp.order)

    def _expand_block_ptr(self, bp: block_ptr, boundary_check):
        """The pointer tile of ``bp``'s block and the mask of its in-bounds elements along ``boundary_check``."""
        n = len(bp.block_shape)
        checks = sorted({_unwrap(d) for d in (_unwrap(boundary_check) or ())})
        for d in checks:
            if not isinstance(d, int) or not 0 <= d < n:
                raise ValueError(f"boundary_check dimension {d} out of range for a {n}-d block pointer")
        ptr, mask = bp.base, None
        for d in range(n):
            idx = self.add(self.iota(bp.block_shape[d], d, n), bp.offsets[d])
            ptr = self.add(ptr, self.mul(self.cast(idx, tlc.int64), bp.strides[d]))
            if d in checks:
                ok = self.logical_and(self.compare("ge", idx, 0),
                                      self.compare("lt", self.cast(idx, tlc.int64), bp.shape[d]))
                mask = ok if mask is None else self.logical_and(mask, ok)
        shape = tuple(bp.block_shape)
        return self.broadcast_to(ptr, shape), None if mask is None else self.broadcast_to(mask, shape)

    def descriptor_load(self, base, shape, strides, offsets, block_shape, padding) -> tensor:
        """A tensor descriptor's block at ``offsets``, as one ``descriptor_load`` op (see ``expand-descriptors``)."""
        offsets = [self.cast(self.to_tensor(_unwrap(o)), tlc.int32) for o in offsets]
        for o in offsets:
            if o.shape:
                raise ValueError(f"tensor descriptor offsets must be scalars, got a tensor of shape {list(o.shape)}")
        elt = base.dtype.element_ty
        # bools live in memory as bytes: the pointer load knows how; interpreted debug runs check pointer loads
        if elt.is_bool() or (getattr(self.b, "checks_pointer_accesses", False) and self.debug_enabled()):
            return self.expand_descriptor_load(base, shape, strides, offsets, block_shape, padding)
        ty = block_type(elt, list(block_shape))
        operands = [base.handle] + [v.handle for v in (*shape, *strides, *offsets)]
        return tensor(self.b.create("descriptor_load", operands, ty, block_shape=tuple(block_shape),
                                    padding=padding), ty)

    def descriptor_store(self, base, shape, strides, offsets, block_shape, value):
        """``value`` stored as a tensor descriptor's block at ``offsets``, as one ``descriptor_store`` op."""
        n = len(block_shape)
        bshape = tuple(block_shape)
        v = _unwrap(value)
        if isinstance(v, tensor) and v.shape != bshape:
            raise ValueError(f"store: value of shape {list(v.shape)} does not match the block {list(bshape)}")
        elt = base.dtype.element_ty
        if elt.is_bool() or (getattr(self.b, "checks_pointer_accesses", False) and self.debug_enabled()):
            bp = self.make_block_ptr(base, shape, strides, offsets, block_shape, tuple(reversed(range(n))))
            return self.store(bp, value, boundary_check=tuple(range(n)))
        offsets = [self.cast(self.to_tensor(_unwrap(o)), tlc.int32) for o in offsets]
        for o in offsets:
            if o.shape:
                raise ValueError(f"tensor descriptor offsets must be scalars, got a tensor of shape {list(o.shape)}")
        v = self.broadcast_to(self._as_element(v, elt), bshape)
        operands = [base.handle, v.handle] + [x.handle for x in (*shape, *strides, *offsets)]
        self.b.create("descriptor_store", operands, None, block_shape=bshape)

    def expand_descriptor_load(self, base, shape, strides, offsets, block_shape, padding) -> tensor:
        """What ``descriptor_load`` means: a block-pointer load with every dimension bounds-checked."""
        n = len(block_shape)
        bp = self.make_block_ptr(base, shape, strides, offsets, block_shape, tuple(reversed(range(n))))
        return self.load(bp, boundary_check=tuple(range(n)), padding_option=padding)
