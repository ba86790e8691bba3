"""Launch a kernel in one of the suite's modes; arrays are numpy in and out whatever the mode."""
from __future__ import annotations

import numpy as np

import tilec


_TWINS: dict = {}


def _in_mode(kernel, interpret: bool):
    """``kernel`` itself when it already runs the way ``mode`` asks, else a twin @jit of the same function that
    does (built once): the interpret choice is fixed when a JITFunction is made."""
    if kernel.interpret == interpret:
        return kernel
    key = (kernel, interpret)
    twin = _TWINS.get(key)
    if twin is None:
        dns = [p.name for p in kernel.params if not p.specialize]
        twin = _TWINS[key] = tilec.jit(kernel.fn, debug=kernel.debug, interpret=interpret, do_not_specialize=dns)
    return twin


def launch(kernel, grid, mode, *args, **constexprs):
    """``kernel[grid](*args, **constexprs)`` in ``mode`` ("cpu", "interpret" or "cuda"); numpy arrays among
    ``args`` are updated in place (copied to and from the GPU in "cuda" mode)."""
    kernel = _in_mode(kernel, mode == "interpret")
    host = list(args)
    if mode == "cuda":
        from tilec.language.reinterpret import TensorWrapper
        from tilec.targets.cuda import array as cuda_array

        def to_device(a):
            if isinstance(a, np.ndarray):
                return cuda_array.from_numpy(a)
            if isinstance(a, TensorWrapper) and isinstance(a.base, np.ndarray):
                return TensorWrapper(cuda_array.from_numpy(a.base), a.dtype)
            return a
        args = [to_device(a) for a in host]
    try:
        kernel[grid](*args, **constexprs)
    finally:  # also after a launch that raised (a debug build's BoundsError): what the grid did is copied back
        if mode == "cuda":
            cuda_array.synchronize()
            for h, d in zip(host, args):
                if isinstance(h, np.ndarray):
                    h[...] = d.numpy().reshape(h.shape)
                elif isinstance(h, TensorWrapper) and isinstance(h.base, np.ndarray):
                    h.base[...] = d.base.numpy().reshape(h.base.shape)


def rng(seed=0):
    return np.random.default_rng(seed)


def random_array(r, shape, dtype):
    """Random non-zero data of ``dtype``: ints over a range that exercises signs, floats of mixed magnitude."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -100), min(info.max, 100)
        x = r.integers(lo, hi, shape, endpoint=True).astype(dtype)
        x[x == 0] = 1
        return x
    x = r.standard_normal(shape) * 4
    x[x == 0] = 0.5
    return x.astype(dtype)


def known_bug(request, mode, modes, reason):
    """Mark this case as an expected failure in ``modes`` (it still runs, so a fix shows up as XPASS)."""
    if mode in modes:
        import pytest
        request.node.add_marker(pytest.mark.xfail(reason=reason, strict=False))
