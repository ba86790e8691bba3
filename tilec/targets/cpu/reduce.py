"""``reduce`` and ``scan`` as loops over the reduced axis with the combine region emitted on vectors.

Reducing a non-innermost axis keeps the innermost dimension in vector lanes, so each step is one vector
combine and no horizontal work is needed. Reducing the innermost axis accumulates ``w``-lane vectors and then
folds the lanes in halves (log2(w) combines). Scans walk their axis sequentially, vectorised across the
innermost dimension when that is not the scanned one.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import llvm_types as LT
from .loops import counted_loop, nest, pick_width
from .nodes import Point, ev
from .regions import combine
from ...ir import ops as O
from .registry import lowers


def _insert(idx, axis, k):
    j = list(idx)
    j.insert(axis, k)
    return j


def _halve(b, v, lo):
    w = LT.width_of(v.type) // 2
    mask = ir.Constant(ir.VectorType(LT.I32, w), [LT.const(LT.I32, k + (0 if lo else w)) for k in range(w)])
    r = b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), mask)
    return r if w > 1 else b.extract_element(r, LT.const(LT.I32, 0))


@lowers(O.ReduceOp)
def op_reduce(L, op):
    b = L.b
    srcs = [L.get(v) for v in op.operands]
    axis = op.attrs["axis"]
    S = op.operands[0].type.shape
    n = S[axis]
    last = len(S) - 1
    region = op.regions[0].block
    R = S[:axis] + S[axis + 1:]
    bufs = [L.alloc(r.type) for r in op.results] if R else None
    k_step = 1
    if axis != last:
        w = pick_width(S[-1])
        outer_w = w
    else:
        w = pick_width(n)
        outer_w = 1
        k_step = w

    def at(idx_r, k):
        pt = Point(S, _insert(idx_r, axis, k))
        return [ev(L, s, pt, w) for s in srcs]

    out = {}
    L.note(op, f"reduce axis {axis}: {'vector x' + str(w) if w > 1 else 'scalar'} accumulators"
               + (", lane folding" if axis == last and w > 1 else "")
               + (f" -> buffer {bufs[0].where}" if bufs else " -> scalar"))

    def chains(idx_r, steps, u):
        """``u`` independent accumulator chains over the reduced axis, folded pairwise at the end."""
        nv = len(srcs)
        first = [at(idx_r, LT.const(LT.I32, j * k_step)) for j in range(u)]

        def step(iv, flat):
            base = b.mul(b.add(iv, LT.const(LT.I32, 1)), LT.const(LT.I32, u * k_step))
            out = []
            for j in range(u):
                k = b.add(base, LT.const(LT.I32, j * k_step)) if j else base
                out += combine(L, region, flat[j * nv:(j + 1) * nv] + at(idx_r, k), w)
            return out
        flat = sum(first, [])
        if steps > u:
            flat = counted_loop(b, steps // u - 1, 1, flat, step, name="red")
        parts = [flat[j * nv:(j + 1) * nv] for j in range(u)]
        while len(parts) > 1:
            parts = [combine(L, region, parts[j] + parts[j + 1], w) for j in range(0, len(parts), 2)]
        return parts[0]

    def body(idx_r):
        steps = n // k_step
        if axis == last and steps >= 8 and steps % 4 == 0:
            accs = chains(idx_r, steps, 4)   # breaks the loop-carried dependency of one long chain
        else:
            accs = chains(idx_r, steps, 1)
        if axis == last:
            while LT.width_of(accs[0].type) > 1:
                lo = [_halve(b, a, True) for a in accs]
                hi = [_halve(b, a, False) for a in accs]
                accs = combine(L, region, lo + hi, LT.width_of(lo[0].type))
        if bufs is None:
            out["scalars"] = accs
        else:
            for buf, a in zip(bufs, accs):
                buf.store(L, idx_r, a, outer_w)

    nest(b, R, outer_w, body) if R else body([])
    for i, r in enumerate(op.results):
        L.vals[r] = bufs[i] if bufs is not None else out["scalars"][i]


@lowers(O.ScanOp)
def op_scan(L, op):
    b = L.b
    srcs = [L.get(v) for v in op.operands]
    axis, reverse = op.attrs["axis"], op.attrs.get("reverse", False)
    S = op.operands[0].type.shape
    n = S[axis]
    last = len(S) - 1
    region = op.regions[0].block
    bufs = [L.alloc(r.type) for r in op.results]
    w = pick_width(S[-1]) if axis != last else 1
    R = S[:axis] + S[axis + 1:]

    L.note(op, f"scan axis {axis}: sequential, {'vector x' + str(w) if w > 1 else 'scalar'} -> "
               f"buffer {bufs[0].where}")

    def k_of(j):
        return b.sub(LT.const(LT.I32, n - 1), j) if reverse else j

    def step(idx_r, j, accs):
        k = k_of(j)
        idx = _insert(idx_r, axis, k)
        xs = [ev(L, s, Point(S, idx), w) for s in srcs]
        accs = xs if accs is None else combine(L, region, accs + xs, w)
        for buf, a in zip(bufs, accs):
            buf.store(L, idx, a, w)
        return accs

    def body(idx_r):
        accs = step(idx_r, LT.const(LT.I32, 0), None)
        if n > 1:
            counted_loop(b, n - 1, 1, accs, lambda iv, a: step(idx_r, b.add(iv, LT.const(LT.I32, 1)), a),
                         name="scan")

    nest(b, R, w, body) if R else body([])
    for buf, r in zip(bufs, op.results):
        L.vals[r] = buf
