"""Cross-compile the GPU test cases (tests/gpu/gpu_cases.py) for an AMD architecture."""
from __future__ import annotations

import numpy as np

import tilec
from gpu_cases import CASES
from gpu_helpers import IRSource

#: (architecture, wave size) pairs: CDNA3 wave64 and RDNA3 wave32
ARCHS = (("gfx942", 64), ("gfx1100", 32))


def source(kernel, args, **constexprs):
    if isinstance(kernel, tilec.JITFunction):
        values = kernel._bind(tuple(args), constexprs)
        return kernel.specialize(values)[2]
    return IRSource(kernel())


def compile_case(name, arch="gfx942", warp_size=64, **options):
    kernel, make, _ = CASES[name]
    args, constexprs, *_ = make(np.random.default_rng(0))
    return tilec.compile(source(kernel, args, **constexprs), tilec.Target("hip", arch, warp_size), options)


def compile_jit(kernel, args, arch="gfx942", warp_size=64, options=None, **constexprs):
    return tilec.compile(source(kernel, args, **constexprs), tilec.Target("hip", arch, warp_size),
                         dict(options or {}))
