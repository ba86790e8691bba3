"""``dot`` as a register-blocked micro-kernel.

Operands are packed into row-major scratch buffers in the accumulation type (so f16/bf16 inputs are widened
once, not once per FMA). A dot that asks for ``input_precision="tf32"`` gets its f32 inputs rounded to tf32 as
they are packed (to nearest, ties to even: 10 mantissa bits, f32's range), as the interpreter rounds them; the
CPU's default is ``ieee`` (``backend.py``). The result is computed in MR x (NV*w) blocks: MR*NV accumulator vectors stay in
registers across the whole k loop; each k step loads NV vectors of a row of B, broadcasts MR scalars of a column
of A and issues MR*NV FMAs. When the accumulator is a buffer used only by this dot (the usual loop-carried
``acc``), the dot accumulates in place.
"""
from __future__ import annotations


from ...codegen import llvm_types as LT
from ...codegen.intrinsics import call as icall
from ...errors import BackendError
from ...ir import types as T
from .loops import counted_loop, pick_width
from .nodes import EMIT, Buf, Lazy, Point, ev, splat
from ...ir import ops as O
from .registry import lowers

_CAST = O.stand_in(O.CastOp)


class _RoundTf32:
    """The lazy node kind that rounds f32 lanes to tf32 (no IR op: only the CPU dot's operand packing)."""
    name, attrs, loc = "round_tf32", {}, None


_TF32 = _RoundTf32()


def _as(L, node, elem):
    """``node`` with elements converted to ``elem`` (lazily)."""
    if node.type.element == elem:
        return node
    return Lazy(_CAST, [node], node.type.with_element(elem), None)


def _work_type(t):
    e = t.element
    if e.is_float:
        return T.f64 if e.bits == 64 else T.f32
    if e.is_int:
        return e
    raise BackendError(f"dot accumulator type {t} is not supported on CPU")


def _rounded(node, t, tf32):
    """An f32 operand as tf32 where the dot asks for it (lazily, fused into packing)."""
    if not tf32 or t.element != T.f32:
        return node
    return Lazy(_TF32, [node], node.type, getattr(node, "stride", None))


def _emit_tf32(L, n, pt, w):
    """Round f32 lanes to 10 mantissa bits, to nearest even, in their bits; NaNs pass as they are (an infinity
    stays one; a value rounding past the largest finite f32 becomes one, as in the interpreter)."""
    b = L.b
    x = ev(L, n.args[0], pt, w)
    ity = LT.vec(LT.I32, w)
    bits = b.bitcast(x, ity)
    odd = b.and_(b.lshr(bits, LT.const(LT.I32, 13, w)), LT.const(LT.I32, 1, w))
    r = b.and_(b.add(b.add(bits, LT.const(LT.I32, 0xFFF, w)), odd), LT.const(LT.I32, ~0x1FFF, w))
    return b.select(b.fcmp_unordered("uno", x, x), x, b.bitcast(r, x.type))


EMIT.register(_RoundTf32)(_emit_tf32)


@lowers(O.DotOp)
def op_dot(L, op):
    b = L.b
    at, bt, ct = op.a.type, op.b.type, op.acc.type
    batch = ct.shape[0] if len(ct.shape) == 3 else 1
    M, K = at.shape[-2:]
    N = bt.shape[-1]
    wt = _work_type(ct)
    tf32 = op.attrs.get("input_precision", "ieee") == "tf32"
    A = L.contiguous(_rounded(_as(L, L.get(op.a), wt), at, tf32))
    B = L.contiguous(_rounded(_as(L, L.get(op.b), wt), bt, tf32))
    acc = L.get(op.acc)
    inplace = isinstance(acc, Buf) and acc.owner and ct.element == wt and len(op.acc.uses) == 1
    C = acc if inplace else L.alloc(ct.with_element(wt))
    acc_in = _as(L, acc, wt)
    ety = LT.scalar_type(wt)
    is_float = wt.is_float

    w = pick_width(N, 16)
    nv = 2 if (N // w) % 2 == 0 else 1
    nr = w * nv
    mr = next(m for m in (8, 4, 2, 1) if M % m == 0)

    L.note(op, f"micro-kernel {mr}x{nr} ({mr * nv} accumulators of {w} lanes), operands packed as {wt}"
               + (" (f32 inputs rounded to tf32)" if tf32 and T.f32 in (at.element, bt.element) else "")
               + (", accumulates in place" if inplace else f" -> buffer {C.where}"))

    def fma(x, y, z):
        if is_float:
            return icall(b, "llvm.fma", z.type, [x, y, z], (z.type,))
        return b.add(b.mul(x, y), z)

    def block(bi, i0, j0):
        lead = [bi] if batch > 1 or len(ct.shape) == 3 else []
        rows = [b.add(i0, LT.const(LT.I32, r)) if r else i0 for r in range(mr)]
        cols = [b.add(j0, LT.const(LT.I32, v * w)) if v else j0 for v in range(nv)]
        init = [ev(L, acc_in, Point(ct.shape, lead + [rows[r], cols[v]]), w) for r in range(mr) for v in range(nv)]
        b64 = b.sext(bi, LT.I64)
        a_base = b.gep(A.ptr, [b.mul(b64, LT.const(LT.I64, M * K))], source_etype=ety)
        b_base = b.gep(B.ptr, [b.mul(b64, LT.const(LT.I64, K * N))], source_etype=ety)
        a_rows = [b.gep(a_base, [b.mul(b.sext(rows[r], LT.I64), LT.const(LT.I64, K))], source_etype=ety)
                  for r in range(mr)]
        b_col = b.gep(b_base, [b.sext(j0, LT.I64)], source_etype=ety)

        def kstep(k, accs):
            k64 = b.sext(k, LT.I64)
            brow = b.gep(b_col, [b.mul(k64, LT.const(LT.I64, N))], source_etype=ety)
            bv = [b.load(b.gep(brow, [LT.const(LT.I64, v * w)], source_etype=ety) if v else brow,
                         typ=LT.vec(ety, w), align=LT.byte_size(ety)) for v in range(nv)]
            out = list(accs)
            for r in range(mr):
                a = splat(b, b.load(b.gep(a_rows[r], [k64], source_etype=ety), typ=ety), w)
                for v in range(nv):
                    out[r * nv + v] = fma(a, bv[v], accs[r * nv + v])
            return out
        accs = counted_loop(b, K, 1, init, kstep, name="k")
        for r in range(mr):
            for v in range(nv):
                C.store(L, lead + [rows[r], cols[v]], accs[r * nv + v], w)

    def tiles(bi):
        counted_loop(b, M, mr, [], lambda i0, _: counted_loop(
            b, N, nr, [], lambda j0, __: (block(bi, i0, j0), [])[1], name="dj") or [], name="di")
    counted_loop(b, batch, 1, [], lambda bi, _: (tiles(bi), [])[1], name="db")
    res = C if ct.element == wt else _as(L, C, ct.element)
    L.vals[op.results[0]] = res if isinstance(res, Buf) else L.materialise(res)
