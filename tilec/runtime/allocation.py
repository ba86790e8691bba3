"""``tilec.set_allocator``: where kernels that need global scratch memory get it.

A function ``alloc(size: int, alignment: int, stream) -> buffer`` (Triton's protocol) is called by backends that
need per-launch global scratch, such as GPU tensor-memory descriptors built inside a kernel. The CPU backend and the
interpreter build tensor descriptors from ordinary pointer arithmetic and never call it, so kernels written for
Triton, which set an allocator before launching, run unchanged here.
"""
from __future__ import annotations

_allocator = None


def set_allocator(allocator):
    """Install ``allocator`` (a callable, or None to remove it) for every later launch."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator needs a callable (size, alignment, stream) -> buffer, got "
                        f"{type(allocator).__name__}")
    _allocator = allocator


def get_allocator():
    """The installed allocator, or None."""
    return _allocator
