"""The interpreter's bounds checks in debug builds: each pointer value carries the arguments it was derived from
(its *origins*), and every load, store and atomic checks its active lanes against those arguments' extents;
every gather checks its indices against the size of the gathered axis (outside debug builds they wrap).

Without debug the interpreter already refuses addresses outside every array passed to the kernel, but an offset
that runs from one argument into another is silently accepted; compiled debug builds check against the pointer's
own array (``passes/debug_checks.py``), so the interpreter does the same and reports alike: the kind of access,
the smallest offending offset in elements, the parameter and its size (the launch adds file:line and program).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import BoundsError
from ..ir.memory import elem_bytes
from ..ir import ops as O

# ops whose pointer result points into the same arrays as their first pointer operand (and those that say they
# forward their operand's value, such as a layout conversion)
_SAME = (O.AddPtrOp, O.SplatOp, O.BroadcastOp, O.ExpandDimsOp, O.ReshapeOp, O.TransOp, O.HintOp, O.CastOp,
         O.GatherOp)
# access op class -> (the kind of access reported, the index of its mask operand)
_ACCESS = {O.LoadOp: ("load", 1), O.StoreOp: ("store", 2), O.AtomicRMWOp: ("atomic", 2),
           O.AtomicCASOp: ("atomic_cas", None)}


class Origin(NamedTuple):
    param: str
    address: int
    lo: int   # bytes from ``address`` the argument spans: [address + lo, address + hi)
    hi: int


def propagate(op_class, operands) -> tuple | None:
    """The origins of a pointer result of an ``op_class`` op (None: unknown, e.g. a pointer loaded from
    memory)."""
    if op_class is O.SelectOp:
        a, b = (getattr(o, "origin", None) for o in operands[1:3])
        if a is None or b is None:
            return None
        return a + tuple(o for o in b if o not in a)
    if (issubclass(op_class, _SAME) or "forwards_value" in op_class.traits) and operands:
        return getattr(operands[0], "origin", None)
    return None


def check(op_class, operands, attrs=None):
    """Raise :class:`BoundsError` (without location: the launch adds it) when an active lane of the access is
    outside every array its pointer may come from, or a gather index is outside its axis."""
    if op_class is O.GatherOp:
        return _check_gather(operands, attrs["axis"])
    kind, mask_at = _ACCESS.get(op_class, (None, None))
    if kind is None or not operands:
        return
    ptr = operands[0]
    origins = getattr(ptr, "origin", None)
    if not origins:
        return
    eb = elem_bytes(ptr.type.element.pointee)
    addrs = np.asarray(ptr.v, dtype=np.uint64).astype(np.int64)
    ok = np.zeros(addrs.shape, bool)
    for o in origins:
        off = addrs - np.int64(o.address)
        ok |= (off >= o.lo) & (off <= o.hi - eb)
    mask = operands[mask_at] if mask_at is not None and len(operands) > mask_at else None
    bad = ~ok if mask is None else (~ok & np.asarray(mask.v, bool))
    if not bad.any():
        return
    first = origins[0]
    offset = int(((addrs - np.int64(first.address))[bad] // eb).min())
    size = (first.hi - max(first.lo, 0)) // eb
    into = (f"'{first.param}'" if len(origins) == 1 else
            f"'{first.param}' (it may point into any of {', '.join(repr(o.param) for o in origins)})")
    e = BoundsError(f"out-of-bounds {kind}: offset {offset} of {into}, an array of {size} "
                    f"element{'s' if size != 1 else ''}")
    e.kind, e.detail = kind, f"offset {offset} of {into}, an array of {size} element{'s' if size != 1 else ''}"
    raise e


def _check_gather(operands, axis: int):
    """Indices outside ``[0, n)``: the smallest one is reported, as compiled debug builds report it."""
    src, index = operands
    n = np.shape(src.v)[axis]
    idx = np.asarray(index.v)
    bad = idx >= n if idx.dtype.kind == "u" else (idx < 0) | (idx >= n)
    if not bad.any():
        return
    detail = O.GatherOp.bad_index_text(int(idx[bad].min()), n, axis)
    e = BoundsError(f"out-of-bounds gather: {detail}")
    e.kind, e.detail = "gather", detail
    raise e
