"""Global atomics as PTX ``atom`` instructions with their memory semantics and scope spelled out
(``atom.global.gpu.acq_rel.add.f32``), as Triton emits them. Triton's scope and semantics names are PTX's.

LLVM's NVPTX backend drops both from ``atomicrmw`` (every one becomes a relaxed ``atom.global.add``, an acq_rel
one without its fences), so each atomic PTX has an instruction for is written here; the rest (8- and 16-bit
integers, 16-bit exchanges, bf16 adds before sm_90) stay LLVM atomics, which NVPTX expands into
compare-and-swap loops that keep the ordering and scope.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.atomics import BFLOAT
from ...gpu.lowering.types import F16, F32, F64

#: register constraint of each PTX operand width
_REG = {16: "h", 32: "r", 64: "l"}


#: LLVM integer atomic -> PTX operation and type letter (add is the same for signed and unsigned)
_INT_OPS = {"add": ("add", "u"), "max": ("max", "s"), "umax": ("max", "u"), "min": ("min", "s"),
            "umin": ("min", "u"), "and": ("and", "b"), "or": ("or", "b"), "xor": ("xor", "b")}


def _rmw_instruction(op: str, t, arch: int):
    """(PTX operation with its type, operand width in bits) for LLVM atomic ``op`` on LLVM type ``t``, or None
    where PTX has no such atom (or not on ``arch``)."""
    if op == "xchg":
        bits = t.width if isinstance(t, ir.IntType) else {F32: 32, F64: 64}.get(t)
        return (f"exch.b{bits}", bits) if bits in (32, 64) else None
    if op == "fadd":
        if t == F32:
            return "add.f32", 32
        if t == F64:
            return "add.f64", 64
        if t == F16:
            return "add.noftz.f16", 16
        if t == BFLOAT and arch >= 90:
            return "add.noftz.bf16", 16
        return None
    if isinstance(t, ir.IntType) and t.width in (32, 64) and op in _INT_OPS:
        name, letter = _INT_OPS[op]
        return f"{name}.{letter}{t.width}", t.width
    return None


def _as_bits(b, v, bits: int):
    it = ir.IntType(bits)
    return v if v.type == it else b.bitcast(v, it)


def _asm(b, text: str, bits: int, args):
    it = ir.IntType(bits)
    reg = _REG[bits]
    cons = f"={reg},l," + ",".join(reg for _ in args[1:]) + ",~{memory}"
    fty = ir.FunctionType(it, [a.type for a in args])
    return b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)


def atomic_rmw(b, op: str, ptr, value, sem: str, scope: str, arch: int):
    """``atom.global.<scope>.<sem>.<op>.<type>`` of ``value`` at ``ptr``; None where PTX has no such atom."""
    found = _rmw_instruction(op, value.type, arch) if arch >= 70 else None
    if found is None:
        return None
    name, bits = found
    old = _asm(b, f"atom.global.{scope}.{sem}.{name} $0, [$1], $2;", bits, [ptr, _as_bits(b, value, bits)])
    return old if old.type == value.type else b.bitcast(old, value.type)


def atomic_cas(b, ptr, cmp, value, sem: str, scope: str, arch: int):
    """``atom.global.<sem>.<scope>.cas.b<n>`` (the order Triton writes) of integers ``cmp``/``value``; None
    where PTX has no such atom."""
    bits = value.type.width
    if arch < 70 or bits not in (16, 32, 64):
        return None
    return _asm(b, f"atom.global.{sem}.{scope}.cas.b{bits} $0, [$1], $2, $3;", bits, [ptr, cmp, value])

