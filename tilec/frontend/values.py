"""Flattening of kernel values for runtime control flow.

A variable that changes inside a runtime ``if``/``for``/``while`` may hold a tensor, a Python number, a tuple, or
an aggregate (an object with ``__tilec_flatten__``, such as a block pointer). Control flow only carries flat
lists of tensors, so a value is split into *leaves* (tensors and numbers, which become region results or
loop-carried values) and a *structure* (everything static: tuple shapes, aggregate types, compile-time parts),
which must not change across branches or iterations.
"""
from __future__ import annotations

from ..language.core import tensor

LEAF = ("leaf",)


def is_leaf(v) -> bool:
    return isinstance(v, tensor) or (isinstance(v, (bool, int, float)))


def flatten(v):
    """(leaves, structure) of ``v``."""
    if is_leaf(v):
        return [v], LEAF
    if isinstance(v, tuple):
        leaves, defs = flatten_each(v, flatten)
        return leaves, ("tuple", defs)
    f = getattr(v, "__tilec_flatten__", None)
    if f is not None:
        children, static = f()
        leaves, defs = flatten_each(children, flatten)
        return leaves, ("agg", type(v), static, defs)
    return [], ("static", _StaticKey(v))


def flatten_each(values, split):
    """(the leaves of all ``values`` in order, the tuple of their structures), each split by ``split`` (a
    function like :func:`flatten`): the children of a tuple or an aggregate, whichever side splits them."""
    leaves, defs = [], []
    for x in values:
        ls, d = split(x)
        leaves += ls
        defs.append(d)
    return leaves, tuple(defs)


def unflatten(structure, leaves):
    it = iter(leaves)
    out = _build(structure, it)
    return out


def _build(d, it):
    kind = d[0]
    if kind == "leaf":
        return next(it)
    if kind == "tuple":
        return tuple(_build(c, it) for c in d[1])
    if kind == "agg":
        return d[1].__tilec_unflatten__(d[2], [_build(c, it) for c in d[3]])
    return d[1].value


class _StaticKey:
    """Compares compile-time values by identity or equality (never raising)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        a, b = self.value, other.value
        if a is b:
            return True
        try:
            return type(a) is type(b) and bool(a == b)
        except Exception:
            return False

    def __hash__(self):
        return 0

    def __repr__(self):
        return repr(self.value)


def describe(structure) -> str:
    kind = structure[0]
    if kind == "leaf":
        return "value"
    if kind == "tuple":
        return f"tuple of {len(structure[1])}"
    if kind == "agg":
        return structure[1].__name__
    return repr(structure[1])


class Packed:
    """A callee argument (or a kernel's tuple/descriptor argument) holding tensors inside a tuple/aggregate: its
    structure and, per leaf, either ``("arg", parameter name)`` or ``("static", number)``. Part of the callee's
    specialisation key."""
    __slots__ = ("structure", "spec")

    def __init__(self, structure, spec):
        self.structure, self.spec = structure, spec

    def __eq__(self, other):
        return isinstance(other, Packed) and self.structure == other.structure and \
            [(k, _StaticKey(v)) for k, v in self.spec] == [(k, _StaticKey(v)) for k, v in other.spec]

    def __hash__(self):
        return hash(len(self.spec))

    def __repr__(self):  # part of the disk cache key: the structure and the parameter names, never an address
        return f"Packed({self.structure!r}, {self.spec!r})"

    def rebuild(self, scope_vars):
        """The value inside the callee: parameters (popped from ``scope_vars``) and static leaves."""
        leaves = [scope_vars.pop(x) if kind == "arg" else x for kind, x in self.spec]
        return unflatten(self.structure, leaves)
