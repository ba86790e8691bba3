"""When a tile stops being lazy and gets a buffer.

A lazy value is recomputed wherever it is consumed; that is free for index arithmetic, splats and broadcasts,
and wrong or wasteful for the rest. A value is materialised when it is a load used more than once or inside a
nested region, or costs enough to recompute and is used more than once or inside a loop. (Reductions, dots,
scans, trans/reshape of lazy values and loop-carried tiles always get buffers; see ``lower.py``.)
"""
from __future__ import annotations

from ...ir import ops as O
EXPENSIVE = 4


def _users(v):
    seen = []
    for op, _ in v.uses:
        if op not in seen:
            seen.append(op)
    return seen


def _nested(def_op, user) -> bool:
    """Whether ``user`` sits inside a region of an op in ``def_op``'s block (not directly in the block)."""
    return user.parent is not def_op.parent


def should_materialise(op, node, value) -> bool:
    users = _users(value)
    if not users:
        return False
    nested = any(_nested(op, u) for u in users)
    if isinstance(op, O.LoadOp):
        return len(users) > 1 or nested
    if node.cost >= EXPENSIVE:
        return len(users) > 1 or nested
    return False


def has_writes(op) -> bool:
    """Whether running ``op`` may write memory (stores, atomics, calls, prints, or regions containing them)."""
    for o in op.walk():
        if o.writes_memory or isinstance(o, O.CallOp):
            return True
    return False
