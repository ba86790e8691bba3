"""``triton.reinterpret(tensor, dtype)``: pass a host tensor to a kernel as a pointer to another element type of
the same width (fp8 data held in uint8 tensors, bf16 in int16, ...). The wrapper changes nothing in memory; the
kernel's parameter becomes ``*dtype`` and points at the tensor's first element."""
from __future__ import annotations

from .core import dtype as tl_dtype


class TensorWrapper:
    """An array (host or device) seen as elements of ``dtype`` (a tl dtype): the launch paths take the memory
    and device of ``base`` (``__tilec_base__``), the interpreter reads ``base``."""

    def __init__(self, base, dtype):
        self.base = base
        self.dtype = dtype
        self.data = base
        self.shape = tuple(base.shape)
        self.device = getattr(base, "device", "cpu")

    @property
    def __tilec_base__(self):
        """The array this view reads and writes (the launch paths take its memory and device)."""
        return self.base

    def data_ptr(self) -> int:
        b = self.base
        if hasattr(b, "data_ptr"):
            return int(b.data_ptr())
        ai = getattr(b, "__cuda_array_interface__", None) or b.__array_interface__
        return int(ai["data"][0])

    def stride(self, *i):
        return self.base.stride(*i)

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self) -> int:
        return max(self.dtype.primitive_bitwidth // 8, 1)

    def __str__(self):
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor, dtype):
    """``tensor`` seen as ``dtype`` elements; reinterpreting a wrapper rewraps its base, and asking for the base's
    own dtype gives the base back."""
    if isinstance(tensor, TensorWrapper):
        tensor = tensor.base
    if not isinstance(dtype, tl_dtype):
        raise TypeError(f"reinterpret needs a tl dtype, got {dtype!r}")
    return TensorWrapper(tensor, dtype)
