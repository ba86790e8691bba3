"""NVIDIA tensor-core dots: ``mma.sync`` on operands in registers (m16n8k16 f16/bf16 with f32 accumulators, or f16
with f16 accumulators; m16n8k8 tf32; m16n8k32 8-bit integers), from the
mma/dot-operand layouts accelerate-dot assigns. Called by the generic lowering through ``CudaTarget.lower_dot``."""
from __future__ import annotations

import llvmlite.ir as ir

from ...gpu.lowering.types import I32, to_memory
from ...gpu.lowering.values import ll_of


def mma_dot(L, op):
    """Tensor-core dot: one ``mma.sync.m16n8k16`` per (16-row, 8-column, 16-k) fragment of this thread's
    registers. Fragments are found by coordinate: the accumulator's register constants give each fragment's
    (row, column) base, the operands' give the A and B registers at (row, k) and (k, column)."""
    b = L.b
    at, bt, ct = op.a.type, op.b.type, op.acc.type
    a_ll, b_ll, c_ll = ll_of(at), ll_of(bt), ll_of(ct)
    av, bv, acc = L.get(op.a), L.get(op.b), list(L.get(op.acc))
    # a batched (rank-3) dot is one 2-d dot per batch entry: coordinates keep the batch index in front
    a_idx = _by_batch(a_ll)
    b_idx = _by_batch(b_ll)
    c_idx = _by_batch(c_ll)
    K = at.shape[-1]
    if at.layout.k_width == 1:
        return _mma_tf32(L, op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K)
    if at.layout.k_width == 4:
        return _mma_int8(L, op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K)
    kind = "bf16" if at.element.name == "bf16" else "f16"
    packed: dict = {}

    def pack(vals, lo, hi, t):
        """Two 16-bit elements in one b32 register (lo in the low half), as mma expects."""
        key = (id(vals), lo, hi)
        if key not in packed:
            pair = [to_memory(b, t.element, vals[i]) if t.element.name == "bf16" else vals[i] for i in (lo, hi)]
            vec = ir.Constant(ir.VectorType(pair[0].type, 2), ir.Undefined)
            for j, x in enumerate(pair):
                vec = b.insert_element(vec, x, ir.Constant(I32, j))
            packed[key] = b.bitcast(vec, I32)
        return packed[key]
    acc_kind = "f16" if ct.element.name == "f16" else "f32"
    _mma_tiles(L, op, f"m16n8k16.row.col.{acc_kind}.{kind}.{kind}.{acc_kind}", acc, c_idx, c_ll, K, 16,
                lambda bb, mb, kb: [pack(av, a_idx.at(bb)[(mb + r, kb + k)], a_idx.at(bb)[(mb + r, kb + k + 1)], at)
                                    for r, k in ((0, 0), (8, 0), (0, 8), (8, 8))],
                lambda bb, kb, n: [pack(bv, b_idx.at(bb)[(kb + k, n)], b_idx.at(bb)[(kb + k + 1, n)], bt)
                                   for k in (0, 8)],
               acc_type=ir.HalfType() if acc_kind == "f16" else None)


class _Batched(dict):
    """Register index by coordinate, for rank-2 ``(row, col)`` keys within one batch entry: ``at(batch)`` gives
    the view the 2-d code indexes (a rank-2 layout is batch 0 of one)."""

    def at(self, batch):
        return self[batch]


def _by_batch(ll):
    out = _Batched()
    for i, c in enumerate(ll.reg_coords()):
        if len(c) == 2:
            c = (0,) + tuple(c)
        out.setdefault(c[0], {})[tuple(c[1:])] = i
    return out


def _mma_tf32(L, op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K):
    """``mma.sync.m16n8k8`` on tf32: inputs rounded (``cvt.rna.tf32.f32``) once per register."""
    b = L.b
    cvt = ir.InlineAsm(ir.FunctionType(I32, [ir.FloatType()]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
    conv: dict = {}

    def tf32(vals, i):
        key = (id(vals), i)
        if key not in conv:
            conv[key] = b.call(cvt, [vals[i]])
        return conv[key]
    _mma_tiles(L, op, "m16n8k8.row.col.f32.tf32.tf32.f32", acc, c_idx, c_ll, K, 8,
               lambda bb, mb, kb: [tf32(av, a_idx.at(bb)[(mb + r, kb + k)]) for r, k in ((0, 0), (8, 0), (0, 4), (8, 4))],
               lambda bb, kb, n: [tf32(bv, b_idx.at(bb)[(kb + k, n)]) for k in (0, 4)])


def _mma_int8(L, op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K):
    """``mma.sync.m16n8k32`` on 8-bit integers: four consecutive k per b32 register, i32 accumulators that
    saturate instead of wrapping (``.satfinite``, as Triton emits it; reachable only past 2**31 / 127**2 ~ 133k
    terms)."""
    b = L.b
    kind = "u8" if op.a.type.element.name == "u8" else "s8"
    packed: dict = {}

    def pack(vals, idx):
        key = (id(vals), idx[0])
        if key not in packed:
            vec = ir.Constant(ir.VectorType(ir.IntType(8), 4), ir.Undefined)
            for j, i in enumerate(idx):
                vec = b.insert_element(vec, vals[i], ir.Constant(I32, j))
            packed[key] = b.bitcast(vec, I32)
        return packed[key]
    _mma_tiles(L, op, f"m16n8k32.row.col.satfinite.s32.{kind}.{kind}.s32", acc, c_idx, c_ll, K, 32,
               lambda bb, mb, kb: [pack(av, [a_idx.at(bb)[(mb + r, kb + k + j)] for j in range(4)])
                                   for r, k in ((0, 0), (8, 0), (0, 16), (8, 16))],
               lambda bb, kb, n: [pack(bv, [b_idx.at(bb)[(kb + k + j, n)] for j in range(4)]) for k in (0, 16)],
               acc_type=I32)


def _mma_tiles(L, op, shape_types, acc, c_idx, c_ll, K, k_step, a_regs, b_regs, acc_type=None):
    """One ``mma.sync.aligned.<shape_types>`` per (16-row, 8-column, ``k_step``-k) fragment of the
    accumulator's registers; ``a_regs(row base, k base)`` / ``b_regs(k base, column base)`` give the four A
    and two B b32 operands. An f16 accumulator (``acc_type`` half) travels as two b32 registers of column pairs,
    (c0, c1) and (c2, c3), the same elements an f32 accumulator holds in four."""
    b = L.b
    ct = acc_type or ir.FloatType()
    halves = isinstance(ct, ir.HalfType)
    nc = 2 if halves else 4
    c = "r" if ct == I32 or halves else "f"
    rt = I32 if halves else ct
    outs = ",".join(f"${i}" for i in range(nc))
    a_ = ",".join(f"${nc + i}" for i in range(4))
    b_ = ",".join(f"${nc + 4 + i}" for i in range(2))
    c_ = ",".join(f"${nc + 6 + i}" for i in range(nc))
    text = f"mma.sync.aligned.{shape_types} {{{outs}}}, {{{a_}}}, {{{b_}}}, {{{c_}}};"
    fty = ir.FunctionType(ir.LiteralStructType([rt] * nc), [I32] * 6 + [rt] * nc)
    asm = ir.InlineAsm(fty, text, ",".join([f"={c}"] * nc + ["r"] * 6 + [c] * nc))
    pair_t = ir.VectorType(ir.HalfType(), 2)

    def packed(vals):
        if not halves:
            return vals
        out = []
        for j in (0, 2):
            v = ir.Constant(pair_t, ir.Undefined)
            for k in (0, 1):
                v = b.insert_element(v, vals[j + k], ir.Constant(I32, k))
            out.append(b.bitcast(v, I32))
        return out

    def unpacked(r):
        if not halves:
            return [b.extract_value(r, j) for j in range(4)]
        out = []
        for j in (0, 1):
            v = b.bitcast(b.extract_value(r, j), pair_t)
            out += [b.extract_element(v, ir.Constant(I32, k)) for k in (0, 1)]
        return out
    coords = [c if len(c) == 3 else (0,) + tuple(c) for c in c_ll.reg_coords()]
    tiles = sorted({(bb, m & ~8, n & ~1) for (bb, m, n) in coords})
    for kb in range(0, K, k_step):  # k outermost: only one k-slice of the operands is live at a time
        for bb, mb, nb in tiles:
            cb = c_idx.at(bb)
            ci = [cb[(mb, nb)], cb[(mb, nb + 1)], cb[(mb + 8, nb)], cb[(mb + 8, nb + 1)]]
            r = b.call(asm, a_regs(bb, mb, kb) + b_regs(bb, kb, nb & ~7) + packed([acc[i] for i in ci]))
            for i, v in zip(ci, unpacked(r)):
                acc[i] = v
    L.bind(op.result, acc)
