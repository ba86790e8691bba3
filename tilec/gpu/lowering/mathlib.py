"""A GPU target's math library (``GpuTarget.math``) from an f32 function table alone.

The f32 table comes from :mod:`.mathlib32` (the formulas once, over the few primitives a vendor supplies: how it
gets 2**x, and which of exp/log/log2 its LLVM backend lowers accurately). The rest is the same for every vendor:
f64 functions that are exact in any precision are LLVM intrinsics every GPU backend lowers
(sqrt, floor, ceil, trunc, round); no GPU has f64 transcendental instructions, and LLVM either has no libcall
for them or aborts on them, so those come from :mod:`.mathlib64` (range reductions and polynomials, within
1-4 ulp); f16 is computed in f32 and rounded once.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as _call, mangle
from ...errors import BackendError
from . import mathlib64
from .types import F32, F64

#: exact in every precision: one LLVM intrinsic each (libdevice's sqrt_rn is the correctly rounded sqrt)
EXACT_ANY = {"sqrt": "sqrt", "sqrt_rn": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
             "round": "round"}


class GpuMath:
    """``unary(b, name, x)``, ``pow_(b, x, y)``, ``atan2(b, y, x)`` and ``fdiv`` over f16/f32/f64 registers; ``name`` as in
    ``tilec.ir.ops.UNARY_OPS``. ``f32`` maps names to ``fn(b, x)`` (``mathlib32.table``); ``pow_f32``/``atan2_f32``
    are the binary functions. What neither covers raises a BackendError naming ``backend``."""

    def __init__(self, backend: str, f32: dict, pow_f32, atan2_f32, div_f32=None):
        self.backend, self.f32 = backend, f32
        self._pow_f32, self._atan2_f32, self._div_f32 = pow_f32, atan2_f32, div_f32

    def fdiv(self, b, x, y, ieee_rounding: bool):
        """``fdiv``: the vendor's approximate f32 division where it has one (``F32Primitives.div``), else IEEE's."""
        if x.type == F32 and not ieee_rounding and self._div_f32 is not None:
            return self._div_f32(b, x, y)
        return b.fdiv(x, y)

    def unary(self, b, name: str, x):
        t = x.type
        if t == F32:
            fn = self.f32.get(name)
            if fn is None:
                raise BackendError(f"'{name}' is not supported by the {self.backend} backend")
            return fn(b, x)
        if name in EXACT_ANY:
            return _call(b, f"llvm.{EXACT_ANY[name]}.{mangle(t)}", t, [x])
        if t == F64:
            if name == "rsqrt":
                return b.fdiv(ir.Constant(F64, 1.0), _call(b, "llvm.sqrt.f64", F64, [x]))
            fn = mathlib64.UNARY.get(name)
            if fn is None:
                raise BackendError(f"f64 '{name}' is not supported by the {self.backend} backend")
            return fn(b, x)
        return b.fptrunc(self.unary(b, name, b.fpext(x, F32)), t)

    def pow_(self, b, x, y):
        return self._binary(b, x, y, mathlib64.pow_, self._pow_f32)

    def atan2(self, b, y, x):
        return self._binary(b, y, x, mathlib64.atan2, self._atan2_f32)

    @staticmethod
    def _binary(b, x, y, f64, f32):
        t = x.type
        if t == F64:
            return f64(b, x, y)
        if t == F32:
            return f32(b, x, y)
        return b.fptrunc(f32(b, b.fpext(x, F32), b.fpext(y, F32)), t)
