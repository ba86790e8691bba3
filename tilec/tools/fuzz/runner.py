"""Run one fuzz kernel on several backends with the same inputs and compare what they wrote.

The kernel's source is written to a file and imported (``@jit`` reads a function's source from its file), then
launched on each backend from fresh copies of the arguments. Outcomes: ``ok``; ``mismatch`` (outputs differ
beyond the tolerance their types allow); ``error`` (one backend raised, another did not, or they raised different
errors); ``invalid`` (every backend refused the kernel alike: a generator bug, not a backend one).
"""
from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

from .data import arguments
from .dtypes import is_float
from .infer import Info, infer
from .program import Kernel
from .render import render
from ...runtime.jit import jit
from ...targets.cuda import array as cuda_array

_DIR = None
_COUNTER = itertools.count()


def _tmpdir():
    global _DIR
    if _DIR is None or not os.path.isdir(_DIR):
        _DIR = tempfile.mkdtemp(prefix="tilec-fuzz-")
    return _DIR


@dataclass
class Outcome:
    status: str                      # "ok", "mismatch", "error" or "invalid"
    detail: str = ""
    source: str = ""
    errors: dict = field(default_factory=dict)     # backend -> "ExceptionType: first line"
    mismatched: list = field(default_factory=list)  # output params that differ

    @property
    def failed(self) -> bool:
        return self.status in ("mismatch", "error")

    def signature(self) -> tuple:
        """What a shrunk kernel must keep to count as the same failure."""
        if self.status == "error":
            return ("error", tuple(sorted((b, e.split(":")[0]) for b, e in self.errors.items())))
        return (self.status,)


def load_kernel(source: str, name: str = "kernel"):
    """Write ``source`` to a fresh file, import it and return its ``name`` (a JITFunction)."""
    path = os.path.join(_tmpdir(), f"fuzz_{os.getpid()}_{next(_COUNTER)}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name), path


# -- backends ----------------------------------------------------------------------------------------------------
def _launch_host(jitfn, interpret, grid, args, cx):
    kern = jit(jitfn.fn, interpret=interpret)
    kern[grid](*args, **cx)


def _launch_cuda(jitfn, grid, args, cx):
    dev = [cuda_array.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    # without fusing a multiply into the add after it (Triton's default fusion rounds once where the
    # interpreter rounds twice): the generator's exact values stay exact
    jit(jitfn.fn, interpret=False)[grid](*dev, **dict(cx, enable_fp_fusion=False))
    cuda_array.synchronize()
    for h, d in zip(args, dev):
        if isinstance(h, np.ndarray):
            h[...] = d.numpy().reshape(h.shape)


BACKENDS = {
    "interp": lambda fn, grid, args, cx: _launch_host(fn, True, grid, args, cx),
    "cpu": lambda fn, grid, args, cx: _launch_host(fn, False, grid, args, cx),
    "cuda": _launch_cuda,
}


def launcher_for(name: str):
    """The launch function of backend ``name``; ``NAME:debug`` is the same backend with debug builds (every
    access bounds-checked: a valid kernel must give the same results and raise nothing)."""
    base, _, flag = name.partition(":")
    if base not in BACKENDS or flag not in ("", "debug"):
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)} (each also as NAME:debug)")
    launch = BACKENDS[base]
    if flag:
        return lambda fn, grid, args, cx: launch(fn, grid, args, dict(cx, debug=True))
    return launch


def _describe(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


# -- comparison ----------------------------------------------------------------------------------------------------
def compare(a: np.ndarray, b: np.ndarray, err: float, flush_subnormals: bool = False) -> str | None:
    """None when ``b`` matches reference ``a`` (ints exactly; floats bit for bit when ``err`` is 0, else within
    ``err`` relative to the array's largest magnitude, NaN and infinities in the same places); else a short
    description of the first difference. ``flush_subnormals``: ``b`` came from hardware that flushes subnormal
    inputs and results to zero (NVIDIA's float atomics do), so the reference's subnormals count as zeros."""
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape}"
    if not is_float(a.dtype.name):
        bad = np.flatnonzero(a != b)
        if bad.size:
            i = bad[0]
            return f"{bad.size} of {a.size} differ; first at [{i}]: {a[i]!r} vs {b[i]!r}"
        return None
    x, y = a.astype(np.float64), b.astype(np.float64)
    if flush_subnormals:
        tiny = np.finfo(a.dtype).tiny
        x = np.where(np.abs(x) < tiny, 0.0, x)
        y = np.where(np.abs(y) < tiny, 0.0, y)
    nx, ny = np.isnan(x), np.isnan(y)
    fx, fy = np.isfinite(x), np.isfinite(y)
    bad = (nx != ny) | (fx != fy) | (~fx & ~nx & (x != y))
    both = fx & fy
    diff = np.abs(np.subtract(x, y, out=np.zeros_like(x), where=both))
    if err == 0:
        bad |= diff > 0
    else:
        scale = max(np.max(np.abs(x[both]), initial=0.0), np.max(np.abs(y[both]), initial=0.0), 1e-30)
        bad |= diff > err * scale
    idx = np.flatnonzero(bad)
    if idx.size:
        i = idx[0]
        return (f"{idx.size} of {a.size} differ (tolerance {err:.3g}); first at [{i}]: {a[i]!r} vs {b[i]!r}, "
                f"max |diff| {diff.max():.3g}")
    return None


# -- one kernel ------------------------------------------------------------------------------------------------------
def run_kernel(k: Kernel, backends=("interp", "cpu"), keep_file=False) -> Outcome:
    """Run ``k`` on ``backends`` (the first one is the reference) and compare."""
    info: Info = infer(k)
    source = render(k, info)
    jitfn, path = load_kernel(source)
    try:
        results, errors = {}, {}
        for be in backends:
            args, cx, grid = arguments(k, info)
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # overflow in the kernels' own arithmetic is expected
                    launcher_for(be)(jitfn, grid, args, cx)
                results[be] = args
            except Exception as e:  # noqa: BLE001 - any failure of a backend is a finding
                errors[be] = _describe(e)
                if os.environ.get("TILEC_FUZZ_TRACEBACK"):
                    traceback.print_exc()
    finally:
        if not keep_file:
            os.unlink(path)
    out = Outcome("ok", source=source, errors=errors)
    if errors:
        kinds = {e.split(":")[0] for e in errors.values()}
        if len(errors) == len(backends) and len(kinds) == 1:
            out.status, out.detail = "invalid", next(iter(errors.values()))
        else:
            out.status = "error"
            out.detail = "; ".join(f"{b}: {errors.get(b, 'ran')}" for b in backends)
        return out
    names = list(info.inputs) + list(info.outputs)
    ref = results[backends[0]]
    lines = []
    for be in backends[1:]:
        for i, p in enumerate(names):
            if p not in info.outputs:
                continue
            o = info.outputs[p]
            d = compare(ref[i], results[be][i], o.err,
                        flush_subnormals=be.startswith("cuda") and o.kind != "store" and o.dtype == "float32")
            if d is not None:
                lines.append(f"{p} ({info.outputs[p].dtype}, {backends[0]} vs {be}): {d}")  # values in this order
                out.mismatched.append(p)
    if lines:
        out.status, out.detail = "mismatch", "\n".join(lines)
    return out
