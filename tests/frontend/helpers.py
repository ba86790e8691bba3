"""Run kernels through the frontend and the reference evaluator (independent of any backend)."""
from __future__ import annotations

from tilec.frontend.codegen import generate
from tilec.ir.evaluator import run_kernel
from tilec.ir.verifier import verify


def build(kernel, *args, **constexprs):
    """The verified tir module for ``kernel`` specialised on ``args``/``constexprs``."""
    values = kernel._bind(args, constexprs)
    _, runtime, src = kernel.specialize(values)
    module = generate(src, {})
    verify(module)
    return module, runtime


def launch(kernel, grid, *args, **constexprs):
    """``kernel[grid](*args, **constexprs)`` evaluated by the numpy reference evaluator."""
    module, runtime = build(kernel, *args, **constexprs)
    grid = (grid,) if isinstance(grid, int) else tuple(grid)
    run_kernel(module, kernel.__name__, runtime, grid)
    return module

