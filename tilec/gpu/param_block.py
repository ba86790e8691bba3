"""The host memory a GPU launch passes its kernel's parameters in: one buffer, with a ctypes cell over each
parameter at its offset.

GPU drivers read a launch's parameters from host memory the launcher keeps, either as an array of pointers, one per
parameter, or as one buffer laid out as the code object's metadata says. Both are served by one buffer holding
each parameter at an offset: a vendor gives only the offsets (its data: C's struct layout, :func:`packed`, or what
its code object records) and what its driver is handed (the cells' addresses, :meth:`ParamBlock.pointers`, or the
buffer's). A launch then writes each value into its cell, the same few ctypes stores on every GPU
(``GpuLauncher.write``).
"""
from __future__ import annotations

import ctypes

from .launcher import cell_type


def packed(kinds) -> tuple[list, int]:
    """``([(offset, ctype) per parameter], size)`` for parameters of ``kinds`` placed one after another, each at a
    multiple of its own size (as C lays out a struct of them)."""
    layout, end = [], 0
    for kind in kinds:
        ct = cell_type(kind)
        size = ctypes.sizeof(ct)
        off = -(-end // size) * size
        layout.append((off, ct))
        end = off + size
    return layout, end


class ParamBlock:
    """A buffer of at least ``size`` bytes (whole 8-byte words) with a ctypes cell over each ``(offset, ctype)`` of
    ``layout``, in parameter order (``cells``); ``address`` and ``size`` are the buffer's."""

    def __init__(self, layout, size: int):
        self.buffer = ctypes.create_string_buffer(max(8, -(-size // 8) * 8))
        self.address = ctypes.addressof(self.buffer)
        self.size = len(self.buffer)
        self.cells = [ct.from_buffer(self.buffer, off) for off, ct in layout]

    def pointers(self):
        """A ``void*[]`` of the cells' addresses (never empty), for a driver that takes one pointer per parameter."""
        return (ctypes.c_void_p * max(1, len(self.cells)))(*[ctypes.addressof(c) for c in self.cells])
