"""Specialisation: which compiled variant a launch needs, from its arguments.

Pointers take their element type from the array's dtype and are marked 16-byte aligned when they are; ints
become i32/i64 by value, ints equal to 1 are compiled as the constant 1 and ints divisible by 16 are marked so
(unless the parameter is in ``do_not_specialize``); bools are i1, floats fp32. The result is both a hashable
key for the in-memory cache and the ``signature``/``attrs`` an ASTSource needs.
"""
from __future__ import annotations

from ..frontend.function import hashable  # noqa: F401  (constexpr values in cache keys)
from .args import describer


def describe(params, values):
    """(key, signature dict, attrs dict) for the runtime ``values`` of ``params`` (JIT parameters)."""
    key = []
    sig = {}
    attrs = {}
    for p, v in zip(params, values):
        try:
            k, t, div, eq1 = describer(v, p.specialize)(v)
        except (TypeError, ValueError, OverflowError) as e:
            raise type(e)(f"parameter '{p.name}': {e}") from None
        key.append(k)
        sig[p.name] = t
        if eq1:
            attrs[p.name] = {"equal_to_1": True}
        elif div != 1:
            attrs[p.name] = {"divisibility": div}
    return tuple(key), sig, attrs
