"""Small helpers shared by the GPU passes: the Pass base (from the pass manager), typed edits of layouts, and
options every GPU pass reads."""
from __future__ import annotations

from ...ir.builder import Builder
from ...ir import ops as O
from ...ir.core import OpResult, Value
from ..layouts import Layout
from ..ops import ConvertLayoutOp

from ...passes.base import Pass  # noqa: F401 - re-exported for the GPU passes


def layout_of(v: Value):
    return v.type.layout if v.type.is_tile else None


def set_layout(v: Value, layout: Layout):
    if v.type.is_tile:
        v.type = v.type.with_layout(layout)


def convert_before(op, index: int, layout: Layout) -> Value | None:
    """Make operand ``index`` of ``op`` have ``layout`` by inserting a ``convert_layout`` before ``op``."""
    v = op.operands[index]
    if not v.type.is_tile or v.type.layout == layout:
        return None
    b = Builder()
    b.set_insertion_point_before(op)
    b.loc = op.loc
    c = b.op(ConvertLayoutOp, v, result_type=v.type.with_layout(layout))
    op.set_operand(index, c)
    return c


def convert_after(v: Value, layout: Layout, anchor_op) -> Value:
    """A ``convert_layout`` of ``v`` to ``layout`` placed just after ``anchor_op``; uses are not touched."""
    b = Builder()
    b.set_insertion_point_after(anchor_op)
    b.loc = anchor_op.loc
    return b.op(ConvertLayoutOp, v, result_type=v.type.with_layout(layout))


def retype_behind_convert(v: Value, layout: Layout, anchor_op) -> Value:
    """Give ``v`` (a result of ``anchor_op``) ``layout`` while its users keep seeing the old type: they are
    moved onto a ``convert_layout`` back to the old layout placed after ``anchor_op``, which is returned."""
    old = v.type
    v.type = old.with_layout(layout)
    back = convert_after(v, old.layout, anchor_op)
    for use_op, idx in list(v.uses):
        if use_op is not back.op:
            use_op.set_operand(idx, back)
    return back


def is_zero(v) -> bool:
    """``v`` is a zero constant, seen through splats and layout conversions."""
    while isinstance(v, OpResult) and isinstance(v.op, (O.SplatOp, ConvertLayoutOp)):
        v = v.op.operands[0]
    return isinstance(v, OpResult) and isinstance(v.op, O.ConstantOp) and v.op.attrs["value"] == 0


def elem_bytes(t) -> int:
    """Bytes of one element of ``t`` in memory (pointers 8); the GPU lowering's memory sizes agree."""
    e = t.element
    return 8 if e.is_ptr else e.bytes


def pointee_bytes(ptr_type) -> int:
    """Bytes of the element a pointer (or tile of pointers) points at."""
    return elem_bytes(ptr_type.element.pointee)


def tile_values(func):
    """Every tile-typed value defined in ``func`` (block arguments and op results)."""
    out = []
    for op in func.walk():
        for r in op.regions:
            for b in r.blocks:
                out.extend(a for a in b.args if a.type.is_tile)
        out.extend(r for r in op.results if r.type.is_tile)
    return out
