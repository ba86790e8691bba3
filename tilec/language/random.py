"""Counter-based random numbers (Philox-4x32-10): ``tl.randint``, ``tl.randint4x``, ``tl.rand``, ``tl.randn``.

Stateless: each (seed, offset) pair gives the same numbers on every backend, so kernels like dropout can
regenerate their mask instead of storing it. Built from ordinary semantic ops (``umulhi``, multiply, xor), so
every backend gets it for free.
"""
from __future__ import annotations

import math

from . import core as tlc
from .core import builtin, current, tensor, _unwrap

_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85      # Weyl sequence bumps of the key
_ROUND_A, _ROUND_B = 0xD2511F53, 0xCD9E8D57  # round multipliers
N_ROUNDS = 10


def _u32(s, v):
    v = _unwrap(v)
    if isinstance(v, tensor):
        if v.dtype.primitive_bitwidth == 64:
            v = s.cast(v, tlc.uint64)
        return s.cast(v, tlc.uint32) if v.dtype != tlc.uint32 else v
    return s.to_tensor(int(v) & 0xFFFFFFFF, tlc.uint32)


def _umulhi(s, a, b):
    a, b = s.binary_operands(a, b)
    return tensor(s.b.create("umulhi", [a.handle, b.handle], a.type), a.type)


def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS):
    s = current()
    seed = s.to_tensor(_unwrap(seed))
    if seed.dtype.primitive_bitwidth == 64:
        seed64 = s.cast(seed, tlc.uint64)
        k0 = s.cast(s.and_(seed64, s.to_tensor(0xFFFFFFFF, tlc.uint64)), tlc.uint32)
        k1 = s.cast(s.shr(seed64, s.to_tensor(32, tlc.uint64)), tlc.uint32)
    else:
        k0, k1 = _u32(s, seed), s.to_tensor(0, tlc.uint32)
    c = [_u32(s, x) for x in (c0, c1, c2, c3)]
    shape = c[0].shape
    for x in c[1:]:
        shape = s.broadcast_shapes(shape, x.shape)
    c = [s.broadcast_to(x, shape) for x in c]
    ra, rb = s.to_tensor(_ROUND_A, tlc.uint32), s.to_tensor(_ROUND_B, tlc.uint32)
    ka, kb = s.to_tensor(_KEY_A, tlc.uint32), s.to_tensor(_KEY_B, tlc.uint32)
    for _ in range(int(_unwrap(n_rounds))):
        a0, a2 = c[0], c[2]
        c = [s.xor_(s.xor_(_umulhi(s, rb, a2), c[1]), k0), s.mul(rb, a2),
             s.xor_(s.xor_(_umulhi(s, ra, a0), c[3]), k1), s.mul(ra, a0)]
        k0, k1 = s.add(k0, ka), s.add(k1, kb)
    return c


def _as_int32(s, x):
    return s.cast(x, tlc.int32, bitcast=True)


@builtin
def randint4x(seed, offset, n_rounds=N_ROUNDS):
    """Four streams of random int32 for each ``offset``."""
    s = current()
    zero = 0
    return tuple(_as_int32(s, x) for x in philox(seed, offset, zero, zero, zero, n_rounds))


@builtin
def randint(seed, offset, n_rounds=N_ROUNDS):
    """Random int32 for each ``offset``."""
    return randint4x(seed, offset, n_rounds)[0]


def _to_uniform(s, x):
    """int32 -> float32 uniform in [0, 1): fold negatives onto [0, 2^31) and scale by 2^-31."""
    x = s.where(s.compare("lt", x, 0), s.sub(s.neg(x), 1), x)
    return s.mul(s.cast(x, tlc.float32), 4.6566127342e-10)


@builtin
def rand(seed, offset, n_rounds=N_ROUNDS):
    """Uniform float32 in [0, 1) for each ``offset``."""
    s = current()
    return _to_uniform(s, randint(seed, offset, n_rounds))


@builtin
def randn(seed, offset, n_rounds=N_ROUNDS):
    """Standard normal float32 for each ``offset`` (Box-Muller on two streams)."""
    s = current()
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    u1 = s.minmax("max", _to_uniform(s, i1), 1.0e-7)
    u2 = _to_uniform(s, i2)
    r = s.math("sqrt", s.mul(-2.0, s.math("log", u1)))
    return s.mul(r, s.math("cos", s.mul(u2, 2.0 * math.pi)))


@builtin
def umulhi(x, y):
    """The high 32 (or 64) bits of the product of two unsigned integers."""
    s = current()
    return _umulhi(s, x, y)
