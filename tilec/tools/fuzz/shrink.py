"""Shrink a failing fuzz kernel to a small one that still fails the same way.

Greedy and structural: each round proposes smaller variants (drop a statement, replace a loop or ``if`` by its
body, replace an expression by one of its operands, a variable or a constant of the same type, smaller sizes and
trip counts), keeps the first variant that is still valid (:func:`infer`) and still fails with the same signature,
and starts over; it stops when no variant fails or the budget is spent. A final pass removes statements whose
values are no longer used.
"""
from __future__ import annotations

import time

from .dtypes import Invalid, is_float
from .infer import infer
from .program import For, If, Assign, Kernel, Lit, Op, Var, all_slots, blocks, count_nodes, get, put, statements


def _valid(k: Kernel):
    try:
        return infer(k)
    except Invalid:
        return None


def _variants_statements(k: Kernel):
    """Drop one statement; replace a loop or branch by its body."""
    nblocks = len(list(blocks(k.body)))
    for bi in range(nblocks):
        n = len(list(blocks(k.body))[bi])
        for si in reversed(range(n)):
            c = k.copy()
            blk = list(blocks(c.body))[bi]
            s = blk[si]
            del blk[si]
            yield c
            if isinstance(s, For):
                c = k.copy()
                blk = list(blocks(c.body))[bi]
                loop = blk[si]
                pre = [Assign(loop.var, Lit(0) if loop.kind == "static_range" else Op("mul", [Var("pid"), Lit(0)]))]
                blk[si:si + 1] = pre + loop.body
                yield c
            elif isinstance(s, If):
                for branch in ("then", "orelse"):
                    c = k.copy()
                    blk = list(blocks(c.body))[bi]
                    blk[si:si + 1] = getattr(blk[si], branch)
                    yield c


def _constant(t):
    if t.dtype == "int1":
        return None
    v = 1.0 if is_float(t.dtype) else 1
    return Op("full", [], {"dtype": t.dtype, "value": v, "shape": t.shape})


def _variants_exprs(k: Kernel, info):
    """Replace one expression by an operand, by a constant tile of its type, or by the plainest variable of it."""
    n = len(all_slots(k))
    for i in range(n):
        base = all_slots(k)[i]
        e = get(base)
        t = info.types.get(id(e))
        if t is None or isinstance(e, (Var, Lit)):
            continue
        if isinstance(e, Op):
            for j, a in enumerate(e.args):
                at = info.types.get(id(a))
                if at is not None and (at.dtype, at.shape) == (t.dtype, t.shape):
                    c = k.copy()
                    slot = all_slots(c)[i]
                    put(slot, get(slot).args[j])
                    yield c
            if e.name == "full":
                continue
        const = _constant(t)
        if const is not None and not (isinstance(e, Op) and e.name in ("posdiv", "shamt")):
            c = k.copy()
            put(all_slots(c)[i], const)
            yield c


def _variants_sizes(k: Kernel):
    def with_(**kw):
        c = k.copy()
        for a, v in kw.items():
            setattr(c, a, v)
        return c
    if k.G > 1:
        yield with_(G=1, n0=min(k.n0, k.B0))
    for b0 in (k.B0 // 2, k.B0 // 4):
        if b0 >= 1:
            g = min(k.G, -(-k.n0 // b0))
            yield with_(B0=b0, B1=b0 if k.B1 == k.B0 and k.rank == 2 else k.B1, n0=min(k.n0, b0 * k.G), G=k.G,
                        n1=min(k.n1, b0) if k.B1 == k.B0 and k.rank == 2 else k.n1)
            yield with_(B0=b0, n0=min(k.n0, b0 * g), G=g)
    if k.rank == 2 and k.B1 > 1:
        yield with_(B1=k.B1 // 2, n1=min(k.n1, k.B1 // 2))
    for n0 in (1, k.n0 // 2, k.n0 - 1):
        if 1 <= n0 < k.n0 and n0 > (k.G - 1) * k.B0:
            yield with_(n0=n0)
    if k.rank == 2:
        for n1 in (1, k.n1 // 2, k.n1 - 1):
            if 1 <= n1 < k.n1:
                yield with_(n1=n1)
    for s0 in (0, 1, k.s0 - 1):
        if 0 <= s0 < k.s0:
            yield with_(s0=s0)
    for idx, s in enumerate(statements(k.body)):
        if isinstance(s, For) and isinstance(s.trip, int) and s.trip > 0:
            for trip in (0, 1, s.trip - 1):
                if trip < s.trip:
                    c = k.copy()
                    list(statements(c.body))[idx].trip = trip
                    yield c
        if isinstance(s, For) and s.trip == "s0" and s.kind != "static_range":
            c = k.copy()
            list(statements(c.body))[idx].trip = max(0, min(k.s0, 1))
            yield c
    if k.f0 not in (0.0, 1.0):
        yield with_(f0=1.0)


def _variants_inputs(k: Kernel):
    """Simpler input types (float32 / int32)."""
    for p, dt in k.inputs.items():
        for simpler in ("float32", "int32"):
            if dt != simpler and is_float(dt) == (simpler == "float32"):
                c = k.copy()
                c.inputs[p] = simpler
                yield c


def candidates(k: Kernel):
    info = _valid(k)
    if info is None:
        return
    yield from _variants_statements(k)
    yield from _variants_sizes(k)
    yield from _variants_exprs(k, info)
    yield from _variants_inputs(k)


def shrink(k: Kernel, still_fails, budget_s: float = 300.0, log=None) -> Kernel:
    """The smallest variant of ``k`` found for which ``still_fails(variant)`` holds (``k`` must fail)."""
    deadline = time.monotonic() + budget_s
    tried = 0
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for c in candidates(k):
            if time.monotonic() >= deadline:
                break
            if _valid(c) is None:
                continue
            tried += 1
            if still_fails(c):
                if log:
                    log(f"shrink: {count_nodes(k)} -> {count_nodes(c)} nodes")
                k = c
                progress = True
                break
    if log:
        log(f"shrink: {tried} variants tried, {count_nodes(k)} nodes left")
    return k

