"""Shared-memory allocation: give every op that needs shared memory an offset, reusing space whose lifetimes
do not overlap.

Buffers are (size, first op, last op) intervals over the function's ops in program order: an op's scratch space
(layout conversions through shared memory, cross-warp reductions, transposes, gathers) lives only during its op; a
``local_alloc`` buffer (the software pipeliner's stage rings, operands staged from registers) lives until its
``local_dealloc``, or else until its last use through any view. One first-fit
allocator places both, so scratch inside a pipelined loop never lands on a ring. Each op gets an
``smem_offset`` attribute; the function gets ``shared`` (bytes).

Device functions (calls the lowering keeps) are allocated on their own and then placed after everything their
callers use (``smem_base``, added to their offsets), so a callee never overwrites its caller's live buffers; a
kernel's ``shared`` then covers its callees too, and every function's ``smem_end`` is where its own and its
callees' bytes end (insert-barriers orders calls by it).
"""
from __future__ import annotations

from ..layouts import (DotOperandLayout, MatrixUnitOperandLayout, gather_registers, holds_copies, register_moves,
                       reshape_coords, transpose_coords)
from .common import Pass, elem_bytes
from ...ir import ops as O
from .. import ops as G

ALIGN = 16
BUFFER_ALIGN = 1024


def operand_arrays(count: int, elem_sizes) -> tuple[list[int], int]:
    """Byte offsets of consecutive arrays of ``count`` elements, one per element size in ``elem_sizes`` (the
    operands of a multi-operand reduction or scan), each starting at a multiple of its element size so that
    every access to it is aligned (u8 values followed by i32 indices: the indices start on a 4-byte boundary);
    and the bytes they span. The region itself starts ``ALIGN``-aligned."""
    offsets, cur = [], 0
    for eb in elem_sizes:
        cur = (cur + eb - 1) // eb * eb
        offsets.append(cur)
        cur += count * eb
    return offsets, cur


def scratch_bytes(op) -> int:
    """Bytes of shared memory ``op`` uses while it runs (0: none). The GPU lowering follows the same rules."""
    if isinstance(op, G.ConvertLayoutOp):
        s, d = op.src.type, op.result.type
        if s.layout is None or d.layout is None:
            return 0
        if s.layout.to_linear(s.shape).same_threads(d.layout.to_linear(d.shape)):
            return 0
        return s.numel * elem_bytes(s)
    if isinstance(op, (O.AtomicRMWOp, O.AtomicCASOp)) and op.result.uses:
        if not op.ptr.type.is_tile:
            return 16  # thread 0 runs a scalar atomic and hands its result to the others
        t = op.result.type  # the owner of each element hands its result to the threads holding copies
        return t.numel * elem_bytes(t) if t.layout is not None and holds_copies(t) else 0
    if isinstance(op, (O.TransOp, O.ReshapeOp)):
        s, d = op.src.type, op.result.type
        if not s.is_tile:
            return 0
        fn = transpose_coords(op.attrs["order"]) if isinstance(op, O.TransOp) else reshape_coords(d.shape, s.shape)
        if register_moves(s.layout.to_linear(s.shape), d.layout.to_linear(d.shape), fn) is not None:
            return 0  # every thread keeps its elements (a reshape into its source's image)
        return s.numel * elem_bytes(s)
    if isinstance(op, O.GatherOp):  # the source staged whole, unless each thread holds the axis in registers
        s, d = op.src.type, op.result.type
        if gather_registers(s.layout.to_linear(s.shape), d.layout.to_linear(d.shape), op.attrs["axis"]) is not None:
            return 0
        return s.numel * elem_bytes(s)
    if isinstance(op, O.DotOp) and not isinstance(op.a.type.layout, (DotOperandLayout, MatrixUnitOperandLayout)):
        a, b = op.a.type, op.b.type  # the FMA path: both operands staged in shared memory
        return a.numel * elem_bytes(a) + b.numel * elem_bytes(b) + ALIGN
    if isinstance(op, O.ScanOp):  # per warp along the axis, its chunk totals
        src = op.operands[0].type
        ll = src.layout.to_linear(src.shape)
        warps = sum(1 for b in ll.warp if b[op.attrs["axis"]])
        n = 1
        for x in scan_slot_shape(ll, src.shape, op.attrs["axis"]):
            n *= x
        return operand_arrays((1 << warps) * n, [elem_bytes(o.type) for o in op.operands])[1] if warps else 0
    if isinstance(op, O.ReduceOp):  # partial results of the warps along the axis
        src = op.operands[0].type
        ll = src.layout.to_linear(src.shape)
        ax = op.attrs["axis"]
        warps = sum(1 for b in ll.warp if b[ax])
        if not warps:
            return 0
        out = 1
        for i, n in enumerate(src.shape):
            if i != ax:
                out *= n
        return operand_arrays((1 << warps) * out, [elem_bytes(o.type) for o in op.operands])[1]
    return 0


def scan_slot_shape(ll, shape, axis):
    """The shape of the array in which one warp publishes its chunk totals for a scan along ``axis``: the tile
    with the axis reduced to its chunks (the register bits above every thread bit of the axis; a thread's
    lower registers and its lanes and warps along the axis are folded into each total). A 1024x2 scan over
    16 warps needs 4 totals per warp, not the whole tile's 2,048."""
    top = max((b[axis] for b in list(ll.lane) + list(ll.warp) if b[axis]), default=0)
    out = list(shape)
    if top:
        out[axis] = max(1, shape[axis] // (2 * top))
    return tuple(out)


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
                n = scratch_bytes(op)
                if n:
                    intervals.append((op, n, i, i))
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


__all__ = ["AllocateShared", "scratch_bytes", "buffer_bytes", "allocate", "operand_arrays", "place_device_functions"]
