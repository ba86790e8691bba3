"""The vendor-neutral register encodings: blocked tiles (``#blocked``), their slices (``#slice``), layouts given
by their bases (``#linear``, what a reshape leaves) and the FMA path's dot operands (``#dot_op``), with the
blocked layout a shape gets by default.
"""
from __future__ import annotations

from dataclasses import dataclass

from .linear_layouts import (DerivedLayout, Layout, LinearLayout, OperandLayout, WarpGridLayout, _fmt,
                             _linear_checked, _log2, _product, _repeat_bases)


@dataclass(frozen=True, repr=False)
class BlockedLayout(WarpGridLayout):
    """Each thread holds ``size_per_thread`` contiguous elements; ``threads_per_warp`` lanes and
    ``warps_per_cta`` warps tile the shape, fastest dimension first as given by ``order``; the pattern repeats
    in registers where the shape is larger and broadcasts where it is smaller. Shape-independent, so one
    blocked layout serves every tile of its rank."""
    size_per_thread: tuple
    threads_per_warp: tuple
    warps_per_cta: tuple
    order: tuple
    name = "blocked"

    def __post_init__(self):
        r = len(self.order)
        if not (len(self.size_per_thread) == len(self.threads_per_warp) == len(self.warps_per_cta) == r):
            raise ValueError("blocked layout: parameters must have one entry per dimension")
        if sorted(self.order) != list(range(r)):
            raise ValueError(f"blocked layout: bad order {self.order}")

    @property
    def warp_size(self):
        return _product(self.threads_per_warp)

    def _body(self):
        return (f"spt = {_fmt(self.size_per_thread)}, tpw = {_fmt(self.threads_per_warp)}, "
                f"wpc = {_fmt(self.warps_per_cta)}, order = {_fmt(self.order)}")

    def _linear(self, shape):
        rank = len(shape)
        if rank != self.rank:
            raise ValueError(f"{self} applied to rank-{rank} shape {shape}")
        for s in shape:
            _log2(s)
        unit = lambda d, v: tuple(v if i == d else 0 for i in range(rank))  # noqa: E731
        reg, lane, warp, repeat = [], [], [], []
        covered = {}
        for d in self.order:
            p = 1
            for _ in range(_log2(self.size_per_thread[d])):
                if p < shape[d]:
                    reg.append(unit(d, p))
                p *= 2
            for _ in range(_log2(self.threads_per_warp[d])):
                lane.append(unit(d, p) if p < shape[d] else (0,) * rank)
                p *= 2
            covered[d] = p
        for d in self.order:
            p = covered[d]
            for _ in range(_log2(self.warps_per_cta[d])):
                warp.append(unit(d, p) if p < shape[d] else (0,) * rank)
                p *= 2
            covered[d] = p
        # lane/warp bits of different dims were appended dimension by dimension, which is the order the index
        # bits take (lowest bits on order[0]); warps likewise.
        for d in self.order:
            p = covered[d]
            while p < shape[d]:
                repeat.append(unit(d, p))
                p *= 2
        return LinearLayout(tuple(shape), tuple(reg + repeat), tuple(lane), tuple(warp))


@dataclass(frozen=True, repr=False)
class SliceLayout(DerivedLayout):
    """``parent`` with dimension ``dim`` removed: the threads that spread ``dim`` in the parent hold copies.
    The result of reducing a ``parent`` tile along ``dim``; the operand that ``expand_dims`` turns back into it."""
    dim: int
    parent: Layout
    name = "slice"

    @property
    def rank(self):
        return self.parent.rank - 1

    def _body(self):
        return f"dim = {self.dim}, parent = {self.parent}"

    def _linear(self, shape):
        full = list(shape)
        full.insert(self.dim, 1)
        return self.parent.to_linear(tuple(full)).without_dim(self.dim)


@dataclass(frozen=True, repr=False)
class LinearEncoding(Layout):
    """A linear layout given by its bases for ``shape``: where a ``reshape`` leaves its source's elements (every
    register, lane and warp keeps the elements it held, so the reshape moves no data). Over another shape of the
    rank (the size-1 dimensions of a reduction or ``expand_dims``, or a larger tile) a basis coordinate past
    the shape broadcasts (its bit holds copies) and register bits repeat the pattern where the shape is larger,
    as a blocked layout's do."""
    shape: tuple
    reg: tuple
    lane: tuple
    warp: tuple
    name = "linear"

    @staticmethod
    def of(ll: LinearLayout) -> "LinearEncoding":
        return LinearEncoding(tuple(ll.shape), tuple(ll.reg), tuple(ll.lane), tuple(ll.warp))

    @staticmethod
    def image(ll: LinearLayout, shape, fn) -> "LinearEncoding":
        """The layout holding ``ll``'s elements over ``shape`` when coordinate ``c`` of ``ll``'s shape moves to
        ``fn(c)`` (a map linear over GF(2), such as a reshape's or a transpose's)."""
        move = lambda bs: tuple(tuple(fn(b)) if any(b) else (0,) * len(shape) for b in bs)  # noqa: E731
        return LinearEncoding(tuple(shape), move(ll.reg), move(ll.lane), move(ll.warp))

    @property
    def rank(self):
        return len(self.shape)

    @property
    def num_warps(self):
        return 1 << len(self.warp)

    def _body(self):
        nested = lambda bs: "[" + ", ".join(_fmt(b) for b in bs) + "]"  # noqa: E731
        return (f"shape = {_fmt(self.shape)}, reg = {nested(self.reg)}, lane = {nested(self.lane)}, "
                f"warp = {nested(self.warp)}")

    def _linear(self, shape):
        if len(shape) != self.rank:
            raise ValueError(f"{self} applied to rank-{len(shape)} shape {shape}")
        fit = lambda bs: [tuple(v & (s - 1) for v, s in zip(b, shape)) for b in bs]  # noqa: E731
        reg = [b for b in fit(self.reg) if any(b)]  # a register bit past the shape would only repeat one
        for d in range(self.rank):
            reg += _repeat_bases(d, self.rank, self.shape[d], shape[d])
        return _linear_checked(shape, reg, fit(self.lane), fit(self.warp))


@dataclass(frozen=True, repr=False)
class DotOperandLayout(OperandLayout):
    """Operand ``op_idx`` (0 = A [M, K], 1 = B [K, N]) of a dot whose accumulator has layout ``parent``, for
    the FMA path: each thread holds, for its accumulator rows (A) or columns (B), the whole K extent in
    registers. Tensor-core operand layouts are further encodings built the same way."""
    op_idx: int
    parent: Layout
    name = "dot_op"

    def _linear(self, shape):
        rank = len(shape)
        kdim = rank - 1 if self.op_idx == 0 else rank - 2
        sub = list(shape)
        sub[kdim] = 1
        p = self.parent.to_linear(tuple(sub))
        kbits = [tuple((1 << i) if d == kdim else 0 for d in range(rank)) for i in range(_log2(shape[kdim]))]
        return LinearLayout(tuple(shape), tuple(kbits) + p.reg, p.lane, p.warp)


def default_blocked(shape, num_warps: int, warp_size: int = 32, size_per_thread=None, order=None) -> BlockedLayout:
    """Lanes fill the fastest dimension first, then warps fill from the slowest dimension; what a shape does
    not use is broadcast. ``size_per_thread`` (e.g. from coalescing) packs elements per thread first."""
    rank = len(shape)
    order = tuple(order) if order is not None else tuple(range(rank - 1, -1, -1))
    spt = list(size_per_thread) if size_per_thread is not None else [1] * rank
    tpw = [1] * rank
    left = warp_size
    for d in order:
        room = max(1, shape[d] // spt[d])
        t = min(left, room)
        tpw[d] = t
        left //= t
    tpw[order[-1]] *= left  # lanes that the shape cannot use still need a place: broadcast on the slowest dim
    wpc = [1] * rank
    left = num_warps
    for d in reversed(order):
        room = max(1, shape[d] // (spt[d] * tpw[d]))
        w = min(left, room)
        wpc[d] = w
        left //= w
    wpc[order[0]] *= left
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), order)
