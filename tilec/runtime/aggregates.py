"""Kernel arguments made of several values: tuples (``kernel[grid]((x_ptr, n), ...)``) and host tensor
descriptors (``TensorDescriptor``).

Compiled kernels take flat lists of pointers and scalars, so such an argument is split once per launch into
*leaves* (arrays and numbers: each becomes a runtime parameter named ``param.k``, specialised like any other) and a
*structure* (tuple shapes, a descriptor's block shape and padding, compile-time members such as dtypes), which
specialises the kernel as a constexpr does. Inside the kernel the parameter is rebuilt from its leaf parameters
(``frontend.values.Packed``), so a descriptor argument is the very ``tl.tensor_descriptor`` that
``tl.make_tensor_descriptor`` makes. The launch binder keys such an argument by its structure and its leaves'
keys (:func:`_probe_descriptor`; tuples through their description) and its cached launches spread the leaves into
the launch entry (:func:`spreading`).
"""
from __future__ import annotations

import numbers

from ..frontend.values import LEAF, Packed, _StaticKey, flatten_each
from ..language.descriptor import tensor_descriptor
from ..targets import arguments
from .args import DESCRIBERS, KEYERS, PROBES, _key_int, describer
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


def _leaf_key(x):
    k = KEYERS.get(type(x))
    if k is None:
        describer(x)  # registers the type's keyer (or raises TypeError: the binder's miss path says why)
        k = KEYERS[type(x)]
    return k(x)


def _probe_descriptor(v):
    """The launch binder's key of a host descriptor (its block shape, padding and each leaf's key: the base's
    dtype and alignment, the shape's and strides' integer specialisations) and the descriptor itself."""
    # shape and strides are ints (``TensorDescriptor`` makes them so): the int keyer directly
    return ("descriptor", tuple(v.block_shape), v.padding, _leaf_key(v.base), tuple(map(_key_int, v.shape)),
            tuple(map(_key_int, v.strides))), v


def _probe_tuple(v):
    return _describe_aggregate(v)[0], v


PROBES[TensorDescriptor] = _probe_descriptor
PROBES[tuple] = _probe_tuple


def _spread(v) -> list:
    if type(v) is TensorDescriptor:
        return [v.base, *v.shape, *v.strides]
    return leaves(v)


def spreading(single, every, sample):
    """Launch entries taking the runtime values as the binder has them, aggregates whole, for entries
    (``targets/entry.py: entries``) made for their leaves; ``sample``: the values of the launch that made them
    (a later launch with the same key has aggregates at the same places, of the same structure)."""
    at = tuple(j for j, v in enumerate(sample) if is_aggregate(v))

    def flat(values):
        out = list(values)
        for j in reversed(at):
            out[j:j + 1] = _spread(out[j])
        return out

    def spread_single(*values):
        return single(*flat(values))

    def spread_any(grid, *values):
        return every(grid, *flat(values))
    return spread_single, spread_any
