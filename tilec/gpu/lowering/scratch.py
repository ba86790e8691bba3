"""An op's scratch region at code-generation time: the arrays of its plan (``gpu/scratch.py``, the rules
allocate-shared sized the region by) at the byte offset allocate-shared gave the op.

Every lowering that uses scratch addresses it through :meth:`ScratchRef.ptr` only, so what a lowering may touch is
what the plan says: an array the plan has, of the element size the plan gives it, vector accesses no wider than
the array's alignment, a constant offset inside the array. Anything else is refused here, at compile time, as
an internal error (a lowering and the plan disagreeing), instead of corrupting another op's shared memory at run
time. Offsets computed from thread coordinates stay the lowering's to keep inside the array (every staging
buffer's offsets are a bijection on its shape); ``tests/gpu/test_scratch_plan.py`` evaluates them for every
thread of every kind of scratch user.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import BackendError
from ..scratch import scratch_plan
from .types import I32


def scratch_of(L, op, what: str) -> "Scratch":
    """``op``'s scratch region (``what``: the user, for the error when allocate-shared gave it none)."""
    plan = scratch_plan(op)
    base = op.attrs.get("smem_offset")
    if plan is None or base is None:
        raise BackendError(f"internal: {what} without shared memory (run allocate-shared)")
    return Scratch(L, op, plan, base, what)


class Scratch:
    """``op``'s plan at its region's byte offset ``base`` in the kernel's shared memory."""

    def __init__(self, L, op, plan, base: int, what: str):
        self.L, self.op, self.plan, self.base, self.what = L, op, plan, base, what

    def array(self, name: str, elem_bytes: int) -> "ScratchRef":
        """The plan's array ``name``, read as ``elem_bytes``-byte elements (the plan's size for it, or refused)."""
        try:
            a = self.plan[name]
        except KeyError as e:
            raise BackendError(f"internal: {self.what}: {e.args[0]}") from None
        if a.elem_bytes != elem_bytes:
            raise BackendError(f"internal: {self.what} reads {elem_bytes}-byte elements from scratch array "
                               f"{name!r} of {a.elem_bytes}-byte ones")
        return ScratchRef(self, a)


class ScratchRef:
    """One array of a region: ``shape``, ``numel`` and ``elem_bytes`` from the plan, ``byte_offset`` in the
    kernel's shared memory."""

    def __init__(self, region: Scratch, array):
        self.region, self.array = region, array
        self.byte_offset = region.base + array.offset
        self.shape, self.numel, self.elem_bytes = array.shape, array.numel, array.elem_bytes

    def ptr(self, elem_offset, count: int = 1):
        """The shared-memory pointer of element ``elem_offset`` (i32) of the array, for an access of ``count``
        consecutive elements."""
        a, eb = self.array, self.elem_bytes
        if count > 1 and count * eb > a.align:
            raise BackendError(f"internal: {self.region.what}: a {count * eb}-byte access to scratch array "
                               f"{a.name!r}, aligned to {a.align} bytes")
        if isinstance(elem_offset, ir.Constant) and not 0 <= elem_offset.constant <= a.numel - count:
            raise BackendError(f"internal: {self.region.what}: elements {elem_offset.constant}.."
                               f"{elem_offset.constant + count - 1} of scratch array {a.name!r} of {a.numel}")
        L = self.region.L
        b, c = L.b, ir.Constant(I32, self.byte_offset)
        off = b.add(c, b.mul(elem_offset, ir.Constant(I32, eb))) if eb != 1 else b.add(c, elem_offset)
        return b.gep(L.smem, [off], source_etype=ir.IntType(8))


__all__ = ["Scratch", "ScratchRef", "scratch_of"]
