"""Tensor descriptors (``tl.make_tensor_descriptor``): a global tensor's base, shape and strides plus a block
shape; ``desc.load(offsets)`` / ``desc.store(offsets, value)`` move one block.

Their meaning is a bounds-checked block access: out-of-bounds elements load as the padding value (zero, or NaN
with ``padding_option="nan"``) and are not stored. A load stays one ``descriptor_load`` op in tir, so a target
with a tensor copy engine (TMA on sm_90) can move the block whole; ``expand-descriptors`` turns it into the same
pointer tile and mask as a block pointer with every dimension checked for the others. Stores alike
(``descriptor_store``).
"""
from __future__ import annotations

from .core import Shape, builtin, current, tensor, _unwrap
from . import core as tlc


class tensor_descriptor:
    """The value ``tl.make_tensor_descriptor`` returns; it travels through control flow as its tensors."""
    __tilec_attr_ok__ = True

    def __init__(self, base, shape, strides, block_shape, padding):
        self.base, self.shape, self.strides = base, tuple(shape), tuple(strides)
        self.block_shape, self.padding = Shape(block_shape), padding  # compares equal to a list, as Triton's

    def __tilec_flatten__(self):
        return [self.base, *self.shape, *self.strides], (self.block_shape, self.padding)

    @classmethod
    def __tilec_unflatten__(cls, static, children):
        block_shape, padding = static
        n = len(block_shape)
        return cls(children[0], children[1:1 + n], children[1 + n:], block_shape, padding)

    @property
    def dtype(self):
        return self.base.dtype.element_ty

    def _dims(self, s):
        """Shape and strides as the i64 scalars the descriptor ops take (a host descriptor's may arrive as Python
        ints: a stride of 1 is specialised to the constant, as any ``== 1`` argument)."""
        return ([s.cast(s.to_tensor(_unwrap(v)), tlc.int64) for v in self.shape],
                [s.cast(s.to_tensor(_unwrap(v)), tlc.int64) for v in self.strides])

    def _offsets(self, offsets):
        """One offset per dimension; the block's rows must hold 16 bytes (TMA's rule, host descriptors too)."""
        offsets = [_unwrap(o) for o in _unwrap(offsets)]
        if len(offsets) != len(self.block_shape):
            raise ValueError(f"a {len(self.block_shape)}-d tensor descriptor needs {len(self.block_shape)} offsets, "
                             f"got {len(offsets)}")
        _check_row_bytes(self.block_shape, self.dtype)
        return offsets

    @builtin
    def load(self, offsets):
        s = current()
        offsets = self._offsets(offsets)
        shape, strides = self._dims(s)
        return s.descriptor_load(self.base, shape, strides, offsets, self.block_shape, self.padding)

    @builtin
    def store(self, offsets, value):
        s = current()
        offsets = self._offsets(offsets)
        shape, strides = self._dims(s)
        return s.descriptor_store(self.base, shape, strides, offsets, self.block_shape, value)

    def __repr__(self):
        return f"tensor_descriptor<{list(self.block_shape)}, {self.dtype}>"


def _check_row_bytes(block_shape, elem_ty):
    """A TMA box moves at least 16 bytes per row; kept on every backend (and for descriptors made on the host)."""
    elem_bytes = max(elem_ty.primitive_bitwidth // 8, 1)
    if block_shape[-1] * elem_bytes < 16:
        raise ValueError(f"Descriptor block shape must have at least 16 bytes in the last dimension, but got "
                         f"{block_shape[-1]} * {elem_bytes} = {block_shape[-1] * elem_bytes} bytes")


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A descriptor of the ``shape``/``strides`` tensor at ``base``, moving ``block_shape`` blocks."""
    s = current()
    base = s.to_tensor(_unwrap(base))
    if not base.dtype.is_ptr() or base.shape:
        raise TypeError(f"make_tensor_descriptor needs a scalar pointer base, got {base.type}")
    shape, strides = list(_unwrap(shape)), list(_unwrap(strides))
    block_shape = [_unwrap(b) for b in _unwrap(block_shape)]
    n = len(block_shape)
    if not (len(shape) == len(strides) == n) or n == 0:
        raise ValueError(f"make_tensor_descriptor: shape, strides and block_shape need {n} entries each, got "
                         f"{len(shape)}, {len(strides)} and {n}")
    s.check_block_shape(block_shape)
    _check_row_bytes(block_shape, base.dtype.element_ty)
    last = _unwrap(strides[-1])
    if not isinstance(last, tensor) and last != 1:
        raise ValueError(f"make_tensor_descriptor: the last dimension must be contiguous (stride 1), got {last}")
    padding = _unwrap(padding_option) or "zero"
    if padding not in ("zero", "nan"):
        raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding!r}")
    shape = [s.cast(s.to_tensor(_unwrap(v)), tlc.int64) for v in shape]
    strides = [s.cast(s.to_tensor(_unwrap(v)), tlc.int64) for v in strides]
    return tensor_descriptor(base, shape, strides, block_shape, padding)


@builtin
def load_tensor_descriptor(desc, offsets):
    return desc.load(offsets)


@builtin
def store_tensor_descriptor(desc, offsets, value):
    return desc.store(offsets, value)
