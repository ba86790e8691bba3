"""AMD's part of the math library: the f32 intrinsics the AMDGPU backend lowers itself to accurate instruction
sequences over the whole range (exp, exp2, log, log2, subnormals handled), so no ROCm device library is needed.
Everything else is the generic GPU math: ``tilec/gpu/lowering/mathlib32.py`` builds the remaining f32 functions
on ``llvm.exp2.f32`` (sin/cos/tan with a Payne-Hanek reduction for huge arguments, where the backend has only
``v_sin_f32``'s short approximation or no lowering at all: it reports "no libcall available" for tan, tanh, atan,
...), ``mathlib.py`` adds f16 through f32, and ``mathlib64.py`` f64 (LLVM aborts the whole process on f64
sin/cos/pow intrinsics for AMDGPU, so those never reach it).
"""
from __future__ import annotations

from ...codegen.intrinsics import call as _call
from ...gpu.lowering.mathlib import EXACT_ANY  # noqa: F401  (the f64 functions LLVM lowers; the tests list them)
from ...gpu.lowering.mathlib32 import F32Primitives, library, table
from ...gpu.lowering.types import F32

AMDGPU_CONSTANT_SPACE = 4  # the 2/pi table of the huge-argument sin/cos reduction


def _intrinsic(name):
    return lambda b, x: _call(b, f"llvm.{name}.f32", F32, [x])


PRIMITIVES = F32Primitives(exp2_reduced=_intrinsic("exp2"), exp2=_intrinsic("exp2"), exp=_intrinsic("exp"),
                           log=_intrinsic("log"), log2=_intrinsic("log2"),
                           table_address_space=AMDGPU_CONSTANT_SPACE)
F32_TABLE = table(PRIMITIVES)
LIBRARY = library("HIP", PRIMITIVES)
unary, pow_, atan2 = LIBRARY.unary, LIBRARY.pow_, LIBRARY.atan2
