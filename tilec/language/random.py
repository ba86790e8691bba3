"""Counter-based random numbers (Philox-4x32-10, and 4x64 for 64-bit offsets), stream-compatible with Triton.

Stateless: each (seed, offset) pair gives the same numbers on every backend, so kernels like dropout can
regenerate their mask instead of storing it. Built from ordinary semantic ops (``umulhi``, multiply, xor), so
every backend gets it for free. The constants are Salmon et al.'s published Philox multipliers and Weyl key
increments; the integer -> float mappings are Triton's, so a kernel ported from Triton sees the same numbers.
"""
from __future__ import annotations

from . import core as tlc
from .core import builtin, current, tensor, _unwrap

N_ROUNDS = 10
# element width -> (key bump A, key bump B, round multiplier A, round multiplier B)
_CONSTANTS = {
    32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
    64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157),
}
_UINT = {32: tlc.uint32, 64: tlc.uint64}
_SINT = {32: tlc.int32, 64: tlc.int64}
# 2^-31 and 2^-63: a non-negative int of that width -> [0, 1)
_SCALE = {32: 4.6566127342e-10, 64: 1.0842020432385337e-19}


def _as_uint(s, v, bits):
    """``v`` reinterpreted as the unsigned type of ``bits`` (ints of other widths are converted first)."""
    v = s.to_tensor(_unwrap(v))
    if not v.dtype.is_int() or v.dtype.is_bool():
        raise TypeError(f"random numbers need integer seeds and offsets, got {v.dtype!r}")
    if v.dtype.primitive_bitwidth != bits:
        v = s.cast(v, _SINT[bits] if v.dtype.is_int_signed() else _UINT[bits])
    return s.cast(v, _UINT[bits], bitcast=True)


def _umulhi(s, a, b):
    a, b = s.binary_operands(a, b)
    if not a.dtype.is_int() or a.dtype.is_bool():
        raise TypeError(f"umulhi needs integer operands, got {a.dtype!r}")
    return tensor(s.b.create("umulhi", [a.handle, b.handle], a.type), a.type)


@builtin
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS):
    """``n_rounds`` Philox rounds of the counter (c0..c3) under the key (k0, k1), all of one unsigned type."""
    s = current()
    c = [s.to_tensor(_unwrap(x)) for x in (c0, c1, c2, c3)]
    bits = c[0].dtype.primitive_bitwidth
    if bits not in _CONSTANTS or not c[0].dtype.is_int_unsigned():
        raise TypeError(f"philox_impl needs uint32 or uint64 counters, got {c[0].dtype!r}")
    c = [_as_uint(s, x, bits) for x in c]
    k0, k1 = _as_uint(s, k0, bits), _as_uint(s, k1, bits)
    shape = c[0].shape
    for x in c[1:] + [k0, k1]:
        shape = s.broadcast_shapes(shape, x.shape)
    c = [s.broadcast_to(x, shape) for x in c]
    ka, kb, ra, rb = (s.to_tensor(v, _UINT[bits]) for v in _CONSTANTS[bits])
    for _ in range(int(_unwrap(n_rounds))):
        a0, a2 = c[0], c[2]
        c = [s.xor_(s.xor_(_umulhi(s, rb, a2), c[1]), k0), s.mul(rb, a2),
             s.xor_(s.xor_(_umulhi(s, ra, a0), c[3]), k1), s.mul(ra, a0)]
        k0, k1 = s.add(k0, ka), s.add(k1, kb)
    return tuple(c)


@builtin
def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS):
    """Philox keyed by ``seed`` (an integer, sign-extended to 64 bits); 32-bit counters use the 4x32 variant
    with the seed's two halves as the key, 64-bit counters the 4x64 variant keyed by the whole seed."""
    s = current()
    seed = s.to_tensor(_unwrap(seed))
    if not seed.dtype.is_int() or seed.dtype.is_bool():
        raise TypeError(f"philox seed must be an integer, got {seed.dtype!r}")
    seed = _as_uint(s, seed, 64)
    bits = s.to_tensor(_unwrap(c0)).dtype.primitive_bitwidth
    if bits == 64:
        k0, k1 = seed, s.to_tensor(0, tlc.uint64)
    else:
        bits = 32
        k0 = s.cast(s.and_(seed, s.to_tensor(0xFFFFFFFF, tlc.uint64)), tlc.uint32)
        k1 = s.cast(s.shr(seed, s.to_tensor(32, tlc.uint64)), tlc.uint32)
    c = [_as_uint(s, x, bits) for x in (c0, c1, c2, c3)]
    return philox_impl(*c, k0, k1, n_rounds)


@builtin
def randint4x(seed, offset, n_rounds=N_ROUNDS):
    """Four streams of random unsigned ints (uint32; uint64 for 64-bit offsets) for each ``offset``."""
    s = current()
    offset = s.to_tensor(_unwrap(offset))
    zero = s.mul(offset, 0)
    return philox(seed, offset, zero, zero, zero, n_rounds)


@builtin
def randint(seed, offset, n_rounds=N_ROUNDS):
    """Random unsigned ints for each ``offset`` (the first of :func:`randint4x`'s streams)."""
    return randint4x(seed, offset, n_rounds)[0]


@builtin
def uint_to_uniform_float(x):
    """Random 32/64-bit ints -> float32 in [0, 1): read as signed, fold negatives onto the non-negatives
    (``-x - 1``) and scale by 2^-31 (2^-63)."""
    s = current()
    x = s.to_tensor(_unwrap(x))
    bits = x.dtype.primitive_bitwidth
    if bits not in _SCALE or not x.dtype.is_int():
        raise TypeError(f"uint_to_uniform_float needs 32- or 64-bit integers, got {x.dtype!r}")
    x = s.cast(x, _SINT[bits], bitcast=True)
    x = s.where(s.compare("lt", x, 0), s.sub(s.neg(x), 1), x)
    return s.mul(x, _SCALE[bits])


@builtin
def rand(seed, offset, n_rounds=N_ROUNDS):
    """Uniform float32 in [0, 1) for each ``offset``."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@builtin
def rand4x(seed, offset, n_rounds=N_ROUNDS):
    """Four uniform float32 streams in [0, 1) for each ``offset``."""
    return tuple(uint_to_uniform_float(i) for i in randint4x(seed, offset, n_rounds))


@builtin
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two independent uniforms -> two independent standard normals."""
    s = current()
    u1 = s.minmax("max", s.to_tensor(_unwrap(u1)), 1.0e-7)
    th = s.mul(s.to_tensor(_unwrap(u2)), 6.283185307179586)
    r = s.math("sqrt", s.mul(-2.0, s.math("log", u1)))
    return s.mul(r, s.math("cos", th)), s.mul(r, s.math("sin", th))


@builtin
def randn(seed, offset, n_rounds=N_ROUNDS):
    """Standard normal float32 for each ``offset``."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))[0]


@builtin
def randn4x(seed, offset, n_rounds=N_ROUNDS):
    """Four standard normal float32 streams for each ``offset``."""
    u = rand4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(u[0], u[1]) + pair_uniform_to_normal(u[2], u[3])


@builtin
def umulhi(x, y):
    """The high 32 (or 64) bits of the product of two integers (of one type after promotion)."""
    return _umulhi(current(), x, y)
