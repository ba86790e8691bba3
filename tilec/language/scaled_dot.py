"""``tl.dot_scaled``: matrix products of OCP microscaling (MX) operands, by software emulation.

Operands come as fp4 (e2m1, two per uint8, the first in the low nibble), fp8 (e4m3/e5m2, as uint8 bits or an fp8
tensor), bf16 or fp16; each group of 32 consecutive K elements shares one e8m0 scale (a uint8 exponent, 2^(s-127),
255 is NaN). The emulation decodes everything exactly to f32 with integer and select ops, applies the scales in
f32, rounds the scaled operands once to the dot's 16-bit type (fp16 when either operand is fp16, else bf16, the
type Triton's decomposition computes in) and calls the ordinary ``dot`` with an f32 accumulator, so every backend
runs it and GPUs run it on their matrix units. bf16 holds every scaled e2m1/e4m3/e5m2 value exactly (3 mantissa
bits at most, f32's exponent range) but those under 2^-133; fp16's range is narrower, as in Triton. Hardware with
MX tensor cores can pattern-match this later.
"""
from __future__ import annotations

from . import core as tlc
from .core import builtin, current, tensor, _unwrap
from .composite import join

GROUP = 32
FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
# fp8 layouts: (exponent bits, mantissa bits, has infinities)
_FP8 = {"e4m3": (4, 3, False), "e5m2": (5, 2, True)}


def _const(s, v, dt=tlc.int32):
    return s.to_tensor(v, dt)


def _pow2(s, e):
    """2^e as f32 for an int32 tensor ``e`` in [-126, 127] (built from the exponent field)."""
    return s.cast(s.shl(s.add(e, 127), 23), tlc.float32, bitcast=True)


def _decode_minifloat(s, code, ebits, mbits, has_inf) -> tensor:
    """Codes (int32, sign in bit ebits+mbits) of a small float format -> exact f32 values."""
    bias = 2 ** (ebits - 1) - 1
    sign = s.and_(s.shr(code, ebits + mbits), 1)
    e = s.and_(s.shr(code, mbits), 2 ** ebits - 1)
    m = s.and_(code, 2 ** mbits - 1)
    frac = s.mul(s.cast(m, tlc.float32), 2.0 ** -mbits)
    normal = s.mul(s.add(frac, 1.0), _pow2(s, s.sub(e, bias)))
    sub = s.mul(frac, 2.0 ** (1 - bias))
    v = s.where(s.compare("eq", e, 0), sub, normal)
    top = s.compare("eq", e, 2 ** ebits - 1)
    if has_inf:
        special = s.where(s.compare("eq", m, 0), float("inf"), float("nan"))
        v = s.where(top, special, v)
    elif ebits > 2:  # e4m3 "fn": only S.1111.111 is NaN
        v = s.where(s.logical_and(top, s.compare("eq", m, 2 ** mbits - 1)), float("nan"), v)
    return s.where(s.compare("eq", sign, 1), s.neg(v), v)


def _unpack_fp4(s, x, axis) -> tensor:
    """uint8 pairs of e2m1 codes -> f32 values, doubling ``axis`` (low nibble first)."""
    x = s.cast(s.cast(x, tlc.uint8, bitcast=True), tlc.int32)
    lo = _decode_minifloat(s, s.and_(x, 15), 2, 1, False)
    hi = _decode_minifloat(s, s.shr(x, 4), 2, 1, False)
    j = join(s, lo, hi)                                    # (..., 2)
    if axis == 1:
        return s.reshape(j, (x.shape[0], x.shape[1] * 2))
    j = s.trans(j, (0, 2, 1))                              # (rows, 2, cols)
    return s.reshape(j, (x.shape[0] * 2, x.shape[1]))


def _decode(s, x, fmt, k_axis, k_pack) -> tensor:
    x = s.to_tensor(_unwrap(x))
    if len(x.shape) != 2:
        raise ValueError(f"dot_scaled operands must be 2-d, got shape {list(x.shape)}")
    if fmt == "e2m1":
        if not (x.dtype.is_int() and x.dtype.primitive_bitwidth == 8):
            raise TypeError(f"e2m1 operands are packed in uint8 (two per byte), got {x.dtype!r}")
        return _unpack_fp4(s, x, k_axis if k_pack else 1 - k_axis)
    if fmt in _FP8:
        if x.dtype.is_fp8():
            return s.cast(x, tlc.float32)
        if not (x.dtype.is_int() and x.dtype.primitive_bitwidth == 8):
            raise TypeError(f"{fmt} operands are fp8 tensors or their uint8 bits, got {x.dtype!r}")
        return _decode_minifloat(s, s.cast(s.cast(x, tlc.uint8, bitcast=True), tlc.int32), *_FP8[fmt])
    want = tlc.bfloat16 if fmt == "bf16" else tlc.float16
    if x.dtype != want:
        raise TypeError(f"{fmt} operands must be {want!r}, got {x.dtype!r}")
    return s.cast(x, tlc.float32)


def _scale(s, scale, rows, k, transpose) -> tensor | None:
    """e8m0 scales of shape (rows, k/32) -> f32 factors of shape (rows, k) (or (k, rows) when ``transpose``)."""
    scale = _unwrap(scale)
    if scale is None:
        return None
    scale = s.to_tensor(scale)
    if scale.shape != (rows, k // GROUP):
        raise ValueError(f"dot_scaled scale must have shape {[rows, k // GROUP]}, got {list(scale.shape)}")
    e = s.cast(s.cast(scale, tlc.uint8, bitcast=True), tlc.int32)
    f = s.where(s.compare("eq", e, 0), 2.0 ** -127, _pow2(s, s.sub(s.minmax("max", e, 1), 127)))
    f = s.where(s.compare("eq", e, 255), float("nan"), f)
    f = s.broadcast_to(s.expand_dims(f, 2), (rows, k // GROUP, GROUP))
    f = s.reshape(f, (rows, k))
    return s.trans(f, (1, 0)) if transpose else f


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
               lhs_k_pack=True, rhs_k_pack=True, out_dtype=tlc.float32):
    """``(lhs * 2^lhs_scale) @ (rhs * 2^rhs_scale) + acc`` with lhs (M, K), rhs (K, N) after decoding; scales are
    (M, K/32) and (N, K/32) uint8 exponents (or None)."""
    s = current()
    lf, rf = _unwrap(lhs_format), _unwrap(rhs_format)
    for f in (lf, rf):
        if f not in FORMATS:
            raise ValueError(f"dot_scaled format must be one of {FORMATS}, got {f!r}")
    a = _decode(s, lhs, lf, 1, bool(_unwrap(lhs_k_pack)))
    b = _decode(s, rhs, rf, 0, bool(_unwrap(rhs_k_pack)))
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"dot_scaled shape mismatch: {m}x{k} @ {k2}x{n} (after unpacking)")
    if k % GROUP:
        raise ValueError(f"dot_scaled needs K to be a multiple of {GROUP}, got {k}")
    sa, sb = _scale(s, lhs_scale, m, k, False), _scale(s, rhs_scale, n, k, True)
    if sa is not None:
        a = s.mul(a, sa)
    if sb is not None:
        b = s.mul(b, sb)
    compute = tlc.float16 if "fp16" in (lf, rf) else tlc.bfloat16
    a, b = s.cast(a, compute), s.cast(b, compute)
    out = _unwrap(out_dtype)
    if acc is not None and _unwrap(acc) is not None:
        acc = s.to_tensor(_unwrap(acc))
        acc = s.cast(acc, tlc.float32)
    else:
        acc = None
    r = s.dot(a, b, acc, None, None, None, tlc.float32)
    return s.cast(r, out) if out != tlc.float32 else r
