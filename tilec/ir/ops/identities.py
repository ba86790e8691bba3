"""Predicates on a constant operand ``c`` of element type ``e`` that make a binary op an identity (``x + 0``)
or a constant (``x * 0``): the vocabulary of ``BinaryOp.identities``, read by canonicalisation.

Float predicates are only those exact for every input, signed zeros and NaN included: ``x + -0.0``,
``x - 0.0``, ``x * 1.0`` and ``x / 1.0`` are ``x``; ``x + 0.0`` and ``x * 0.0`` are not."""
from __future__ import annotations

import math


def _int_mask(e):
    return (1 << e.bits) - 1


def zero(c, e):
    return c == 0 and not (isinstance(c, float) and math.copysign(1.0, c) < 0)


def neg_zero(c, e):
    return isinstance(c, float) and c == 0 and math.copysign(1.0, c) < 0


def int_zero(c, e):
    return e.kind != "float" and c == 0


def one(c, e):
    return c == 1


def all_ones(c, e):
    return e.kind != "float" and (int(c) & _int_mask(e)) == _int_mask(e)


def add_identity(c, e):
    return int_zero(c, e) or neg_zero(c, e)
