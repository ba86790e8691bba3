"""Kernel arguments made of several values: tuples (``kernel[grid]((x_ptr, n), ...)``) and host tensor
descriptors (``TensorDescriptor``).

Compiled kernels take flat lists of pointers and scalars, so such an argument is split once per launch into
*leaves* (arrays and numbers: each becomes a runtime parameter named ``param.k``, specialised like any other) and a
*structure* (tuple shapes, a descriptor's block shape and padding, compile-time members such as dtypes), which
specialises the kernel as a constexpr does. Inside the kernel the parameter is rebuilt from its leaf parameters
(``frontend.values.Packed``), so a descriptor argument is the very ``tl.tensor_descriptor`` that
``tl.make_tensor_descriptor`` makes. Launches with such arguments take the general (uncached-key) path.
"""
from __future__ import annotations

import numbers

from ..frontend.values import LEAF, Packed, _StaticKey, flatten_each
from ..language.descriptor import tensor_descriptor
from ..targets import arguments
from .args import DESCRIBERS, describer
from .tensor_descriptor import TensorDescriptor


class Hole:
    """A leaf of an aggregate argument as a runtime parameter (what specialisation reads of a parameter)."""
    __slots__ = ("name", "specialize")

    def __init__(self, name: str, specialize: bool):
        self.name, self.specialize = name, specialize


def is_aggregate(v) -> bool:
    return isinstance(v, (tuple, TensorDescriptor))


def _is_runtime_leaf(v) -> bool:
    """Arrays and numbers travel at run time; None, dtypes, strings and constexprs specialise."""
    if v is None or is_aggregate(v):
        return False
    return isinstance(v, (bool, numbers.Number)) or type(v) in DESCRIBERS or arguments.producer(v) is not None


def _split(v):
    """(runtime leaves, structure) of a host aggregate, in the form ``frontend.values`` rebuilds."""
    if isinstance(v, TensorDescriptor):
        n = len(v.shape)
        leaves = [v.base, *v.shape, *v.strides]
        return leaves, ("agg", tensor_descriptor, (tuple(v.block_shape), v.padding), (LEAF,) * (1 + 2 * n))
    if isinstance(v, tuple):
        leaves, defs = flatten_each(v, _split)
        return leaves, ("tuple", defs)
    if _is_runtime_leaf(v):
        return [v], LEAF
    return [], ("static", _StaticKey(getattr(v, "value", v)))


def leaves(v) -> list:
    """The runtime leaves of ``v`` in parameter order (``[v]`` for a plain argument)."""
    return _split(v)[0] if is_aggregate(v) else [v]


def pack(name: str, v, specialize: bool = True):
    """(Packed structure for the kernel's constexprs, [(Hole, leaf value)]) of aggregate argument ``v``."""
    values, structure = _split(v)
    holes = [(Hole(f"{name}.{k}", specialize), x) for k, x in enumerate(values)]
    return Packed(structure, tuple(("arg", h.name) for h, _ in holes)), holes


def expand(values):
    """``values`` with every aggregate replaced by its leaves (what the launcher and target choice see)."""
    out = []
    for v in values:
        out.extend(leaves(v) if is_aggregate(v) else [v])
    return out


def leaf_names(name: str, v) -> list:
    return [f"{name}.{k}" for k in range(len(leaves(v)))] if is_aggregate(v) else [name]


def _describe_aggregate(v):
    """The in-memory cache key of an aggregate: its structure and each leaf's own key."""
    values, structure = _split(v)
    return ("aggregate", repr(structure), tuple(describer(x)(x)[0] for x in values)), "aggregate", 1, False


DESCRIBERS[tuple] = _describe_aggregate
DESCRIBERS[TensorDescriptor] = _describe_aggregate
