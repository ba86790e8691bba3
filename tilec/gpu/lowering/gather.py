"""``gather`` for any GPU: each thread reads, per result register, the source element its index names.

The result has the index's layout (convert-to-gir); the source may have any layout. Two ways, chosen by the
layouts alone (``gpu/layouts.py: gather_registers``, which allocate-shared asks too):

- the gathered axis lies entirely in each thread's registers (and is short): a chain of selects over the
  thread's own source registers, no shared memory (where the source's threads hold their elements elsewhere
  than the index's, e.g. a small source every thread holds whole, the thread's lane and warp bits join the
  choice);
- otherwise the source goes to shared memory in row-major order (the scratch plan's array ``source``; vector
  stores where its registers allow), a barrier, and every thread loads each result element at its coordinate
  with the axis replaced by the index.

Indices wrap modulo the axis size (the op's definition: ``codegen/indices.py``), so a load never leaves the
staged tile.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.indices import wrap_index
from ...ir import ops as O
from ..layouts import gather_registers
from .layouts import reg_coord_values, row_major_offsets, smem_shuffle, smem_vector_width
from .registry import lowers
from .scratch import scratch_of
from .types import I32, from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of


@lowers(O.GatherOp)
def lower_gather(L, op):
    b = L.b
    s, i = op.src.type, op.index.type
    axis = op.attrs["axis"]
    n = s.shape[axis]
    src = L.get(op.src)
    ks = [wrap_index(b, k, i, n) for k in L.get(op.index)]
    g = gather_registers(ll_of(s), ll_of(op.result.type), axis)
    if g is not None:
        L.bind(op.result, _from_registers(L, g, src, ks))
        return
    s_ll, d_ll = ll_of(s), ll_of(op.result.type)
    eb = memory_bytes(s.element)
    staged = scratch_of(L, op, "'gather' through shared memory").array("source", eb)
    src_off = row_major_offsets(L, reg_coord_values(L, s_ll), staged.shape)
    coords = [c[:axis] + (k,) + c[axis + 1:] for c, k in zip(reg_coord_values(L, d_ll), ks)]
    dst_off = row_major_offsets(L, coords, staged.shape)
    vec = smem_vector_width(s_ll, staged.shape, eb) if not s.element.is_ptr else 1
    L.bind(op.result, smem_shuffle(L, src, src_off, dst_off, memory_type(s.element), staged,
                                   lambda v: to_memory(b, s.element, v), lambda v: from_memory(b, s.element, v),
                                   vec, 1))


def _from_registers(L, g, src, ks):
    """Each result register from the thread's own source registers (``g``: a :class:`RegisterGather`)."""
    b = L.b
    if not g.thread_dependent:
        return [_select(b, k, [src[r] for r in row]) for k, row in zip(ks, g.picks)]
    k_xor, coeffs = _thread_terms(L, g)
    choice = [b.icmp_unsigned("!=", b.and_(coeffs, _c(1 << i)), _c(0)) for i in range(len(g.offsets))]
    out = []
    for k, row in zip(ks, g.picks):
        k = b.xor(k, k_xor)
        out.append(_select_bits(b, choice, [_select(b, k, [src[r ^ g.offset(c)] for r in row])
                                            for c in range(1 << len(g.offsets))]))
    return out


def _thread_terms(L, g):
    """The i32 XOR into the index and the i32 offset choice of this thread (built once, in the entry block)."""
    e = L.entry
    k_xor, coeffs = _c(0), _c(0)
    for idx, terms in ((L.lane, g.lane), (L.warp, g.warp)):
        for i, (a, c) in enumerate(terms):
            if a or c:
                bit = e.and_(e.lshr(idx, _c(i)), _c(1))
                if a:
                    k_xor = e.xor(k_xor, e.mul(bit, _c(a)))
                if c:
                    coeffs = e.xor(coeffs, e.mul(bit, _c(c)))
    return k_xor, coeffs


def _c(v):
    return ir.Constant(I32, v)


def _select(b, k, values):
    """``values[k]`` for the i32 ``k`` in ``[0, len(values))`` (a power of two): a tree of selects on its bits,
    ``len - 1`` selects and one bit test per level."""
    bits = [b.icmp_unsigned("!=", b.and_(k, _c(1 << i)), _c(0)) for i in range(max(len(values) - 1, 0).bit_length())]
    return _select_bits(b, bits, values)


def _select_bits(b, bits, values):
    """``values[i]`` where ``i``'s bits are the i1 values ``bits``, lowest first."""
    level = list(values)
    for on in bits:
        level = [b.select(on, level[j + 1], level[j]) for j in range(0, len(level), 2)]
    return level[0]


__all__ = ["lower_gather"]
