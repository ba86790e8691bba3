"""Ops that make values from nothing but attributes: constants, ranges and the program's coordinates."""
from __future__ import annotations

from ..core import Operation
from ..types import TileType, i32
from .base import PURE, _check


class ConstantOp(Operation):
    """A scalar constant, or a tile with every element equal to ``value``."""
    name = "constant"
    attr_types = {"value": (int, float, bool)}
    traits = PURE

    def verify_(self):
        t = self.result.type
        _check(isinstance(self.attrs.get("value"), (int, float, bool)), self, "needs a numeric 'value'")
        _check(not t.is_ptr, self, "cannot produce pointers")

    def fold(self):
        return None


class ArangeOp(Operation):
    """``tile<(end-start) x i32>`` holding start, start+1, ..., end-1."""
    name = "arange"
    attr_types = {"start": int, "end": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [TileType((attrs["end"] - attrs["start"],), i32)]

    def verify_(self):
        n = self.attrs["end"] - self.attrs["start"]
        _check(self.result.type.shape == (n,), self, "result size mismatch")
        _check(self.result.type.is_int, self, "result must be integer")


class ProgramIdOp(Operation):
    name = "program_id"
    attr_types = {"axis": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [i32]

    def verify_(self):
        _check(self.attrs["axis"] in (0, 1, 2), self, "axis must be 0, 1 or 2")


class NumProgramsOp(ProgramIdOp):
    name = "num_programs"
