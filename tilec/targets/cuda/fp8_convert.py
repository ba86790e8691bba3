"""f32 -> fp8 codes by the conversion instruction of sm_89 and later (``cvt.rn.satfinite.{e4m3,e5m2}x2.f32``), giving
exactly the codes of tilec's one encoding (``tilec/codegen/fp8.py``): to nearest even; e4m3 saturating at +-448
(infinities too), as the instruction does; e5m2 overflowing to infinity from 61440 up (halfway past the largest
finite 57344, which rounds to the even 65536) where the instruction saturates to the largest finite code, so adding the compare's
result puts the infinity back; a NaN always 0x7F, as the instruction gives it (measured on an H200 for
quiet and signalling NaNs of either sign). Toward-zero casts keep the integer encoding: the instruction rounds to nearest
only. One instruction converts two values, so a tile's registers are converted in pairs.

Why: the integer encoding is some twenty operations per element; an fp8 attention forward converts its whole
probability tile every iteration (Triton's tutorial 06 with fp8 ran at a fifth of Triton's speed).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic

I8, I16, I32, F32 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.FloatType()
#: the smallest magnitude e5m2 rounds to infinity (to nearest even)
E5M2_OVERFLOW = 61440.0


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
    if e5m2:
        pairs = _infinities_back(b, values, pairs)
    codes = []
    for i, pair in enumerate(pairs):
        codes.append(b.trunc(pair, I8))
        if 2 * i + 1 < len(values):
            codes.append(b.trunc(b.lshr(pair, ir.Constant(I16, 8)), I8))
    return codes


#: from this many values on, one test of their largest magnitude guards the per-value fix-ups
GUARDED = 8


def _infinities_back(b, values, pairs):
    """``pairs`` with e5m2's overflow to infinity put back: past the threshold the instruction gives the largest
    finite code, so adding the compare's result (per byte) makes it infinity. Overflow is rare, so for a tile's
    worth of values the fix-ups run only where the largest magnitude among them overflows (a max tree and one
    compare on the common path)."""
    mags = [intrinsic(b, "llvm.fabs.f32", F32, [v]) for v in values]

    def fixed():
        out = []
        for i, pair in enumerate(pairs):
            lo, hi = mags[2 * i], mags[min(2 * i + 1, len(values) - 1)]
            out.append(b.add(pair, b.or_(_overflows(b, lo), b.shl(_overflows(b, hi), ir.Constant(I16, 8)))))
        return out

    if len(values) < GUARDED:
        return fixed()
    level = mags
    while len(level) > 1:
        level = [intrinsic(b, "llvm.maxnum.f32", F32, level[i:i + 2]) if i + 1 < len(level) else level[i]
                 for i in range(0, len(level), 2)]
    before = b.block
    with b.if_then(b.fcmp_ordered(">=", level[0], ir.Constant(F32, E5M2_OVERFLOW)), likely=False):
        slow = fixed()
        slow_end = b.block
    out = []
    for fast, fix in zip(pairs, slow):
        phi = b.phi(I16)
        phi.add_incoming(fast, before)
        phi.add_incoming(fix, slow_end)
        out.append(phi)
    return out


def _overflows(b, mag):
    """1 (i16) where e5m2 rounds a value of magnitude ``mag`` to an infinity (to nearest even), else 0."""
    return b.zext(b.fcmp_ordered(">=", mag, ir.Constant(F32, E5M2_OVERFLOW)), I16)
