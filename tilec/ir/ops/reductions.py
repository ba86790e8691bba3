"""Ops that combine elements across an axis: reductions, scans and matrix products."""
from __future__ import annotations

from ..core import Operation
from .base import PURE, _check


class ReduceOp(Operation):
    """Reduce N tiles along ``axis`` with the combine region: block args (acc_0..acc_N-1, x_0..x_N-1) of the
    element types; it yields N values. The combine function must be associative; the order is unspecified."""
    name = "reduce"
    operand_names = ("*srcs",)
    attr_types = {"axis": int}
    num_regions = 1
    traits = frozenset({"pure"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        out = []
        for o in operands:
            shape = list(o.type.shape)
            del shape[attrs["axis"]]
            out.append(o.type.with_shape(shape))
        return out

    def verify_(self):
        ax = self.attrs["axis"]
        for o in self.operands:
            _check(o.type.is_tile and 0 <= ax < len(o.type.shape), self, f"axis {ax} out of range for {o.type}")
        b = self.regions[0].block
        n = len(self.operands)
        _check(len(b.args) == 2 * n, self, "combine region needs 2 arguments per operand")
        _check(len(self.results) == n, self, "one result per operand")


class ScanOp(Operation):
    """Inclusive scan of N tiles along ``axis`` with a combine region like ``reduce``'s."""
    name = "scan"
    operand_names = ("*srcs",)
    attr_types = {"axis": int, "reverse": bool}
    attr_defaults = {"reverse": False}
    num_regions = 1
    traits = frozenset({"pure"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [o.type for o in operands]


class DotOp(Operation):
    """``acc + a @ b`` for 2-d (or batched 3-d) tiles. ``input_precision``: ieee, tf32, tf32x3."""
    name = "dot"
    operand_names = ("a", "b", "acc")
    attr_types = {"input_precision": str, "max_num_imprecise_acc": int}
    attr_defaults = {"input_precision": "ieee", "max_num_imprecise_acc": 0}
    traits = PURE
    result_type_of = 2

    def verify_(self):
        a, b, c = self.a.type, self.b.type, self.acc.type
        _check(a.is_tile and b.is_tile and c.is_tile, self, "operands must be tiles")
        _check(len(a.shape) == len(b.shape) == len(c.shape) in (2, 3), self, "operands must be 2-d or 3-d")
        _check(a.shape[-1] == b.shape[-2] and c.shape[-2:] == (a.shape[-2], b.shape[-1]), self,
               f"shape mismatch {a} x {b} -> {c}")
        _check(self.result.type == c, self, "result must match acc")
