"""GPU layout encodings carried by gir tile types, all reduced to one mechanism: the linear layout.

A *linear layout* maps the bits of a (register, lane, warp) index to the bits of a tile coordinate, linearly over
GF(2): each input bit has a basis vector (one coordinate per tile dimension) and an index maps to the XOR of the
basis vectors of its set bits. A zero basis vector means that bit does not move the coordinate, i.e. the element
is replicated across it (lanes/warps broadcast a value). Every named encoding (blocked, slice, dot operand...)
only has to say how to build its linear layout for a shape; conversions, vector widths, reduction shuffles and
duplicate-store masks are then derived from the bases alone, so a new encoding needs no new lowering code.

Encodings are frozen dataclasses: hashable and compared by value, so ``TileType`` interns them with the type.
They print as ``#name<...>`` inside a tile type and :func:`parse_layout` reads that text back.

This module is the one place the rest of the compiler imports layouts from; they are defined by family in
``linear_layouts.py`` (the GF(2) core and the encodings' base), ``blocked_layouts.py`` (blocked, slice, linear,
FMA dot operands), ``mma_layouts.py`` (matrix-unit bases, ``#mma``), ``matrix_core_layouts.py`` (``#mfma``,
``#wmma``), ``shared_layouts.py`` (shared memory placements), ``layout_conversions.py`` (data movement between
layouts) and ``layout_text.py`` (the text form).
"""
from __future__ import annotations

from . import matrix_core_layouts  # noqa: F401  (registers #mfma, #wmma and their operands)
from .blocked_layouts import BlockedLayout, DotOperandLayout, LinearEncoding, SliceLayout, default_blocked
from .layout_conversions import (GATHER_SELECT_MAX, RegisterGather, byte_operand_shuffle, gather_registers,
                                 register_moves, reshape_coords, transpose_coords)
from .layout_text import parse_layout, register_layout
from .linear_layouts import DerivedLayout, Layout, LinearLayout, OperandLayout, WarpGridLayout, holds_copies
from .mma_layouts import MatrixUnitLayout, MatrixUnitOperandLayout, MmaLayout, MmaOperandLayout
from .shared_layouts import SharedLayout, shared_for_operand, swizzle_bytes

__all__ = ["GATHER_SELECT_MAX", "BlockedLayout", "DerivedLayout", "DotOperandLayout", "Layout", "LinearEncoding",
           "LinearLayout", "MatrixUnitLayout", "MatrixUnitOperandLayout", "MmaLayout", "MmaOperandLayout",
           "OperandLayout", "RegisterGather", "SharedLayout", "SliceLayout", "WarpGridLayout", "default_blocked",
           "gather_registers", "holds_copies", "parse_layout", "register_layout", "register_moves", "reshape_coords",
           "shared_for_operand", "swizzle_bytes", "transpose_coords"]
