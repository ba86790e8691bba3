"""Facts about ops' effects and in-place edits of structured ops, shared by the passes.

Effects come from op traits: ``pure`` ops have none; ``reads``-only ops (non-volatile loads) may be removed
when unused but not moved or merged; anything else without ``pure`` (stores, atomics, asserts, prints, calls,
unknown ops) is a side effect. ``for``/``if``/``while`` have exactly the effects of their bodies.
"""
from __future__ import annotations

from ..ir.core import IRError, Operation, Value
from ..ir.ops import ConstantOp
from ..ir import ops as O

REGION_TERMINATORS = (O.YieldOp, O.ConditionOp)  # the terminators of nested regions (not ``return``)


def is_removable_load(op: Operation) -> bool:
    return isinstance(op, O.LoadOp) and not op.attrs.get("volatile", False)


def has_own_effect(op: Operation) -> bool:
    """Whether ``op`` itself, not counting its nested ops, has an effect (a structured op or a terminator has
    only the effects of what it holds)."""
    return not (op.is_pure or op.is_control or isinstance(op, REGION_TERMINATORS) or is_removable_load(op))


def has_side_effects(op: Operation) -> bool:
    """True when ``op`` (or anything nested in it) writes memory or has other observable effects."""
    if op.is_pure and not op.regions:
        return False
    return any(has_own_effect(o) for o in op.walk())


def constant_value(v: Value):
    """The Python value of ``v`` when it is a ``constant`` (a scalar or a uniform tile), else None."""
    op = getattr(v, "op", None)
    if isinstance(op, ConstantOp):
        return op.attrs["value"]
    return None


def _division_is_safe(op: Operation) -> bool:
    """Integer div/rem trap (or are undefined) for a zero divisor and for MIN / -1; only a constant divisor
    other than 0 and -1 makes executing them unconditionally safe."""
    if not op.operands[0].type.is_int:
        return True
    c = constant_value(op.operands[1])
    return c is not None and not isinstance(c, float) and int(c) not in (0, -1)


def is_speculatable(op: Operation) -> bool:
    """True when executing ``op`` where it previously did not run can neither change results nor trap:
    pure ops except unsafe integer division, and ``for``/``if`` whose bodies are speculatable (``while`` may
    not terminate, so it never is)."""
    for o in op.walk():
        if isinstance(o, (O.DivOp, O.RemOp)) and not _division_is_safe(o):
            return False
        if o.is_pure or isinstance(o, (O.ForOp, O.IfOp)) or isinstance(o, REGION_TERMINATORS):
            continue
        return False
    return True


def defined_outside(v: Value, op: Operation) -> bool:
    """Whether ``v`` is defined outside ``op`` (so it is available just before ``op``)."""
    owner = v.op if hasattr(v, "op") else v.block.parent_op
    return owner is None or not op.is_ancestor_of(owner)


def values_used_from_outside(op: Operation) -> list[Value]:
    return [v for o in op.walk() for v in o.operands if defined_outside(v, op)]


def _drop_results(op: Operation, keep: list[int]):
    for i, r in enumerate(op.results):
        if i not in keep and r.uses:
            raise IRError(f"dropping a used result of {op.name}")
    op.results = [op.results[i] for i in keep]
    for j, r in enumerate(op.results):
        r.index = j


def release_operands(op: Operation, keep: list[int]):
    """First half of dropping results of a ``for``/``if``: its terminators keep only the values at ``keep``
    and a ``for`` only the matching inits. Split from :func:`drop_results` so that nested ops feeding each other
    can all release their uses before any of them checks that a dropped value is unused."""
    for r in op.regions:
        t = r.block.terminator if r.blocks else None
        if t is not None and (t.operands or isinstance(op, O.ForOp)):
            t.set_operands([t.operands[i] for i in keep])
    if isinstance(op, O.ForOp):
        inits = op.inits
        op.set_operands([op.lb, op.ub, op.step] + [inits[i] for i in keep])


def drop_results(op: Operation, keep: list[int]):
    """Second half: remove the results not in ``keep`` and, for a ``for``, their loop-carried block arguments;
    they must be unused by now."""
    drop = [i for i in range(len(op.results)) if i not in keep]
    if isinstance(op, O.ForOp):
        body = op.body
        for i in reversed(drop):
            if body.args[1 + i].uses:
                raise IRError("dropping a used loop-carried value")
        for i in reversed(drop):
            body.erase_arg(1 + i)
    _drop_results(op, keep)


def remove_results(op: Operation, drop):
    """Remove the results at ``drop`` of a ``for`` (with their loop-carried values) or an ``if`` (with the
    yielded values)."""
    keep = [i for i in range(len(op.results)) if i not in set(drop)]
    if len(keep) == len(op.results):
        return
    release_operands(op, keep)
    drop_results(op, keep)


def is_empty_region_op(op: Operation) -> bool:
    """A ``for``/``if`` with no results whose regions hold nothing but a bare terminator."""
    if not isinstance(op, (O.ForOp, O.IfOp)) or op.results:
        return False
    return all(not r.blocks or all(isinstance(o, O.YieldOp) and not o.operands for o in r.block.ops) for r in op.regions)


__all__ = ["has_side_effects", "has_own_effect", "is_speculatable", "is_removable_load", "constant_value",
           "defined_outside", "values_used_from_outside", "remove_results", "release_operands", "drop_results",
           "is_empty_region_op"]
