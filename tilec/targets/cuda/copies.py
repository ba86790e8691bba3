"""NVIDIA's asynchronous global -> shared copies (``cp.async``, sm_80+) and 8x8 matrix loads from shared memory
(``ldmatrix``) into ``mma.sync`` operand registers.

``ldmatrix.x4`` has each group of 8 lanes name the 8 rows (16 bytes each) of one 8x8 matrix of 16-bit elements
and hands every lane, per matrix, the two elements at (row lane/4, columns 2*(lane%4), +1); with ``.trans`` the
matrix arrives transposed. An ``mma.sync`` operand layout (k_width 2) holds exactly such pairs along k, one
register pair per 8x8 block, so each block of the operand is one matrix: stored rows run along the non-k
dimension when k is the buffer's contiguous dimension, else along k and the load transposes. For 8-bit integers
(m16n8k32, four k per register) the same matrices hold 16 k per row; there is no transposing form.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...gpu.layouts import LinearLayout, MmaOperandLayout
from ...gpu.lowering.layouts import thread_part
from ...gpu.lowering.shared import shared_offsets
from ...gpu.lowering.types import I32, VOID, from_memory, memory_bytes, memory_type
from ...gpu.lowering.values import ll_of


def _c(v):
    return ir.Constant(I32, v)


def _asm(b, text, cons, args, ret=VOID):
    fty = ir.FunctionType(ret, [a.type for a in args])
    return b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)


def cp_async(b, dst, src, nbytes: int, pred):
    """``cp.async`` of ``nbytes`` (16: ``.cg``, bypassing L1; 4/8: ``.ca``); ``pred`` false copies 0 bytes and
    zero-fills."""
    kind = "cg" if nbytes == 16 else "ca"
    addr = b.ptrtoint(dst, I32)
    # "~{memory}": the copy writes shared memory, so LLVM must not move shared loads of bytes it may overwrite
    # (a layout conversion's scratch read before the ring's first copy) across it
    if pred is None:
        _asm(b, f"cp.async.{kind}.shared.global [$0], [$1], {nbytes};", "r,l,~{memory}", [addr, src])
        return
    size = b.select(pred, _c(nbytes), _c(0))
    _asm(b, f"cp.async.{kind}.shared.global [$0], [$1], {nbytes}, $2;", "r,l,r,~{memory}", [addr, src, size])


def cp_async_commit(b):
    _asm(b, "cp.async.commit_group;", "~{memory}", [])


def cp_async_wait(b, pending: int):
    _asm(b, f"cp.async.wait_group {pending};", "~{memory}", [])


def _warp_part(ctx, ll):
    """Per dimension, the coordinate contributed by this thread's warp alone."""
    zero = tuple((0,) * ll.rank for _ in ll.lane)
    return thread_part(ctx, LinearLayout(ll.shape, ll.reg, zero, ll.warp))


def ldmatrix_operand(L, base, buf_type, dst_type):
    """Registers of an ``mma.sync`` operand tile (16-bit elements) read from a shared stage at byte offset
    ``base`` with ``ldmatrix`` (x4 where the thread holds four or more 8x8 blocks); None when the layouts do not
    fit (the caller reads element by element)."""
    lay, smem = dst_type.layout, buf_type.layout
    et = buf_type.element
    if not isinstance(lay, MmaOperandLayout) or lay.k_width * memory_bytes(et) != 4 or smem.vec * \
            memory_bytes(et) < 16:
        return None
    kw = lay.k_width  # elements per 32-bit register: a b16 pair, or four 8-bit integers
    ll = ll_of(dst_type)
    rank = len(dst_type.shape)  # 3: a batched operand, each 8x8 matrix within one batch entry
    kd = rank - 1 if lay.op_idx == 0 else rank - 2
    od = 2 * rank - 3 - kd
    trans = smem.order[0] != kd
    if trans and kw != 2:
        return None  # ldmatrix.trans moves 16-bit elements only
    unit = lambda d, v: tuple(v if i == d else 0 for i in range(rank))  # noqa: E731
    want = (unit(kd, kw), unit(kd, 2 * kw), unit(od, 1), unit(od, 2), unit(od, 4))
    nb = kw.bit_length() - 1  # register bits inside one 32-bit register
    if tuple(ll.lane) != want or len(ll.reg) < nb or tuple(ll.reg[:nb]) != tuple(unit(kd, 1 << i)
                                                                               for i in range(nb)):
        return None
    mats = ll.reg[nb:]
    span = {d: 1 for d in range(rank)}
    span.update({kd: 4 * kw, od: 8})  # one 8x8 b16 matrix: 8 rows by 16 bytes
    if any(bs[d] % span[d] for bs in mats + ll.warp for d in range(rank)):
        return None
    b = L.b
    n_mat = 1 << len(mats)
    x = min(4, n_mat)
    lane = L.lane
    q = b.lshr(lane, _c(3))  # which matrix of the group this lane names a row of
    rr = b.and_(lane, _c(7))  # which row
    row_dim = kd if trans else od
    wp = _warp_part(L, ll)
    lane_off = [None] * rank
    for d in range(rank):
        v = wp[d]
        for bit in range(x.bit_length() - 1):
            if mats[bit][d]:
                sel = b.and_(b.lshr(q, _c(bit)), _c(1))
                v = b.add(v, b.mul(sel, _c(mats[bit][d])))
        if d == row_dim:
            v = b.add(v, rr)
        lane_off[d] = v
    mt = memory_type(et)
    name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{x}{'.trans' if trans else ''}.b16"
    ret = ir.LiteralStructType([I32] * x) if x > 1 else I32

    eb = memory_bytes(et)

    def emit(g, out):
        """The ``ldmatrix`` for matrices g .. g+x-1 (this thread's registers from ``g << nb``)."""
        origin = ll.reg_coord(g << nb)
        coords = [tuple(b.add(lane_off[d], _c(origin[d])) if origin[d] else lane_off[d] for d in range(rank))]
        off = shared_offsets(L, smem, buf_type.tile_shape, coords)[0]
        p = b.gep(L.smem, [b.add(base, b.mul(off, _c(eb)))], source_etype=ir.IntType(8))
        r = intrinsic(b, name, ret, [p])
        for j in range(x):
            w = b.extract_value(r, j) if x > 1 else r
            parts = b.bitcast(w, ir.VectorType(mt, kw))
            for h in range(kw):
                out[((g + j) << nb) | h] = from_memory(b, et, b.extract_element(parts, _c(h)))
    return LazyRegisters(ll.num_regs, lambda i: (i >> nb) // x * x, emit)


class LazyRegisters:
    """A tile's registers that are loaded group by group where first read: a dot walking k reads each k-slice
    of its operands just before the matrix instructions that need it, so the whole operand is never live at
    once. Reading every register (iteration) loads everything in order."""

    def __init__(self, n, group_of, emit):
        self.n, self.group_of, self.emit = n, group_of, emit
        self.regs = [None] * n
        self.done = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if self.regs[i] is None:
            g = self.group_of(i)
            if g not in self.done:
                self.done.add(g)
                self.emit(g, self.regs)
        return self.regs[i]

    def __iter__(self):
        return (self[i] for i in range(self.n))


def stmatrix_fragments(L, values, ll, buf, address, eb: int) -> bool:
    """Write registers in the mma fragment pattern (16-bit: lane 4g + t holds (row g, columns 2t, 2t+1) of
    each 8x8 block, two elements per register pair) to a row-major staging buffer with ``stmatrix.x4`` (sm_90),
    16 bytes per row instead of one 4-byte store per pair; each lane's row at ``address(element offset, 8)``.
    False when the layout or buffer does not fit."""
    if eb != 2 or len(buf.shape) != 2 or buf.order[0] != 1 or (buf.max_phase > 1 and buf.unit * eb < 16):
        return False
    want = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))
    if tuple(ll.lane) != want or not ll.reg or ll.reg[0] != (0, 1):
        return False
    mats = ll.reg[1:]
    if len(mats) < 2 or any(v % 8 for bs in mats + ll.warp for v in bs):
        return False
    b = L.b
    q = b.lshr(L.lane, _c(3))
    rr = b.and_(L.lane, _c(7))
    wp = _warp_part(L, ll)
    lane_off = []
    for d in range(2):
        v = wp[d]
        for bit in range(2):
            if mats[bit][d]:
                v = b.add(v, b.mul(b.and_(b.lshr(q, _c(bit)), _c(1)), _c(mats[bit][d])))
        lane_off.append(b.add(v, rr) if d == 0 else v)
    words = []
    for i in range(0, len(values), 2):
        vec = ir.Constant(ir.VectorType(values[i].type, 2), ir.Undefined)
        for j in range(2):
            vec = b.insert_element(vec, values[i + j], _c(j))
        words.append(b.bitcast(vec, I32))
    text = "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};"
    for g in range(0, len(words), 4):
        origin = ll.reg_coord(g << 1)
        coord = tuple(b.add(lane_off[d], _c(origin[d])) if origin[d] else lane_off[d] for d in range(2))
        p = address(buf.offsets(L, [coord])[0], 8)
        _asm(b, text, "r,r,r,r,r,~{memory}", [b.ptrtoint(p, I32)] + words[g:g + 4])
    return True
