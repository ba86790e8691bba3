"""Lowering of ``inline_asm`` (``tl.inline_asm_elementwise``): one LLVM inline-assembly call per ``pack``
registers of the result's layout.

Every thread runs the assembly on the elements its registers hold, ``pack`` registers at a time; when its register
count is not a multiple of ``pack`` the last run is padded with a copy of its last element (elementwise assembly
ignores it; its results are dropped). Operands take the packing of ``ir/asm_operands.py``: narrow elements in
their memory form (bf16 as its 16 bits, bool as a byte) packed into one vector per operand, reinterpreted as
the integer of its width, then given the LLVM type the target's register constraint wants (``GpuTarget.
inline_asm_operand``; a wider integer register zero-extends). Several outputs come back as one struct.
Constraints the target cannot give a register are refused at the kernel line before LLVM sees them.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import at_op
from ...ir import ops as O
from ...ir.asm_operands import elements_per_operand, parse_constraints
from ...ir.types import PointerType
from .registry import lowers
from .types import I64, from_memory, memory_type, to_memory
from .values import num_regs


def llvm_string(text: str) -> str:
    """``text`` escaped for an LLVM IR string literal (llvmlite prints inline assembly verbatim)."""
    out = []
    for ch in text:
        if ch in '"\\' or not " " <= ch <= "~":
            out.extend(f"\\{b:02X}" for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    return "".join(out)


class _Slot:
    """One operand of the call: ``per`` elements of value ``index`` (an argument or a result), chunk ``chunk``."""

    def __init__(self, index, chunk, per, elt, llvm_type):
        self.index, self.chunk, self.per, self.elt, self.type = index, chunk, per, elt, llvm_type


def _element_type(t):
    """The LLVM type of one element as it crosses into assembly (its memory form; pointers as i64)."""
    return I64 if isinstance(t.element, PointerType) else memory_type(t)


def _slots(L, op, values, codes, what, tied_types=None):
    pack = op.attrs["pack"]
    out, k = [], 0
    for i, v in enumerate(values):
        elt = _element_type(v.type)
        bits = O.asm_bits(v.type)
        per = elements_per_operand(bits, pack)
        for j in range(pack // per):
            code = codes[k]
            if code.isdigit():
                ty = tied_types[int(code)]  # the tied output's register, so the output's type
                if _width(ty) != bits * per and not (isinstance(ty, ir.IntType) and ty.width > bits * per):
                    ty = None
            else:
                ty = L.target.inline_asm_operand(code, bits * per)
            if ty is None:
                regs = ", ".join(f"{c} ({d})" for c, d in L.target.inline_asm_registers.items())
                held = f"{per} x {v.type.element}" if per > 1 else str(v.type.element)
                raise at_op(op, f"inline_asm_elementwise: constraint {code!r} of {what} {i} cannot hold "
                                f"{held} ({bits * per} bits) on the {L.target.name} backend; its registers: {regs}")
            out.append(_Slot(i, j, per, elt, ty))
            k += 1
    return out


def _pack(b, slot, elements):
    """The slot's elements (memory form) as one value of the slot's LLVM type."""
    if slot.per == 1:
        v = elements[0]
    else:
        vec = ir.Constant(ir.VectorType(slot.elt, slot.per), None)
        for n, e in enumerate(elements):
            vec = b.insert_element(vec, e, ir.Constant(ir.IntType(32), n))
        v = vec
    if v.type == slot.type:
        return v
    width = _width(v.type)
    if width != _width(slot.type) or not isinstance(slot.type, ir.IntType):
        return b.bitcast(v, slot.type)
    if not isinstance(v.type, ir.IntType):
        v = b.bitcast(v, ir.IntType(width))
    return v if width == slot.type.width else b.zext(v, slot.type)


def _unpack(b, slot, v):
    """The slot's elements (memory form) out of the call's value ``v``."""
    width = _width(slot.elt) * slot.per
    if isinstance(v.type, ir.IntType) and v.type.width > width:
        v = b.trunc(v, ir.IntType(width))
    if slot.per == 1:
        return [v if v.type == slot.elt else b.bitcast(v, slot.elt)]
    vec = b.bitcast(v, ir.VectorType(slot.elt, slot.per))
    return [b.extract_element(vec, ir.Constant(ir.IntType(32), n)) for n in range(slot.per)]


def _width(t) -> int:
    if isinstance(t, ir.IntType):
        return t.width
    if isinstance(t, ir.VectorType):
        return _width(t.element) * t.count
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]


def _to_asm(b, t, x):
    return b.ptrtoint(x, I64) if isinstance(t.element, PointerType) else to_memory(b, t, x)


def _from_asm(b, t, x):
    if isinstance(t.element, PointerType):
        return b.inttoptr(x, ir.PointerType(addrspace=t.element.address_space))
    return from_memory(b, t, x)


@lowers(O.InlineAsmOp)
def lower_inline_asm(L, op):
    target = L.target
    if not target.inline_asm_registers:
        raise at_op(op, f"tl.inline_asm_elementwise is not supported on the {target.name} backend")
    for v in list(op.operands) + list(op.results):
        e = v.type.element
        if not isinstance(e, PointerType) and e.name.startswith("f8"):
            raise at_op(op, f"inline_asm_elementwise: {e} values are not supported by the GPU backends yet")
    c = parse_constraints(op.attrs["constraints"])
    outs = _slots(L, op, op.results, c.outputs, "output")
    ins = _slots(L, op, op.operands, c.inputs, "input", [s.type for s in outs])
    ret = outs[0].type if len(outs) == 1 else ir.LiteralStructType([s.type for s in outs])
    asm = ir.InlineAsm(ir.FunctionType(ret, [s.type for s in ins]), llvm_string(op.attrs["asm"]), c.llvm(),
                       side_effect=not op.is_pure)

    b, pack = L.b, op.attrs["pack"]
    tile = op.results[0].type.is_tile
    n = num_regs(op.results[0].type) if tile else 1
    args = []
    for v in op.operands:
        x = L.get(v)
        regs = x if isinstance(x, list) else [x] * n
        args.append([_to_asm(b, v.type, r) for r in regs])
    results = [[] for _ in op.results]
    for start in range(0, n, pack):
        idx = [min(start + p, n - 1) for p in range(pack)]  # a short last run repeats its last element
        operands = [_pack(b, s, [args[s.index][i] for i in idx[s.chunk * s.per:(s.chunk + 1) * s.per]])
                    for s in ins]
        call = b.call(asm, operands)
        for k, s in enumerate(outs):
            part = call if len(outs) == 1 else b.extract_value(call, k)
            results[s.index].extend(_unpack(b, s, part))
    for r, vals in zip(op.results, results):
        vals = [_from_asm(b, r.type, x) for x in vals[:n]]
        L.bind(r, vals if tile else vals[0])
