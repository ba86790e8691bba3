"""Scratch shared memory: what an op keeps in shared memory only while it runs, as a plan of named arrays inside
the op's region (each with its element size, shape, byte offset and alignment).

One analysis that every reader asks, so that sizes and placements cannot drift apart: allocate-shared sizes the
op's region from ``plan.bytes`` and gives it its ``smem_offset``; insert-barriers, the software pipeliner and
the shared-memory limit read the same bytes; the GPU lowering addresses each array at the region's offset plus
the array's own (``lowering/scratch.py``), with the array's shape. The rules, one entry per op class in
:data:`SCRATCH` (a subclass follows its base's), decide both whether an op needs scratch at all and how its arrays
lie; an op class without an entry needs none:

- a layout conversion, transpose or reshape whose elements change threads: the source tile staged whole
  (``tile``; the lowering's staging buffer permutes within it). Broadcast and expand_dims need none: gir keeps
  their elements in their threads (``verify_gir``);
- a gather whose axis does not lie in each thread's registers: the source staged whole (``source``);
- an atomic whose result is used: a scalar atomic's result handed from thread 0 to the others (``result``, in a
  slot of the region's alignment), a tile atomic's results handed from each element's owner to the threads
  holding copies (``result``, the tile);
- a dot on the FMA path (operands not in matrix-unit layouts): both operands, row-major (``a``, then ``b`` from
  the next 16-byte boundary);
- a reduction or scan across warps: per operand an array (:func:`operand_array`) of one slot per warp along the
  axis, each array starting at a multiple of its element size (u8 values, then i32 indices from a 4-byte
  boundary). A reduction's slot is its result tile; a scan's holds one total per chunk and row
  (:func:`scan_slot_shape`).
"""
from __future__ import annotations

import math

from dataclasses import dataclass

from ..ir import ops as O
from ..ir.dispatch import OpTable
from . import ops as G
from .layouts import MatrixUnitOperandLayout, byte_operand_shuffle, gather_registers, holds_copies, register_moves, reshape_coords, \
    transpose_coords
from .passes.common import elem_bytes

#: every region starts at a multiple of this (allocate-shared places it so): an array at offset 0 takes vector
#: accesses of up to 16 bytes
ALIGN = 16


@dataclass(frozen=True)
class ScratchArray:
    """One array of a region: ``elem_bytes`` per element, ``shape`` (row-major unless its user permutes within
    it), starting ``offset`` bytes into the region, at an address that is a multiple of ``align``."""
    name: str
    elem_bytes: int
    shape: tuple
    offset: int
    align: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def end(self) -> int:
        """The byte of the region just past the array."""
        return self.offset + self.numel * self.elem_bytes


@dataclass(frozen=True)
class ScratchPlan:
    """An op's scratch region: its ``arrays`` and the ``bytes`` it spans (at least up to every array's end);
    ``use`` says what it holds, for messages (``"a layout conversion of"`` a tile)."""
    use: str
    arrays: tuple
    bytes: int

    def __post_init__(self):
        for a in self.arrays:
            if a.end > self.bytes or a.offset % a.align:
                raise ValueError(f"scratch array {a} does not lie in its {self.bytes}-byte region")

    def __getitem__(self, name: str) -> ScratchArray:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"no scratch array {name!r} in a plan of {[a.name for a in self.arrays]}")


def plan_of(use: str, specs, bytes: int | None = None) -> ScratchPlan:
    """The plan of arrays ``specs`` [(name, element bytes, shape[, alignment])] laid out in order, each from the
    next multiple of its alignment (default: its element size); the region spans ``bytes`` (default: to the end
    of the last array)."""
    arrays, cur = [], 0
    for name, eb, shape, *want in specs:
        step = want[0] if want else eb
        cur = (cur + step - 1) // step * step
        a = ScratchArray(name, eb, tuple(shape), cur, ALIGN if cur % ALIGN == 0 else cur & -cur)
        arrays.append(a)
        cur = a.end
    return ScratchPlan(use, tuple(arrays), cur if bytes is None else bytes)


SCRATCH = OpTable("scratch plan")


def scratch_plan(op) -> ScratchPlan | None:
    """The scratch region ``op`` uses while it runs; None: it needs no shared memory of its own."""
    rule = SCRATCH.lookup(op)
    return rule(op) if rule is not None else None


def scratch_bytes(op) -> int:
    """Bytes of ``op``'s scratch region (0: none)."""
    plan = scratch_plan(op)
    return plan.bytes if plan is not None else 0


def operand_array(k: int) -> str:
    """The name of operand ``k``'s array in a reduction's or scan's plan."""
    return f"operand{k}"


def _staged(use, name, t):
    return plan_of(use, [(name, elem_bytes(t), t.shape)])


def _linear(t):
    return t.layout.to_linear(t.shape)


@SCRATCH.register(G.ConvertLayoutOp)
def _convert(op):
    s, d = op.src.type, op.result.type
    if s.layout is None or d.layout is None or _linear(s).same_threads(_linear(d)):
        return None
    if byte_operand_shuffle(_linear(s), _linear(d), elem_bytes(s)):  # lane shuffles
        return None
    return _staged("a layout conversion of", "tile", s)


@SCRATCH.register(O.TransOp)
def _trans(op):
    return _moved(op, transpose_coords(op.attrs["order"]), "a transpose of")


@SCRATCH.register(O.ReshapeOp)
def _reshape(op):
    return _moved(op, reshape_coords(op.result.type.shape, op.src.type.shape), "a reshape of")


def _moved(op, fn, use):
    """A rearrangement under coordinate map ``fn`` (result coordinate -> source coordinate): none where every
    thread keeps its elements (``register_moves``, which the lowering asks too), else the source staged."""
    s, d = op.src.type, op.result.type
    if not s.is_tile or not d.is_tile or register_moves(_linear(s), _linear(d), fn) is not None:
        return None
    return _staged(use, "tile", s)


@SCRATCH.register(O.GatherOp)
def _gather(op):
    s, d = op.src.type, op.result.type
    if gather_registers(_linear(s), _linear(d), op.attrs["axis"]) is not None:
        return None
    return _staged("a gather from", "source", s)


@SCRATCH.register(O.AtomicRMWOp, O.AtomicCASOp)
def _atomic(op):
    if not op.result.uses:
        return None
    t = op.result.type
    use = "the results of an atomic on"
    if not op.ptr.type.is_tile:  # thread 0 runs a scalar atomic and hands its result to the others
        return plan_of(use, [("result", elem_bytes(t), ())], bytes=ALIGN)
    if t.layout is None or not holds_copies(t):
        return None
    return _staged(use, "result", t)  # the owner of each element hands its result to the threads holding copies


@SCRATCH.register(O.DotOp)
def _dot(op):
    """The FMA path: matrix-unit operand layouts are the target's to lower from registers; any other dot reads
    both operands from shared memory."""
    a, b = op.a.type, op.b.type
    if isinstance(a.layout, MatrixUnitOperandLayout):
        return None
    ea, eb = elem_bytes(a), elem_bytes(b)
    return plan_of("the operands of a dot on", [("a", ea, a.shape), ("b", eb, b.shape, ALIGN)],
                   bytes=a.numel * ea + b.numel * eb + ALIGN)


def _per_warp(use, op, warps, slot):
    """One array per operand of ``2**warps`` slots of shape ``slot`` (None: no warps along the axis)."""
    if not warps:
        return None
    return plan_of(use, [(operand_array(k), elem_bytes(o.type), (1 << warps,) + tuple(slot))
                         for k, o in enumerate(op.operands)])


def _warps_along(ll, axis) -> int:
    return sum(1 for b in ll.warp if b[axis])


@SCRATCH.register(O.ReduceOp)
def _reduce(op):
    """Partial results of the warps along the axis, a result tile per warp."""
    src = op.operands[0].type
    ax = op.attrs["axis"]
    return _per_warp("a reduction of", op, _warps_along(_linear(src), ax), src.shape[:ax] + src.shape[ax + 1:])


@SCRATCH.register(O.ScanOp)
def _scan(op):
    """Per warp along the axis, its chunk totals."""
    src = op.operands[0].type
    ax = op.attrs["axis"]
    ll = _linear(src)
    return _per_warp("a scan of", op, _warps_along(ll, ax), scan_slot_shape(ll, src.shape, ax))


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


__all__ = ["ALIGN", "SCRATCH", "ScratchArray", "ScratchPlan", "operand_array", "plan_of", "scan_slot_shape",
           "scratch_bytes", "scratch_plan"]
