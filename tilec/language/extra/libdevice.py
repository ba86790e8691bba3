"""The libdevice functions kernels commonly call, on tilec's math ops (float32/float64).

Each is either a direct IR op (``tanh``, ``log1p``, ``pow``, ``atan2``, ...) or a short composition of them
(``log10``, ``sinh``, ``asin``, ``hypot``, ...); the compositions are accurate to a few ulp away from their
functions' cancellation points, like the usual libm formulations.
"""
from __future__ import annotations

import math

from ..core import builtin, current, _unwrap
from .. import core as tlc


def _unary(op):
    def f(x):
        return current().math(op, _unwrap(x))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"libdevice {op} (the IR's ``{op}`` op)."
    return builtin(f)


exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tan, tanh = (
    _unary(n) for n in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh"))
floor, ceil, erf, log1p, expm1, trunc, sqrt_rn = (
    _unary(n) for n in ("floor", "ceil", "erf", "log1p", "expm1", "trunc", "sqrt_rn"))
round = _unary("round")  # noqa: A001 - libdevice's name: half away from zero


def _binop(op, x, y):
    s = current()
    x, y = s.binary_operands(_unwrap(x), _unwrap(y))
    return s._emit(op, x, y)


@builtin
def pow(x, y):  # noqa: A001
    return _binop("pow", x, y)


@builtin
def atan2(y, x):
    return _binop("atan2", y, x)


@builtin
def atan(x):
    return _binop("atan2", x, 1.0)


@builtin
def asin(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    return _binop("atan2", x, s.math("sqrt", s.mul(s.sub(1.0, x), s.add(1.0, x))))


@builtin
def acos(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    return _binop("atan2", s.math("sqrt", s.mul(s.sub(1.0, x), s.add(1.0, x))), x)


@builtin
def fabs(x):
    return current().abs(_unwrap(x))


@builtin
def fmod(x, y):
    return current().mod(_unwrap(x), _unwrap(y))


@builtin
def fmax(x, y):
    return current().minmax("max", _unwrap(x), _unwrap(y))


@builtin
def fmin(x, y):
    return current().minmax("min", _unwrap(x), _unwrap(y))


@builtin
def fma(x, y, z):
    return current().fma(_unwrap(x), _unwrap(y), _unwrap(z))


@builtin
def div_rn(x, y):
    return current().truediv(_unwrap(x), _unwrap(y))


@builtin
def log10(x):
    s = current()
    return s.mul(s.math("log2", _unwrap(x)), math.log10(2.0))


_LOG2_10_HI = float(__import__("numpy").float32(math.log2(10.0)))
_LOG2_10_LO = math.log2(10.0) - _LOG2_10_HI


@builtin
def exp10(x):
    """2^(x log2 10) with the product's rounding error (from an fma) and the constant's tail folded back in:
    a plain 2^(x*c) loses ~|x log2 10| ulps."""
    s = current()
    x = s.to_tensor(_unwrap(x))
    p = s.mul(x, _LOG2_10_HI)
    err = s.add(s.fma(x, _LOG2_10_HI, s.neg(p)), s.mul(x, _LOG2_10_LO))
    return s.mul(s.math("exp2", p), s.add(1.0, s.mul(err, math.log(2.0))))


@builtin
def sinh(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    small = s.compare("lt", s.abs(x), 1.0)
    e = s.math("expm1", x)
    em = s.math("expm1", s.neg(x))
    # (e^x - e^-x) / 2 through expm1 keeps small arguments accurate
    return s.where(small, s.mul(s.sub(e, em), 0.5), s.mul(s.sub(s.math("exp", x), s.math("exp", s.neg(x))), 0.5))


@builtin
def cosh(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    return s.mul(s.add(s.math("exp", x), s.math("exp", s.neg(x))), 0.5)


@builtin
def hypot(x, y):
    s = current()
    x, y = s.abs(s.to_tensor(_unwrap(x))), s.abs(s.to_tensor(_unwrap(y)))
    big, small = s.minmax("max", x, y), s.minmax("min", x, y)
    r = s.truediv(small, s.where(s.compare("eq", big, 0.0), 1.0, big))
    return s.mul(big, s.math("sqrt", s.add(1.0, s.mul(r, r))))


@builtin
def isnan(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    return s.compare("ne", x, x)


@builtin
def isinf(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    return s.compare("eq", s.abs(x), float("inf"))


@builtin
def signbit(x):
    s = current()
    x = s.to_tensor(_unwrap(x))
    it = tlc.int32 if x.dtype.primitive_bitwidth == 32 else tlc.int64
    return s.compare("lt", s.cast(x, it, bitcast=True), 0)


@builtin
def popc(x):
    return current().unary("popc", current().to_tensor(_unwrap(x)))


@builtin
def clz(x):
    return current().unary("clz", current().to_tensor(_unwrap(x)))


@builtin
def rint(x):
    """Round half to even: ``round`` corrected at exact halves."""
    s = current()
    x = s.to_tensor(_unwrap(x))
    r = s.math("round", x)
    half = s.compare("eq", s.abs(s.sub(x, s.math("trunc", x))), 0.5)
    odd = s.compare("ne", s.mod(r, 2.0), 0.0)
    return s.where(s.logical_and(half, odd), s.sub(r, s.where(s.compare("gt", x, 0.0), 1.0, -1.0)), r)


nearbyint = rint
