"""numpy reference semantics of the elementwise ops, as tables keyed by op name.

Each entry computes on storage-dtype arrays of any (broadcast-compatible) shape; the caller (:func:`apply`)
rounds the result to the op's result type with :func:`numerics.finish`. Shapes are never taken from the op's
types, so the same functions run the combine regions of ``reduce``/``scan`` over whole slices at once.

Integer conventions (ops.py): wrapping arithmetic; ``div`` truncates toward zero and ``rem`` takes the
dividend's sign; division by zero is undefined and yields 0 here; shift amounts are read as unsigned and a shift
by the width or more gives 0 (``shl``, logical ``shr``) or the sign fill (arithmetic ``shr``). ``i1`` arithmetic
wraps modulo 2.
"""
from __future__ import annotations

import math

import numpy as np

from .fma import fma_f64, fma_via_f64
from .numerics import finish, float_to_int, from_bits, round_to, to_bits, unsigned_of
from .types import PointerType, ScalarType


def _is_float(e):
    return isinstance(e, ScalarType) and e.kind == "float"


def _bool_math(fn):
    """Run an integer function on i1 operands modulo 2."""
    def run(e, *xs):
        if isinstance(e, ScalarType) and e.kind == "bool":
            r = fn(ScalarType("u8"), *(x.astype(np.uint8) for x in xs))
            return (np.asarray(r) & 1).astype(bool)
        return fn(e, *xs)
    return run


def _div(e, a, b):
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


def _rem(e, a, b):
    if _is_float(e):
        return np.fmod(a, b)
    zero = b == 0
    one, nil = a.dtype.type(1), a.dtype.type(0)
    r = np.fmod(a, np.where(zero, one, b).astype(a.dtype))
    return np.where(zero, nil, r).astype(a.dtype)


def _shl(e, a, b):
    u = unsigned_of(e)
    s = b.view(u) if b.dtype.kind == "i" else b.astype(u)
    r = np.where(s >= u(e.bits), u(0), a.view(u) << np.minimum(s, u(e.bits - 1)).astype(u)).astype(u)
    return r.view(a.dtype)


def _shr(e, a, b):
    u = unsigned_of(e)
    s = b.view(u) if b.dtype.kind == "i" else b.astype(u)
    if e.kind == "int":
        return a >> np.minimum(s, u(e.bits - 1)).astype(a.dtype)
    return np.where(s >= u(e.bits), u(0), a >> np.minimum(s, u(e.bits - 1)).astype(u)).astype(a.dtype)


def _umulhi(e, a, b):
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


def _minmax(fn_prop, fn_ignore, is_max):
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


# name -> fn(element type, lhs, rhs, **attrs)
BINARY = {
    "add": _bool_math(lambda e, a, b: a + b),
    "sub": _bool_math(lambda e, a, b: a - b),
    "mul": _bool_math(lambda e, a, b: a * b),
    "div": _bool_math(_div),
    "rem": _bool_math(_rem),
    "and": lambda e, a, b: a & b,
    "or": lambda e, a, b: a | b,
    "xor": lambda e, a, b: a ^ b,
    "shl": _bool_math(_shl),
    "shr": _bool_math(_shr),
    "max": _minmax(np.maximum, np.fmax, True),
    "min": _minmax(np.minimum, np.fmin, False),
    "pow": lambda e, a, b: np.power(a, b),
    "atan2": lambda e, a, b: np.arctan2(a, b),
    "umulhi": _bool_math(_umulhi),
    "fdiv": lambda e, a, b, ieee_rounding=False: a / b,
}

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _round_half_away(e, x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


_BYTE_POPC = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popc(e, x):
    """Byte-table popcount (np.bitwise_count needs numpy 2)."""
    if e.kind == "bool":
        return x
    ut = unsigned_of(e)
    u = x.view(ut)
    n = sum(_BYTE_POPC[((u >> ut(8 * k)) & ut(0xFF)).astype(np.intp)] for k in range(e.bits // 8))
    return np.asarray(n).astype(x.dtype)


def _clz(e, x):
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


def _neg(e, x):
    return x if e.kind == "bool" else np.negative(x)


def _abs(e, x):
    return x if e.kind in ("bool", "uint") else np.abs(x)


def _f64(fn):
    """Math functions numpy lacks at narrow precision: compute in float64, round by the caller."""
    return lambda e, x: fn(x.astype(np.float64))


# name -> fn(element type, x); float results are computed at storage precision and rounded by the caller
UNARY = {
    "neg": _neg,
    "not": lambda e, x: ~x,
    "abs": _abs,
    "exp": lambda e, x: np.exp(x),
    "exp2": lambda e, x: np.exp2(x),
    "log": lambda e, x: np.log(x),
    "log2": lambda e, x: np.log2(x),
    "sqrt": lambda e, x: np.sqrt(x),
    "sqrt_rn": lambda e, x: np.sqrt(x),
    "rsqrt": lambda e, x: 1 / np.sqrt(x),
    "sin": lambda e, x: np.sin(x),
    "cos": lambda e, x: np.cos(x),
    "tan": lambda e, x: np.tan(x),
    "tanh": lambda e, x: np.tanh(x),
    "floor": lambda e, x: np.floor(x),
    "ceil": lambda e, x: np.ceil(x),
    "trunc": lambda e, x: np.trunc(x),
    "round": _round_half_away,
    "erf": _f64(_erf),
    "log1p": lambda e, x: np.log1p(x),
    "expm1": lambda e, x: np.expm1(x),
    "sigmoid": _f64(lambda x: 1 / (1 + np.exp(-x))),
    "popc": _popc,
    "clz": _clz,
}

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


def apply(op, args):
    """Evaluate an elementwise op on arrays; the result has the op's result element type."""
    name = op.name
    out_t = op.results[0].type
    in_t = op.operands[0].type.element if op.operands else out_t.element
    with np.errstate(all="ignore"):
        if name in BINARY:
            r = BINARY[name](in_t, *args, **op.attrs)
        elif name in UNARY:
            r = UNARY[name](in_t, args[0])
        elif name == "cmp":
            return [np.asarray(CMP[op.attrs["predicate"]](*args))]
        elif name == "select":
            return [finish(np.where(*args), out_t)]
        elif name == "fma":
            r = fma_f64(*args) if in_t.bits == 64 else fma_via_f64(*args)  # one rounding, as the hardware
        elif name == "cast":
            r = cast(args[0], op.operands[0].type, out_t, op.attrs.get("rounding", "rtne"))
        elif name == "bitcast":
            r = bitcast(args[0], op.operands[0].type, out_t)
        elif name == "addptr":
            p, off = args
            size = _elem_bytes(op.operands[0].type.element.pointee)
            r = p.astype(np.uint64) + np.asarray(off.astype(np.int64) * np.int64(size)).view(np.uint64)
        else:
            raise KeyError(name)
        return [finish(r, out_t)]


def _elem_bytes(t) -> int:
    return 8 if isinstance(t, PointerType) else t.bytes


ELEMENTWISE = frozenset(BINARY) | frozenset(UNARY) | {"cmp", "select", "fma", "cast", "bitcast", "addptr"}
