"""Lowering of elementwise ops, sources and program ids: per register of the result's layout."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.fma import fma_f32_odd
from ...ir import ops as O
from . import scalar
from .layouts import reg_coord_values
from .registry import lowers
from .types import (FP8, I32, constant, from_memory, llvm_type, memory_type, round_bf16, round_fp8,
                    round_fp8_all, to_memory)
from .values import ll_of, num_regs


# of values of the format, a value of the format
_EXACT = frozenset({O.MaxOp, O.MinOp, O.UNARY_OPS["abs"], O.UNARY_OPS["neg"]})


def _in_format(b, et, fn, op=None):
    """``fn`` whose f32 results are rounded to ``et`` when it is fp8 or bf16 (both live in f32 registers): the
    registers then always hold values of the format, as the evaluator's (each op rounds once, and a later cast
    or compare sees what it would)."""
    if op in _EXACT:
        return fn
    if et.name in FP8:
        return lambda *xs: round_fp8(b, et, fn(*xs))
    if et.name == "bf16":
        return lambda *xs: round_bf16(b, fn(*xs))
    return fn


@lowers(O.BinaryOp, O.UnaryOp)
def lower_elementwise(L, op):
    b = L.b
    cls = type(op)
    et = op.operands[0].type.element
    if isinstance(op, O.BinaryOp):
        contract = L.options.enable_fp_fusion
        return L._map(op, _in_format(b, et, lambda x, y: scalar.binary(b, cls, et, x, y, op.attrs, contract,
                                                                       L.target.math), cls))
    if cls is O.UNARY_OPS["abs"] and et.is_int and et.is_signed:
        return L._map(op, lambda x: L.target.int_abs(b, x))
    fn = lambda x: scalar.unary(b, cls, et, x, L.target.math)  # noqa: E731
    return L._map(op, _in_format(b, et, fn, cls))


@lowers(O.CmpOp)
def lower_cmp(L, op):
    et, pred = op.lhs.type.element, op.attrs["predicate"]
    L._map(op, lambda x, y: scalar.cmp(L.b, pred, et, x, y))


@lowers(O.SelectOp)
def lower_select(L, op):
    """A select moves values: fp8 operands that remember their codes give a result that remembers the selected
    code (so an e5m2 infinity selected and stored stays one; see ``types.py``)."""
    def one(c, x, y):
        r = L.b.select(c, x, y)
        cx, cy = getattr(x, "fp8_code", None), getattr(y, "fp8_code", None)
        if cx is not None and cy is not None and cx[0] == cy[0]:
            r.fp8_code = (cx[0], L.b.select(c, cx[1], cy[1]))
        return r
    L._map(op, one)


@lowers(O.CastOp)
def lower_cast(L, op):
    s, d = op.src.type, op.result.type
    rounding = op.attrs.get("rounding", "rtne")
    x = L.get(op.src)
    if not d.element.is_ptr and d.element.name in FP8 and s.element != d.element and isinstance(x, list):
        # all registers at once (the target's conversion may take two per instruction), each run's first only
        leaders = L._run_leaders(op.result) or range(len(x))
        firsts = sorted(set(leaders))
        done = dict(zip(firsts, round_fp8_all(L.b, d, [scalar.f32_for_fp8(L.b, s.element, x[i], rounding)
                                                       for i in firsts], rounding)))
        return L.bind(op.result, [done[j] for j in leaders])
    L._map(op, lambda v: scalar.cast(L.b, s, d, v, rounding))


@lowers(O.BitcastOp)
def lower_bitcast(L, op):
    """Reinterpret the bits: through the memory forms, since a register may be wider than the value's bits
    (bf16 lives in an f32 register, its bits are the 16-bit memory form)."""
    s, d = op.src.type.element, op.result.type.element
    mt = memory_type(d)

    def one(x):
        m = to_memory(L.b, s, x)
        return from_memory(L.b, d, m if m.type == mt else L.b.bitcast(m, mt))
    L._map(op, one)


@lowers(O.FmaOp)
def lower_fma(L, op):
    """bf16 and fp8 live in f32 registers: their fma is rounded to odd in f32 first, so that the rounding to the
    format is the only one (``codegen/fma.py``); f16, f32 and f64 have the hardware's one-rounding fma."""
    et = op.a.type.element
    if et.name == "bf16" or et.name in FP8:
        return L._map(op, _in_format(L.b, et, lambda x, y, z: fma_f32_odd(L.b, x, y, z)))
    L._map(op, _in_format(L.b, et, lambda x, y, z: scalar.fma(L.b, et, x, y, z)))


@lowers(O.AddPtrOp)
def lower_addptr(L, op):
    et = memory_type(op.ptr.type.element.pointee)
    off_t = op.offset.type

    def one(p, o):
        if off_t.element.bits < 64:
            o = L.b.sext(o, ir.IntType(64)) if off_t.is_signed else L.b.zext(o, ir.IntType(64))
        return L.b.gep(p, [o], source_etype=et)
    L._map(op, one)


@lowers(O.HintOp)
def lower_hint(L, op):
    L.bind(op.result, L.get(op.src))


@lowers(O.ConstantOp)
def lower_constant(L, op):
    t = op.result.type
    c = constant(t.element, op.attrs["value"])
    L.bind(op.result, [c] * num_regs(t) if t.is_tile else c)


@lowers(O.ArangeOp)
def lower_arange(L, op):
    t = op.result.type
    start = op.attrs["start"]
    lt = llvm_type(t.element)
    out = []
    for (c,) in reg_coord_values(L, ll_of(t)):
        v = L.b.add(c, ir.Constant(I32, start)) if start else c
        if lt != I32:
            v = L.b.sext(v, lt) if lt.width > 32 else L.b.trunc(v, lt)
        out.append(v)
    L.bind(op.result, out)


@lowers(O.SplatOp)
def lower_splat(L, op):
    L.bind(op.result, [L.get(op.src)] * num_regs(op.result.type))


@lowers(O.ProgramIdOp)
def lower_program_id(L, op):
    L.bind(op.result, L.target.block_id(L.entry, op.attrs["axis"]))


@lowers(O.NumProgramsOp)
def lower_num_programs(L, op):
    L.bind(op.result, L.target.num_blocks(L.entry, op.attrs["axis"]))
