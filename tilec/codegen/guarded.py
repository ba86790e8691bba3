"""A value computed only where a condition holds: a branch around its code and a phi that merges it with what
the other lanes (or iterations) get.

Work that must not happen where its mask is false (a masked load, store or atomic) is branched around rather than
selected, so it never touches memory there; the CPU's scalar memory accesses, the GPU lowering's guarded atomics
and AMD's predicated loads all build it this way.
"""
from __future__ import annotations


def guarded(b, cond, fn, otherwise):
    """``fn()`` where ``cond`` holds (always when it is None), ``otherwise`` (a value of the same type) elsewhere;
    with ``otherwise`` None, ``fn`` is only for its effect and nothing is returned."""
    if cond is None:
        return fn()
    start = b.block
    with b.if_then(cond):
        v = fn()
        inner = b.block
    if otherwise is None:
        return None
    phi = b.phi(v.type)
    phi.add_incoming(v, inner)
    phi.add_incoming(otherwise, start)
    return phi
