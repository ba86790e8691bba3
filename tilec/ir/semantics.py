"""numpy reference semantics of the elementwise ops: the kernels that the op classes name as their ``numpy``
meaning (``tilec.ir.ops.arithmetic``), the comparisons and the conversions.

Each kernel ``fn(element type, *operands, **attrs)`` computes on storage-dtype arrays of any
(broadcast-compatible) shape; the caller (``ElementwiseOp.evaluate``) rounds the result to the op's result type
with :func:`numerics.finish`. Shapes are never taken from the op's types, so the same functions run the combine
regions of ``reduce``/``scan`` over whole slices at once.

Integer conventions (``tilec.ir.ops``): wrapping arithmetic; ``div`` truncates toward zero and ``rem`` takes the
dividend's sign; division by zero is undefined and yields 0 here; shift amounts are read as unsigned and a shift
by the width or more gives 0 (``shl``, logical ``shr``) or the sign fill (arithmetic ``shr``). ``i1`` arithmetic
wraps modulo 2.
"""
from __future__ import annotations

import math

import numpy as np

from .fma import fma_f64, fma_via_f64
from .numerics import float_to_int, from_bits, round_to, to_bits, unsigned_of
from .types import PointerType, ScalarType


def _is_float(e):
    return isinstance(e, ScalarType) and e.kind == "float"


def wrapping(fn):
    """Run an integer function on i1 operands modulo 2."""
    def run(e, *xs):
        if isinstance(e, ScalarType) and e.kind == "bool":
            r = fn(ScalarType("u8"), *(x.astype(np.uint8) for x in xs))
            return (np.asarray(r) & 1).astype(bool)
        return fn(e, *xs)
    return run


def plain(ufunc):
    """A numpy function of the operands alone (the element type and the op's attributes change nothing)."""
    return lambda e, *xs, **attrs: ufunc(*xs)


def div(e, a, b):
    if _is_float(e):
        return a / b
    zero = b == 0
    one, nil = a.dtype.type(1), a.dtype.type(0)  # typed: numpy 1 would promote 0-d uint64 with ints to float
    bs = np.where(zero, one, b).astype(a.dtype)
    if e.kind == "uint":
        q = a // bs
    else:
        r = np.fmod(a, bs)
        q = (a - r) // bs  # exact, so floor == trunc; INT_MIN / -1 wraps to INT_MIN
    return np.where(zero, nil, q).astype(a.dtype)


def rem(e, a, b):
    if _is_float(e):
        return np.fmod(a, b)
    zero = b == 0
    one, nil = a.dtype.type(1), a.dtype.type(0)
    r = np.fmod(a, np.where(zero, one, b).astype(a.dtype))
    return np.where(zero, nil, r).astype(a.dtype)


def shl(e, a, b):
    u = unsigned_of(e)
    s = b.view(u) if b.dtype.kind == "i" else b.astype(u)
    r = np.where(s >= u(e.bits), u(0), a.view(u) << np.minimum(s, u(e.bits - 1)).astype(u)).astype(u)
    return r.view(a.dtype)


def shr(e, a, b):
    u = unsigned_of(e)
    s = b.view(u) if b.dtype.kind == "i" else b.astype(u)
    if e.kind == "int":
        return a >> np.minimum(s, u(e.bits - 1)).astype(a.dtype)
    return np.where(s >= u(e.bits), u(0), a >> np.minimum(s, u(e.bits - 1)).astype(u)).astype(a.dtype)


def umulhi(e, a, b):
    u = unsigned_of(e)
    x, y = a.view(u).astype(np.uint64), b.view(u).astype(np.uint64)
    if e.bits <= 32:
        return (x * y >> np.uint64(e.bits)).astype(u).view(a.dtype)
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    xl, xh, yl, yh = x & lo32, x >> s32, y & lo32, y >> s32
    ll, lh, hl, hh = xl * yl, xl * yh, xh * yl, xh * yh
    mid = (ll >> s32) + (lh & lo32) + (hl & lo32)
    return (hh + (lh >> s32) + (hl >> s32) + (mid >> s32)).view(a.dtype)


def minmax(fn_prop, fn_ignore, is_max):
    def run(e, a, b, propagate_nan=False):
        if _is_float(e):
            r = (fn_prop if propagate_nan else fn_ignore)(a, b)
            zeros = (np.asarray(a) == 0) & (np.asarray(b) == 0)
            if np.any(zeros):  # -0.0 < +0.0, as the code generators do (numpy's answer depends on the length)
                neg = np.signbit(a) & np.signbit(b) if is_max else np.signbit(a) | np.signbit(b)
                r = np.where(zeros, np.where(neg, -np.abs(r), np.abs(r)), r).astype(np.result_type(r), copy=False)
            return r
        return fn_prop(a, b)
    return run


erf = np.vectorize(math.erf, otypes=[np.float64])


def round_half_away(e, x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


_BYTE_POPC = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def popc(e, x):
    """Byte-table popcount (np.bitwise_count needs numpy 2)."""
    if e.kind == "bool":
        return x
    ut = unsigned_of(e)
    u = x.view(ut)
    n = sum(_BYTE_POPC[((u >> ut(8 * k)) & ut(0xFF)).astype(np.intp)] for k in range(e.bits // 8))
    return np.asarray(n).astype(x.dtype)


def clz(e, x):
    if e.kind == "bool":
        return ~x
    u = unsigned_of(e)
    y = x.view(u)
    n = np.zeros(y.shape, dtype=np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= e.bits:
            continue
        top_zero = (y >> u(e.bits - s)) == 0
        n = n + np.where(top_zero, s, 0)
        y = np.where(top_zero, y << u(s), y).astype(u)
    n = n + ((y >> u(e.bits - 1)) == 0)
    return n.astype(x.dtype)


def neg(e, x):
    return x if e.kind == "bool" else np.negative(x)


def abs_(e, x):
    return x if e.kind in ("bool", "uint") else np.abs(x)


def f64(fn):
    """Math functions numpy lacks at narrow precision: compute in float64, round by the caller."""
    return lambda e, x: fn(x.astype(np.float64))


def fma(e, a, b, c):
    """``a * b + c`` rounded once, as the hardware does."""
    return fma_f64(a, b, c) if e.bits == 64 else fma_via_f64(a, b, c)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def rsqrt(e, x):
    return 1 / np.sqrt(x)


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal}


# -- conversions --------------------------------------------------------------------------------------------
def cast(x, src, dst, rounding="rtne"):
    """Value conversion between element types ``src`` -> ``dst`` (see CastOp)."""
    s, d = src.element, dst.element
    if isinstance(d, PointerType):  # from a pointer or an integer address
        return x.astype(np.int64).view(np.uint64) if x.dtype.kind == "i" else x.astype(np.uint64)
    if isinstance(s, PointerType):
        return x != 0 if d.kind == "bool" else x.astype(np.uint64).astype(d.numpy)
    if d.kind == "bool":
        return x != 0
    if d.kind == "float":
        if s.kind == "float":
            return round_to(x, d, rounding)
        if s.kind == "bool":
            return x.astype(d.numpy) if d.name not in ("bf16", "f8e4m3", "f8e5m2") else x.astype(np.float32)
        return round_to(x.astype(np.float64), d, rounding)
    if s.kind == "float":
        return float_to_int(x, d)
    return x.astype(d.numpy)


def bitcast(x, src, dst):
    s, d = src.element, dst.element
    bits = x.view(np.uint64) if isinstance(s, PointerType) else to_bits(x, src)
    return bits.view(np.uint64) if isinstance(d, PointerType) else from_bits(bits, dst)


def addptr(p, off, pointee):
    """``p + off`` elements of ``pointee``: addresses as uint64, wrapping."""
    size = _elem_bytes(pointee)
    return p.astype(np.uint64) + np.asarray(off.astype(np.int64) * np.int64(size)).view(np.uint64)


def _elem_bytes(t) -> int:
    return 8 if isinstance(t, PointerType) else t.bytes
