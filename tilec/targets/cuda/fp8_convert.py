"""f32 -> fp8 codes by the conversion instruction of sm_89 and later (``cvt.rn.satfinite.{e4m3,e5m2}x2.f32``), giving
exactly the codes of tilec's one encoding (``tilec/codegen/fp8.py``): to nearest even, saturating (infinities too) at
+-448 or +-57344, a NaN always 0x7F, as the instruction gives it (measured on an H200 for quiet and signalling NaNs of
either sign). Toward-zero casts keep the integer encoding: the instruction rounds to nearest only. One instruction
converts two values, so a tile's registers are converted in pairs.

Why: the integer encoding is some twenty operations per element; an fp8 attention forward converts its whole
probability tile every iteration (Triton's tutorial 06 with fp8 ran at a fifth of Triton's speed).
"""
from __future__ import annotations

import llvmlite.ir as ir

I8, I16, F32 = ir.IntType(8), ir.IntType(16), ir.FloatType()


def encode_fp8(b, values, elem, rounding: str, arch: int):
    """The i8 codes of f32 ``values`` (see the module), two per conversion instruction, or None where the
    instruction does not apply."""
    if arch < 89 or rounding != "rtne" or any(v.type != F32 for v in values):
        return None
    e5m2 = elem.name == "f8e5m2"
    fty = ir.FunctionType(I16, [F32, F32])
    cvt = ir.InlineAsm(fty, f"cvt.rn.satfinite.{'e5m2x2' if e5m2 else 'e4m3x2'}.f32 $0, $1, $2;", "=h,f,f")
    pairs = []
    for i in range(0, len(values), 2):
        lo, hi = values[i], values[min(i + 1, len(values) - 1)]
        pairs.append(b.call(cvt, [hi, lo]))  # the first source goes to the upper byte
    codes = []
    for i, pair in enumerate(pairs):
        codes.append(b.trunc(pair, I8))
        if 2 * i + 1 < len(values):
            codes.append(b.trunc(b.lshr(pair, ir.Constant(I16, 8)), I8))
    return codes
