"""Layouts at code-generation time: thread coordinates, register remapping and shared-memory shuffles, all
derived from linear layouts (tilec/gpu/layouts.py), so each works for every encoding.

- :func:`thread_part` gives, per dimension, the coordinate contributed by this thread's lane and warp bits;
  a register's coordinate is that combined with the register's constant part.
- ``gpu/layouts.py: register_moves`` answers "can each destination register take a source register of the
  same thread?" for any coordinate map (identity for conversions, dropping a dimension for ``expand_dims``/
  ``broadcast``): yes exactly when the map sends every destination lane/warp basis to the source's basis.
- :func:`smem_shuffle` is the general fallback: every thread writes its registers to shared memory at their
  coordinates' offsets, a barrier, every thread reads the registers it needs.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .types import I32


def _c(v):
    return ir.Constant(I32, v)


def thread_part(ctx, ll):
    """Per dimension, the i32 coordinate from this thread's lane and warp (built once, in the entry block)."""
    key = ("thread", ll.lane, ll.warp, ll.rank)
    hit = ctx.cache.get(key)
    if hit is not None:
        return hit
    b = ctx.entry
    parts = []
    injective = ll.is_injective_per_dim_bits()
    for d in range(ll.rank):
        acc = _c(0)
        for idx, bases in ((ctx.lane, ll.lane), (ctx.warp, ll.warp)):
            for i, basis in enumerate(bases):
                v = basis[d]
                if not v:
                    continue
                bit = b.and_(b.lshr(idx, _c(i)), _c(1))
                term = b.mul(bit, _c(v))
                acc = b.or_(acc, term) if injective else b.xor(acc, term)
        parts.append(acc)
    ctx.cache[key] = parts
    return parts


def reg_coord_values(ctx, ll):
    """For every register, a tuple of i32 coordinates (thread part combined with the register constant)."""
    tp = thread_part(ctx, ll)
    b = ctx.b
    injective = ll.is_injective_per_dim_bits()
    out = []
    for rc in ll.reg_coords():
        out.append(tuple((b.add(t, _c(c)) if injective else b.xor(t, _c(c))) if c else t for t, c in zip(tp, rc)))
    return out


def owner_predicate(ctx, ll):
    """i1 true in the one thread of each group of threads holding copies of the same elements (None: no
    copies), so that stores and atomics happen once."""
    lm, wm = ll.free_mask("lane"), ll.free_mask("warp")
    if not lm and not wm:
        return None
    key = ("owner", lm, wm)
    hit = ctx.cache.get(key)
    if hit is not None:
        return hit
    b = ctx.entry
    cond = None
    for idx, m in ((ctx.lane, lm), (ctx.warp, wm)):
        if m:
            c = b.icmp_unsigned("==", b.and_(idx, _c(m)), _c(0))
            cond = c if cond is None else b.and_(cond, c)
    ctx.cache[key] = cond
    return cond


def row_major_offsets(ctx, coords, shape):
    """i32 element offsets of coordinate tuples in a row-major buffer of ``shape``."""
    b = ctx.b
    strides = []
    s = 1
    for n in reversed(shape):
        strides.append(s)
        s *= n
    strides.reverse()
    out = []
    for c in coords:
        off = None
        for v, st in zip(c, strides):
            term = v if st == 1 else b.mul(v, _c(st))
            off = term if off is None else b.add(off, term)
        out.append(off if off is not None else _c(0))
    return out


def smem_vector_width(ll, shape, elem_bytes: int, last: int | None = None) -> int:
    """Registers per shared-memory access for ``ll`` over a buffer whose fastest dimension is ``last`` (default:
    row-major): the leading registers that step along it, provided every other basis keeps groups aligned
    (<= 16 bytes)."""
    last = len(shape) - 1 if last is None else last
    v = min(ll.contiguous_regs(last), max(1, 16 // elem_bytes))
    k = v.bit_length() - 1
    others = ll.reg[k:] + ll.lane + ll.warp
    while v > 1 and any(b[last] % v for b in others):
        v //= 2
        k -= 1
        others = ll.reg[k:] + ll.lane + ll.warp
    return v


def _fast_dim(ll):
    """The dimension the layout's first register steps along (None: no register steps)."""
    if not ll.reg:
        return None
    nz = [d for d, v in enumerate(ll.reg[0]) if v]
    return nz[0] if len(nz) == 1 and ll.reg[0][nz[0]] == 1 else None


class StagingBuffer:
    """A tile laid out in shared memory for a layout conversion: dimensions ordered so that the reader's
    registers are contiguous (else the writer's), and 16-byte-wide groups of the fastest dimension XOR-swizzled
    by the next dimension's index, so that threads reading down a column hit different banks. Offsets are a
    bijection on the buffer and keep every access group contiguous and aligned."""

    def __init__(self, src_ll, dst_ll, shape, elem_bytes, vector=True):
        rank = len(shape)
        fast = _fast_dim(dst_ll)
        if fast is None or (dst_ll.contiguous_regs(fast) < 2 and _fast_dim(src_ll) is not None):
            fast = _fast_dim(src_ll)
        if fast is None:
            fast = rank - 1
        self.order = [fast] + [d for d in range(rank - 1, -1, -1) if d != fast]
        self.shape = shape
        self.src_vec = smem_vector_width(src_ll, shape, elem_bytes, fast) if vector else 1
        self.dst_vec = smem_vector_width(dst_ll, shape, elem_bytes, fast) if vector else 1
        unit = max(self.src_vec, self.dst_vec)
        width = shape[fast]
        self.unit, self.per_phase, self.max_phase = unit, 1, 1
        if rank >= 2 and width >= 2 * unit:
            row_bytes = width * elem_bytes
            self.per_phase = max(1, 128 // row_bytes)
            self.max_phase = max(1, min(width // unit, 128 // (unit * elem_bytes)))

    def offsets(self, ctx, coords):
        b = ctx.b
        strides, st = {}, 1
        for d in self.order:
            strides[d] = st
            st *= self.shape[d]
        fast = self.order[0]
        out = []
        for c in coords:
            col = c[fast]
            if self.max_phase > 1:
                row = c[self.order[1]]
                phase = b.and_(b.lshr(row, _c(self.per_phase.bit_length() - 1)), _c(self.max_phase - 1))
                col = b.xor(col, b.shl(phase, _c(self.unit.bit_length() - 1)))
            off = col
            for d in self.order[1:]:
                off = b.add(off, b.mul(c[d], _c(strides[d])))
            out.append(off)
        return out


def store_vector(b, p, vals, elem_bytes):
    """``vals`` (memory-typed) stored consecutively at shared pointer ``p`` as one access."""
    if len(vals) == 1:
        b.store(vals[0], p)
        return
    b.store(vector_of(b, vals), p, align=len(vals) * elem_bytes)


def vector_of(b, scalars):
    """An LLVM vector of ``scalars`` (one type)."""
    v = ir.Constant(ir.VectorType(scalars[0].type, len(scalars)), ir.Undefined)
    for i, x in enumerate(scalars):
        v = b.insert_element(v, x, _c(i))
    return v


def load_vector(b, p, mem_type, n, elem_bytes):
    """``n`` consecutive memory-typed elements at shared pointer ``p`` as one access."""
    if n == 1:
        return [b.load(p, typ=mem_type)]
    v = b.load(p, typ=ir.VectorType(mem_type, n), align=n * elem_bytes)
    return [b.extract_element(v, _c(i)) for i in range(n)]


def smem_shuffle(ctx, values, src_offsets, dst_offsets, mem_type, array, to_mem, from_mem,
                 src_vec: int = 1, dst_vec: int = 1, store=None):
    """Write ``values`` at ``src_offsets`` (elements of scratch ``array``, a ``ScratchRef``), barrier, read back
    at ``dst_offsets``; groups of ``src_vec``/``dst_vec`` consecutive registers are single vector accesses.
    ``store(memory values)``, when given, writes them instead (returns False to decline). A barrier before the
    next shared-memory user is the insert-barriers pass's job."""
    eb = array.elem_bytes
    mem = [to_mem(v) for v in values]
    if store is None or not store(mem):
        for g in range(0, len(mem), src_vec):
            group = mem[g:g + src_vec]
            store_vector(ctx.b, array.ptr(src_offsets[g], len(group)), group, eb)
    ctx.target.barrier(ctx.b)
    out = []
    for g in range(0, len(dst_offsets), dst_vec):
        out.extend(from_mem(v) for v in load_vector(ctx.b, array.ptr(dst_offsets[g], dst_vec), mem_type, dst_vec, eb))
    return out
