"""Compile tir modules or @tilec.jit kernels for the CUDA target, and run them on a device when there is one."""
from __future__ import annotations

import shutil

import numpy as np

import tilec
from tilec.ir.printer import print_ir

HAVE_PTXAS = shutil.which("ptxas") is not None
ARCHS = (80, 90)


class IRSource:
    """A compile source holding a ready tir module (for kernels built with the IR builder)."""

    def __init__(self, module):
        self.text = print_ir(module)
        self.fn = f"ir:{hash(self.text)}"
        self.signature, self.constexprs, self.attrs = None, {}, {}

    def make_ir(self, options):
        from tilec.ir.parser import parse_module
        return parse_module(self.text)


def target(arch=90):
    return tilec.Target("cuda", arch, 32)


def compile_ir(module, arch=90, **options):
    return tilec.compile(IRSource(module), target(arch), options)


def compile_jit(kernel, args, arch=90, options=None, **constexprs):
    """Specialise ``kernel`` on host ``args`` (numpy arrays stand in for device arrays of the same dtype and
    alignment) and compile it for the CUDA target; returns (compiled kernel, runtime argument indices)."""
    values = kernel._bind(tuple(args), constexprs)
    _, runtime, src = kernel.specialize(values)
    return tilec.compile(src, target(arch), dict(options or {}))


def compile_case(kernel, args, arch=90, options=None, **constexprs):
    """A case's kernel is a @tilec.jit function or a function returning a tir module."""
    if isinstance(kernel, tilec.JITFunction):
        return compile_jit(kernel, args, arch, options, **constexprs)
    return compile_ir(kernel(), arch, **(options or {}))


def case_runtime_args(kernel, args):
    return runtime_args(kernel, args) if isinstance(kernel, tilec.JITFunction) else list(args)


def to_device(args):
    """numpy arrays -> tilec.cuda arrays; other arguments unchanged."""
    from tilec.targets.cuda import array as cuda
    return [cuda.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]


def runtime_args(kernel, args):
    """The kernel's runtime (non-constexpr) arguments among ``args`` (positional, constexprs excluded)."""
    return [a for p, a in zip(kernel.params, args) if not p.is_constexpr]


def device_arch() -> int:
    from tilec.targets.cuda import driver
    return driver.compute_capability(0)
