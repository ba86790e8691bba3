"""Lowering of reductions and scans: within a thread's registers, across lanes with warp shuffles, across
warps through shared memory (the op's scratch plan, ``gpu/scratch.py``: an array per operand of one slot per
warp)."""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import BackendError
from ...ir import ops as O
from ..scratch import operand_array
from .layouts import row_major_offsets, thread_part
from .registry import lowers
from .scratch import scratch_of
from .types import I1, I32, from_memory, memory_bytes, memory_type, to_memory
from .values import ll_of


@lowers(O.ReduceOp)
def lower_reduce(L, op):
    b = L.b
    body = op.regions[0].block
    src_t = op.operands[0].type
    ax = op.attrs["axis"]
    ll = ll_of(src_t)
    srcs = [L.get(o) for o in op.operands]
    groups: dict = {}
    for r, rc in enumerate(ll.reg_coords()):
        groups.setdefault(rc[:ax] + rc[ax + 1:], []).append(r)
    accs = {}
    for key, regs in groups.items():
        acc = [s[regs[0]] for s in srcs]
        for r in regs[1:]:
            acc = L._combine(body, acc, [s[r] for s in srcs])
        accs[key] = acc
    for i, basis in enumerate(ll.lane):
        if basis[ax]:
            for key in accs:
                other = [L.target.shuffle_xor(b, v, 1 << i) for v in accs[key]]
                accs[key] = L._combine(body, accs[key], other)
    warp_bits = [i for i, basis in enumerate(ll.warp) if basis[ax]]
    if warp_bits:
        accs = _reduce_warps(L, op, body, accs, warp_bits, ll, ax)
    if not op.results[0].type.is_tile:
        (only,) = accs.values()
        for r, v in zip(op.results, only):
            L.bind(r, v)
        return
    out_ll = ll_of(op.results[0].type)
    for k, r in enumerate(op.results):
        L.bind(r, [accs[rc][k] for rc in out_ll.reg_coords()])


@lowers(O.ScanOp)
def lower_scan(L, op):
    """Inclusive scan along ``axis``. The axis coordinate's bits split into low register bits, lane bits,
    warp bits and high register bits (blocked layouts); registers sharing the high bits form a *chunk*,
    contiguous in scan order across the CTA. Per chunk: a running combine over the thread's registers, a
    butterfly over the axis lane bits (each lane learns the total of the lanes before it), the warps'
    totals through shared memory; chunks then chain, each prefixed by the totals of the chunks before it."""
    b = L.b
    body = op.regions[0].block
    t = op.operands[0].type
    ax, rev = op.attrs["axis"], op.attrs.get("reverse", False)
    ll = ll_of(t)
    thread_axis = [bb[ax] for bb in ll.lane + ll.warp if bb[ax]]
    low_mask = (min(thread_axis) - 1) if thread_axis else (1 << 30) - 1
    for bb in ll.reg:
        if bb[ax] and any(bb[d] for d in range(ll.rank) if d != ax):
            raise BackendError("scan over a layout that mixes dimensions in one register bit")
        if bb[ax] and not (bb[ax] & low_mask) and thread_axis and bb[ax] < max(thread_axis):
            raise BackendError("scan over a layout whose registers interleave with its threads on the axis")
    srcs = [L.get(o) for o in op.operands]
    n = len(srcs)
    rc = ll.reg_coords()
    chunks: dict = {}
    for r, c in enumerate(rc):
        rest = c[:ax] + c[ax + 1:]
        chunks.setdefault((rest, c[ax] & ~low_mask), []).append(r)
    out = [[None] * ll.num_regs for _ in range(n)]
    totals, prefix, valid = {}, {}, {}
    for key, regs in chunks.items():
        run = None
        for r in sorted(regs, key=lambda r: rc[r][ax], reverse=rev):
            cur = [s_[r] for s_ in srcs]
            run = cur if run is None else L._combine(body, run, cur)
            for k in range(n):
                out[k][r] = run[k]
        totals[key], prefix[key], valid[key] = run, None, ir.Constant(I1, 0)
    for i, basis in enumerate(ll.lane):
        if not basis[ax]:
            continue
        upper = b.icmp_unsigned("!=", b.and_(L.lane, ir.Constant(I32, 1 << i)), ir.Constant(I32, 0))
        later = b.not_(upper) if rev else upper  # this lane comes after its partner in scan order
        for key in chunks:
            other = [L.target.shuffle_xor(b, v, 1 << i) for v in totals[key]]
            pre = prefix[key]
            if pre is None:
                prefix[key], valid[key] = other, later
            else:
                with_other = L._pick(valid[key], L._combine(body, other, pre), other)
                prefix[key] = L._pick(later, with_other, pre)
                valid[key] = b.or_(valid[key], later)
            totals[key] = L._pick(later, L._combine(body, other, totals[key]),
                                     L._combine(body, totals[key], other))
    warp_bits = [i for i, basis in enumerate(ll.warp) if basis[ax]]
    if warp_bits:
        _scan_warps(L, op, body, ll, ax, rev, chunks, totals, prefix, valid, warp_bits)
    for key, regs in chunks.items():
        if prefix[key] is None:
            continue
        for r in regs:
            cur = [out[k][r] for k in range(n)]
            comb = L._combine(body, prefix[key], cur)
            for k, v in enumerate(L._pick(valid[key], comb, cur)):
                out[k][r] = v
    # chain the chunks of each row: totals[key] is now the chunk's total over the whole CTA
    rows: dict = {}
    for key in chunks:
        rows.setdefault(key[0], []).append(key)
    for keys in rows.values():
        carry = None
        for key in sorted(keys, key=lambda k: k[1], reverse=rev):
            if carry is not None:
                for r in chunks[key]:
                    vals = L._combine(body, carry, [out[k][r] for k in range(n)])
                    for k in range(n):
                        out[k][r] = vals[k]
                carry = L._combine(body, carry, totals[key])
            else:
                carry = totals[key]
    for k, r in enumerate(op.results):
        L.bind(r, out[k])


def _scan_warps(L, op, body, ll, ax, rev, chunks, totals, prefix, valid, warp_bits):
    """Each warp publishes its per-chunk totals; each thread combines the totals of the warps before it
    into its prefix and of all warps into the chunk's total."""
    b = L.b
    arrays = _warp_arrays(L, op, "scan across warps", warp_bits)
    shape = op.operands[0].type.shape
    # a slot per chunk and row: the tile with the axis reduced to its chunks (scan_slot_shape)
    keys = list(chunks)
    tp = thread_part(L, ll)
    slot = arrays[0].shape[1:]  # the chunks' index along the axis: high // (axis extent of threads)
    per_chunk = shape[ax] // slot[ax]
    offs = []
    for rest, high in keys:
        full = list(rest[:ax]) + [high] + list(rest[ax:])
        coords = []
        for d in range(ll.rank):
            if d == ax:
                coords.append(ir.Constant(I32, full[d] // per_chunk))
            else:
                coords.append(b.add(tp[d], ir.Constant(I32, full[d])) if full[d] else tp[d])
        offs.append(row_major_offsets(L, [tuple(coords)], slot)[0])
    widx, nslots, load = _publish_per_warp(L, op, arrays, warp_bits, keys, offs, totals)
    order = range(nslots - 1, -1, -1) if rev else range(nslots)
    for key, off in zip(keys, offs):
        acc, acc_valid, whole = None, ir.Constant(I1, 0), None
        for j in order:
            before = b.icmp_unsigned(">" if rev else "<", ir.Constant(I32, j), widx)  # warp j precedes mine
            vals = load(j, off)
            whole = vals if whole is None else L._combine(body, whole, vals)
            if acc is None:
                acc = vals
            else:
                acc = L._pick(before, L._pick(acc_valid, L._combine(body, acc, vals), vals), acc)
            acc_valid = b.or_(acc_valid, before)
        totals[key] = whole
        pre = prefix[key]  # the warps' prefix comes before this warp's own lane prefix
        if pre is None:
            prefix[key], valid[key] = acc, acc_valid
        else:
            both = L._pick(acc_valid, L._combine(body, acc, pre), pre)
            prefix[key] = L._pick(valid[key], both, acc)
            valid[key] = b.or_(valid[key], acc_valid)


def _warp_arrays(L, op, what, warp_bits):
    """The plan's array per operand, [warp slot, *slot shape] each; the plan's slots are the warps along the
    axis."""
    types = [o.type.element for o in op.operands]
    scratch = scratch_of(L, op, what)
    arrays = [scratch.array(operand_array(k), memory_bytes(t)) for k, t in enumerate(types)]
    if arrays[0].shape[0] != 1 << len(warp_bits):
        raise BackendError(f"internal: {what}: {1 << len(warp_bits)} warps along the axis, a plan for "
                           f"{arrays[0].shape[0]}")
    return arrays


def _publish_per_warp(L, op, arrays, warp_bits, keys, offs, values):
    """Cross-warp exchange for reduce/scan: this warp stores ``values[key]`` (one value per operand) at
    ``offs[key]`` of its slot of each operand's array (``arrays``, from :func:`_warp_arrays`; warp index from
    ``warp_bits``), then a barrier. Returns (this warp's index, slot count, ``load(j, off)`` -> warp j's
    values)."""
    b = L.b
    widx = ir.Constant(I32, 0)
    for j, i in enumerate(warp_bits):
        bit = b.and_(b.lshr(L.warp, ir.Constant(I32, i)), ir.Constant(I32, 1))
        widx = b.or_(widx, b.shl(bit, ir.Constant(I32, j)))
    nslots = arrays[0].shape[0]
    m = arrays[0].numel // nslots
    types = [o.type.element for o in op.operands]
    for key, off in zip(keys, offs):
        slot = b.add(b.mul(widx, ir.Constant(I32, m)), off)
        for k, t in enumerate(types):
            b.store(to_memory(b, t, values[key][k]), arrays[k].ptr(slot))
    L.target.barrier(b)

    def load(j, off):
        slot = b.add(ir.Constant(I32, j * m), off)
        return [from_memory(b, t, b.load(arrays[k].ptr(slot), typ=memory_type(t))) for k, t in enumerate(types)]
    return widx, nslots, load


def _reduce_warps(L, op, body, accs, warp_bits, ll, ax):
    b = L.b
    arrays = _warp_arrays(L, op, "reduce across warps", warp_bits)
    out_shape = arrays[0].shape[1:]  # a slot: the result tile
    # result coordinates of each group (thread part + group constant), as offsets in the result shape
    sub_ll = ll.without_dim(ax)
    keys = list(accs)
    if out_shape:
        tp = thread_part(L, sub_ll)
        coords = [tuple(b.add(t, ir.Constant(I32, c)) if c else t for t, c in zip(tp, key)) for key in keys]
        offs = row_major_offsets(L, coords, out_shape)
    else:
        offs = [ir.Constant(I32, 0)]
    _, nslots, load = _publish_per_warp(L, op, arrays, warp_bits, keys, offs, accs)
    out = {}
    for key, off in zip(keys, offs):
        acc = None
        for j in range(nslots):
            vals = load(j, off)
            acc = vals if acc is None else L._combine(body, acc, vals)
        out[key] = acc
    return out
