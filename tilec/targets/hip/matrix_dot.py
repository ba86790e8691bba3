"""Matrix-core dots (MFMA, WMMA) from the layouts ``matrix_instructions.layouts`` chose.

:func:`plan` is the register bookkeeping, free of LLVM: which of this thread's A, B and accumulator registers
feed each instruction, found by coordinate (the accumulator's register coordinates give each instruction tile's
(row, column) base; an operand element ``j`` of lane 0 sits at k offset ``j``). ``tests/hip`` runs the plan
against a numpy model of each instruction's lane mapping. :func:`lower` emits the intrinsics.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...errors import BackendError
from ...gpu.lowering.types import I1, I8, I32, I64, to_memory
from ...gpu.lowering.values import ll_of
from ...gpu.matrix_core_layouts import MfmaOperandLayout, WmmaOperandLayout
from . import matrix_instructions as mi


def acc_offsets(instr) -> list:
    """(row, column) of each element of the instruction's result vector in lane 0 of its tile (the ISA's
    layouts; lanes add their own offsets, which the layouts carry)."""
    n = instr.acc_regs
    if instr.family == "wmma":
        return [(2 * e, 0) for e in range(n)]
    if instr.m_dim == 32:
        return [(8 * (e // 4) + e % 4, 0) for e in range(n)]
    return [(e, 0) for e in range(n)]


def plan(instr, a_ll, b_ll, c_ll, K: int) -> list:
    """``[(a registers, b registers, accumulator registers)]`` per instruction, k outermost (so that one k-slice
    of the operands is live at a time), then tiles in register order."""
    a_idx = {c: i for i, c in enumerate(a_ll.reg_coords())}
    b_idx = {c: i for i, c in enumerate(b_ll.reg_coords())}
    c_idx = {c: i for i, c in enumerate(c_ll.reg_coords())}
    if len(c_idx) != c_ll.num_regs:
        raise BackendError(f"a {instr.family} accumulator of shape {list(c_ll.shape)} repeats registers: the dot "
                           f"is smaller than one {instr.m_dim}x{instr.m_dim} tile")
    t = instr.m_dim
    tiles = sorted({(m - m % t, n - n % t) for (m, n) in c_ll.reg_coords()})
    offs = acc_offsets(instr)
    steps = []
    try:
        for kb in range(0, K, instr.k):
            for mb, nb in tiles:
                steps.append(([a_idx[(mb, kb + j)] for j in range(instr.k_width)],
                              [b_idx[(kb + j, nb)] for j in range(instr.k_width)],
                              [c_idx[(mb + r, nb + c)] for r, c in offs]))
    except KeyError as e:
        raise BackendError(f"the {instr.family} operand layouts do not match the accumulator's (no register at "
                           f"{e.args[0]})") from None
    return steps


def instruction_for(arch, op):
    lay = op.a.type.layout
    kind = mi.input_kind(op)
    if kind is None or op.b.type.layout.__class__ is not lay.__class__:
        raise BackendError(f"no matrix instruction multiplies {op.a.type} by {op.b.type} into {op.acc.type}")
    if isinstance(lay, MfmaOperandLayout):
        return mi.lookup(arch, kind, "mfma", lay.parent.m_dim, lay.k_width)
    if isinstance(lay, WmmaOperandLayout):
        return mi.lookup(arch, kind, "wmma", 16, 16)
    raise BackendError(f"the HIP backend cannot lower a dot on {lay}")


def _vector(b, values):
    vec = ir.Constant(ir.VectorType(values[0].type, len(values)), ir.Undefined)
    for j, x in enumerate(values):
        vec = b.insert_element(vec, x, ir.Constant(I32, j))
    return vec


def _operand(b, instr, element, values):
    """The intrinsic's operand from ``k_width`` register-model values."""
    if instr.inputs in ("f16", "f32", "xf32"):
        return values[0] if len(values) == 1 else _vector(b, values)
    if instr.inputs == "bf16":
        return _vector(b, [to_memory(b, element, v) for v in values])
    # 8-bit integers: packed four to an i32 (i64 for eight on gfx942+; <4 x i32> for WMMA's sixteen)
    packed = _vector(b, [v if v.type == I8 else b.trunc(v, I8) for v in values])
    n = len(values)
    if instr.family == "wmma":
        return b.bitcast(packed, ir.VectorType(I32, n // 4))
    return b.bitcast(packed, I32 if n == 4 else I64)


def lower(L, op, arch) -> None:
    b = L.b
    instr = instruction_for(arch, op)
    at, bt, ct = op.a.type, op.b.type, op.acc.type
    steps = plan(instr, ll_of(at), ll_of(bt), ll_of(ct), at.shape[1])
    av, bv, acc = L.get(op.a), L.get(op.b), list(L.get(op.acc))
    acc_t = ir.FloatType() if instr.acc == "f32" else I32
    vec_t = ir.VectorType(acc_t, instr.acc_regs)
    cache: dict = {}

    def operand(vals, idx, element):
        key = (id(vals), tuple(idx))
        if key not in cache:
            cache[key] = _operand(b, instr, element, [vals[i] for i in idx])
        return cache[key]
    for a_regs, b_regs, c_regs in steps:
        x, y = operand(av, a_regs, at.element), operand(bv, b_regs, bt.element)
        c = _vector(b, [acc[i] for i in c_regs])
        if instr.family == "mfma":
            args = [x, y, c] + [ir.Constant(I32, 0)] * 3  # cbsz, abid, blgp: no broadcast
        elif instr.inputs == "iu8":
            signed = [ir.Constant(I1, int(t.element.name == "i8")) for t in (at, bt)]
            args = [signed[0], x, signed[1], y, c, ir.Constant(I1, 0)]  # no clamping
        else:
            args = [x, y, c]
        r = intrinsic(b, instr.intrinsic, vec_t, args)
        for j, i in enumerate(c_regs):
            acc[i] = b.extract_element(r, ir.Constant(I32, j))
    L.bind(op.result, acc)

