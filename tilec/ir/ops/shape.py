"""Ops that move tile elements without computing on them: splat, broadcast, expand_dims, reshape, trans, gather,
and the ``hint`` identity that carries facts for the axis analysis."""
from __future__ import annotations

from ..core import Operation
from ..types import TileType
from .base import PURE, _check
from .sources import ConstantOp


class HintOp(Operation):
    """Identity carrying facts for the axis analysis: per-dimension ``divisibility`` (tl.multiple_of),
    ``contiguity`` (tl.max_contiguous) and ``constancy`` (tl.max_constancy); empty tuples mean no fact."""
    name = "hint"
    operand_names = ("src",)
    attr_types = {"divisibility": tuple, "contiguity": tuple, "constancy": tuple}
    attr_defaults = {"divisibility": (), "contiguity": (), "constancy": ()}
    traits = frozenset({"pure", "same_type"})


class _Rearranging(Operation):
    """A pure op of one ``src`` tile (or scalar) whose elements it places anew."""
    operand_names = ("src",)
    traits = PURE


class SplatOp(_Rearranging):
    """Scalar -> tile with every element equal to it."""
    name = "splat"

    def verify_(self):
        _check(not self.src.type.is_tile, self, "operand must be a scalar")
        _check(self.result.type.is_tile and self.result.type.element == self.src.type, self,
               "result must be a tile of the operand's type")


class BroadcastOp(_Rearranging):
    """Tile -> tile of the same rank, size-1 dimensions repeated to the result's size."""
    name = "broadcast"

    def verify_(self):
        s, d = self.src.type, self.result.type
        _check(s.is_tile and d.is_tile and s.element == d.element and len(s.shape) == len(d.shape), self,
               f"cannot broadcast {s} to {d}")
        for a, b in zip(s.shape, d.shape):
            _check(a == b or a == 1, self, f"cannot broadcast {s} to {d}")


class _InferredResult(_Rearranging):
    """A one-source op whose result type is what ``infer_result_types`` gives (layouts aside)."""
    bad_result = "bad result type"

    def verify_(self):
        exp = self.infer_result_types(self.operands, self.attrs)[0]
        _check(self.result.type.without_layout() == exp.without_layout(), self, self.bad_result)


class ExpandDimsOp(_InferredResult):
    """A size-1 dimension inserted at ``axis``."""
    name = "expand_dims"
    attr_types = {"axis": int}
    bad_result = "bad result shape"

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        shape = list(t.shape)
        shape.insert(attrs["axis"], 1)
        return [TileType(shape, t.element)]


class ReshapeOp(_Rearranging):
    """Row-major reshape to the result's shape (same number of elements)."""
    name = "reshape"

    def verify_(self):
        s, d = self.src.type, self.result.type
        _check(s.element == d.element, self, "element type must not change")
        n = lambda t: t.numel if t.is_tile else 1  # noqa: E731
        _check(n(s) == n(d), self, f"cannot reshape {s} to {d}")


class TransOp(_InferredResult):
    """Permute dimensions: result dim i is source dim ``order[i]``."""
    name = "trans"
    attr_types = {"order": tuple}

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        return [TileType([t.shape[i] for i in attrs["order"]], t.element)]

    def verify_(self):
        _check(sorted(self.attrs["order"]) == list(range(len(self.src.type.shape))), self, "bad permutation")
        super().verify_()


class GatherOp(Operation):
    """``result[..., i, ...] = src[..., index[..., i, ...] mod n, ...]`` along ``axis`` (``n`` = ``src``'s size
    there); ``src`` and ``index`` differ at most along ``axis`` and the result has ``index``'s shape.

    An op of its own (not a compare-and-pick reduction) so that backends do one indexed read per element instead
    of ``n`` compares. Indices out of ``[0, n)`` are undefined in the language; here they wrap modulo ``n``
    (tiles are powers of two, so a backend masks the low bits: never a read outside the source tile, and -1 is
    the last element as in numpy). Debug builds and the interpreter in debug mode report them instead."""
    name = "gather"
    operand_names = ("src", "index")
    attr_types = {"axis": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[1].type.with_element(operands[0].type.element)]

    def verify_(self):
        s, i, r = self.src.type, self.index.type, self.result.type
        ax = self.attrs["axis"]
        _check(s.is_tile and i.is_tile and len(s.shape) == len(i.shape), self,
               f"src {s} and index {i} must be tiles of one rank")
        _check(0 <= ax < len(s.shape), self, f"axis {ax} out of range for {s}")
        _check(i.is_int and not i.is_bool, self, f"index must be an integer tile, got {i}")
        for d, (p, q) in enumerate(zip(s.shape, i.shape)):
            _check(d == ax or p == q, self, f"src {s} and index {i} differ in dimension {d}")
        _check(r.is_tile and r.shape == i.shape and r.element == s.element, self,
               f"result must be a tile of index's shape and src's element type, got {r}")

    def fold(self):
        """Gathering from a constant tile (every element equal) gives that constant, whatever the indices."""
        d = getattr(self.src, "op", None)
        return [d.attrs["value"]] if isinstance(d, ConstantOp) else None

    @staticmethod
    def bad_index_text(index: int, n: int, axis: int) -> str:
        """How debug builds and the debugging interpreter word an index outside the axis (one wording)."""
        return f"index {index} outside [0, {n}) along axis {axis}"
