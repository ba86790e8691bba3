"""Math functions on f32/f64 scalars or vectors: LLVM intrinsics where the target has instructions, a
vectorised polynomial for f32 exp/exp2 (the hot path of softmax), and libm calls lane by lane for the rest
(libm's symbols are in the process, so the in-process JIT resolves them)."""
from __future__ import annotations

import llvmlite.ir as ir

from . import llvm_types as LT
from .intrinsics import call as icall
from .intrinsics import declare


def _intr(name):
    def f(b, x):
        return icall(b, name, x.type, [x], (x.type,))
    return f


def _is_f32(x):
    return LT.elem_of(x.type) == LT.F32


def _c(x, v):
    return LT.const(LT.elem_of(x.type), v, LT.width_of(x.type))


def _libm(name32, name64):
    """Call libm per lane (vector ops are split into scalar calls)."""
    def f(b, x, *rest):
        ety = LT.elem_of(x.type)
        name = name32 if ety == LT.F32 else name64
        w = LT.width_of(x.type)
        args = (x,) + rest

        def one(vals):
            fn = declare(b.module, name, ety, [ety] * len(vals))
            return b.call(fn, list(vals))
        if w == 1:
            return one(args)
        out = ir.Constant(x.type, ir.Undefined)
        for i in range(w):
            lane = [b.extract_element(a, LT.const(LT.I32, i)) for a in args]
            out = b.insert_element(out, one(lane), LT.const(LT.I32, i))
        return out
    return f


def _clamp(b, x, lo, hi):
    """Clamp with compares (not minnum/maxnum) so NaN passes through."""
    x = b.select(b.fcmp_ordered("<", x, lo), lo, x)
    return b.select(b.fcmp_ordered(">", x, hi), hi, x)


def _exp_f32(b, x, base2):
    """e**x (or 2**x) for f32 lanes: x = n*ln2 + r with the Cody-Waite split of ln2 (so r is exact enough for
    large |x|), e**r by the cephes degree-6 polynomial, 2**n built in the exponent field in two halves so that
    results reaching into the denormal range are right; NaN passes through."""
    w = LT.width_of(x.type)
    ity = LT.vec(LT.I32, w)
    rint = lambda v: icall(b, "llvm.rint", v.type, [v], (v.type,))  # noqa: E731
    if base2:
        t = _clamp(b, x, _c(x, -151.0), _c(x, 128.5))
        n = rint(t)
        r = b.fmul(b.fsub(t, n), _c(x, 0.6931471805599453))
    else:
        t = _clamp(b, x, _c(x, -104.0), _c(x, 89.0))
        n = rint(b.fmul(t, _c(x, 1.4426950408889634)))
        r = b.fsub(b.fsub(t, b.fmul(n, _c(x, 0.693359375))), b.fmul(n, _c(x, -2.12194440e-4)))
    p = _c(x, 1.9875691500e-4)
    for k in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1):
        p = b.fadd(b.fmul(p, r), _c(x, k))
    y = b.fadd(b.fadd(b.fmul(b.fmul(p, r), r), r), _c(x, 1.0))
    ni = b.fptosi(n, ity)
    n1 = b.ashr(ni, LT.const(LT.I32, 1, w))
    n2 = b.sub(ni, n1)

    def pow2(k):
        return b.bitcast(b.shl(b.add(k, LT.const(LT.I32, 127, w)), LT.const(LT.I32, 23, w)), x.type)
    res = b.fmul(b.fmul(y, pow2(n1)), pow2(n2))
    return b.select(b.fcmp_unordered("uno", x, x), x, res)


def exp2(b, x):
    return _exp_f32(b, x, True) if _is_f32(x) else _intr("llvm.exp2")(b, x)


def exp(b, x):
    return _exp_f32(b, x, False) if _is_f32(x) else _intr("llvm.exp")(b, x)


def rsqrt(b, x):
    return b.fdiv(_c(x, 1.0), _intr("llvm.sqrt")(b, x))


def sigmoid(b, x):
    return b.fdiv(_c(x, 1.0), b.fadd(_c(x, 1.0), exp(b, b.fneg(x))))


UNARY_MATH = {
    "exp": exp, "exp2": exp2,
    "log": _libm("logf", "log"), "log2": _libm("log2f", "log2"),
    "sqrt": _intr("llvm.sqrt"), "sqrt_rn": _intr("llvm.sqrt"), "rsqrt": rsqrt,
    "sin": _libm("sinf", "sin"), "cos": _libm("cosf", "cos"), "tan": _libm("tanf", "tan"),
    "tanh": _libm("tanhf", "tanh"), "erf": _libm("erff", "erf"), "log1p": _libm("log1pf", "log1p"),
    "expm1": _libm("expm1f", "expm1"),
    "floor": _intr("llvm.floor"), "ceil": _intr("llvm.ceil"), "trunc": _intr("llvm.trunc"),
    "round": _intr("llvm.round"), "sigmoid": sigmoid,
}
BINARY_MATH = {"pow": _libm("powf", "pow"), "atan2": _libm("atan2f", "atan2")}
