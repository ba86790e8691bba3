"""NVIDIA's part of the math library: how to get 2**x. Everything else is the generic GPU math
(``tilec/gpu/lowering/mathlib32.py`` for f32, ``mathlib.py`` for f16 and ``mathlib64.py`` for f64).

``ex2.approx.ftz.f32`` is one MUFU instruction within about 2 ulp; ``tl.exp2`` is exactly that instruction, as in
Triton (the non-ftz form adds a compare and two multiplies around it to produce subnormal results, a third of
attention's softmax work), so its results below 2**-126 flush to zero. ``tl.exp`` (and tanh, sigmoid, erf) is the
non-ftz ``ex2.approx.f32`` of x log2e rounded, corrected by the rounding's remainder (``exp_corrected``); pow hands
``ex2.approx.ftz`` reduced arguments in [-1/2, 1/2] and scales the result exactly: right over the whole range,
subnormal results included. NVPTX lowers no accurate exp/log of its own (``lg2.approx`` loses
relative accuracy near 1), so those come from the generic library too. f32 ``/`` (``fdiv``) is ``div.full.f32``,
within 2 ulp, as in Triton; ``tl.math.div_rn`` and ``tl.fdiv(..., ieee_rounding=True)`` stay correctly rounded. The kernel's own f32 arithmetic is never
``.ftz``; the generic log also normalises subnormal inputs with integer operations only.
"""
from __future__ import annotations

from ...codegen.intrinsics import call as _call
from ...gpu.lowering.mathlib32 import F32Primitives, library
from ...gpu.lowering.types import F32

NVPTX_CONSTANT_SPACE = 4  # ``.const``: the 2/pi table of the huge-argument sin/cos reduction


def ex2_approx(b, x):
    """``ex2.approx.ftz.f32``: 2**x within about 2 ulp; subnormal inputs and results are zeros."""
    return _call(b, "llvm.nvvm.ex2.approx.ftz.f", F32, [x])


def ex2_approx_full(b, x):
    """``ex2.approx.f32``: 2**x within about 2 ulp, subnormal results included (ptxas scales around the MUFU)."""
    return _call(b, "llvm.nvvm.ex2.approx.f", F32, [x])


def div_full(b, x, y):
    """``div.full.f32``: x / y within 2 ulp over the whole range (Triton's f32 ``/``): a reciprocal and a multiply
    with operand scaling, where the correctly rounded ``div.rn.f32`` adds a check and a slow-path call per quotient;
    ptxas shares the reciprocal between quotients of one divisor (attention's ``acc / l_i[:, None]``)."""
    return _call(b, "llvm.nvvm.div.full", F32, [x, y])


PRIMITIVES = F32Primitives(exp2_reduced=ex2_approx, exp2=ex2_approx, exp2_flushes_subnormals=True,
                           exp2_full=ex2_approx_full, table_address_space=NVPTX_CONSTANT_SPACE, div=div_full)
LIBRARY = library("CUDA", PRIMITIVES)
unary, pow_, atan2 = LIBRARY.unary, LIBRARY.pow_, LIBRARY.atan2
