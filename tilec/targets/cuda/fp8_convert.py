"""f32 -> fp8 codes by the conversion instruction of sm_89 and later (``cvt.rn.satfinite.{e4m3,e5m2}x2.f32``), giving
exactly the codes of tilec's one encoding (``tilec/codegen/fp8.py``): to nearest even; e4m3 saturating at +-448
(infinities too), as the instruction does; e5m2 overflowing to infinity from 61440 up (halfway past the largest
finite 57344, which rounds to the even 65536) where the instruction saturates, so a compare and a select put the
infinity back; a NaN always 0x7F. Toward-zero casts keep the integer encoding: the instruction rounds to nearest
only.

Why: the integer encoding is some twenty operations per element; an fp8 attention forward converts its whole
probability tile every iteration (Triton's tutorial 06 with fp8 ran at a fifth of Triton's speed).
"""
from __future__ import annotations

import llvmlite.ir as ir

I8, I16, I32, F32 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.FloatType()
#: the smallest magnitude e5m2 rounds to infinity (to nearest even)
E5M2_OVERFLOW = 61440.0


def encode_fp8(b, value, elem, rounding: str, arch: int):
    """The i8 code of f32 ``value`` (see the module), or None where the instruction does not apply."""
    if arch < 89 or rounding != "rtne" or value.type != F32:
        return None
    e5m2 = elem.name == "f8e5m2"
    kind = "e5m2x2" if e5m2 else "e4m3x2"
    fty = ir.FunctionType(I16, [F32, F32])
    pair = b.call(ir.InlineAsm(fty, f"cvt.rn.satfinite.{kind}.f32 $0, $1, $2;", "=h,f,f"), [value, value])
    code = b.trunc(pair, I8)
    if e5m2:
        sign = b.trunc(b.and_(b.lshr(b.bitcast(value, I32), ir.Constant(I32, 24)), ir.Constant(I32, 0x80)), I8)
        mag = b.call(b.module.declare_intrinsic("llvm.fabs", [F32]), [value])
        over = b.fcmp_ordered(">=", mag, ir.Constant(F32, E5M2_OVERFLOW))
        code = b.select(over, b.or_(sign, ir.Constant(I8, 0x7C)), code)
    return b.select(b.fcmp_unordered("uno", value, value), ir.Constant(I8, 0x7F), code)
