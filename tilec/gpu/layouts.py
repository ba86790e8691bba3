"""GPU layout encodings carried by gir tile types, all reduced to one mechanism: the linear layout.

A *linear layout* maps the bits of a (register, lane, warp) index to the bits of a tile coordinate, linearly over
GF(2): each input bit has a basis vector (one coordinate per tile dimension) and an index maps to the XOR of the
basis vectors of its set bits. A zero basis vector means that bit does not move the coordinate, i.e. the element
is replicated across it (lanes/warps broadcast a value). Every named encoding (blocked, slice, dot operand...)
only has to say how to build its linear layout for a shape; conversions, vector widths, reduction shuffles and
duplicate-store masks are then derived from the bases alone, so a new encoding needs no new lowering code.

Encodings are frozen dataclasses: hashable and compared by value, so ``TileType`` interns them with the type.
They print as ``#name<...>`` inside a tile type and :func:`parse_layout` reads that text back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache, reduce


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"layout sizes must be powers of two, got {n}")
    return n.bit_length() - 1


def _xor(a, b):
    return tuple(x ^ y for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------------------------
# linear layouts
# ---------------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------------
# named encodings
# ---------------------------------------------------------------------------------------------------------------
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


@dataclass(frozen=True, repr=False)
class BlockedLayout(Layout):
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
    def rank(self):
        return len(self.order)

    @property
    def num_warps(self):
        return reduce(lambda a, b: a * b, self.warps_per_cta, 1)

    @property
    def warp_size(self):
        return reduce(lambda a, b: a * b, self.threads_per_warp, 1)

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
class SliceLayout(Layout):
    """``parent`` with dimension ``dim`` removed: the threads that spread ``dim`` in the parent hold copies.
    The result of reducing a ``parent`` tile along ``dim``; the operand that ``expand_dims`` turns back into it."""
    dim: int
    parent: Layout
    name = "slice"

    @property
    def rank(self):
        return self.parent.rank - 1

    @property
    def num_warps(self):
        return self.parent.num_warps

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
class DotOperandLayout(Layout):
    """Operand ``op_idx`` (0 = A [M, K], 1 = B [K, N]) of a dot whose accumulator has layout ``parent``, for
    the FMA path: each thread holds, for its accumulator rows (A) or columns (B), the whole K extent in
    registers. Tensor-core operand layouts are further encodings built the same way."""
    op_idx: int
    parent: Layout
    name = "dot_op"

    @property
    def rank(self):
        return self.parent.rank

    @property
    def num_warps(self):
        return self.parent.num_warps

    def _body(self):
        return f"idx = {self.op_idx}, parent = {self.parent}"

    def _linear(self, shape):
        rank = len(shape)
        kdim = rank - 1 if self.op_idx == 0 else rank - 2
        sub = list(shape)
        sub[kdim] = 1
        p = self.parent.to_linear(tuple(sub))
        kbits = [tuple((1 << i) if d == kdim else 0 for d in range(rank)) for i in range(_log2(shape[kdim]))]
        return LinearLayout(tuple(shape), tuple(kbits) + p.reg, p.lane, p.warp)


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


class MatrixUnitLayout(Layout):
    """Base of the accumulator layouts of matrix-unit dots (each vendor's instruction family is one subclass):
    the generic passes treat any of them alike (a dot's result stays there, the math after it sinks into it);
    only the target that chose it lowers the dot itself. Two questions stage-operands asks of the instructions
    behind a layout: whether they read operand ``op_idx`` from shared memory themselves, and which placement
    order they need there for an element type (None: any; e.g. (1, 0) for A [M, K]: k contiguous)."""

    #: whether a dot operand computed before the loop around the dot (attention's ``q``) is kept in shared
    #: memory rather than in registers through the loop: worth it where registers are the scarcer resource
    invariant_operands_in_shared = True

    def operand_in_shared(self, op_idx: int, element=None) -> bool:
        return False

    def shared_operand_order(self, op_idx: int, element) -> tuple | None:
        return None


class MatrixUnitOperandLayout(Layout):
    """Base of the operand layouts (A or B) of matrix-unit dots: a ``dot`` whose operands carry one is lowered
    by the target's ``lower_dot``, never by the FMA path."""


@dataclass(frozen=True, repr=False)
class MmaLayout(MatrixUnitLayout):
    """Accumulator of the ``m16n8k*`` matrix-unit instructions (arch 80+): per warp a 16x8 tile where lane ``4g + t`` holds rows g and
    g+8, columns 2t and 2t+1; ``warps_per_cta`` tile warps over (rows, columns); the pattern repeats in
    registers over larger shapes. ``version`` 3: the same registers computed by warpgroup instructions (four
    consecutive warps, 64 rows, operands read from shared memory); warps along rows come in fours (whole
    warpgroups), and warpgroups along columns each take one contiguous block of columns
    (``column_block``)."""
    warps_per_cta: tuple
    version: int = 2
    name = "mma"

    @property
    def rank(self):
        return len(self.warps_per_cta)  # 3: batched dots, warps first along the batch

    @property
    def num_warps(self):
        return reduce(lambda a, b: a * b, self.warps_per_cta, 1)

    def _body(self):
        v = f", version = {self.version}" if self.version != 2 else ""
        return f"wpc = {_fmt(self.warps_per_cta)}{v}"

    def flat(self) -> "MmaLayout":
        """The rank-2 layout of one matrix of a batched (rank-3) one."""
        return MmaLayout(tuple(self.warps_per_cta[-2:]), self.version)

    def operand_in_shared(self, op_idx: int, element=None) -> bool:
        # warpgroup units read B through a descriptor; A may come in registers when it has 16-bit elements
        return self.version == 3 and (op_idx == 1 or element is not None and element.name not in ("f16", "bf16"))

    def shared_operand_order(self, op_idx: int, element) -> tuple | None:
        # warpgroup units transpose 16-bit operands while reading; 8-bit and tf32 operands must be k-contiguous
        if self.version == 3 and element.name not in ("f16", "bf16"):
            return (1, 0) if op_idx == 0 else (0, 1)
        return None

    def _linear(self, shape):
        if len(shape) == 3:
            return _batched(self, shape, self.warps_per_cta[0])
        M, N = shape
        wm, wn = _log2(self.warps_per_cta[0]), _log2(self.warps_per_cta[1])
        reg = [(0, 1), (8, 0)]
        lane = [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
        col = self.column_block(N)
        warp = _log_bases(0, 2, 16, wm) + _log_bases(1, 2, col, wn)
        reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
        reg += _repeat_bases(0, 2, 16 << wm, M)
        return _linear_checked(shape, reg, lane, warp)

    def column_block(self, N: int) -> int:
        """Columns between warps that split N: 8 (m16n8 tiles interleaved) for ``mma.sync``; for warpgroup
        units (version 3) each warpgroup past the row ones takes one contiguous block of N / warps-along-N
        columns, the range one instruction computes."""
        wn = self.warps_per_cta[1]
        return max(8, N // wn) if self.version == 3 and wn > 1 else 8


def _batched(layout, shape, wb):
    """A batched (rank-3) matrix-unit layout: the rank-2 layout of the same encoding with the batch warps
    removed, for every matrix of the batch; warps take batch entries first (``wb`` of them), then registers
    repeat over the rest of the batch."""
    flat = layout.flat()
    ll = flat.to_linear(tuple(shape[1:]))
    up = lambda bs: tuple((0,) + tuple(x) for x in bs)  # noqa: E731
    warp = _log_bases(0, 3, 1, _log2(wb)) + list(up(ll.warp))
    reg = list(up(ll.reg)) + _repeat_bases(0, 3, wb, shape[0])
    return _linear_checked(shape, reg, up(ll.lane), warp)


@dataclass(frozen=True, repr=False)
class MmaOperandLayout(MatrixUnitOperandLayout):
    """Operand ``op_idx`` (0: A [M, K], 1: B [K, N]) of ``mma.sync`` for an accumulator in ``parent``.
    ``k_width`` 2 (16-bit inputs, m16n8k16): A fragments hold (row g, k 2t..2t+1) with +8 on rows and k, B
    fragments (k 2t..2t+1, column g) with +8 on k; ``k_width`` 4 (8-bit inputs, m16n8k32) the same with four
    consecutive k per register and +16 on k. ``k_width`` 1 (tf32, m16n8k8): A holds (row g, k t) with +8 on
    rows and +4 on k, B holds (k t, column g) with +4 on k. Warps that split the other operand's dimension hold
    copies."""
    op_idx: int
    parent: MmaLayout
    k_width: int = 2
    name = "mma_op"

    @property
    def rank(self):
        return self.parent.rank

    def flat(self) -> "MmaOperandLayout":
        return MmaOperandLayout(self.op_idx, self.parent.flat(), self.k_width)

    @property
    def num_warps(self):
        return self.parent.num_warps

    def _body(self):
        kw = f", kw = {self.k_width}" if self.k_width != 2 else ""
        return f"idx = {self.op_idx}, parent = {self.parent}{kw}"

    def _linear(self, shape):
        if len(shape) == 3:
            return _batched(self, shape, self.parent.warps_per_cta[0])
        wm, wn = _log2(self.parent.warps_per_cta[0]), _log2(self.parent.warps_per_cta[1])
        if self.k_width == 1:
            if self.op_idx == 0:
                M, K = shape
                reg = [(8, 0), (0, 4)] + _repeat_bases(1, 2, 8, K) + _repeat_bases(0, 2, 16 << wm, M)
                lane = [(0, 1), (0, 2), (1, 0), (2, 0), (4, 0)]
                warp = _log_bases(0, 2, 16, wm) + [(0, 0)] * wn
            else:
                K, N = shape
                col = self.parent.column_block(N)
                reg = [(4, 0)] + _repeat_bases(0, 2, 8, K)
                reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
                lane = [(1, 0), (2, 0), (0, 1), (0, 2), (0, 4)]
                warp = [(0, 0)] * wm + _log_bases(1, 2, col, wn)
            return _linear_checked(shape, reg, lane, warp)
        kw = self.k_width  # consecutive k elements per 32-bit register: 2 (16-bit inputs) or 4 (8-bit)
        within = [1 << i for i in range(kw.bit_length() - 1)]
        kt = 8 * kw  # k per instruction: 16 or 32
        if self.op_idx == 0:
            M, K = shape
            reg = [(0, w) for w in within] + [(8, 0), (0, 4 * kw)]
            lane = [(0, kw), (0, 2 * kw), (1, 0), (2, 0), (4, 0)]
            warp = _log_bases(0, 2, 16, wm) + [(0, 0)] * wn
            reg += _repeat_bases(1, 2, kt, K) + _repeat_bases(0, 2, 16 << wm, M)
        else:
            K, N = shape
            reg = [(w, 0) for w in within] + [(4 * kw, 0)]
            lane = [(kw, 0), (2 * kw, 0), (0, 1), (0, 2), (0, 4)]
            col = self.parent.column_block(N)
            warp = [(0, 0)] * wm + _log_bases(1, 2, col, wn)
            reg += _repeat_bases(0, 2, kt, K)
            reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
        return _linear_checked(shape, reg, lane, warp)


def _linear_checked(shape, reg, lane, warp):
    """Bases past a dimension smaller than one matrix tile broadcast (become zero): such a tile (a row
    statistic expanded to ``[M, 1]``) holds copies, which is what lets it broadcast back in registers."""
    for s in shape:
        _log2(s)
    return LinearLayout(tuple(shape), tuple(_clip(reg, shape)), tuple(_clip(lane, shape)), tuple(_clip(warp, shape)))


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


# ---------------------------------------------------------------------------------------------------------------
# defaults
# ---------------------------------------------------------------------------------------------------------------
def holds_copies(t) -> bool:
    """Whether threads of tile type ``t``'s layout hold copies of the same elements (a slice of a 2-d layout,
    a tile smaller than the threads): stores and atomics then run in one owner per element."""
    ll = t.layout.to_linear(t.shape)
    return bool(ll.free_mask("lane") or ll.free_mask("warp"))


#: the longest gathered axis read by a chain of selects from registers (n - 1 selects per element) rather than
#: through shared memory (a store, a barrier and a load per element)
GATHER_SELECT_MAX = 16


class _Span:
    """A GF(2) span of packed bit vectors, built generator by generator; each row remembers which generators
    XOR to it (``tag``), so :meth:`solve` says how to make a vector from the generators, or that it cannot."""

    def __init__(self):
        self.rows = []  # (pivot, vector, tag), highest pivot first; a row's pivot is its highest bit

    def _reduce(self, v, tag=0):
        for p, rv, rt in self.rows:
            if v >> p & 1:
                v, tag = v ^ rv, tag ^ rt
        return v, tag

    def add(self, v, tag) -> bool:
        """Add generator ``v`` named by ``tag``; False when it was already in the span."""
        v, tag = self._reduce(v, tag)
        if not v:
            return False
        self.rows.append((v.bit_length() - 1, v, tag))
        self.rows.sort(key=lambda row: -row[0])
        return True

    def solve(self, v):
        """The tag (XOR of generator tags) giving ``v``, or None when ``v`` is outside the span."""
        v, tag = self._reduce(v)
        return tag if not v else None


@dataclass(frozen=True)
class RegisterGather:
    """How each thread reads a gather from its own source registers (:func:`gather_registers`).

    ``picks[r][k]``: the source register holding, in a thread whose terms are zero (thread 0), the element at
    destination register ``r``'s coordinate with the axis set to ``k``. Where the source's threads hold the
    elements elsewhere than the destination's (a source smaller than its threads, which every thread holds
    whole), the register also depends on the thread: each lane and warp bit contributes ``(axis, coeffs)``,
    XORed into ``k`` and into a choice among the ``2**len(offsets)`` register offsets, so a result register
    selects among ``candidates`` source registers."""
    picks: tuple
    offsets: tuple
    lane: tuple
    warp: tuple

    @property
    def candidates(self) -> int:
        return len(self.picks[0]) << len(self.offsets) if self.picks else 0

    @property
    def thread_dependent(self) -> bool:
        return any(a or c for a, c in self.lane + self.warp)

    def offset(self, coeffs: int) -> int:
        """The register XOR for the offset choice ``coeffs`` (one bit per entry of ``offsets``)."""
        out = 0
        for i, m in enumerate(self.offsets):
            if coeffs >> i & 1:
                out ^= m
        return out

    def source_register(self, r: int, k: int, lane: int, warp: int) -> int:
        """The register that thread (``lane``, ``warp``) reads for destination register ``r`` and index ``k``."""
        ka, coeffs = 0, 0
        for idx, terms in ((lane, self.lane), (warp, self.warp)):
            for i, (a, c) in enumerate(terms):
                if idx >> i & 1:
                    ka, coeffs = ka ^ a, coeffs ^ c
        return self.picks[r][k ^ ka] ^ self.offset(coeffs)


def gather_registers(src: LinearLayout, dst: LinearLayout, axis: int):
    """For a gather along ``axis`` from a tile in ``src`` into one in ``dst`` (its index's layout): a
    :class:`RegisterGather` saying which of its own source registers each thread reads, or None when some thread
    does not hold the whole axis for its destination elements in registers, or when a result register would
    choose among more than :data:`GATHER_SELECT_MAX` registers.

    Over GF(2): thread ``t`` needs, for destination register ``r``, the coordinate ``drop(D(r, t)) ^ k·e`` (the
    axis replaced by ``k``) and holds ``S_reg(r') ^ S_thr(t)``. So the register is
    ``S_reg⁻¹(drop(D_reg(r)) ^ drop(T(t)) ^ (k ^ a(t))·e)`` with ``T(t) = drop(D_thr(t)) ^ S_thr(t)`` and ``a(t)``
    the axis part of ``S_thr(t)``: it exists for every thread exactly when the source registers span the axis,
    every ``drop(D_reg)`` basis and every ``drop(T)`` basis. Where ``T`` is zero (the usual case: both sides'
    threads agree) the choice is one per ``k``, as a static list of registers."""
    n = src.shape[axis]
    if n > GATHER_SELECT_MAX or src.rank != dst.rank:
        return None
    if len(dst.lane) != len(src.lane) or len(dst.warp) != len(src.warp) or \
            any(e > s for d, (e, s) in enumerate(zip(dst.shape, src.shape)) if d != axis):
        return None
    shifts, total = [], 0
    for s in src.shape:
        shifts.append(total)
        total += _log2(s)
    drop = lambda c: tuple(0 if d == axis else x for d, x in enumerate(c))  # noqa: E731
    pack = lambda c: sum(x << sh for x, sh in zip(c, shifts))  # noqa: E731
    regs = _Span()
    for i, b in enumerate(src.reg):
        regs.add(pack(b), 1 << i)
    axis_regs = [regs.solve(1 << (shifts[axis] + j)) for j in range(_log2(n))]
    if None in axis_regs:
        return None
    offsets, spread, terms = [], _Span(), []
    for db, sb in zip(dst.lane + dst.warp, src.lane + src.warp):
        t = _xor(drop(db), sb)
        u = pack(drop(t))
        if spread.add(u, 1 << len(offsets)):
            m = regs.solve(u)
            if m is None:
                return None
            offsets.append(m)
        terms.append((t[axis], spread.solve(u)))
    if n << len(offsets) > GATHER_SELECT_MAX:
        return None
    picks = []
    for c in dst.reg_coords():
        base = regs.solve(pack(drop(c)))
        if base is None:
            return None
        row = []
        for k in range(n):
            r = base
            for j, m in enumerate(axis_regs):
                if k >> j & 1:
                    r ^= m
            row.append(r)
        picks.append(tuple(row))
    nl = len(dst.lane)
    return RegisterGather(tuple(picks), tuple(offsets), tuple(terms[:nl]), tuple(terms[nl:]))


def register_moves(src_ll, dst_ll, fn):
    """Source register index for each destination register when ``fn`` (destination coordinate -> source
    coordinate, linear) keeps every thread's data in the thread; None when data must cross threads (through
    shared memory). The lowering of every data movement and allocate-shared's scratch sizes both ask this."""
    for db, sb in zip(dst_ll.lane + dst_ll.warp, src_ll.lane + src_ll.warp):
        if tuple(fn(db)) != tuple(sb):
            return None
    index = {c: i for i, c in enumerate(src_ll.reg_coords())}
    out = []
    for c in dst_ll.reg_coords():
        i = index.get(tuple(fn(c)))
        if i is None:
            return None
        out.append(i)
    return out


def reshape_coords(from_shape, to_shape):
    """A row-major reshape's coordinate map: the coordinate of ``from_shape`` -> that of ``to_shape`` holding the
    same element. Linear over GF(2): the sizes are powers of two, so the bits only regroup."""
    from_shape, to_shape = tuple(from_shape), tuple(to_shape)

    def fn(c):
        flat = 0
        for x, n in zip(c, from_shape):
            flat = flat * n + x
        out = []
        for n in reversed(to_shape):
            out.append(flat % n)
            flat //= n
        return tuple(reversed(out))
    return fn


def transpose_coords(order):
    """``trans``'s coordinate map: result coordinate -> source coordinate (result dim ``i`` is source dim
    ``order[i]``)."""
    def fn(c):
        out = [0] * len(c)
        for i, o in enumerate(order):
            out[o] = c[i]
        return tuple(out)
    return fn


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


# ---------------------------------------------------------------------------------------------------------------
# text form
# ---------------------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(#\w+<|\[|\]|>|,|=|-?\d+|\w+)")


class _Reader:
    def __init__(self, text):
        self.toks = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise ValueError(f"bad layout text at {text[pos:pos + 20]!r}")
            self.toks.append(m.group(1))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, t):
        got = self.next()
        if got != t:
            raise ValueError(f"expected {t!r} in layout, got {got!r}")

    def value(self):
        t = self.toks[self.i]
        if t.startswith("#"):
            return self.layout()
        if t == "[":  # a list of ints or of lists (a linear layout's bases)
            self.next()
            out = []
            while self.toks[self.i] != "]":
                out.append(self.value())
                if self.toks[self.i] == ",":
                    self.next()
            self.next()
            return tuple(out)
        return int(self.next())

    def layout(self):
        head = self.next()
        name = head[1:-1]
        fields = {}
        while self.toks[self.i] != ">":
            k = self.next()
            self.expect("=")
            fields[k] = self.value()
            if self.toks[self.i] == ",":
                self.next()
        self.next()
        return _build(name, fields)


_BUILDERS = {
    "blocked": lambda f: BlockedLayout(f["spt"], f["tpw"], f["wpc"], f["order"]),
    "slice": lambda f: SliceLayout(f["dim"], f["parent"]),
    "linear": lambda f: LinearEncoding(f["shape"], f["reg"], f["lane"], f["warp"]),
    "dot_op": lambda f: DotOperandLayout(f["idx"], f["parent"]),
    "shared": lambda f: SharedLayout(f["vec"], f["per_phase"], f["max_phase"], f["order"], f.get("cols", 0)),
    "mma": lambda f: MmaLayout(f["wpc"], f.get("version", 2)),
    "mma_op": lambda f: MmaOperandLayout(f["idx"], f["parent"], f.get("kw", 2)),
}


def register_layout(name: str, builder) -> None:
    """Make ``#name<...>`` readable (here and in IR text): ``builder(fields)`` builds the encoding from its
    parsed fields (a dict)."""
    from ..ir.parser import register_layout_parser
    _BUILDERS[name] = builder
    register_layout_parser(name, lambda body: parse_layout(f"#{name}<{body or ''}>"))


def _build(name, fields):
    b = _BUILDERS.get(name)
    if b is None:
        raise ValueError(f"unknown layout #{name}")
    try:
        return b(fields)
    except KeyError as e:
        raise ValueError(f"layout #{name} lacks field {e}") from None


def parse_layout(text: str) -> Layout:
    """Read ``#blocked<...>`` (or any registered encoding) back; raises ValueError on bad text."""
    r = _Reader(text)
    lay = r.layout()
    if r.i != len(r.toks):
        raise ValueError(f"trailing text after layout: {' '.join(r.toks[r.i:])}")
    return lay


def _register_with_parser():
    from ..ir.parser import register_layout_parser
    for n in _BUILDERS:
        register_layout_parser(n, lambda body, n=n: parse_layout(f"#{n}<{body or ''}>"))


from . import matrix_core_layouts  # noqa: E402,F401  (registers #mfma, #wmma and their operands)

_register_with_parser()
