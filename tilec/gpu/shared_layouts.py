"""Placements of tiles in shared memory (``#shared``): row order, XOR swizzle and column blocks, and the swizzled
placement matrix units and tensor copy engines read without bank conflicts.
"""
from __future__ import annotations

from dataclasses import dataclass

from .linear_layouts import Layout, _fmt


@dataclass(frozen=True, repr=False)
class SharedLayout(Layout):
    """Placement of a tile in shared memory: rows along ``order[0]``; groups of ``vec`` elements are XOR-
    swizzled by ``(row // per_phase) % max_phase`` so that column accesses hit distinct banks. ``cols`` (0:
    whole rows) cuts the fast dimension into blocks of that many elements, each block a contiguous
    ``[rows, cols]`` tile: the shape tensor-core descriptors read (one swizzle atom wide)."""
    vec: int
    per_phase: int
    max_phase: int
    order: tuple
    cols: int = 0
    name = "shared"

    @property
    def rank(self):
        return len(self.order)

    @property
    def num_warps(self):
        return 0

    def _body(self):
        cols = f", cols = {self.cols}" if self.cols else ""
        return (f"vec = {self.vec}, per_phase = {self.per_phase}, max_phase = {self.max_phase}, "
                f"order = {_fmt(self.order)}{cols}")

    def permuted(self, order) -> "SharedLayout":
        """The same bytes seen through a transposed view whose dimension ``i`` is this layout's dimension
        ``order[i]`` (``tl.trans``'s order): only the names of the dimensions change, so every element keeps its
        offset (see :meth:`offset`)."""
        where = {d: i for i, d in enumerate(order)}
        return SharedLayout(self.vec, self.per_phase, self.max_phase, tuple(where[d] for d in self.order), self.cols)

    def block_cols(self, shape) -> int:
        """Elements of the fast dimension per contiguous block."""
        w = shape[self.order[0]]
        return self.cols if self.cols and self.cols < w else w

    def offset(self, coord, shape) -> int:
        """Element offset of ``coord`` in the buffer (row-major along ``order`` with the swizzle)."""
        fast = self.order[0]
        w = self.block_cols(shape)
        coord = list(coord)
        block, coord[fast] = divmod(coord[fast], w)
        off, stride = 0, 1
        for d in self.order:
            off += coord[d] * stride
            stride *= shape[d] if d != fast else w
        off += block * stride
        if self.rank >= 2 and self.max_phase > 1:
            slow = self.order[1]
            phase = (coord[slow] // self.per_phase) % self.max_phase
            col = coord[fast]
            swz = ((col // self.vec) ^ phase) * self.vec + col % self.vec
            off += swz - col
        return off


def shared_for_operand(shape, order, elem_bytes: int) -> SharedLayout:
    """The placement matrix units read without bank conflicts: rows (along ``order[0]``) in 16-byte units,
    unit ``u`` of row ``r`` stored at ``u ^ ((r // per_phase) % max_phase)``, so that the eight rows an 8x8
    matrix load (or a column walk) touches land in eight different 16-byte bank groups of a 128-byte line.
    For rows of 32/64/128+ bytes this is the 32/64/128-byte swizzle tensor-core descriptors name."""
    vec = max(1, 16 // elem_bytes)
    width = shape[order[0]]
    cols = 0
    if width * elem_bytes > 128:  # rows wider than the 128-byte swizzle atom: blocks of 128 bytes
        cols = 128 // elem_bytes
        width = cols
    units = max(1, width * elem_bytes // 16)
    per_phase = max(1, 8 // units)
    max_phase = min(8, units)
    if len(shape) < 2 or width < vec:
        return SharedLayout(max(1, min(vec, width)), 1, 1, tuple(order))
    return SharedLayout(vec, per_phase, max_phase, tuple(order), cols)


def swizzle_bytes(layout, tile_shape, eb: int) -> int:
    """The standard swizzle span (bytes: 0, 32, 64 or 128; what tensor copy engines and matrix descriptors
    name) that places a tile of ``tile_shape`` as ``layout`` does (a ``shared_for_operand`` layout: 16-byte units
    XOR-ed with the row within the span), or None when none does."""
    w = layout.block_cols(tile_shape)
    row = w * eb
    if layout.max_phase == 1:
        return 0 if layout.vec * eb >= 16 or row <= 16 else None
    expected = {32: (2, 4), 64: (4, 2), 128: (8, 1)}.get(row)
    if expected is None or layout.vec * eb != 16 or (layout.max_phase, layout.per_phase) != expected:
        return None
    return row
