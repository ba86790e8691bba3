"""The linear layout, over GF(2), that every GPU layout encoding reduces to, and the base of the encodings.

A *linear layout* maps the bits of a (register, lane, warp) index to the bits of a tile coordinate, linearly over
GF(2): each input bit has a basis vector (one coordinate per tile dimension) and an index maps to the XOR of the
basis vectors of its set bits. A zero basis vector means that bit does not move the coordinate, i.e. the element
is replicated across it (lanes/warps broadcast a value). The basis builders here (``_log_bases``,
``_repeat_bases``, ``_linear_checked``) are what the encodings in ``blocked_layouts.py``, ``mma_layouts.py`` and
``matrix_core_layouts.py`` assemble their bases from.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, reduce


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"layout sizes must be powers of two, got {n}")
    return n.bit_length() - 1


def _xor(a, b):
    return tuple(x ^ y for x, y in zip(a, b))


def _product(xs) -> int:
    return reduce(lambda a, b: a * b, xs, 1)


@dataclass(frozen=True)
class LinearLayout:
    """``shape``: the tile shape (powers of two); ``reg``/``lane``/``warp``: one basis vector (a tuple of one
    coordinate per dimension) per index bit, lowest bit first."""
    shape: tuple
    reg: tuple
    lane: tuple
    warp: tuple

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_regs(self) -> int:
        return 1 << len(self.reg)

    def _apply(self, bases, index: int):
        out = (0,) * self.rank
        for i, b in enumerate(bases):
            if index >> i & 1:
                out = _xor(out, b)
        return out

    def without_dim(self, dim: int) -> "LinearLayout":
        """The layout with dimension ``dim`` dropped from the shape and every basis (a slice along ``dim``)."""
        drop = lambda bs: tuple(b[:dim] + b[dim + 1:] for b in bs)  # noqa: E731
        return LinearLayout(self.shape[:dim] + self.shape[dim + 1:], drop(self.reg), drop(self.lane),
                            drop(self.warp))

    def reg_coord(self, r: int) -> tuple:
        return self._apply(self.reg, r)

    def coord(self, r: int, lane: int, warp: int) -> tuple:
        return _xor(_xor(self._apply(self.reg, r), self._apply(self.lane, lane)), self._apply(self.warp, warp))

    def reg_coords(self) -> list:
        """Coordinate contributed by each register index, in register order (cached per layout)."""
        return _reg_coords(self)

    def free_mask(self, kind: str) -> int:
        """Bits of the lane or warp index that do not move the coordinate: those threads hold copies."""
        bases = self.lane if kind == "lane" else self.warp
        return sum(1 << i for i, b in enumerate(bases) if not any(b))

    def is_injective_per_dim_bits(self) -> bool:
        """True when every basis is zero or a single power of two in one dimension and no two bases share a
        bit: index arithmetic may then use OR instead of XOR."""
        seen = set()
        for b in self.reg + self.lane + self.warp:
            nz = [(d, v) for d, v in enumerate(b) if v]
            if not nz:
                continue
            if len(nz) != 1 or nz[0][1] & (nz[0][1] - 1):
                return False
            if nz[0] in seen:
                return False
            seen.add(nz[0])
        return True

    def contiguous_regs(self, dim: int) -> int:
        """How many leading registers hold consecutive elements along ``dim`` (the vector width the layout
        allows for memory accesses whose fastest dimension is ``dim``)."""
        n = 1
        for b in self.reg:
            want = tuple(n if d == dim else 0 for d in range(self.rank))
            if b != want:
                break
            n *= 2
        return n

    def same_threads(self, other: "LinearLayout") -> bool:
        """Lanes and warps map identically: a conversion between the two only permutes registers."""
        return self.lane == other.lane and self.warp == other.warp


@lru_cache(maxsize=None)
def _reg_coords(ll: LinearLayout) -> list:
    return [ll.reg_coord(r) for r in range(ll.num_regs)]


def _log_bases(dim, rank, start, count):
    """``count`` basis vectors along ``dim``: start, 2*start, 4*start..."""
    return [tuple((start << i) if d == dim else 0 for d in range(rank)) for i in range(count)]


def _clip(bases, shape):
    """Bases pointing outside ``shape`` broadcast (become zero)."""
    return [tuple(v if v < s else 0 for v, s in zip(b, shape)) if any(v >= s for v, s in zip(b, shape)) and any(b)
            else b for b in bases]


def _repeat_bases(dim, rank, covered, size):
    out, p = [], covered
    while p < size:
        out.append(tuple(p if d == dim else 0 for d in range(rank)))
        p *= 2
    return out


def _linear_checked(shape, reg, lane, warp):
    """Bases past a dimension smaller than one matrix tile broadcast (become zero): such a tile (a row
    statistic expanded to ``[M, 1]``) holds copies, which is what lets it broadcast back in registers."""
    for s in shape:
        _log2(s)
    return LinearLayout(tuple(shape), tuple(_clip(reg, shape)), tuple(_clip(lane, shape)), tuple(_clip(warp, shape)))


class Layout:
    """Base of the named encodings. ``to_linear(shape)`` is the one method lowerings rely on."""

    name = "<layout>"

    def to_linear(self, shape) -> LinearLayout:
        return _to_linear(self, tuple(shape))

    def _linear(self, shape) -> LinearLayout:
        raise NotImplementedError

    @property
    def rank(self) -> int:
        raise NotImplementedError

    @property
    def num_warps(self) -> int:
        raise NotImplementedError

    def __str__(self):
        return f"#{self.name}<{self._body()}>"

    __repr__ = __str__


@lru_cache(maxsize=4096)
def _to_linear(layout: Layout, shape: tuple) -> LinearLayout:
    return layout._linear(shape)


def _fmt(xs):
    return "[" + ", ".join(map(str, xs)) + "]"


class WarpGridLayout(Layout):
    """An encoding whose warps tile the shape as a grid of ``warps_per_cta`` (one entry per dimension)."""

    @property
    def rank(self):
        return len(self.warps_per_cta)

    @property
    def num_warps(self):
        return _product(self.warps_per_cta)


class DerivedLayout(Layout):
    """An encoding defined from another, ``parent`` (a slice of it, an operand of a dot into it): it has the
    parent's rank and spans the parent's warps unless it says otherwise."""

    @property
    def rank(self):
        return self.parent.rank

    @property
    def num_warps(self):
        return self.parent.num_warps


class OperandLayout(DerivedLayout):
    """Operand ``op_idx`` (0: A [M, K], 1: B [K, N]) of a dot whose accumulator has layout ``parent``; it prints
    as ``idx = ..., parent = ...`` followed by :meth:`_options`."""

    def _body(self):
        return f"idx = {self.op_idx}, parent = {self.parent}{self._options()}"

    def _options(self) -> str:
        """The fields after ``parent`` in the printed form (``, kw = 4``), empty when all are defaults."""
        return ""


def holds_copies(t) -> bool:
    """Whether threads of tile type ``t``'s layout hold copies of the same elements (a slice of a 2-d layout,
    a tile smaller than the threads): stores and atomics then run in one owner per element."""
    ll = t.layout.to_linear(t.shape)
    return bool(ll.free_mask("lane") or ll.free_mask("warp"))
