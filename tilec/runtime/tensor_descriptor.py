"""Host-side tensor descriptors (Triton's ``TensorDescriptor``): a global tensor and the block shape a kernel moves
through it, made on the host and passed as one kernel argument.

Inside the kernel the argument is the same ``tl.tensor_descriptor`` that ``tl.make_tensor_descriptor`` builds
(``desc.load``, ``desc.store``, ``desc.shape``, ...): its base pointer, shape and strides travel as ordinary
runtime parameters and its block shape and padding specialise the kernel (see ``aggregates.py``). Every backend
therefore runs it as bounds-checked block access; the rules checked here are the ones TMA hardware imposes,
kept everywhere so that a descriptor valid on the CPU is valid on a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..targets import arguments

MAX_RANK = 5


@dataclass
class TensorDescriptor:
    """``base`` (an array or tensor), its ``shape`` and ``strides`` (in elements), the ``block_shape`` moved by
    one ``load``/``store``, and the ``padding`` out-of-bounds loads read ("zero" or "nan")."""
    base: object
    shape: list
    strides: list
    block_shape: list
    padding: str = field(default="zero")

    def __post_init__(self):
        # the launch path of a wrapper that makes its descriptors per call (Triton's tutorials do) runs this for
        # each: the common case (a numpy array or torch tensor, a valid descriptor) reads each thing once
        shape = self.shape = list(map(int, self.shape))
        strides = self.strides = list(map(int, self.strides))
        block = self.block_shape = list(map(int, self.block_shape))
        rank = len(shape)
        if rank == 0 or rank > MAX_RANK:
            raise ValueError(f"a tensor descriptor has rank 1..{MAX_RANK}, got shape {shape}")
        if len(strides) != rank or len(block) != rank:
            raise ValueError(f"tensor descriptor rank mismatch: shape {shape}, strides {strides}, "
                             f"block_shape {block}")
        for b in block:
            if b < 1 or b & (b - 1):
                raise ValueError(f"tensor descriptor block_shape entries must be powers of two, got {block}")
        ptr, item = _address_and_itemsize(self.base)
        if ptr % 16:
            raise ValueError("a tensor descriptor's base must be 16-byte aligned")
        if strides[-1] != 1:
            raise ValueError(f"the last dimension of a tensor descriptor must be contiguous (stride 1), got "
                             f"strides {strides}")
        for s in strides[:-1]:
            if (s * item) % 16:
                raise ValueError(f"tensor descriptor strides must be multiples of 16 bytes, got strides "
                                 f"{strides} of {item}-byte elements")
        if self.padding != "zero":
            if self.padding != "nan":
                raise ValueError(f"padding must be 'zero' or 'nan', got {self.padding!r}")
            if not arguments.inspect(self.base).dtype.startswith(("fp", "bf")):
                raise ValueError("padding 'nan' needs a floating-point tensor")

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        """A descriptor of the whole of ``tensor`` (shape and strides as the tensor has them)."""
        return TensorDescriptor(tensor, list(tensor.shape), _element_strides(tensor), list(block_shape), padding)


def _address_and_itemsize(base) -> tuple:
    """The data address and element size of a descriptor's base; TypeError when it is not an array."""
    kind = arguments.producer(base)
    if kind == "torch":
        return base.data_ptr(), base.element_size()
    if kind == "numpy":
        return arguments.numpy_address(base), base.itemsize
    info = arguments.inspect(base) if kind is not None else None
    if info is None:
        raise TypeError(f"a tensor descriptor's base must be an array or tensor, got {type(base).__name__}")
    return info.ptr, _itemsize(base)


def _itemsize(a) -> int:
    size = getattr(a, "itemsize", None)
    if size is None and hasattr(a, "element_size"):
        size = a.element_size()
    return int(size or 1)


def _element_strides(a) -> list:
    if callable(getattr(a, "stride", None)):  # torch
        return list(a.stride())
    return [s // _itemsize(a) for s in a.strides]  # numpy: bytes
