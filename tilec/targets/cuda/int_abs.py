"""``tl.abs`` of int8 and int16 on NVIDIA GPUs, computed where neither LLVM nor ptxas can mistake it.

``llvm.abs.i16`` becomes PTX ``abs.s16``, and ptxas (CUDA 13) assembles that as a 32-bit ``IABS`` of the
sign-extended operand whose result later compares and widenings read as if it were already the sign extension of
the 16-bit answer: ``abs(int16(-32768))`` is stored as -32768 but compares as 32768, so ``tl.abs(x) >= 12`` held
for x = -32768. Every IR form of the same function (sign-extend, ``llvm.abs.i32``, truncate; a select; the
xor-shift idiom; ``umin(x, -x)``) is folded back to ``llvm.abs.i16`` by LLVM's optimiser before code
generation.

``llvm.nvvm.sad.i(x, 0, 0)`` (PTX ``sad.s32``: ``|x - 0| + 0``) is an NVIDIA intrinsic the optimiser does not
look into: on the sign-extended operand it gives the 32-bit absolute value, truncated to the narrow type
afterwards (``cvt.u16.u32``), and ptxas (a ``VABSDIFF``) re-extends the truncated value before it compares it.
``tests/gpu/test_int_abs.py`` checks the PTX and the SASS, so an LLVM that starts folding ``sad`` shows up there.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic, mangle


def int_abs(b: ir.IRBuilder, x):
    """Wrapping ``|x|`` of a signed integer register; narrower than 32 bits through ``sad.s32``."""
    bits = x.type.width
    if bits >= 32:
        return intrinsic(b, f"llvm.abs.{mangle(x.type)}", x.type, [x, ir.Constant(ir.IntType(1), 0)])
    i32 = ir.IntType(32)
    zero = ir.Constant(i32, 0)
    wide = intrinsic(b, "llvm.nvvm.sad.i", i32, [b.sext(x, i32), zero, zero])
    return b.trunc(wide, x.type)
