"""What every op family shares: the ``pure`` trait set and the verifier's error helper."""
from __future__ import annotations

from ..core import IRError

PURE = frozenset({"pure"})


def _check(cond, op, msg):
    """Raise the verifier's error for ``op`` unless ``cond`` holds."""
    if not cond:
        raise IRError(f"'{op.name}' op {msg}")


class _Typed:
    """A stand-in operand or result: its type and nothing else."""
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t


def stand_in(cls, attrs=None, operand_types=(), result_types=()):
    """An instance of op class ``cls`` holding only attributes and the operands' and results' types, outside any
    IR (no values, use lists or block): what the interpreter and backends hand to code keyed by op class (the
    evaluator's table, an op's own ``evaluate``, an emitter) when they compute an op that was never built."""
    op = object.__new__(cls)
    op.attrs = dict(cls.attr_defaults, **(attrs or {}))
    op.loc, op.regions, op.parent = None, [], None
    op.operands = [_Typed(t) for t in operand_types]
    op.results = [_Typed(t) for t in result_types]
    return op
