"""The language's semantics, in one place: type promotion, broadcasting, argument checks, and which ops to emit.

Everything reaches the program through ``self.b``, a builder with a tiny protocol, so the same rules drive both
the IR code generator (``tilec.frontend.tir_builder.TirBuilder``) and a future numpy interpreter:

- ``b.constant(value, ty)`` -> handle of a scalar or tile constant of tl type ``ty``;
- ``b.create(opname, operands, ty, **attrs)`` -> handle of the op's single result (``ty`` None: no result);
- ``b.reduce(srcs, axis, result_types, combine)`` -> handles; ``combine(acc_handles, x_handles)`` builds the
  combine function with this same Semantic and returns handles;
- ``b.scan(srcs, axis, reverse, combine)`` -> handles, the same way for inclusive scans;
- ``b.inline_asm(asm, constraints, operands, types, pure, pack)`` -> handles of target assembly's results (a
  builder that cannot run assembly refuses it here).

Errors are ``TypeError``/``ValueError`` with a user-facing message; the code generator attaches the location.

The rules come in families, one module each, composed here into the one class: ``semantic_promotion.py`` (type
promotion, casts), ``semantic_shapes.py`` (broadcasting, reshapes, tile creation), ``semantic_elementwise.py``
(operators, math, ``where``, inline assembly), ``semantic_memory.py`` (loads, stores, atomics),
``semantic_block_pointers.py`` (block pointers, tensor descriptors), ``semantic_reductions.py`` (reductions,
scans), ``semantic_dot.py`` (``tl.dot``) and ``semantic_debug.py`` (hints, assumptions, debug checks). A rule
calls any other through ``self``, whichever family it is in.
"""
from __future__ import annotations

import numbers

from .core import _unwrap, tensor
from .semantic_block_pointers import BlockPointerRules
from .semantic_debug import DebugRules
from .semantic_dot import DotRules
from .semantic_elementwise import ElementwiseRules
from .semantic_memory import MemoryRules
from .semantic_promotion import PromotionRules, scalar_type_of
from .semantic_reductions import ReductionRules
from .semantic_shapes import ShapeRules, is_pow2

__all__ = ["Semantic", "is_pow2", "scalar_type_of"]


class Semantic(PromotionRules, ShapeRules, ElementwiseRules, MemoryRules, BlockPointerRules, ReductionRules,
               DotRules, DebugRules):
    """The language's rules over one builder (``self.b``) and the compilation's options (``self.options``)."""

    def __init__(self, builder, options=None):
        self.b = builder
        self.options = options or {}

    def to_tensor(self, v, ty=None) -> tensor:
        v = _unwrap(v)
        if isinstance(v, tensor):
            return v
        if ty is None:
            ty = scalar_type_of(v)
        if isinstance(v, bool) or (ty.is_floating() and isinstance(v, numbers.Real)):
            v = float(v) if ty.is_floating() else bool(v)
        elif isinstance(v, numbers.Integral) and ty.is_int():
            v = int(v)
        elif isinstance(v, numbers.Real) and ty.is_int():
            raise TypeError(f"cannot convert {v!r} to {ty!r} implicitly")
        elif not isinstance(v, numbers.Number):
            raise TypeError(f"cannot use {type(v).__name__} value {v!r} as a tensor")
        return tensor(self.b.constant(v, ty), ty)

    def to_bool(self, x: tensor) -> bool:
        raise TypeError("a runtime tensor has no compile-time truth value; use a runtime `if` (scalars only) "
                        "or tl.where")

    def to_index(self, x: tensor) -> int:
        raise TypeError("a runtime tensor cannot be used where a compile-time int is needed")
