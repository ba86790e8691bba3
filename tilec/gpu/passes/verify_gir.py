"""Verification of gir: the tir verifier's structural checks plus the layout contracts the lowering relies on.

Some tir ops check their result types against layout-free inferred types, so the structure is verified on a
copy with the layouts dropped (and conversions removed); the layout rules are checked here:
every tile has a layout; elementwise ops and memory ops see one layout across their tile operands and results;
``reduce`` yields the slice of its operand's layout; ``expand_dims`` takes the slice of its result's layout;
``broadcast`` keeps a blocked layout; ``gather`` yields its index's layout; ``convert_layout`` keeps shape and
element type.
"""
from __future__ import annotations

from ...ir.core import IRError
from ..layouts import BlockedLayout, LinearEncoding, SliceLayout
from ...ir.parser import parse_module
from ...ir.printer import print_ir
from ...ir import ops as O
from .. import ops as G
from ...ir.verifier import verify

SAME_LAYOUT = (O.LoadOp, O.StoreOp, O.AtomicRMWOp, O.AtomicCASOp, O.SelectOp, O.CastOp, O.BitcastOp, O.AddPtrOp,
               O.HintOp, O.CmpOp, O.FmaOp, O.SplatOp, O.ConstantOp, O.ArangeOp)


class GIRError(IRError):
    """gir that breaks a layout contract."""


def _fail(op, msg):
    loc = f"{op.loc.file}:{op.loc.line}:{op.loc.col}: " if op.loc is not None else ""
    raise GIRError(f"{loc}'{op.name}' op {msg}")


def check_layouts(module):
    for op in module.walk():
        for r in op.regions:
            for b in r.blocks:
                for a in b.args:
                    if a.type.is_tile and a.type.layout is None:
                        _fail(op, f"block argument of type {a.type} has no layout")
        for v in op.results:
            if v.type.is_tile and v.type.layout is None:
                _fail(op, f"result of type {v.type} has no layout")
        tiles = [v for v in list(op.operands) + list(op.results) if v.type.is_tile]
        if op.is_elementwise or isinstance(op, SAME_LAYOUT):
            lays = {v.type.layout for v in tiles if v.type.shape == (tiles[0].type.shape if tiles else None)}
            if len(lays) > 1:
                _fail(op, f"mixes layouts {sorted(map(str, lays))}")
        elif isinstance(op, O.ReduceOp):
            src = op.operands[0].type.layout
            for r in op.results:
                if r.type.is_tile and r.type.layout != SliceLayout(op.attrs["axis"], src):
                    _fail(op, "result layout must be the slice of the operand's layout")
        elif isinstance(op, O.ExpandDimsOp) and op.operands[0].type.is_tile:
            if op.operands[0].type.layout != SliceLayout(op.attrs["axis"], op.result.type.layout):
                _fail(op, "operand layout must be the slice of the result's layout")
        elif isinstance(op, O.BroadcastOp):
            if op.src.type.layout != op.result.type.layout or \
                    not isinstance(op.result.type.layout, (BlockedLayout, LinearEncoding)):
                _fail(op, "operand and result must share one blocked or linear layout")
        elif isinstance(op, O.GatherOp) and op.index.type.layout != op.result.type.layout:
            _fail(op, "result layout must be the index's layout")


def strip_layouts(module):
    """A copy of ``module`` with layouts dropped and conversions removed (plain tir)."""
    c = parse_module(print_ir(module))
    for op in c.walk():
        for r in op.regions:
            for b in r.blocks:
                for a in b.args:
                    if a.type.is_tile:
                        a.type = a.type.with_layout(None)
        for v in op.results:
            if v.type.is_tile:
                v.type = v.type.with_layout(None)
    for op in list(c.walk()):
        if isinstance(op, G.ConvertLayoutOp):
            op.replace_with([op.src])
    return c


def verify_gir(module):
    """Raise IRError when ``module`` is not valid gir."""
    check_layouts(module)
    verify(strip_layouts(module))
