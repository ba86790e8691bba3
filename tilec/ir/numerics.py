"""Host representation of tir values and the number formats numpy lacks.

Values are numpy arrays (0-d for scalars) of the element type's storage dtype (``ScalarType.numpy``); pointers
are uint64 byte addresses. bf16 and fp8 live widened in float32 but always hold a value of their own format:
:func:`finish` rounds every result to its type, emulating the narrow format by scaling to an integer grid
(``ldexp``/``rint``), which is exact in float64 and needs no lookup tables. In memory, bf16/fp8 are their real
2-/1-byte encodings (:func:`encode`/:func:`decode`), so kernels see the same bytes the compiled code does.

Overflow when narrowing: IEEE formats (f16, bf16, f32) go to infinity under round-to-nearest and to the
largest finite value under round-toward-zero; the fp8 formats saturate, infinities too, at +-448 (e4m3, the NVIDIA
"fn" variant: no infinities, one NaN) and +-57344 (e5m2), as the hardware's ``cvt.rn.satfinite`` does and so as
Triton's fp8 casts on sm_89 and later give them.
"""
from __future__ import annotations

import numpy as np

from .types import PointerType, ScalarType, Type

_U = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_I = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
NARROW = frozenset({"bf16", "f8e4m3", "f8e5m2"})
FP8 = frozenset({"f8e4m3", "f8e5m2"})


def storage(t: Type) -> np.dtype:
    """numpy dtype holding values of ``t``'s element type."""
    e = t.element
    if isinstance(e, PointerType):
        return np.dtype(np.uint64)
    return e.numpy


def unsigned_of(e: ScalarType):
    return _U[max(8, e.bits)]


# -- floating-point formats --------------------------------------------------------------------------------
def _format(e: ScalarType):
    """(mantissa bits, min normal exponent, largest finite, has infinities)."""
    m, ebits = e.mantissa_bits, e.exponent_bits
    bias = 2 ** (ebits - 1) - 1
    if e.name == "f8e4m3":  # no infinities; top exponent is finite except mantissa all ones (NaN)
        return m, 1 - bias, (2 - 2.0 ** (1 - m)) * 2.0 ** (2 ** ebits - 1 - bias), False
    return m, 1 - bias, (2 - 2.0 ** -m) * 2.0 ** (2 ** ebits - 2 - bias), True


def quantize(x, e: ScalarType, rounding: str = "rtne") -> np.ndarray:
    """Round float values to format ``e`` (rtne or rtz); returns float64 holding exact format values. fp8 formats
    saturate (see the module)."""
    m, emin, big, has_inf = _format(e)
    return quantize_format(x, m, emin, big, has_inf and e.name not in FP8, rounding)


def quantize_format(x, m: int, emin: int, big: float, has_inf: bool, rounding: str = "rtne") -> np.ndarray:
    """Round to ``m`` mantissa bits with minimum normal exponent ``emin`` and largest finite value ``big``; with
    ``has_inf`` false, overflow and infinities saturate to ``big``."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        _, ex = np.frexp(x)
        q = np.maximum(ex - 1, emin) - m
        scaled = np.ldexp(x, -q)
        r = np.trunc(scaled) if rounding == "rtz" else np.rint(scaled)
        y = np.ldexp(r, q)
        over = np.abs(y) > big
        if over.any():
            keep_inf = has_inf and rounding != "rtz"
            sat = np.copysign(np.inf if keep_inf else big, y)
            if has_inf:  # an infinite input stays infinite in an IEEE format
                sat = np.where(np.isinf(x), x, sat)
            y = np.where(over, sat, y)
    return y


def round_to(x, e: ScalarType, rounding: str = "rtne") -> np.ndarray:
    """Float values (any float dtype) as values of float type ``e`` in its storage dtype."""
    x = np.asarray(x)
    if e.name == "f64":
        return x.astype(np.float64)
    if rounding != "rtz" and e.name in ("f32", "f16"):
        return x.astype(e.numpy)
    if x.dtype.itemsize <= e.bits // 8 and x.dtype.kind == "f" and e.name not in NARROW:
        return x.astype(e.numpy)  # widening is exact
    return quantize(x, e, rounding).astype(e.numpy)


def finish(x, e: Type, rounded: bool = True) -> np.ndarray:
    """A computed result as a value of element type ``e``: storage dtype, narrow floats rounded (unless
    ``rounded`` is false: values that already are the format's, moved or decoded)."""
    e = e.element
    x = np.asarray(x)
    if isinstance(e, PointerType):
        return x.astype(np.uint64)
    if e.name in NARROW:
        return (quantize(x, e) if rounded else x).astype(np.float32)
    if e.kind == "bool":
        return x.astype(bool) if x.dtype.kind == "b" else (x.astype(np.int64) & 1).astype(bool)
    if x.dtype != e.numpy:
        return x.astype(e.numpy)
    return x


# -- encodings in memory -----------------------------------------------------------------------------------
def _fp8_table(e: ScalarType) -> np.ndarray:
    """Value of each of the 256 codes."""
    m, emin, _, has_inf = _format(e)
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    ef = (codes >> m) & ((1 << e.exponent_bits) - 1)
    mf = codes & ((1 << m) - 1)
    mag = np.where(ef == 0, np.ldexp(mf / 2.0 ** m, emin), np.ldexp(1 + mf / 2.0 ** m, ef + emin - 1))
    top = (1 << e.exponent_bits) - 1
    if has_inf:
        mag = np.where(ef == top, np.where(mf == 0, np.inf, np.nan), mag)
    else:
        mag = np.where((ef == top) & (mf == (1 << m) - 1), np.nan, mag)
    return sign * mag


_FP8 = {}


def _fp8(e):
    t = _FP8.get(e.name)
    if t is None:
        table = _fp8_table(e)
        pos = table[:128]
        n_ordered = int(np.argmax(np.isnan(pos)))  # codes below the first NaN are increasing
        t = _FP8[e.name] = (table.astype(np.float32), pos[:n_ordered])
    return t


def memory_dtype(t: Type) -> np.dtype:
    """dtype of ``t``'s element as stored in memory (real width, bit patterns for bf16/fp8)."""
    e = t.element
    if isinstance(e, PointerType):
        return np.dtype(np.uint64)
    if e.kind == "bool":
        return np.dtype(np.uint8)
    if e.name in NARROW:
        return np.dtype(_U[e.bits])
    return e.numpy


def encode(v, t: Type) -> np.ndarray:
    """Values -> their in-memory representation (``memory_dtype``)."""
    e = t.element
    v = np.asarray(v)
    if isinstance(e, PointerType) or e.name not in NARROW and e.kind != "bool":
        return v.astype(memory_dtype(t))
    if e.kind == "bool":
        return v.astype(np.uint8)
    if e.name == "bf16":
        bits = np.asarray(v, dtype=np.float32).view(np.uint32)
        return (bits >> np.uint32(16)).astype(np.uint16)
    _, ordered = _fp8(e)
    a = np.abs(v.astype(np.float64))
    code = np.searchsorted(ordered, a).astype(np.uint8)
    code = np.where(np.signbit(v), code | np.uint8(0x80), code)
    nan_code = 0x7F
    return np.where(np.isnan(v), np.uint8(nan_code), code).astype(np.uint8)


def decode(bits, t: Type) -> np.ndarray:
    """In-memory representation -> values in storage dtype."""
    e = t.element
    bits = np.asarray(bits)
    if isinstance(e, PointerType):
        return bits.astype(np.uint64)
    if e.kind == "bool":
        return bits != 0
    if e.name == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if e.name in NARROW:
        return _fp8(e)[0][bits.astype(np.intp)]
    return bits.astype(e.numpy)


def to_bits(v, t: Type) -> np.ndarray:
    """Values -> unsigned integers of the element's width (for bitcast and CAS comparisons)."""
    enc = encode(v, t)
    return enc.view(_U[enc.dtype.itemsize * 8])


def from_bits(bits, t: Type) -> np.ndarray:
    return decode(np.asarray(bits).view(memory_dtype(t)), t)


# -- conversion of host inputs -----------------------------------------------------------------------------
def as_value(x, t: Type) -> np.ndarray:
    """A Python/numpy number or array as a value of type ``t`` (broadcast to a tile's shape)."""
    e = t.element
    a = np.asarray(x)
    if a.dtype == object:  # Python ints beyond 64 bits
        a = np.asarray(np.vectorize(lambda z: int(z) & 0xFFFFFFFFFFFFFFFF, otypes=[np.uint64])(a))
    if isinstance(e, PointerType):
        v = a.astype(np.uint64)
    elif e.kind == "bool":
        v = a != 0
    elif e.kind == "float":
        v = round_to(a.astype(np.float64) if a.dtype.kind != "f" else a, e)
    elif a.dtype.kind == "f":
        v = float_to_int(a, e)
    elif a.dtype.kind == "b":
        v = a.astype(e.numpy)
    else:
        with np.errstate(all="ignore"):
            v = a.astype(e.numpy)
    if t.is_tile:
        v = np.array(np.broadcast_to(v, t.shape))
    elif v.ndim:
        raise ValueError(f"expected a scalar for {t}, got shape {v.shape}")
    return np.asarray(v)


def float_to_int(x, e: ScalarType) -> np.ndarray:
    """Truncate toward zero, saturating at the type's range; NaN -> 0 (like PTX cvt.rzi / LLVM fptosi.sat)."""
    x = np.asarray(x, dtype=np.float64)
    info = np.iinfo(e.numpy)
    with np.errstate(all="ignore"):
        t = np.trunc(np.where(np.isnan(x), 0.0, x))
        high, low = t >= float(info.max), t <= float(info.min)
        inside = np.where(high | low, 0.0, t).astype(e.numpy)
        out = np.where(high, np.array(info.max, e.numpy), np.where(low, np.array(info.min, e.numpy), inside))
    return np.asarray(out, dtype=e.numpy)


def public(v):
    """An evaluator value as handed to callers: numpy scalars for scalars, arrays for tiles."""
    v = np.asarray(v)
    return v[()] if v.ndim == 0 else v
