"""Elementwise ops: the bases every per-element op derives from, and the ones that are not plain arithmetic
(fma, compare, select, conversions, pointer arithmetic).

Shape rules are strict: elementwise ops take operands of one shape (the frontend inserts ``splat``/``broadcast``),
so passes and lowerings never re-derive broadcasting. Element types of scalar/tile operands drive the semantics.

Each op carries its numpy meaning (:meth:`ElementwiseOp.evaluate`), which the reference evaluator, the
interpreter and constant folding all run, and says which inputs leave its result undefined
(:meth:`ElementwiseOp.undefined_on`), so that folding never bakes in the evaluator's choice.
"""
from __future__ import annotations

import numpy as np

from .. import semantics as S
from ..numerics import finish
from ..types import ScalarType, i1
from ..core import Operation
from .base import _check


class ElementwiseOp(Operation):
    """Operands share one shape; results have that shape. ``same_type`` ops also share the element type."""
    traits = frozenset({"pure", "elementwise", "same_type"})
    #: the results are operand values or decoded bits, already values of the result type: not rounded again
    #: (an e5m2 infinity selected or bitcast stays one, where rounding saturates it)
    moves_values = False

    def verify_(self):
        shapes = {o.type.shape for o in self.operands} | {r.type.shape for r in self.results}
        _check(len(shapes) == 1, self, f"operands/results must have one shape, got {sorted(shapes)}")
        if "same_type" in self.traits:
            types = {o.type for o in self.operands} | {r.type for r in self.results}
            _check(len(types) == 1, self, f"operands/results must have one type, got {sorted(map(str, types))}")

    def compute(self, args):
        """The op's value on operand arrays (storage dtypes, any broadcast-compatible shape), before rounding
        to the result type."""
        raise NotImplementedError(f"'{self.name}' has no numpy meaning")

    def evaluate(self, args) -> list:
        """The op's results on operand arrays: its reference semantics, rounded to the result type."""
        with np.errstate(all="ignore"):
            return [finish(self.compute(args), self.results[0].type, rounded=not self.moves_values)]

    def undefined_on(self, args) -> bool:
        """Whether the IR leaves the result undefined on these operand values (the evaluator picks one)."""
        return False


class _DomainOp(ElementwiseOp):
    """An arithmetic op on numbers of its ``domain``: "int", "float" or "any" (never pointers). ``numpy`` is
    its meaning, ``fn(element type, *operands, **attrs)`` (see ``tilec.ir.semantics``)."""
    domain = "any"
    numpy = None

    def verify_(self):
        super().verify_()
        t = self.operands[0].type
        _check(not t.is_ptr, self, "does not take pointers" + (" (use addptr)" if len(self.operands) == 2 else ""))
        if self.domain == "int":
            _check(t.is_int, self, f"needs integer operands, got {t}")
        elif self.domain == "float":
            _check(t.is_float, self, f"needs floating-point operands, got {t}")

    def compute(self, args):
        return self.numpy(self.operands[0].type.element, *args, **self.attrs)


class BinaryOp(_DomainOp):
    """``lhs op rhs``. What canonicalisation may assume comes with the op: ``identities`` (constant predicate on
    one operand, and which operand the op then equals: "lhs" keeps the other one, "rhs" the constant), whether
    ``op(x, x) == x`` (``idempotent``) and whether ``op(x, x) == 0`` on integers (``self_zero``)."""
    operand_names = ("lhs", "rhs")
    identities: tuple = ()
    idempotent = False
    self_zero = False


class UnaryOp(_DomainOp):
    operand_names = ("src",)

    def compute(self, args):
        return self.numpy(self.operands[0].type.element, args[0])


class FmaOp(ElementwiseOp):
    """``a * b + c`` rounded once."""
    name = "fma"
    operand_names = ("a", "b", "c")

    def verify_(self):
        super().verify_()
        _check(self.a.type.is_float, self, "needs floating-point operands")

    def compute(self, args):
        return S.fma(self.operands[0].type.element, *args)


class CmpOp(ElementwiseOp):
    """Comparison; floats compare ordered except ``ne`` (true when either side is NaN), like Python."""
    name = "cmp"
    operand_names = ("lhs", "rhs")
    attr_types = {"predicate": str}
    traits = frozenset({"pure", "elementwise"})
    PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[0].type.with_element(i1)]

    def verify_(self):
        super().verify_()
        _check(self.lhs.type == self.rhs.type, self, "operands must have one type")
        _check(self.attrs["predicate"] in self.PREDICATES, self, f"bad predicate {self.attrs['predicate']!r}")
        _check(self.result.type.element == i1, self, "result must be i1")

    def evaluate(self, args) -> list:
        with np.errstate(all="ignore"):
            return [np.asarray(S.CMP[self.attrs["predicate"]](*args))]


class SelectOp(ElementwiseOp):
    name = "select"
    operand_names = ("cond", "true_value", "false_value")
    traits = frozenset({"pure", "elementwise"})
    result_type_of = 1
    moves_values = True

    def verify_(self):
        super().verify_()
        _check(self.cond.type.element == i1, self, "condition must be i1")
        _check(self.true_value.type == self.false_value.type == self.result.type, self, "value types must match")

    def compute(self, args):
        return np.where(*args)


class CastOp(ElementwiseOp):
    """Value conversion between scalar element types (int<->int by the source's signedness, int<->float,
    float<->float with ``rounding`` 'rtne' or 'rtz'); pointers convert to/from i64 and other pointer types."""
    name = "cast"
    operand_names = ("src",)
    attr_types = {"rounding": str}
    attr_defaults = {"rounding": "rtne"}
    traits = frozenset({"pure", "elementwise"})

    def compute(self, args):
        return S.cast(args[0], self.operands[0].type, self.results[0].type, self.attrs.get("rounding", "rtne"))

    def undefined_on(self, args) -> bool:
        """Float -> int of a value outside the integer type (or not finite)."""
        t, r = self.operands[0].type, self.results[0].type
        if not (t.is_float and r.is_int and not r.is_bool):
            return False
        info = np.iinfo(r.element.numpy)
        v = np.trunc(np.asarray(args[0], dtype=np.float64))
        return bool((~np.isfinite(v) | (v < info.min) | (v > info.max)).any())


class BitcastOp(ElementwiseOp):
    """Reinterpret bits; source and result elements have the same width."""
    name = "bitcast"
    operand_names = ("src",)
    traits = frozenset({"pure", "elementwise"})
    moves_values = True

    def verify_(self):
        super().verify_()
        s, d = self.src.type.element, self.result.type.element
        if isinstance(s, ScalarType) and isinstance(d, ScalarType):
            _check(s.bits == d.bits, self, f"bitcast between widths {s.bits} and {d.bits}")

    def compute(self, args):
        return S.bitcast(args[0], self.operands[0].type, self.results[0].type)


class AddPtrOp(ElementwiseOp):
    """``ptr + offset`` in units of the pointee (like C pointer arithmetic)."""
    name = "addptr"
    operand_names = ("ptr", "offset")
    traits = frozenset({"pure", "elementwise"})
    result_type_of = 0

    def verify_(self):
        super().verify_()
        _check(self.ptr.type.is_ptr, self, "first operand must be a pointer")
        _check(self.offset.type.is_int, self, "offset must be an integer")
        _check(self.result.type == self.ptr.type, self, "result must have the pointer's type")

    def compute(self, args):
        return S.addptr(*args, self.operands[0].type.element.pointee)
