"""Shared-memory allocation: give every op that needs shared memory an offset, reusing space whose lifetimes
do not overlap.

Buffers are (size, first op, last op) intervals over the function's ops in program order: an op's scratch region
lives only during its op, sized by its plan (``gpu/scratch.py: scratch_plan``, which also says where each of
its arrays lies in the region: the lowering addresses the arrays from the same plan); a
``local_alloc`` buffer (the software pipeliner's stage rings, operands staged from registers) lives until its
``local_dealloc``, or else until its last use through any view. One first-fit
allocator places both, so scratch inside a pipelined loop never lands on a ring. Each op gets an
``smem_offset`` attribute (a scratch region at a multiple of ``ALIGN``, a buffer of ``BUFFER_ALIGN``); the
function gets ``shared`` (bytes).

Device functions (calls the lowering keeps) are allocated on their own and then placed after everything their
callers use (``smem_base``, added to their offsets), so a callee never overwrites its caller's live buffers; a
kernel's ``shared`` then covers its callees too, and every function's ``smem_end`` is where its own and its
callees' bytes end (insert-barriers orders calls by it).
"""
from __future__ import annotations

from .common import Pass, elem_bytes
from ...ir import ops as O
from .. import ops as G
from ..scratch import ALIGN, scratch_plan

BUFFER_ALIGN = 1024


def buffer_bytes(t) -> int:
    """Bytes of a shared buffer type (all its stages)."""
    n = 1
    for s in t.shape:
        n *= s
    return n * elem_bytes(t)


def _last_use(alloc, order):
    """Program-order index where ``alloc``'s buffer dies: its ``local_dealloc``, else the end of the outermost
    region op around its last use (a use inside a loop keeps the buffer for every iteration)."""
    end = order[alloc]
    for user, _ in G.buffer_users(alloc.result):
        if isinstance(user, G.LocalDeallocOp):
            return order[user]
        top = user
        while top.parent_op is not None and top.parent_op is not alloc.parent_op and \
                not isinstance(top.parent_op, O.FuncOp):
            top = top.parent_op
        last = max((order[o] for o in top.walk()), default=order[top])
        end = max(end, last)
    return end


def allocate(intervals):
    """First-fit offsets for [(key, size, start, end[, alignment])], largest first; returns ({key: offset},
    total)."""
    placed = []
    offsets = {}
    for key, size, start, end, *al in sorted(intervals, key=lambda t: -t[1]):
        align = al[0] if al else ALIGN
        off = 0
        for o2, s2, a2, e2 in sorted(placed, key=lambda t: t[0]):
            if e2 < start or end < a2:
                continue
            if off + size <= o2 or o2 + s2 <= off:
                continue
            off = (o2 + s2 + align - 1) // align * align
        placed.append((off, size, start, end))
        offsets[key] = off
    total = max((o + s for o, s, _, _ in placed), default=0)
    return offsets, total


class AllocateShared(Pass):
    name = "allocate-shared"

    def run(self, module):
        for f in module.funcs:
            intervals = []
            order = {op: i for i, op in enumerate(f.walk())}
            for op, i in order.items():
                plan = scratch_plan(op)
                if plan is not None and plan.bytes:
                    intervals.append((op, plan.bytes, i, i))
                elif isinstance(op, G.LocalAllocOp):
                    # swizzle atoms repeat every 1024 bytes: matrix-unit descriptors assume that alignment
                    intervals.append((op, buffer_bytes(op.result.type), i, _last_use(op, order), BUFFER_ALIGN))
            offsets, total = allocate(intervals)
            for op, off in offsets.items():
                op.attrs["smem_offset"] = off
            f.attrs["shared"] = total
        place_device_functions(module)


def _calls(f):
    return [op.attrs["callee"] for op in f.walk() if isinstance(op, O.CallOp)]


def place_device_functions(module):
    """Give every called function a base past its callers' bytes (callers first), shift its offsets there, and
    record each function's ``smem_end``; a kernel's ``shared`` becomes its ``smem_end``."""
    funcs = {f.sym_name: f for f in module.funcs}
    order, seen = [], set()

    def visit(f):  # callees after every caller: reversed post-order
        if f.sym_name in seen:
            return
        seen.add(f.sym_name)
        for c in _calls(f):
            if c in funcs:
                visit(funcs[c])
        order.append(f)
    for f in module.funcs:
        visit(f)
    order.reverse()
    if all(not _calls(f) for f in order):
        return
    base = {f.sym_name: 0 for f in order}
    for f in order:
        for c in _calls(f):
            callee = funcs.get(c)
            if callee is None:
                continue
            align = BUFFER_ALIGN if any(isinstance(op, G.LocalAllocOp) for op in callee.walk()) else ALIGN
            start = base[f.sym_name] + f.attrs.get("shared", 0)
            base[c] = max(base[c], (start + align - 1) // align * align)
    for f in order:
        b = base[f.sym_name]
        if b and not f.attrs.get("kernel"):
            for op in f.walk():
                if "smem_offset" in op.attrs:
                    op.attrs["smem_offset"] += b
            f.attrs["smem_base"] = b
    end = {}
    for f in reversed(order):  # callees first
        own = base[f.sym_name] + f.attrs.get("shared", 0) if f.attrs.get("shared", 0) else 0
        end[f.sym_name] = max([own] + [end[c] for c in _calls(f) if c in end])
        f.attrs["smem_end"] = end[f.sym_name]
        if f.attrs.get("kernel"):
            f.attrs["shared"] = end[f.sym_name]


__all__ = ["AllocateShared", "buffer_bytes", "allocate", "place_device_functions"]
