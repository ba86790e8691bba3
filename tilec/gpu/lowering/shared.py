"""Lowering of shared-memory buffers and the copies into them (``local_alloc`` ... ``local_dealloc``).

A buffer lowers to its byte offset in the kernel's shared memory (allocate-shared's ``smem_offset``); stage
``i`` of it starts ``i * tile bytes`` further. Element placement inside a stage follows the buffer type's
:class:`~tilec.gpu.layouts.SharedLayout` (:func:`shared_offsets`). Copies go through the target's asynchronous
copy where it has one for the vector width, else a predicated load and a shared store; reads into matrix-unit
operand layouts go through the target's matrix loads where it has them, else vector loads per register group.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .. import ops as G
from .layouts import load_vector, reg_coord_values, store_vector, thread_part, vector_of
from ..register_runs import register_run, run_groups
from ..target import AccessHints
from .memory import _width
from .registry import lowers
from .types import I32, from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of


def _c(v):
    return ir.Constant(I32, v)


def shared_offsets(ctx, layout, shape, coords):
    """i32 element offsets of coordinate tuples (i32 values) in a tile placed by SharedLayout ``layout``."""
    b = ctx.b
    order = layout.order
    fast = order[0]
    w = layout.block_cols(shape)
    strides, st = {}, 1
    for d in order:
        strides[d] = st
        st *= shape[d] if d != fast else w
    out = []
    for c in coords:
        col = c[fast]
        block = None
        if w < shape[fast]:
            block = b.lshr(col, _c(w.bit_length() - 1))
            col = b.and_(col, _c(w - 1))
        if layout.max_phase > 1 and len(order) > 1:
            row = c[order[1]]
            phase = b.and_(b.lshr(row, _c(layout.per_phase.bit_length() - 1)), _c(layout.max_phase - 1))
            col = b.xor(col, b.shl(phase, _c(layout.vec.bit_length() - 1)))
        off = col
        for d in order[1:]:
            off = b.add(off, b.mul(c[d], _c(strides[d])))
        if block is not None:
            off = b.add(off, b.mul(block, _c(st)))
        out.append(off)
    return out


def _power_of_two(n: int) -> bool:
    return n > 0 and not n & (n - 1)


def register_split(layout, shape, ll):
    """Per register of distributed layout ``ll``, ``(x, c)`` such that every element's offset in a tile placed by
    SharedLayout ``layout`` is ``(its thread's offset ^ x) + c``; None unless the extents are powers of two.

    With power-of-two extents the placement is linear over GF(2) in the coordinate bits (fields of a row-major
    offset, an XOR swizzle, column blocks), so an element's offset is its thread's offset XOR its register's. The
    register's bits that no thread's offset has (``c``) add; the others (``x``, often zero, or one of a few
    values where a register steps into the swizzle's phase) XOR."""
    sizes = [*shape, layout.block_cols(shape), layout.vec, layout.per_phase, layout.max_phase]
    if not all(_power_of_two(n) for n in sizes):
        return None
    thread_bits = 0
    for basis in list(ll.lane) + list(ll.warp):
        thread_bits |= layout.offset(basis, shape)
    return [(c & thread_bits, c & ~thread_bits) for c in (layout.offset(rc, shape) for rc in ll.reg_coords())]


def register_constants(layout, shape, ll):
    """Per register, the constant that its element's offset adds to its thread's, when every register's offset
    only adds (:func:`register_split` with no XOR part); else None."""
    split = register_split(layout, shape, ll)
    return None if split is None or any(x for x, _ in split) else [c for _, c in split]


def register_offsets(ctx, layout, shape, ll):
    """i32 element offsets of every register of distributed layout ``ll`` in a tile placed by ``layout``: one
    offset per thread, XORed with one of a few constants and plus a constant per register where the placement
    allows (:func:`register_split`), which the accesses fold into their immediate offsets (a few address
    registers for all of a thread's copies instead of one per register group); else each register's own."""
    split = register_split(layout, shape, ll)
    if split is None:
        return shared_offsets(ctx, layout, shape, reg_coord_values(ctx, ll))
    base = shared_offsets(ctx, layout, shape, [tuple(thread_part(ctx, ll))])[0]
    bases, out = {0: base}, []
    for x, c in split:
        if x not in bases:
            bases[x] = ctx.b.xor(base, _c(x))
        out.append(ctx.b.add(bases[x], _c(c)) if c else bases[x])
    return out


def stage_base(L, buf, index):
    """i32 byte offset of stage ``index`` of ``buf``."""
    bt = buf.type
    size = bt.tile_numel * memory_bytes(bt.element)
    return L.b.add(L.get(buf), L.b.mul(L.get(index), _c(size)))


def _vector(ll, layout, shape, limit):
    """Consecutive registers that are consecutive elements of one placement unit (<= ``limit``)."""
    fast = layout.order[0]
    v = min(ll.contiguous_regs(fast), layout.vec, limit)
    while v > 1 and not _run_fits(ll, fast, range(v.bit_length() - 1), v):
        v //= 2
    return max(v, 1)


def _run_fits(ll, fast, bits, n) -> bool:
    """The registers ``bits`` make runs of ``n`` elements along ``fast`` that start ``n``-aligned: every other
    register, lane and warp basis steps along ``fast`` by a multiple of ``n``."""
    run = set(bits)
    rest = [bs for i, bs in enumerate(ll.reg) if i not in run] + list(ll.lane) + list(ll.warp)
    return all(bs[fast] % n == 0 for bs in rest)


@lowers(G.LocalAllocOp)
def lower_local_alloc(L, op):
    L.bind(op.result, _c(L._smem_base(op, "local_alloc")))
    if op.src is not None:  # a buffer made from a register tile: written here (insert-barriers orders the reads)
        write_stage(L, op.src, op.result.type, _c(L._smem_base(op, "local_alloc")))


@lowers(G.LocalIndexOp)
def lower_local_index(L, op):
    L.bind(op.result, stage_base(L, op.buffer, op.index))


@lowers(G.LocalTransOp)
def lower_local_trans(L, op):
    L.bind(op.result, L.get(op.buffer))  # the same bytes: the view's type alone says how to read them


@lowers(G.FenceAsyncSharedOp)
def lower_fence_async_shared(L, op):
    L.target.fence_async_shared(L.b)


@lowers(G.WarpGroupDotOp)
def lower_warp_group_dot(L, op):
    L.target.lower_warp_group_dot(L, op)


@lowers(G.WarpGroupDotWaitOp)
def lower_warp_group_dot_wait(L, op):
    vals, shapes = L._flatten([L.get(v) for v in op.operands])
    vals = L.target.warp_group_dot_wait(L.b, op.attrs["pending"] if op.attrs.get("hw", True) else None, vals)
    L.bind_flat(op.results, vals, shapes)


@lowers(G.LocalDeallocOp)
def lower_local_dealloc(L, op):
    pass  # the allocator already knows where the buffer's life ends


@lowers(G.AsyncCommitOp)
def lower_async_commit(L, op):
    L.target.async_commit(L.b)


@lowers(G.AsyncWaitOp)
def lower_async_wait(L, op):
    L.target.async_wait(L.b, op.attrs["pending"])


@lowers(G.AsyncCopyOp)
def lower_async_copy(L, op):
    b = L.b
    bt, pt = op.buffer.type, op.ptr.type
    et = bt.element
    eb = memory_bytes(et)
    ll = ll_of(pt)
    vec = min(_width(L, op), _vector(ll, bt.layout, bt.tile_shape, 16 // eb or 1))
    base = stage_base(L, op.buffer, op.index)
    offs = register_offsets(L, bt.layout, bt.tile_shape, ll)
    ptrs = L.get(op.ptr)
    masks = L.get(op.mask) if op.mask is not None else None
    mt = memory_type(et)
    for g in range(0, len(ptrs), vec):
        pred = masks[g] if masks is not None else None
        dst = b.gep(L.smem, [b.add(base, b.mul(offs[g], _c(eb)))], source_etype=ir.IntType(8))
        if vec * eb in (4, 8, 16) and L.target.async_copy(b, dst, ptrs[g], vec * eb, pred):
            continue
        vals = L.target.load_global(b, ptrs[g], mt, vec, pred, None, AccessHints.of(op))
        store_vector(b, dst, vals, eb)


@lowers(G.LocalStoreOp)
def lower_local_store(L, op):
    write_stage(L, op.value, op.buffer.type, stage_base(L, op.buffer, op.index))


class Placement:
    """A stage's placement (``SharedLayout`` over the tile shape) seen as the staging buffers of layout
    conversions are, so the target's whole-fragment stores (``store_matrix_fragments``) write stages too."""

    def __init__(self, layout, shape):
        self.layout, self.shape = layout, tuple(shape)
        self.order, self.unit, self.max_phase = layout.order, layout.vec, layout.max_phase

    def offsets(self, ctx, coords):
        return shared_offsets(ctx, self.layout, self.shape, coords)


def write_stage(L, value, bt, base):
    """Registers of tile ``value`` written to the stage of buffer type ``bt`` at byte offset ``base`` (the
    target's matrix-fragment stores where the registers are matrix fragments, else vector stores)."""
    b = L.b
    vt = value.type
    eb = memory_bytes(bt.element)
    ll = ll_of(vt)
    vals = [to_memory(b, vt, v) for v in L.get(value)]  # vt: the buffer's element, or its bits as an integer

    def address(off, _count):
        return b.gep(L.smem, [b.add(base, b.mul(off, _c(eb)))], source_etype=ir.IntType(8))
    if L.target.store_matrix_fragments(L, vals, ll, Placement(bt.layout, bt.tile_shape), address, eb):
        return
    offs = register_offsets(L, bt.layout, bt.tile_shape, ll)
    bits, groups = _store_runs(ll, bt.layout, max(1, 16 // eb))
    if _transposes_words(ll, bits, eb):
        groups = _store_transposed_words(b, vals, ll, bits)
    for group in groups:
        p = address(offs[group[0]], len(group))
        if isinstance(group, _Word):
            b.store(group.value, p, align=4)
        else:
            store_vector(b, p, [vals[r] for r in group], eb)


def _store_runs(ll, layout, limit):
    """Groups of registers stored as one access each: runs of consecutive elements along the placement's
    fastest dimension (``register_run``: not only leading registers), as long as the placement unit, ``limit``
    and the other bases' alignment allow."""
    fast = layout.order[0]
    bits, n = register_run(ll, fast, min(layout.vec, limit))
    while n > 1 and not _run_fits(ll, fast, bits, n):
        bits, n = bits[:-1], n // 2
    return bits, run_groups(ll, bits)


class _Word(list):
    """A group of registers whose 32-bit word is already built (``value``): stored as one access."""

    def __init__(self, regs, value):
        super().__init__(regs)
        self.value = value


def _transposes_words(ll, bits, eb) -> bool:
    """The store runs (``bits``) make whole 32-bit words of narrow elements whose registers hold words along
    another dimension: a block of ``32 // (8 * eb)`` such words is transposed with byte permutes."""
    k = 4 // eb
    if eb not in (1, 2) or len(bits) != k.bit_length() - 1 or len(ll.reg) < len(bits):
        return False
    lead = list(range(len(bits)))
    if set(lead) & set(bits):
        return False
    dims = [next((d for d, x in enumerate(ll.reg[i]) if x), None) for i in lead]
    return dims[0] is not None and all(ll.reg[i] == tuple((1 << i) if d == dims[0] else 0 for d in range(ll.rank))
                                       for i in lead)


def _store_transposed_words(b, vals, ll, bits):
    """Words for every store run, built by transposing k x k blocks (k elements per 32-bit word): the k words
    a thread holds along its leading registers, one per position along the run, become the k words along the
    run. Two rounds of interleaving shuffles, which the targets lower to byte permutes (``prmt``,
    ``v_perm_b32``): 2 per word for bytes, 1 for 16-bit elements."""
    k = 1 << len(bits)
    mask = (k - 1) | sum(1 << i for i in bits)
    out = []
    for r0 in range(1 << len(ll.reg)):
        if r0 & mask:
            continue
        run = [sum(1 << bits[x] for x in range(len(bits)) if j >> x & 1) for j in range(k)]
        rows = [vector_of(b, [vals[r0 + run[j] + i] for i in range(k)]) for j in range(k)]
        for i, w in enumerate(_transpose_block(b, rows)):
            out.append(_Word([r0 + i + run[j] for j in range(k)], w))
    return out


def _shuffle(b, x, y, mask):
    return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, len(mask)), [_c(m) for m in mask]))


def _transpose_block(b, rows):
    """The columns of a k x k block (k = 2 or 4) given as its rows, each a ``<k x T>`` vector."""
    if len(rows) == 2:
        return [_shuffle(b, rows[0], rows[1], (0, 2)), _shuffle(b, rows[0], rows[1], (1, 3))]
    lo, hi = (0, 4, 1, 5), (2, 6, 3, 7)
    t = [_shuffle(b, rows[0], rows[1], lo), _shuffle(b, rows[0], rows[1], hi),
         _shuffle(b, rows[2], rows[3], lo), _shuffle(b, rows[2], rows[3], hi)]
    lo2, hi2 = (0, 1, 4, 5), (2, 3, 6, 7)
    return [_shuffle(b, t[0], t[2], lo2), _shuffle(b, t[0], t[2], hi2),
            _shuffle(b, t[1], t[3], lo2), _shuffle(b, t[1], t[3], hi2)]


@lowers(G.LocalLoadOp)
def lower_local_load(L, op):
    b = L.b
    bt, rt = op.buffer.type, op.result.type
    base = stage_base(L, op.buffer, op.index)
    regs = L.target.load_matrix_operand(L, base, bt, rt)
    if regs is not None:
        L.bind(op.result, regs)
        return
    et = bt.element
    eb = memory_bytes(et)
    mt = memory_type(et)
    ll = ll_of(rt)
    vec = _vector(ll, bt.layout, bt.tile_shape, max(1, 16 // eb))
    offs = register_offsets(L, bt.layout, bt.tile_shape, ll)
    out = []
    for g in range(0, len(offs), vec):
        p = b.gep(L.smem, [b.add(base, b.mul(offs[g], _c(eb)))], source_etype=ir.IntType(8))
        out.extend(from_memory(b, et, x) for x in load_vector(b, p, mt, vec, eb))
    L.bind(op.result, out)


__all__ = ["register_constants", "register_offsets", "register_split", "shared_offsets", "stage_base"]
