"""``gather`` for any GPU: each thread reads, per result register, the source element its index names.

The result has the index's layout (convert-to-gir); the source may have any layout. Two ways, chosen by the
layouts alone (``gpu/layouts.py: gather_registers``, which allocate-shared asks too):

- the gathered axis lies entirely in each thread's registers (and is short): a chain of selects over the
  thread's own source registers, no shared memory;
- otherwise the source goes to shared memory in row-major order (vector stores where its registers allow), a
  barrier, and every thread loads each result element at its coordinate with the axis replaced by the index.

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
    picks = gather_registers(ll_of(s), ll_of(op.result.type), axis)
    if picks is not None:
        L.bind(op.result, [_select(b, k, [src[r] for r in row]) for k, row in zip(ks, picks)])
        return
    base = L._smem_base(op, "'gather' through shared memory")
    s_ll, d_ll = ll_of(s), ll_of(op.result.type)
    eb = memory_bytes(s.element)
    src_off = row_major_offsets(L, reg_coord_values(L, s_ll), s.shape)
    coords = [c[:axis] + (k,) + c[axis + 1:] for c, k in zip(reg_coord_values(L, d_ll), ks)]
    dst_off = row_major_offsets(L, coords, s.shape)
    vec = smem_vector_width(s_ll, s.shape, eb) if not s.element.is_ptr else 1
    L.bind(op.result, smem_shuffle(L, src, src_off, dst_off, memory_type(s.element), eb, base,
                                   lambda v: to_memory(b, s.element, v), lambda v: from_memory(b, s.element, v),
                                   vec, 1))


def _select(b, k, values):
    """``values[k]`` for the i32 ``k`` in ``[0, len(values))`` (a power of two): a tree of selects on its bits,
    ``len - 1`` selects and one bit test per level."""
    level, bit = list(values), 0
    while len(level) > 1:
        on = b.icmp_unsigned("!=", b.and_(k, ir.Constant(I32, 1 << bit)), ir.Constant(I32, 0))
        level = [b.select(on, level[j + 1], level[j]) for j in range(0, len(level), 2)]
        bit += 1
    return level[0]


__all__ = ["lower_gather"]
