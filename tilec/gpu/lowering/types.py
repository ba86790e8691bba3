"""The GPU register model: tir scalar types -> llvmlite types, constants, and the memory form of each type.

bf16 has no llvmlite type: bf16 values live in f32 registers (exact, since bf16 is a truncated f32) and only
become 16-bit patterns at memory boundaries (:func:`to_memory` / :func:`from_memory`). fp8 likewise lives in
f32 registers, always holding a value of its format (:func:`round_fp8`), with its 8-bit code in memory. The codes
convert as on the CPU (``tilec/codegen/fp8.py``) by integer operations every GPU has, or by a target's own
conversion instruction where it gives the same codes (``GpuTarget.encode_fp8``). A rounding (a cast, an op's
result) saturates, infinities too, as the hardware's conversion does; a value loaded and stored again keeps its code
(an e5m2 infinity stays one; a NaN keeps its code, as on the CPU).
This register model differs from tilec/codegen/llvm_types.py (the CPU's: 16-bit codes for bf16, i8 codes for fp8), so only the
byte sizes are shared.
"""
from __future__ import annotations

from contextvars import ContextVar

import llvmlite.ir as ir
import numpy as np

from ...codegen import fp8
from ...codegen.llvm_types import byte_size
from ...errors import BackendError
from ...ir.numerics import encode, quantize
from ...ir.types import PointerType, ScalarType

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
VOID = ir.VoidType()

_BY_NAME = {"i1": I1, "i8": I8, "i16": I16, "i32": I32, "i64": I64, "u8": I8, "u16": I16, "u32": I32,
            "u64": I64, "f16": F16, "bf16": F32, "f32": F32, "f64": F64, "f8e4m3": F32, "f8e5m2": F32}
FP8 = frozenset({"f8e4m3", "f8e5m2"})
_MEMORY = {"bf16": I16, "f8e4m3": I8, "f8e5m2": I8, "i1": I8}


def llvm_type(t):
    """Register type of a scalar or pointer element."""
    t = t.element
    if isinstance(t, PointerType):
        return ir.PointerType(addrspace=t.address_space)
    if isinstance(t, ScalarType):
        return _BY_NAME[t.name]
    raise BackendError(f"no LLVM type for {t}")


def memory_type(t):
    """Type of the element as stored in memory (differs from the register type for bf16/fp8/i1)."""
    t = t.element
    if isinstance(t, ScalarType) and t.name in _MEMORY:
        return _MEMORY[t.name]
    return llvm_type(t)


def memory_bytes(t) -> int:
    return byte_size(memory_type(t))


def constant(t, value):
    lt = llvm_type(t)
    if isinstance(lt, ir.IntType):
        v = int(value)
        if lt.width == 1:
            return ir.Constant(lt, 1 if v else 0)
        v &= (1 << lt.width) - 1
        return ir.Constant(lt, v)
    if isinstance(lt, ir.PointerType):
        return ir.Constant(lt, None)
    if t.element.name in FP8:  # the format's value, as the evaluator rounds it, remembering its code
        value = quantize(float(value), t.element)
        c = ir.Constant(lt, float(value))
        c.fp8_code = (t.element.name, ir.Constant(I8, int(encode(np.float32(value), t.element))))
        return c
    return ir.Constant(lt, float(value))


#: the lowering's target's fp8 conversion (``GpuTarget.encode_fp8``) while a module is lowered; every register
#: model helper below reaches it without a target argument
FP8_ENCODER: ContextVar = ContextVar("fp8_encoder", default=None)


def encode_fp8(b: ir.IRBuilder, v, elem, rounding: str = "rtne"):
    """f32 register -> fp8 code: the target's conversion where it has one, else the integer encoding. A value
    that :func:`round_fp8` made gives back the code it was decoded from."""
    known = getattr(v, "fp8_code", None)
    if known is not None and known[0] == elem.name:
        return known[1]
    return encode_fp8_all(b, [v], elem, rounding)[0]


def encode_fp8_all(b: ir.IRBuilder, values, elem, rounding: str = "rtne"):
    """f32 registers -> their fp8 codes, all at once (a target's instruction may convert two)."""
    target = FP8_ENCODER.get()
    codes = target.encode_fp8(b, list(values), elem, rounding) if target is not None else None
    return codes if codes is not None else [fp8.encode(b, v, elem, rounding) for v in values]


def to_memory(b: ir.IRBuilder, t, v):
    """Register value -> the bits stored in memory."""
    name = t.element.name if isinstance(t.element, ScalarType) else ""
    if name == "i1":
        return b.zext(v, I8)
    if name == "bf16":
        return encode_bf16(b, v)
    if name in FP8:
        return encode_fp8(b, v, t.element)
    return v


def from_memory(b: ir.IRBuilder, t, v):
    name = t.element.name if isinstance(t.element, ScalarType) else ""
    if name == "i1":
        return b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    if name == "bf16":  # remembers the bits: stored again (a layout conversion's round trip), they go as they came
        value = b.bitcast(b.shl(b.zext(v, I32), ir.Constant(I32, 16)), F32)
        value.bf16_bits = v
        return value
    if name in FP8:  # remembers the code: a value copied from memory to memory keeps its bytes (NaNs, infinities)
        return decoded_with_code(b, t.element, v)
    return v


def encode_bf16(b: ir.IRBuilder, v):
    """f32 register -> its bf16 bits (i16): to nearest even, a NaN the canonical quiet NaN 0x7FC0. A value widened
    from bf16 bits (:func:`from_memory`, so also :func:`round_bf16`'s) gives back those bits.

    In integers on every target: a target's own conversion instruction was tried and measured slower for a bf16
    matmul, whose epilogue it shortened but whose main loop the assembler then scheduled worse
    (``docs/performance.md``, the bf16 conversion)."""
    known = getattr(v, "bf16_bits", None)
    if known is not None:
        return known
    word = b.bitcast(v, I32)
    lsb = b.and_(b.lshr(word, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    rounded = b.add(word, b.add(ir.Constant(I32, 0x7FFF), lsb))
    isnan = b.fcmp_unordered("uno", v, v)
    out = b.trunc(b.lshr(rounded, ir.Constant(I32, 16)), I16)
    return b.select(isnan, ir.Constant(I16, 0x7FC0), out)


def round_bf16(b: ir.IRBuilder, v):
    """An f32 register value rounded to the nearest bf16 (kept in f32), remembering its bits (:func:`from_memory`):
    a rounded value stored right after (``x.to(tl.bfloat16)`` then ``tl.store``) is not converted a second time."""
    bf16 = ScalarType("bf16")
    return from_memory(b, bf16, to_memory(b, bf16, v))


def round_fp8(b: ir.IRBuilder, t, v, rounding: str = "rtne"):
    """An f32 register value rounded to fp8 type ``t`` (kept in f32): through its code, so saturation, infinities
    and NaN follow the one encoding."""
    return round_fp8_all(b, t, [v], rounding)[0]


def round_fp8_all(b: ir.IRBuilder, t, values, rounding: str = "rtne"):
    """:func:`round_fp8` of several registers at once. Each result remembers its code (``fp8_code``), so storing
    it or handing it to an fp8 matrix unit right after the cast costs no second conversion (the decode is then
    dead code)."""
    elem = t.element
    return [decoded_with_code(b, elem, code) for code in encode_fp8_all(b, values, elem, rounding)]


def decoded_with_code(b: ir.IRBuilder, elem, code):
    """The f32 value of fp8 ``code`` (i8) of type ``elem``, remembering the code, so that storing the value gives
    back exactly that code (a code from memory or from an encoding)."""
    value = fp8.decode(b, code, elem)
    value.fp8_code = (elem.name, code)
    return value
