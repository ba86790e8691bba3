"""Launch arguments of a fuzz kernel: input and output arrays (the same for every backend), scalars, the grid.

Float data are small dyadic rationals (multiples of 1/4): sums and products of them are exact in every float
type, so most results can be compared bit for bit whatever order a backend adds in. Integers cover both signs
and, in some kernels, the extremes of their type (wrap-around is defined for tile integers).
"""
from __future__ import annotations

import zlib

import numpy as np

from .dtypes import is_float, numpy_dtype
from .infer import Info
from .program import C, F, R, S, Kernel
from .render import constexprs, params


def _rng(k: Kernel, name: str):
    return np.random.default_rng([k.data_seed, k.seed & 0xFFFFFFFF, zlib.crc32(name.encode())])


def values(k: Kernel, name: str, dtype: str, n: int):
    """``n`` values of ``dtype`` for array ``name`` (a function of the seed and the name only)."""
    rng = _rng(k, name)
    nd = numpy_dtype(dtype)
    if is_float(dtype):
        x = rng.integers(-16, 17, n) / 4.0
        if k.float_specials:  # some kernels see special values too
            special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e4, -1e4])
            pick = rng.random(n) < 0.05
            x[pick] = rng.choice(special, int(pick.sum()))
        return x.astype(nd)
    info = np.iinfo(nd)
    lo, hi = (max(info.min, -50), min(info.max, 50)) if info.min < 0 else (0, min(info.max, 100))
    x = rng.integers(lo, hi + 1, n, dtype=np.int64).astype(nd)
    if k.int_extremes:
        pick = rng.random(n) < 0.05
        x[pick] = rng.choice(np.array([info.min, info.max, info.max // 2 + 1], dtype=nd), int(pick.sum()))
    return x


def output_size(k: Kernel, shape: str) -> int:
    full = k.n0 * k.n1 if k.rank == 2 else k.n0
    return {F: full, R: k.n0, C: k.G * k.B1, S: k.G, "shared": 4}[shape]


def arguments(k: Kernel, info: Info):
    """(positional args, constexpr kwargs, grid); arrays are fresh on every call."""
    full = k.n0 * k.n1 if k.rank == 2 else k.n0
    scalars = {"n0": k.n0, "n1": k.n1, "s0": k.s0, "f0": k.f0}
    args = []
    for p in params(k, info):
        if p in info.inputs:
            args.append(values(k, p, info.inputs[p], full))
        elif p in info.outputs:
            o = info.outputs[p]
            args.append(values(k, p, o.dtype, output_size(k, o.shape)))
        else:
            args.append(scalars[p])
    return args, constexprs(k), (k.G,)
