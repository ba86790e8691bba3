"""tir -> gir: give every tile a layout for ``num_warps`` warps of ``warp_size`` lanes.

Blocked layouts do not depend on the shape, so one *anchor* blocked layout per rank (fitted to the largest tile
of that rank) serves every tile of the rank: elementwise code, broadcasts and loop-carried values then agree
without any conversion. Layouts flow forward from operands to results (``reduce`` gives the slice of its
operand's layout, ``expand_dims`` of a slice gives the parent back, ``gather`` gives its index's layout and
takes its source in any, ``reshape`` leaves every element where it is: a ``#linear`` layout), and wherever an
op needs an operand in a layout it does not have, a ``convert_layout`` is inserted. Later passes (coalesce, remove-layout-conversions) improve on this; this pass
only has to be correct.
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ..layouts import BlockedLayout, LinearEncoding, SliceLayout, default_blocked, reshape_coords
from .common import Pass, convert_before, layout_of, set_layout, tile_values
from ...targets.options import Options

class ConvertToGIR(Pass):
    name = "convert-to-gir"

    def __init__(self, num_warps: int = Options.num_warps, warp_size: int = 32, target: str = ""):
        self.num_warps, self.warp_size, self.target = num_warps, warp_size, target

    def run(self, module):
        for f in module.funcs:
            self.anchors = self._anchors(f)
            for a in f.args:
                if a.type.is_tile:
                    set_layout(a, self.anchor(a.type.rank))
            self.block(f.body, None)
            f.attrs["num_warps"] = self.num_warps
            if self.target:  # what the layouts (and later the instructions) are chosen for: "<backend>:<arch>"
                f.attrs["target"] = self.target

    def _anchors(self, f):
        best = {}
        for v in tile_values(f):
            t = v.type
            if t.rank not in best or t.numel > best[t.rank][0]:
                best[t.rank] = (t.numel, t.shape)
        return {r: default_blocked(s, self.num_warps, self.warp_size) for r, (_, s) in best.items()}

    def anchor(self, rank: int) -> BlockedLayout:
        if rank not in self.anchors:
            self.anchors[rank] = default_blocked((1,) * rank, self.num_warps, self.warp_size)
        return self.anchors[rank]

    def reshaped(self, layout, src_shape, dst_shape):
        """The layout a reshape's result takes: its source's elements where they are, so the reshape moves no
        data; the rank's anchor when that is the same placement (a reshape there and back), else ``#linear``."""
        image = LinearEncoding.image(layout.to_linear(tuple(src_shape)), tuple(dst_shape),
                                     reshape_coords(src_shape, dst_shape))
        anchor = self.anchor(len(dst_shape))
        return anchor if anchor.to_linear(tuple(dst_shape)) == image.to_linear(tuple(dst_shape)) else image

    # -- walking -----------------------------------------------------------------------------------------
    def block(self, b, parent):
        for op in list(b.ops):
            self.op(op)

    def op(self, op):
        if isinstance(op, O.ForOp):
            for a, init in zip(op.iter_args, op.inits):
                if a.type.is_tile:
                    set_layout(a, layout_of(init) or self.anchor(a.type.rank))
            self.block(op.body, op)
            self._fix_yield(op.body.terminator, [a.type for a in op.iter_args])
            for r, a in zip(op.results, op.iter_args):
                r.type = a.type
            return
        if isinstance(op, O.IfOp):
            for i, r in enumerate(op.regions):
                if r.blocks:
                    self.block(r.block, op)
            then_y = op.regions[0].block.terminator if op.regions[0].blocks else None
            types = []
            for k, res in enumerate(op.results):
                lay = layout_of(then_y.operands[k]) if then_y is not None and res.type.is_tile else None
                if res.type.is_tile:
                    set_layout(res, lay or self.anchor(res.type.rank))
                types.append(res.type)
            for r in op.regions:
                if r.blocks and r.block.terminator is not None:
                    self._fix_yield(r.block.terminator, types)
            return
        if isinstance(op, O.WhileOp):
            before, after = op.regions[0].block, op.regions[1].block
            for a, init in zip(before.args, op.inits):
                if a.type.is_tile:
                    set_layout(a, layout_of(init) or self.anchor(a.type.rank))
            self.block(before, op)
            cond = before.terminator
            for a, v, r in zip(after.args, cond.values, op.results):
                if a.type.is_tile:
                    set_layout(a, layout_of(v))
                    set_layout(r, layout_of(v))
            self.block(after, op)
            self._fix_yield(after.terminator, [a.type for a in before.args])
            return
        if op.regions and not isinstance(op, (O.ReduceOp, O.ScanOp)):
            for r in op.regions:
                for b in r.blocks:
                    self.block(b, op)
            return
        self.assign(op)

    def _fix_yield(self, y, types):
        if y is None:
            return
        for i, t in enumerate(types):
            if i < len(y.operands) and t.is_tile:
                convert_before(y, i, t.layout)

    # -- one op ------------------------------------------------------------------------------------------
    def assign(self, op):
        tiles = [o for o in op.operands if o.type.is_tile]
        if isinstance(op, O.ReduceOp):
            src_l = layout_of(op.operands[0])
            for i in range(1, len(op.operands)):
                convert_before(op, i, src_l)
            for r in op.results:
                if r.type.is_tile:
                    set_layout(r, SliceLayout(op.attrs["axis"], src_l))
            return
        if isinstance(op, O.ScanOp):
            src_l = layout_of(op.operands[0])
            for i in range(1, len(op.operands)):
                convert_before(op, i, src_l)
            for r in op.results:
                set_layout(r, src_l)
            return
        if isinstance(op, O.ExpandDimsOp):
            res = op.result
            src_l = layout_of(op.src)
            ax = op.attrs["axis"]
            if isinstance(src_l, SliceLayout) and src_l.dim == ax:
                set_layout(res, src_l.parent)
            else:
                lay = self.anchor(res.type.rank)
                set_layout(res, lay)
                if op.src.type.is_tile:
                    convert_before(op, 0, SliceLayout(ax, lay))
            return
        if isinstance(op, O.BroadcastOp):
            src_l = layout_of(op.src)
            lay = src_l if isinstance(src_l, (BlockedLayout, LinearEncoding)) else self.anchor(op.result.type.rank)
            set_layout(op.result, lay)
            convert_before(op, 0, lay)
            return
        if isinstance(op, O.DotOp):
            acc_l = layout_of(op.acc)
            if not isinstance(acc_l, BlockedLayout):
                acc_l = self.anchor(op.acc.type.rank)
                convert_before(op, 2, acc_l)
            # the FMA path reads its operands from shared memory, so they keep the layouts they have
            set_layout(op.result, acc_l)
            return
        if isinstance(op, O.ReshapeOp) and op.src.type.is_tile and layout_of(op.src) is not None:
            set_layout(op.result, self.reshaped(layout_of(op.src), op.src.type.shape, op.result.type.shape))
            return
        if isinstance(op, (O.TransOp, O.ReshapeOp)):
            for r in op.results:
                set_layout(r, self.anchor(r.type.rank))
            return
        if isinstance(op, O.GatherOp):  # each thread reads its index's elements from anywhere in the source
            set_layout(op.result, layout_of(op.index) or self.anchor(op.result.type.rank))
            return
        if isinstance(op, G.ConvertLayoutOp):
            return
        # everything else: results take the layout of the first tile operand of their shape; other tile
        # operands of that shape are converted to it.
        shape = next((r.type.shape for r in op.results if r.type.is_tile), tiles[0].type.shape if tiles else None)
        if shape is None:
            return
        lay = next((o.type.layout for o in tiles if o.type.shape == shape and o.type.layout is not None), None)
        lay = lay or self.anchor(len(shape))
        for i, o in enumerate(op.operands):
            if o.type.is_tile and o.type.shape == shape:
                convert_before(op, i, lay)
        for r in op.results:
            if r.type.is_tile:
                set_layout(r, lay)
