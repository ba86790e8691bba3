"""Loads, stores and atomics at a loop-nest point.

Pointer tiles that are contiguous along the innermost dimension (stride 1) become plain vector loads/stores, or
``llvm.masked.load/store`` under a mask; pointer tiles of unknown stride check at run time whether their lanes
happen to be consecutive (then the same vector access) and otherwise gather/scatter; width-1 accesses under a
mask branch around the access so masked-off addresses are never touched. Atomics are always emitted lane by
lane (an LLVM ``atomicrmw``/``cmpxchg`` per element), which is what makes them correct across worker threads.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import atomics, casts, llvm_types as LT
from ...codegen.driver import host_vector_bytes
from ...codegen.blocks import guarded, merged
from ...codegen.intrinsics import call as icall
from .nodes import ev, from_memory, splat, to_memory

_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel",
          "seq_cst": "seq_cst", "": "acq_rel"}
_FAIL = {"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire",
         "seq_cst": "seq_cst"}


def lone_lane_stores() -> bool:
    """Whether masked stores of narrow integers take a scalar store for a lone lane (:meth:`Mem.masked_store`):
    on hosts with AVX-512, whose truncating masked stores LLVM 22 scalarises wrongly."""
    return host_vector_bytes() >= 64


def _bf16_rmw(b, op, p, v, t, sem):
    """A bf16 float atomic on its 16-bit code: a compare-and-swap loop doing the arithmetic in f32 with integer
    conversions (LLVM's own bf16 atomics call ``__truncsfbf2``, which the in-process JIT cannot resolve)."""
    x = casts.widen_to_f32(b, v, t)

    def update(b, old):
        a = casts.widen_to_f32(b, old, t)
        r = b.fadd(a, x) if op == "fadd" else icall(b, {"fmax": "llvm.maxnum", "fmin": "llvm.minnum"}[op] + ".f32",
                                                    LT.F32, [a, x])
        return casts.narrow_from_f32(b, r, t)
    return atomics.cas_loop(b, p, update, v.type, sem)


class Mem:
    def __init__(self, L):
        self.L = L

    def contiguous_at_runtime(self, pv, ety, w):
        """(lane-0 pointer, i1 "the lanes are consecutive elements") for a vector of pointers whose stride the
        static analysis could not prove (e.g. ``(pid * B + arange) % n``)."""
        b = self.b
        p0 = b.extract_element(pv, LT.const(LT.I32, 0))
        ints = b.ptrtoint(pv, LT.vec(LT.I64, w))
        base = b.ptrtoint(p0, LT.I64)
        size = LT.byte_size(ety)
        iota = ir.Constant(ir.VectorType(LT.I64, w), [LT.const(LT.I64, k * size) for k in range(w)])
        want = b.add(splat(b, base, w), iota)
        eq = b.icmp_unsigned("==", ints, want)
        return p0, icall(b, "llvm.vector.reduce.and", LT.I1, [eq], (eq.type,))

    def two_way(self, cond, fast, slow):
        """``fast()`` if ``cond`` else ``slow()`` with a branch (both may be void)."""
        b = self.b
        with b.if_else(cond, likely=True) as (then, other):
            with then:
                v1, bb1 = fast(), b.block
            with other:
                v2, bb2 = slow(), b.block
        return None if v1 is None else merged(b, (v1, bb1), (v2, bb2))

    @property
    def b(self):
        return self.L.b

    def _true(self, w):
        return LT.const(LT.I1, 1, w)

    def gather(self, pv, ety, w, mask, other):
        vt = LT.vec(ety, w)
        mask = mask if mask is not None else self._true(w)
        other = other if other is not None else ir.Constant(vt, None)
        return icall(self.b, "llvm.masked.gather", vt, [pv, LT.const(LT.I32, LT.byte_size(ety)), mask, other],
                     (vt, pv.type))

    def masked_load(self, p0, ety, w, align, mask, other):
        """``llvm.masked.load`` of ``w`` consecutive elements at ``p0``, in pieces no wider than the host's vector
        registers. A wider one is split by the X86 backend, which (LLVM 22, AVX2) can turn a piece whose mask is
        provably all off into a plain load when the mask is also stored as bytes: masked-off lanes then read
        memory (perhaps past the array) instead of ``other``. Pieces of native width are never split."""
        b = self.b
        k = max(1, host_vector_bytes() // LT.byte_size(ety))
        if w <= k or w % k:
            vt = LT.vec(ety, w)
            return icall(b, "llvm.masked.load", vt, [p0, LT.const(LT.I32, align), mask, other], (vt, LT.PTR))
        vk = LT.vec(ety, k)
        parts = []
        for s in range(0, w, k):
            sel = ir.Constant(ir.VectorType(LT.I32, k), [LT.const(LT.I32, s + i) for i in range(k)])
            ps = b.gep(p0, [LT.const(LT.I64, s)], source_etype=ety) if s else p0
            parts.append(icall(b, "llvm.masked.load", vk,
                               [ps, LT.const(LT.I32, align), b.shuffle_vector(mask, mask, sel),
                                b.shuffle_vector(other, other, sel)], (vk, LT.PTR)))
        while len(parts) > 1:  # concatenate pairwise
            n = len(parts[0].type)
            cat = ir.Constant(ir.VectorType(LT.I32, 2 * n), [LT.const(LT.I32, i) for i in range(2 * n)])
            parts = [b.shuffle_vector(parts[i], parts[i + 1], cat) for i in range(0, len(parts), 2)]
        return parts[0]

    def masked_store(self, v, p0, ety, w, align, mask):
        """``llvm.masked.store`` of ``w`` consecutive elements at ``p0``; on AVX-512 hosts a mask with exactly one
        lane on stores that lane as a scalar instead. LLVM 22's X86 backend turns a masked store of a truncated
        integer vector (AVX-512's truncating ``vpmov*`` stores) whose constant mask has one lane on into a scalar
        store of the *untruncated* element: ``tl.umulhi`` stored to an int32 element under ``cols < n1`` with
        ``n1 == 1`` wrote 8 bytes, zeroing the next element (llvm/llvm-project#179489, fixed after 22.1).
        With the lone lane stored here, a constant mask of one lane leaves no masked store behind."""
        b = self.b
        vt = LT.vec(ety, w)

        def masked():
            icall(b, "llvm.masked.store", LT.VOID, [v, p0, LT.const(LT.I32, align), mask], (vt, LT.PTR))
        if not (isinstance(ety, ir.IntType) and ety.width < 64 and lone_lane_stores()):
            masked()
            return
        iw = ir.IntType(w)
        bits = b.bitcast(mask, iw)
        lone = b.icmp_unsigned("==", icall(b, "llvm.ctpop", iw, [bits], (iw,)), ir.Constant(iw, 1))
        with b.if_else(lone) as (then, other):
            with then:
                i = b.zext(icall(b, "llvm.cttz", iw, [bits, LT.const(LT.I1, 1)], (iw,)), LT.I64)
                b.store(b.extract_element(v, i), b.gep(p0, [i], source_etype=ety), align=align)
            with other:
                masked()

    # -- loads -------------------------------------------------------------------------------------------------
    def load_node(self, n, pt, w):
        L, b = self.L, self.b
        ptr, mask, other = n.args
        t = n.type
        ety = LT.memory_type(t.element)
        align = LT.byte_size(ety)
        volatile = n.op.attrs.get("volatile", False)
        if w == 1:
            p = ev(L, ptr, pt, 1)
            m = ev(L, mask, pt, 1) if mask is not None else None
            o = to_memory(b, ev(L, other, pt, 1), t, 1) if other is not None else ir.Constant(ety, None)
            v = guarded(b, m, lambda: b.load(p, typ=ety, align=align), o)
            if volatile and hasattr(v, "set_metadata"):
                pass
            return from_memory(b, v, t, 1)
        m = ev(L, mask, pt, w) if mask is not None and mask not in pt.on else None
        o = to_memory(b, ev(L, other, pt, w), t, w) if other is not None else None
        vt = LT.vec(ety, w)
        if ptr.stride == 1:
            p0 = ev(L, ptr, pt, 1)
            if m is None:
                v = b.load(p0, typ=vt, align=align)
            else:
                o = o if o is not None else ir.Constant(vt, None)
                full = icall(b, "llvm.vector.reduce.and", LT.I1, [m], (m.type,))
                v = self.two_way(full, lambda: b.load(p0, typ=vt, align=align),
                                  lambda: self.masked_load(p0, ety, w, align, m, o))
        else:
            pv = ev(L, ptr, pt, w)
            p0, contig = self.contiguous_at_runtime(pv, ety, w)
            mm = m if m is not None else self._true(w)
            oo = o if o is not None else ir.Constant(vt, None)
            v = self.two_way(
                contig,
                (lambda: b.load(p0, typ=vt, align=align)) if m is None else
                (lambda: self.masked_load(p0, ety, w, align, mm, oo)),
                lambda: self.gather(pv, ety, w, m, o))
        return from_memory(b, v, t, w)

    def load_scalar(self, p, t, mask=None, other=None):
        b = self.b
        ety = LT.memory_type(t)
        o = to_memory(b, other, t, 1) if other is not None else ir.Constant(ety, None)
        v = guarded(b, mask, lambda: b.load(p, typ=ety, align=LT.byte_size(ety)), o)
        return from_memory(b, v, t, 1)

    # -- stores ------------------------------------------------------------------------------------------------
    def store_at(self, ptr, value, mask, t, pt, w):
        """Store tile nodes ``value`` through pointer node ``ptr`` at ``pt`` (``t``: the value's tir type)."""
        L, b = self.L, self.b
        ety = LT.memory_type(t.element)
        align = LT.byte_size(ety)
        v = to_memory(b, ev(L, value, pt, w), t, w)
        m = ev(L, mask, pt, w) if mask is not None and mask not in pt.on else None
        if w == 1:
            p = ev(L, ptr, pt, 1)
            guarded(b, m, lambda: b.store(v, p, align=align), None)
            return
        vt = LT.vec(ety, w)
        if ptr.stride == 1:
            p0 = ev(L, ptr, pt, 1)
            if m is None:
                b.store(v, p0, align=align)
            else:  # full chunks (the common case) take a plain store: masked stores are slow on some cores
                full = icall(b, "llvm.vector.reduce.and", LT.I1, [m], (m.type,))
                self.two_way(full, lambda: (b.store(v, p0, align=align), None)[1],
                             lambda: self.masked_store(v, p0, ety, w, align, m))
            return
        pv = ev(L, ptr, pt, w)
        m = m if m is not None else self._true(w)
        p0, contig = self.contiguous_at_runtime(pv, ety, w)
        def vector():
            self.masked_store(v, p0, ety, w, align, m)

        def scatter():
            icall(b, "llvm.masked.scatter", LT.VOID, [v, pv, LT.const(LT.I32, align), m], (vt, pv.type))
        self.two_way(contig, vector, scatter)

    def store_scalar(self, p, v, t, mask=None):
        b = self.b
        ety = LT.memory_type(t)
        v = to_memory(b, v, t, 1)
        guarded(b, mask, lambda: b.store(v, p, align=LT.byte_size(ety)), None)

    # -- atomics -----------------------------------------------------------------------------------------------
    def atomic_rmw(self, kind, sem, p, v, t, mask=None):
        b = self.b
        e = t.element
        order = _ORDER.get(sem, "acq_rel")
        if e.is_float:
            op = {"add": "fadd", "max": "fmax", "min": "fmin", "xchg": "xchg"}[kind]
        elif kind in ("max", "min"):
            op = kind if e.is_signed else "u" + kind
        else:
            op = {"and": "and", "or": "or", "xor": "xor", "add": "add", "xchg": "xchg"}[kind]
        ety = LT.scalar_type(e)
        if e.name == "bf16" and op != "xchg":
            return guarded(b, mask, lambda: _bf16_rmw(b, op, p, v, e, sem or "acq_rel"), ir.Constant(ety, None))
        return guarded(b, mask, lambda: b.atomic_rmw(op, p, v, order), ir.Constant(ety, None))

    def atomic_cas(self, sem, p, cmp, v, t):
        b = self.b
        e = t.element
        order = _ORDER.get(sem, "acq_rel")
        ety = LT.scalar_type(e)
        if e.is_float:
            ity = ir.IntType(e.bits)
            r = b.cmpxchg(p, b.bitcast(cmp, ity), b.bitcast(v, ity), order, _FAIL[order])
            return b.bitcast(b.extract_value(r, 0), ety)
        return b.extract_value(b.cmpxchg(p, cmp, v, order, _FAIL[order]), 0)
