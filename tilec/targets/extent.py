"""The memory a pointer argument's array spans, in bytes relative to its data pointer: ``(lo, hi)`` such that
every element of the array lies in ``[address + lo, address + hi)``. Debug builds check each access against it.

``lo`` is negative only for views with negative strides; raw addresses (ints, ctypes pointers, None) and
producers that do not describe their layout get :data:`UNKNOWN`, which no offset falls outside of.
"""
from __future__ import annotations

import numpy as np

from .arguments import producer

UNKNOWN = (-(2 ** 62), 2 ** 62)


def span(shape, strides, itemsize: int) -> tuple[int, int]:
    """``(lo, hi)`` of a view with ``shape`` and byte ``strides`` (None: row-major contiguous)."""
    shape = [int(n) for n in shape]
    if any(n == 0 for n in shape):
        return 0, 0
    if strides is None:
        return 0, int(np.prod(shape, dtype=np.int64)) * itemsize
    lo = hi = 0
    for n, st in zip(shape, strides):
        d = (n - 1) * int(st)
        lo, hi = lo + min(d, 0), hi + max(d, 0)
    return lo, hi + itemsize


def byte_extent(v) -> tuple[int, int]:
    """``(lo, hi)`` for a pointer argument (see the module docstring)."""
    p = producer(v)
    try:
        if p == "view":  # a reinterpreting view: the bytes of the array it views
            return byte_extent(v.__tilec_base__)
        if p == "numpy":
            return span(v.shape, v.strides, v.itemsize)
        if p == "torch":
            item = v.element_size()
            return span(v.shape, [s * item for s in v.stride()], item)
        if p in ("cai", "ai"):
            ai = v.__cuda_array_interface__ if p == "cai" else v.__array_interface__
            return span(ai["shape"], ai.get("strides"), np.dtype(ai["typestr"]).itemsize)
    except (AttributeError, KeyError, TypeError, ValueError):
        pass
    return UNKNOWN
