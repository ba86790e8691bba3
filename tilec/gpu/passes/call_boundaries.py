"""call-boundaries: fix the layouts at calls to device functions (``noinline`` helpers a target calls for real).

A tile crosses a call as its registers, so caller and callee must agree on its layout. Every pass before this
one chooses layouts per function (coalesce, accelerate-dot, remove-layout-conversions), so here each tile
parameter and result of a device function gets the *boundary layout* of its type (the default blocked layout of
its shape for the module's warps) and ``convert_layout`` ops bridge from and to whatever the code on each side
chose: at the start of the callee for parameters, before its ``return`` for results, before each call for its
arguments and after it for its results. ``function_type`` then spells the boundary types.
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.types import FunctionType
from ..layouts import default_blocked
from .common import Pass, convert_before, retype_behind_convert
from ...targets.options import Options


def boundary_type(t, num_warps: int, warp_size: int):
    """The type a value of tile type ``t`` has where it crosses a call."""
    if not t.is_tile:
        return t
    return t.with_layout(default_blocked(t.shape, num_warps, warp_size))


class CallBoundaries(Pass):
    name = "call-boundaries"

    def __init__(self, num_warps: int = Options.num_warps, warp_size: int = 32):
        self.num_warps, self.warp_size = num_warps, warp_size

    def run(self, module):
        changed = False
        callees = {f.sym_name: f for f in module.funcs if not f.attrs.get("kernel")}
        for f in callees.values():
            changed |= self._callee(f)
        for f in module.funcs:
            for call in [op for op in f.walk() if isinstance(op, O.CallOp)]:
                callee = callees.get(call.attrs["callee"])
                if callee is not None:
                    changed |= self._call(call, callee)
        return changed

    def _bt(self, f, t):
        return boundary_type(t, f.attrs.get("num_warps", self.num_warps), self.warp_size)

    def _callee(self, f) -> bool:
        changed = False
        body = f.body
        for a in body.args:
            want = self._bt(f, a.type)
            if a.type == want:
                continue
            inner = a.type
            a.type = want
            b = Builder(body, 0)
            b.loc = f.loc
            c = b.op(G.ConvertLayoutOp, a, result_type=inner)
            for user, i in list(a.uses):
                if user is not c.op:
                    user.set_operand(i, c)
            changed = True
        ret = body.terminator
        results = []
        for i, v in enumerate(ret.operands if ret is not None else ()):
            want = self._bt(f, v.type)
            if v.type != want:
                convert_before(ret, i, want.layout)
                changed = True
            results.append(want)
        f.attrs["function_type"] = FunctionType([a.type for a in body.args], results)
        return changed

    def _call(self, call, callee) -> bool:
        changed = False
        ft = callee.function_type
        for i, t in enumerate(ft.inputs):
            if t.is_tile and call.operands[i].type != t:
                convert_before(call, i, t.layout)
                changed = True
        for r, t in zip(call.results, ft.results):
            if t.is_tile and r.type != t:
                retype_behind_convert(r, t.layout, call)
                changed = True
        return changed


__all__ = ["CallBoundaries", "boundary_type"]
