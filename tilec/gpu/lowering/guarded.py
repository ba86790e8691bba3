"""A value computed only in the lanes where a predicate holds: a branch around its code and a phi that merges it
with what the other lanes get.

Predicated work that may not run everywhere (a masked load, an atomic) is branched around rather than selected,
so lanes whose predicate is false never touch memory; the vendors' predicated loads and the lowering's guarded
atomics build it the same way.
"""
from __future__ import annotations


def guarded(b, pred, fn, otherwise):
    """``fn()`` where ``pred`` holds (every lane when it is None), ``otherwise`` (a value of the same type) elsewhere."""
    if pred is None:
        return fn()
    start = b.block
    with b.if_then(pred):
        v = fn()
        inner = b.block
    phi = b.phi(otherwise.type)
    phi.add_incoming(v, inner)
    phi.add_incoming(otherwise, start)
    return phi
