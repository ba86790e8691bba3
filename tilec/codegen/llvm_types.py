"""How tir types look in LLVM: registers vs memory, scalars vs fixed-width vectors.

Signedness is not an LLVM notion: ``i32`` and ``u32`` both become ``i32`` and the ops read signedness from the
tir type. ``i1`` is ``i1`` in registers but one byte in memory so that buffers are byte-addressable. llvmlite has
no ``bfloat`` type, so one is declared here.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..errors import BackendError
from ..ir import types as T
from ..ir.numerics import encode, round_to


class BFloatType(ir.types._BaseFloatType):
    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self):
        return "bfloat"

    def format_constant(self, value):
        import struct
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 if value == value else 0x7FC0
        return f"0xR{bits & 0xFFFF:04X}"


BFloatType._create_instance()

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F16, BF16, F32, F64 = ir.HalfType(), BFloatType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()

_FLOATS = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}
FP8 = frozenset({"f8e4m3", "f8e5m2"})  # no LLVM type: held as their i8 codes, converted by casts.py
# bf16 is held as its 16-bit code too: LLVM promotes ``bfloat`` values (phis, selects, masked loads) to f32 and
# back on hosts without native bf16, through ``__truncsfbf2``, a libcall the in-process JIT cannot resolve.
CODES = {"f8e4m3": I8, "f8e5m2": I8, "bf16": ir.IntType(16)}


def scalar_type(t: T.Type) -> ir.Type:
    """The register type of a tir scalar or pointer (tiles: of their element)."""
    e = t.element
    if isinstance(e, T.PointerType):
        return PTR
    if e.kind == "float":
        if e.name in CODES:
            return CODES[e.name]
        try:
            return _FLOATS[e.name]
        except KeyError:
            raise BackendError(f"element type {e} is not supported by the LLVM backends") from None
    return ir.IntType(e.bits)


def memory_type(t: T.Type) -> ir.Type:
    """The in-memory type of one element (``i1`` is stored as a byte)."""
    return I8 if t.element == T.i1 else scalar_type(t)


def vec(ty: ir.Type, w: int) -> ir.Type:
    """``ty`` at width ``w``: the scalar itself for w == 1, else ``<w x ty>``."""
    return ty if w == 1 else ir.VectorType(ty, w)


def elem_of(ty: ir.Type) -> ir.Type:
    return ty.element if isinstance(ty, ir.VectorType) else ty


def width_of(ty: ir.Type) -> int:
    return ty.count if isinstance(ty, ir.VectorType) else 1


def const(ty: ir.Type, value, w: int = 1):
    """A constant of scalar type ``ty`` (int, float or bool value), splatted to width ``w``."""
    if isinstance(ty, ir.IntType):
        if isinstance(value, float):
            value = int(value)
        value = int(value) & ((1 << ty.width) - 1)
    elif isinstance(ty, ir.types._BaseFloatType):
        value = float(value)
    c = ir.Constant(ty, value)
    return c if w == 1 else ir.Constant(ir.VectorType(ty, w), [c] * w)


def const_of(t: T.Type, value, w: int = 1):
    """A constant of tir type ``t``'s element (fp8 values become their codes)."""
    e = t.element
    if not isinstance(e, T.PointerType) and e.name in CODES:
        value = int(encode(round_to(float(value), e), e))
    return const(scalar_type(t), value, w)


def byte_size(ty: ir.Type) -> int:
    if isinstance(ty, ir.PointerType):
        return 8
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    return {F16: 2, BF16: 2, F32: 4, F64: 8}[ty]
