"""Chunks whose masks are all on run unmasked code.

A masked load or store checks its mask chunk by chunk: the vector compare that makes the mask, a reduction of it
to one bit and a branch, per access. Most chunks of a masked tile are whole (only the last program's tail is
not), so a loop nest whose fused accesses are masked tests once per chunk, with a few scalar instructions, that
every mask of the chunk is on, and then runs a copy of the chunk's code in which those masks are known on: plain
vector loads and stores, no mask computed at all. The other chunks run the code as it was.

The scalar test exists for the masks kernels write to guard a tile's edge: ``offs < n`` (any of ``< <= > >=``,
either side) where ``offs`` is affine along the chunk (``pid * BLOCK + tl.arange(0, BLOCK)``, with casts and
broadcasts) and ``n`` is the same in every lane, masks that are the same in every lane (a row's test in a 2-d
tile), and ``&`` of such masks. An affine value is monotonic along the chunk unless its lanes wrap around, so its
first and last lanes decide the compare; the test also checks that the last lane is the first plus the step
times the width and that no wrap happened in between, so a chunk whose lanes wrap takes the masked code.
"""
from __future__ import annotations

from ...codegen import llvm_types as LT
from ...ir import ops as O
from .loops import nest
from .nodes import Lazy, Node, Point, ev

_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_ICMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def masks_of(nodes) -> list:
    """The distinct mask nodes of the loads among the lazy nodes ``nodes`` are computed from (buffers, already
    in memory, are not looked into), in a fixed order."""
    seen, found = set(), []

    def walk(n):
        if not isinstance(n, Lazy) or id(n) in seen:
            return
        seen.add(id(n))
        if isinstance(n.op, O.LoadOp) and isinstance(n.args[1], Node) and n.args[1] not in found:
            found.append(n.args[1])
        for a in n.args:
            walk(a)
    for n in nodes:
        walk(n)
    return found


def all_on(L, mask, pt: Point, w: int):
    """An i1 that is true only when every one of the ``w`` lanes of ``mask`` at ``pt`` is on, computed with
    scalar instructions; None when ``mask`` is not of a form this knows."""
    if not isinstance(mask, Node):
        return None
    b = L.b
    if mask.stride == 0:
        return ev(L, mask, pt, 1)
    if not isinstance(mask, Lazy):
        return None
    if isinstance(mask.op, O.AndOp):
        parts = [all_on(L, a, pt, w) for a in mask.args]
        return None if None in parts else b.and_(*parts)
    if isinstance(mask.op, O.CmpOp) and mask.op.attrs["predicate"] in _ICMP:
        return _compare_on(L, mask, pt, w)
    return None


def _compare_on(L, mask, pt, w):
    b = L.b
    x, y = mask.args
    pred = mask.op.attrs["predicate"]
    if not (isinstance(x, Node) and isinstance(y, Node)):
        return None
    if x.stride == 0 and y.stride not in (0, None):
        x, y, pred = y, x, _FLIP[pred]
    k, t = x.stride, x.type
    if y.stride != 0 or not isinstance(k, int) or k == 0 or not t.is_int or t.is_ptr or t.is_bool:
        return None
    bits = t.element.bits
    step = k * (w - 1)
    if abs(step) >= 2 ** (bits - 1):
        return None
    cmp = b.icmp_signed if t.is_signed else b.icmp_unsigned
    last_pt = Point(pt.shape, pt.idx[:-1] + [b.add(pt.idx[-1], LT.const(LT.I32, w - 1))])
    first, last, bound = ev(L, x, pt, 1), ev(L, x, last_pt, 1), ev(L, y, pt, 1)
    affine = b.icmp_unsigned("==", last, b.add(first, LT.const_of(t.element, step)))
    monotonic = cmp(">=" if k > 0 else "<=", last, first)
    ends = b.and_(cmp(_ICMP[pred], first, bound), cmp(_ICMP[pred], last, bound))
    return b.and_(ends, b.and_(affine, monotonic))


def chunks(L, shape, w, values, body, mask=None, op=None):
    """``nest`` over ``shape`` by ``w`` calling ``body(pt)`` per chunk; ``values`` are the nodes the body computes
    and ``mask`` the body's own (a store's). When the masks among them are of a form :func:`all_on` knows, each
    chunk tests them and runs a copy of the body whose point knows them on (``pt.on``), or else the body as it
    is. ``op``'s plan notes say how many masks each chunk tests."""
    masks = masks_of(values)
    tested = []
    if isinstance(mask, Node) and mask not in masks:
        masks.append(mask)

    def at(idx):
        known = []
        if w > 1 and masks:
            probe = Point(shape, idx)
            known = [(m, t) for m, t in ((m, all_on(L, m, probe, w)) for m in masks) if t is not None]
        if not known:
            return body(Point(shape, idx))
        cond = known[0][1]
        for _, t in known[1:]:
            cond = L.b.and_(cond, t)
        tested.append(len(known))
        fast = Point(shape, idx)
        fast.on = frozenset(m for m, _ in known)
        L.mem.two_way(cond, lambda: body(fast), lambda: body(Point(shape, idx)))
    nest(L.b, shape, w, at)
    if tested:
        L.note(op, f"chunks test {tested[0]} mask(s) at once: all on -> unmasked accesses")
