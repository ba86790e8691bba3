"""What data movement between two layouts asks of their bases: which register a thread reads for a gather
(:func:`gather_registers`) or a conversion that stays in the thread (:func:`register_moves`), and the linear
coordinate maps of reshapes and transposes. Both the lowering and shared-memory allocation ask these.
"""
from __future__ import annotations

from dataclasses import dataclass

from .linear_layouts import LinearLayout, _log2, _xor


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


#: lane bases (rank 2) of a matrix-unit accumulator (lane 4g + t: columns 2t, rows g) and of an 8-bit A operand
#: (columns 4t): between the two, :func:`byte_operand_shuffle` holds
ACC_LANES = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))
BYTE_A_LANES = ((0, 4), (0, 8), (1, 0), (2, 0), (4, 0))


def byte_operand_shuffle(src: LinearLayout, dst: LinearLayout, elem_bytes: int) -> bool:
    """Whether converting 8-bit elements from ``src`` to ``dst`` is an accumulator's registers becoming the A
    operand of a chained dot over the same warps, which lane shuffles do without shared memory
    (``gpu/lowering/byte_operands.py``): every lane's group of four holds the same rows in both (rows m and m+8
    in two registers), a row's 16 columns k..k+15 as 2t, 2t+1, 8+2t, 9+2t in ``src`` and as 4t..4t+3 in
    ``dst``."""
    if elem_bytes != 1 or src.rank != 2 or src.shape != dst.shape or src.shape[1] % 16:
        return False
    if src.lane != ACC_LANES or dst.lane != BYTE_A_LANES or src.warp != dst.warp:
        return False
    s_regs, d_regs = set(src.reg_coords()), dst.reg_coords()
    # dst's registers: words of four consecutive columns from a multiple of 16 (lane 0), whose row and column
    # blocks src holds as the pairs k, k+1, k+8, k+9
    starts = [c for c in d_regs if c[1] % 16 == 0]
    if len(starts) * 4 != len(d_regs) or set(d_regs) != {(m, k + i) for m, k in starts for i in range(4)}:
        return False
    # rows m and m + 8 travel together (m + 8 another register of the same lane in both)
    paired = set(starts)
    return all((m ^ 8, k) in paired and (m, k + dk) in s_regs for m, k in starts for dk in (0, 1, 8, 9))
