"""Debug builds only: bounds-check every load, store and atomic (and every gather's indices), and turn
``device_assert`` into a failure record.

Without these checks a bad offset corrupts memory or crashes the process with no location, and a failed assert
on a GPU must trap, which leaves the CUDA context unusable. Here, in plain tir ops that every backend already
lowers, each memory access computes the byte offset of every lane from each kernel argument its pointer may come
from (``pointer_origins``) and compares it with that argument's extent, passed in hidden parameters. Lanes out of
bounds are masked off (a load gives ``other``, a store or atomic does nothing; a compare-and-swap is redirected to
a scratch word), so the kernel runs to its end without touching foreign memory. At the end of the access's block
the program records the first failure in a small ``i64`` buffer, also a hidden parameter::

    rec[0] = site + 1 (compare-and-swap from 0: the first failing program wins; the others only count)
    rec[1..3] = program id, rec[4] = the smallest offending offset (elements; a gather: the smallest bad index)
    rec[5] += 1 per failing (program, access) pair
    rec[8] = scratch for redirected compare-and-swaps

Hidden parameters are appended after the kernel's own: the record pointer, then ``lo, hi`` (bytes from the data
pointer that the argument's memory spans) per pointer parameter. ``targets/debug_record.py`` passes them and turns
the record into tilec's error, naming the access's file:line, the program, the offset and the array's size.
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.core import Block, OpResult, Region
from ..ir.types import FunctionType, PointerType, ScalarType, i1, i32, i64
from .base import Pass
from .pointer_origins import origins
from .expand_descriptors import expand

RECORD_WORDS = 16
SCRATCH_WORD = 8
_NONE = 2 ** 63 - 1  # "no failing lane" in the min-reduction of offending offsets

_KIND = {O.LoadOp: "load", O.StoreOp: "store", O.AtomicRMWOp: "atomic", O.AtomicCASOp: "atomic_cas",
         O.AssertOp: "assert"}


def _elem_bytes(ptr_type) -> int:
    e = ptr_type.element.pointee
    return 8 if e.is_ptr else max(1, e.bits // 8)


class DebugChecks(Pass):
    """Bounds checks and assert records (see the module docstring); ``sites`` lists what each site id means."""
    name = "debug-checks"

    def __init__(self):
        self.sites: list[dict] = []
        self.pointer_params: list[int] = []
        self._pending: dict = {}

    def run(self, module):
        # tensor descriptor accesses become the pointer accesses they mean, so they are checked like any other
        # (a descriptor may describe more than its array holds); debug builds give up the copy engine for it
        for op in [o for o in module.walk() if isinstance(o, (O.DescriptorLoadOp, O.DescriptorStoreOp))]:
            expand(op)
        for f in module.funcs:
            if f.attrs.get("kernel"):
                self._kernel(f)
        return True

    # -- hidden parameters ---------------------------------------------------------------------------------
    def _kernel(self, f):
        body = f.body
        n = len(f.args)
        self.pointer_params = [i for i, a in enumerate(f.args) if a.type.is_ptr]
        rec = body.add_arg(PointerType(i64), "debug_record")
        extents = {}
        for i in self.pointer_params:
            extents[i] = (body.add_arg(i64, f"{f.args[i].name_hint or i}_lo"),
                          body.add_arg(i64, f"{f.args[i].name_hint or i}_hi"))
        f.attrs["function_type"] = FunctionType([a.type for a in body.args], f.function_type.results)
        div = f.attrs.get("arg_divisibility")
        if div is not None:
            f.attrs["arg_divisibility"] = tuple(div) + (1,) * (len(body.args) - n)
        names = [a.name_hint or f"argument {i}" for i, a in enumerate(f.args[:n])]
        for op in list(f.walk()):
            if isinstance(op, O.AssertOp):
                self._assert(f, op, rec)
            elif isinstance(op, O.GatherOp):
                self._gather(op, rec)
            elif type(op) in _KIND:
                cands = sorted(set(origins(op.ptr, f)) & set(self.pointer_params))
                if cands:
                    self._access(f, op, rec, extents, cands, names)
        self._flush(rec)

    # -- one access ---------------------------------------------------------------------------------------
    def _site(self, op, kind, **extra) -> int:
        loc = op.loc
        self.sites.append(dict(kind=kind, file=getattr(loc, "file", None), line=getattr(loc, "line", None),
                               col=getattr(loc, "col", None), **extra))
        return len(self.sites)  # stored as site + 1: 0 means "no failure"

    def _access(self, f, op, rec, extents, cands, names):
        b = Builder()
        b.set_insertion_point_before(op)
        b.loc = op.loc
        P = op.ptr
        T = P.type
        eb = _elem_bytes(T)
        c64 = (lambda v: b.constant(v, i64))
        wide = (lambda v: b.op(O.SplatOp, v, result_type=T.with_element(v.type)) if T.is_tile else v)
        split = _split(P)
        ok = None
        for j in cands:
            base = b.op(O.CastOp, f.args[j], result_type=i64)
            lo, hi = extents[j]
            if split is not None:
                ok_j = self._offsets_in_bounds(b, split, base, lo, hi, eb)
            else:  # one unsigned compare per lane: 0 <= addr - (base + lo) <= hi - lo - eb
                addr = b.op(O.CastOp, P, result_type=T.with_element(i64))
                u64 = T.with_element(ScalarType("u64"))
                start = b.op(O.AddOp, base, lo)
                span = b.op(O.BitcastOp, b.op(O.SubOp, b.op(O.SubOp, hi, lo), c64(eb)), result_type=u64.element)
                rel = b.op(O.BitcastOp, b.op(O.SubOp, addr, wide(start)), result_type=u64)
                ok_j = b.op(O.CmpOp, rel, wide(span), predicate="le")
            ok = ok_j if ok is None else b.op(O.OrOp, ok, ok_j)
        first_base = b.op(O.CastOp, f.args[cands[0]], result_type=i64)
        mask = getattr(op, "mask", None)
        if mask is not None:
            safe = b.op(O.AndOp, ok, mask)
            bad = b.op(O.XorOp, safe, mask)  # active and not in bounds
            op.set_operand(_mask_index(op), safe)
        else:
            bad = b.op(O.XorOp, ok, wide(b.constant(True, i1)))
            if isinstance(op, O.AtomicCASOp):  # no mask: bad lanes swap a scratch word instead
                scratch = b.op(O.AddPtrOp, rec, b.constant(SCRATCH_WORD, i32))
                scratch = b.op(O.CastOp, scratch, result_type=T.element)
                op.set_operand(0, b.op(O.SelectOp, ok, P, wide(scratch)))
            else:
                op._append_operand(ok)
        j = cands[0]
        site = self._site(op, _KIND[type(op)], param=names[j], param_index=j, elem_bytes=eb,
                          candidates=[names[c] for c in cands])
        self._record(b, rec, bad, (P, first_base), site, eb)

    @staticmethod
    def _offsets_in_bounds(b, split, base, lo, hi, eb):
        """``S + off`` in bounds, compared on the offsets themselves: ``off`` in ``[ceil((base + lo - S) / eb),
        floor((base + hi - eb - S) / eb)]``, bounds computed once on scalars (and clamped to an i32 ``off``'s
        range), so each lane costs two compares of its own width instead of 64-bit address arithmetic."""
        S, off = split
        s = b.op(O.CastOp, S, result_type=i64)
        shift = b.constant(eb.bit_length() - 1, i64)  # element sizes are powers of two: >> is floor division
        low = b.op(O.SubOp, b.op(O.AddOp, base, lo), s)
        high = b.op(O.SubOp, b.op(O.SubOp, b.op(O.AddOp, base, hi), b.constant(eb, i64)), s)
        zero = b.constant(0, i64)
        first = b.op(O.SubOp, zero, b.op(O.ShrOp, b.op(O.SubOp, zero, low), shift))  # ceil
        last = b.op(O.ShrOp, high, shift)  # floor
        et = off.type.element
        if et == i32:
            clamp = (lambda v: b.op(O.CastOp, b.op(O.MinOp, b.op(O.MaxOp, v, b.constant(-2 ** 31, i64)),
                                                   b.constant(2 ** 31 - 1, i64)), result_type=i32))
            first, last = clamp(first), clamp(last)
        t = off.type
        return b.op(O.AndOp, b.op(O.CmpOp, off, b.op(O.SplatOp, first, result_type=t), predicate="ge"),
                    b.op(O.CmpOp, off, b.op(O.SplatOp, last, result_type=t), predicate="le"))

    def _assert(self, f, op, rec):
        b = Builder()
        b.set_insertion_point_before(op)
        b.loc = op.loc
        cond = op.cond
        T = cond.type
        bad = b.op(O.XorOp, cond, b.op(O.SplatOp, b.constant(True, i1), result_type=T) if T.is_tile
                   else b.constant(True, i1))
        zero = b.constant(0, i64)
        zeros = b.op(O.SplatOp, zero, result_type=T.with_element(i64)) if T.is_tile else zero
        site = self._site(op, "assert", message=op.attrs.get("message", ""))
        self._record(b, rec, bad, zeros, site)
        op.erase()

    def _gather(self, op, rec):
        """A gather index outside its axis (which the op itself would wrap): the smallest one is recorded."""
        b = Builder()
        b.set_insertion_point_before(op)
        b.loc = op.loc
        T = op.index.type
        axis = op.attrs["axis"]
        n = op.src.type.shape[axis]
        k = b.op(O.CastOp, op.index, result_type=T.with_element(i64)) if T.element != i64 else op.index
        u64 = T.with_element(ScalarType("u64"))
        limit = b.op(O.SplatOp, b.constant(n, ScalarType("u64")), result_type=u64)
        bad = b.op(O.CmpOp, b.op(O.BitcastOp, k, result_type=u64), limit, predicate="ge")  # negatives too
        site = self._site(op, "gather", size=n, axis=axis)
        self._record(b, rec, bad, k, site)

    def _record(self, b, rec, bad, off, site, eb=1):
        """Queue the failure record of one access (or assert) for the end of its block (see :meth:`_flush`)."""
        block = b.block
        self._pending.setdefault(id(block), (block, []))[1].append((bad, off, site, eb))

    def _flush(self, rec):
        """Emit the queued records at the end of each block. Accesses then stay next to each other, so a backend
        can still fuse a load with the store that follows it (a record's stores in between would prevent it), and
        the failure flags of a block's accesses of one shape are reduced together: the common path costs one i32
        max-reduction per block and shape; only once a lane has failed is each access looked at alone."""
        b = Builder()
        for block, items in self._pending.values():
            term = block.terminator
            if term is not None:
                b.set_insertion_point_before(term)
            else:
                b.set_insertion_point_to_end(block)
            groups: dict = {}
            for item in items:
                groups.setdefault(item[0].type, []).append(item)
            for t, group in groups.items():
                if len(group) == 1 or not t.is_tile:
                    for item in group:
                        self._emit(b, rec, *item)
                    continue
                combined = group[0][0]
                for item in group[1:]:
                    combined = b.op(O.OrOp, combined, item[0])
                branch = b.if_(_any(b, combined))
                with b.at_end(branch.regions[0].block):
                    for item in group:
                        self._emit(b, rec, *item)
                    b.yield_()
                with b.at_end(branch.regions[1].block):
                    b.yield_()
        self._pending = {}

    def _emit(self, b, rec, bad, off, site, eb):
        """``if any(bad)``: claim the record (first failure wins), write program id and the smallest bad offset."""
        branch = b.if_(_any(b, bad))
        with b.at_end(branch.regions[0].block):
            T = bad.type
            if isinstance(off, tuple):  # (pointer, base): the offset in elements, computed only here
                ptr, base = off
                addr = b.op(O.CastOp, ptr, result_type=ptr.type.with_element(i64))
                wide = (lambda v: b.op(O.SplatOp, v, result_type=addr.type) if addr.type.is_tile else v)
                off = b.op(O.DivOp, b.op(O.SubOp, addr, wide(base)), wide(b.constant(eb, i64)))
            picked = off
            if T.is_tile:
                none = b.op(O.SplatOp, b.constant(_NONE, i64), result_type=T.with_element(i64))
                picked = b.op(O.SelectOp, bad, off, none)
                while picked.type.is_tile:
                    picked = _reduce(b, picked, O.MinOp)
            old = b.create(O.AtomicCASOp, [rec, b.constant(0, i64), b.constant(site, i64)]).result
            won = b.op(O.CmpOp, old, b.constant(0, i64), predicate="eq")
            values = [b.op(O.CastOp, b.op(O.ProgramIdOp, axis=a), result_type=i64) for a in range(3)] + [picked]
            for k, v in enumerate(values, 1):
                b.create(O.StoreOp, [b.op(O.AddPtrOp, rec, b.constant(k, i32)), v, won], [])
            b.create(O.AtomicRMWOp, [b.op(O.AddPtrOp, rec, b.constant(5, i32)), b.constant(1, i64)],
                     attrs={"kind": "add"})  # result unused
            b.yield_()
        with b.at_end(branch.regions[1].block):
            b.yield_()


def _any(b, bad):
    """Scalar i1: some lane of ``bad`` is set (an i32 max-reduction: the one every backend runs most)."""
    if not bad.type.is_tile:
        return bad
    it = bad.type.with_element(i32)
    flags = b.op(O.SelectOp, bad, b.op(O.SplatOp, b.constant(1, i32), result_type=it),
                 b.op(O.SplatOp, b.constant(0, i32), result_type=it))
    while flags.type.is_tile:
        flags = _reduce(b, flags, O.MaxOp)
    return b.op(O.CmpOp, flags, b.constant(0, i32), predicate="ne")


def _split(P):
    """``(S, off)`` when the pointer tile ``P`` is ``addptr(X, off)`` with ``X`` a splat (maybe broadcast) of the
    scalar pointer ``S`` and ``off`` an i32/i64 tile (Triton's ``ptr + offsets``); else None."""
    if not P.type.is_tile or not isinstance(P, OpResult) or not isinstance(P.op, O.AddPtrOp):
        return None
    X, off = P.op.ptr, P.op.offset
    while isinstance(X, OpResult) and isinstance(X.op, (O.BroadcastOp, O.ExpandDimsOp, O.ReshapeOp)):
        X = X.op.operands[0]
    if not (isinstance(X, OpResult) and isinstance(X.op, O.SplatOp)) or off.type.element not in (i32, i64):
        return None
    return X.op.operands[0], off


def _reduce(b, v, combine):
    """``v`` reduced along axis 0 with the binary op ``combine``."""
    e = v.type.element
    red = b.create(O.ReduceOp, [v], attrs={"axis": 0}, regions=[Region([Block([e, e])])])
    blk = red.regions[0].block
    with b.at_end(blk):
        b.yield_(b.op(combine, blk.args[0], blk.args[1]))
    return red.results[0]


def _mask_index(op) -> int:
    """Position of the mask operand (``ptr, mask?, other?`` for loads; ``ptr, value, mask?`` otherwise)."""
    return 1 if isinstance(op, O.LoadOp) else 2
