"""Global scratch memory for launches that need it (in-kernel tensor copy descriptors on sm_90: 128 bytes per
descriptor per program), as Triton's ``set_allocator``.

``tilec.set_allocator(fn)``: ``fn(size, alignment, stream)`` returns an object with ``data_ptr()`` (a torch
tensor from torch's caching allocator, for one); it is called at each launch that needs scratch, and the object
is kept alive until the next such launch of the kernel. Without one, the CUDA launcher keeps a buffer of its
own per device and stream, grown as needed.
"""
from __future__ import annotations

_allocator = None


def set_allocator(fn) -> None:
    """Use ``fn(size: int, alignment: int, stream: int | None)`` for launch-time scratch memory (None: tilec's
    own buffers)."""
    global _allocator
    if fn is not None and not callable(fn):
        raise TypeError(f"set_allocator needs a callable (size, alignment, stream) -> buffer, got {fn!r}")
    _allocator = fn


def get_allocator():
    return _allocator


__all__ = ["set_allocator", "get_allocator"]
