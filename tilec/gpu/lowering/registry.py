"""Which function lowers which op: one table keyed by op class, filled by ``@lowers(OpClass, ...)`` in the
lowering modules. Lookup follows the op's class hierarchy, so registering ``BinaryOp`` covers every binary op
and a subclass can be given its own lowering."""
from __future__ import annotations

LOWERINGS: dict[type, object] = {}


def lowers(*op_classes):
    """Register the decorated ``fn(lowering, op)`` for ``op_classes``."""
    def deco(fn):
        for c in op_classes:
            if c in LOWERINGS:
                raise ValueError(f"two GPU lowerings for {c.__name__}")
            LOWERINGS[c] = fn
        return fn
    return deco


def lowering_for(op):
    for c in type(op).__mro__:
        fn = LOWERINGS.get(c)
        if fn is not None:
            return fn
    return None
