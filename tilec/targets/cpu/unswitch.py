"""Rows whose masks are all on run unmasked code.

A masked load or store checks its mask chunk by chunk: the vector compare that makes the mask, a reduction of it
to one bit and a branch, per access. Most rows of a masked tile are whole (only the last program's tail, or an
edge tile's, is not), so a loop nest whose fused accesses are masked tests once per row (the innermost
dimension; a 1-d tile is one row), with a few scalar instructions, that every mask is on in all the row's lanes,
and then runs a copy of the row's loop in which those masks are known on: plain vector loads and stores, no mask
computed at all, a loop LLVM unrolls. The other rows run the code as it was, except that a store's chunks whose
mask the same scalar test finds all off are skipped (a last program's tail is mostly such chunks, and masked
stores cost even with no lane on).

The scalar test exists for the masks kernels write to guard a tile's edge: ``offs < n`` (any of ``< <= > >=``,
either side) where ``offs`` is affine along the row (``pid * BLOCK + tl.arange(0, BLOCK)``, with casts and
broadcasts) and ``n`` is the same in every lane, masks that are the same in every lane (a row's test in a 2-d
tile), and ``&`` of such masks. An affine value is monotonic along the row unless its lanes wrap around, so its
first and last lanes decide the compare; the test also checks that the last lane is the first plus the step
times the width and that no wrap happened in between, so a row whose lanes wrap takes the masked code.
"""
from __future__ import annotations

from ...codegen import llvm_types as LT
from ...ir import ops as O
from .loops import counted_loop, nest
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


def none_on(L, mask, pt: Point, w: int):
    """An i1 that is true only when no lane of the ``w`` lanes of ``mask`` at ``pt`` is on (scalar instructions,
    as :func:`all_on`); None when ``mask`` is not of a form this knows."""
    if not isinstance(mask, Node):
        return None
    b = L.b
    if mask.stride == 0:
        return b.not_(ev(L, mask, pt, 1))
    if not isinstance(mask, Lazy):
        return None
    if isinstance(mask.op, O.AndOp):  # off wherever one side is off
        parts = [t for t in (none_on(L, a, pt, w) for a in mask.args) if t is not None]
        return b.or_(*parts) if len(parts) == 2 else parts[0] if parts else None
    if isinstance(mask.op, O.CmpOp) and mask.op.attrs["predicate"] in _ICMP:
        return _compare_on(L, mask, pt, w, off=True)
    return None


def _compare_on(L, mask, pt, w, off=False):
    """All lanes on (``off``: all off). The lanes on in an affine compare that does not wrap are a prefix or a
    suffix of the row, so its two ends decide both."""
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
    if off:
        ends = b.and_(b.not_(cmp(_ICMP[pred], first, bound)), b.not_(cmp(_ICMP[pred], last, bound)))
    else:
        ends = b.and_(cmp(_ICMP[pred], first, bound), cmp(_ICMP[pred], last, bound))
    return b.and_(ends, b.and_(affine, monotonic))


def chunks(L, shape, w, values, body, mask=None, op=None):
    """``nest`` over ``shape`` by ``w`` calling ``body(pt)`` per chunk; ``values`` are the nodes the body computes
    and ``mask`` the body's own (a store's). When the masks among them are of a form :func:`all_on` knows, each
    row (the innermost dimension, all of a 1-d tile) tests them once, for all its lanes, and runs a loop of the
    body whose points know them on (``pt.on``: no mask is computed, accesses are plain), or else the loop as it
    is (each access checks its chunk). ``op``'s plan notes say how many masks a row tests."""
    masks = masks_of(values)
    if isinstance(mask, Node) and mask not in masks:
        masks.append(mask)
    last = len(shape) - 1
    if w == 1 or not masks:
        return nest(L.b, shape, w, lambda idx: body(Point(shape, idx)))
    tested = []

    def loop(idx, on):
        def chunk(iv, _):
            pt = Point(shape, idx[:-1] + [iv])
            pt.on = on
            # a masked row's chunks whose store mask is all off (most of a last program's tail) store nothing:
            # skipped whole, as masked stores cost even with no lane on
            empty = none_on(L, mask, pt, w) if mask is not None and not on else None
            if empty is None:
                body(pt)
            else:
                with L.b.if_then(L.b.not_(empty)):
                    body(pt)
            return []
        counted_loop(L.b, shape[-1], w, [], chunk, name=f"d{last}")

    def row(idx):
        probe = Point(shape, idx)
        known = [(m, t) for m, t in ((m, all_on(L, m, probe, shape[-1])) for m in masks) if t is not None]
        if not known:
            return loop(idx, frozenset())
        cond = known[0][1]
        for _, t in known[1:]:
            cond = L.b.and_(cond, t)
        tested.append(len(known))
        on = frozenset(m for m, _ in known)
        L.mem.two_way(cond, lambda: loop(idx, on), lambda: loop(idx, frozenset()))
    nest(L.b, shape, w, row, dims=list(range(last)))
    if tested:
        L.note(op, f"rows test {tested[0]} mask(s) at once: all on -> unmasked accesses")
