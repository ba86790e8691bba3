"""f32 -> bf16 bits by the conversion instruction of sm_80 and later (``cvt.rn.bf16.f32``): to nearest even, as
tilec's integer rounding (``gpu/lowering/types.py: encode_bf16``) gives them; a NaN is then set to tilec's canonical
quiet NaN 0x7FC0, so every target and the interpreter store the same bits.

Why: the integer rounding is seven operations per element (shift, and, two adds, compare, shift, select); a bf16
matmul's epilogue converts its whole accumulator (64 values per thread for 128x128 tiles on 8 warps), which doubled
the kernel's PTX against the fp16 one's and its compile time with it.
"""
from __future__ import annotations

import llvmlite.ir as ir

I16, F32 = ir.IntType(16), ir.FloatType()


def encode_bf16(b, v, arch: int):
    """The i16 bf16 bits of f32 ``v`` (see the module), or None before sm_80 (no such instruction)."""
    if arch < 80 or v.type != F32:
        return None
    cvt = ir.InlineAsm(ir.FunctionType(I16, [F32]), "cvt.rn.bf16.f32 $0, $1;", "=h,f")
    bits = b.call(cvt, [v])
    return b.select(b.fcmp_unordered("uno", v, v), ir.Constant(I16, 0x7FC0), bits)
