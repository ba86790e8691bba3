"""Lowering of data movement between layouts (convert_layout, broadcast, expand_dims, trans, reshape):
register renaming within a thread where the layouts allow, else a shuffle through the op's scratch array
``tile`` (``gpu/scratch.py``: the source tile; gir keeps broadcast and expand_dims within threads)."""
from __future__ import annotations

from ...gpu.layouts import LinearLayout, register_moves, reshape_coords, transpose_coords
from ...ir import ops as O
from .. import ops as G
from . import byte_operands
from .layouts import StagingBuffer, reg_coord_values, smem_shuffle
from .registry import lowers
from .scratch import scratch_of
from .types import from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of, num_regs


def _move(L, op, src_t, dst_t, fn, elem_t):
    """Registers of ``dst_t`` from ``src_t`` under coordinate map ``fn`` (dst coord -> src coord)."""
    vals = L.get(op.operands[0])
    s_ll, d_ll = ll_of(src_t), ll_of(dst_t)
    idx = register_moves(s_ll, d_ll, fn)
    if idx is not None:
        return [vals[i] for i in idx]
    eb = memory_bytes(elem_t)
    tile = scratch_of(L, op, f"'{op.name}' across threads").array("tile", eb)  # the source tile, staged whole
    # the map is linear over GF(2), so the destination registers' source coordinates form a linear layout
    mapped = LinearLayout(tuple(src_t.shape), tuple(tuple(fn(x)) for x in d_ll.reg),
                          tuple(tuple(fn(x)) for x in d_ll.lane), tuple(tuple(fn(x)) for x in d_ll.warp))
    buf = StagingBuffer(s_ll, mapped, tile.shape, eb, vector=not elem_t.is_ptr)
    src_off = buf.offsets(L, reg_coord_values(L, s_ll))
    dst_off = buf.offsets(L, reg_coord_values(L, mapped))
    store = None
    if isinstance(op, G.ConvertLayoutOp):  # the target may write matrix fragments whole (stmatrix)
        store = lambda mem: L.target.store_matrix_fragments(L, mem, s_ll, buf, tile.ptr, eb)  # noqa: E731
    return smem_shuffle(L, vals, src_off, dst_off, memory_type(elem_t), tile,
                        lambda v: to_memory(L.b, elem_t, v), lambda v: from_memory(L.b, elem_t, v),
                        buf.src_vec, buf.dst_vec, store)


@lowers(G.ConvertLayoutOp)
def lower_convert_layout(L, op):
    s, d = op.src.type, op.result.type
    if byte_operands.applies(s, d):  # an 8-bit accumulator becoming the next dot's A operand: lane shuffles
        return L.bind(op.result, byte_operands.exchange(L, s, d, L.get(op.src)))
    L.bind(op.result, _move(L, op, s, d, lambda c: c, s.element))


@lowers(O.BroadcastOp)
def lower_broadcast(L, op):
    s, d = op.src.type, op.result.type
    keep = [a == bb for a, bb in zip(s.shape, d.shape)]
    fn = lambda c: tuple(x if k else 0 for x, k in zip(c, keep))  # noqa: E731
    L.bind(op.result, _move(L, op, s, d, fn, s.element))


@lowers(O.ExpandDimsOp)
def lower_expand_dims(L, op):
    s, d = op.src.type, op.result.type
    ax = op.attrs["axis"]
    if not s.is_tile:
        L.bind(op.result, [L.get(op.src)] * num_regs(d))
        return
    fn = lambda c: tuple(c[:ax]) + tuple(c[ax + 1:])  # noqa: E731
    L.bind(op.result, _move(L, op, s, d, fn, s.element))


@lowers(O.TransOp)
def lower_trans(L, op):
    s, d = op.src.type, op.result.type
    L.bind(op.result, _move(L, op, s, d, transpose_coords(op.attrs["order"]), s.element))


@lowers(O.ReshapeOp)
def lower_reshape(L, op):
    s, d = op.src.type, op.result.type
    if not s.is_tile or not d.is_tile:
        v = L.get(op.src)
        L.bind(op.result, v[0] if isinstance(v, list) else [v] * num_regs(d))
        return
    L.bind(op.result, _move(L, op, s, d, reshape_coords(d.shape, s.shape), s.element))
