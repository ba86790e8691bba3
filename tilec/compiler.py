"""The compile pipeline: source -> tir -> tir passes -> backend stages, each stage's text kept in ``asm``.

``compile()`` works without any device: the target is explicit or detected from the arguments' device.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    """What to compile for: ``Target("cpu")``, ``Target("cuda", 90, 32)``, ``Target("hip", "gfx942", 64)``."""
    backend: str
    arch: object = None
    warp_size: int = 1

    def __str__(self):
        return f"{self.backend}:{self.arch}" if self.arch is not None else self.backend


@dataclass
class ASTSource:
    """A ``@tilec.jit`` function with a specialisation.

    ``signature``: a string of the runtime parameters' types in order (``"*fp32,*fp32,i32:16"``) or a dict from
    parameter name to type (``"constexpr"`` marks a constexpr). ``constexprs``: constexpr name -> value.
    ``attrs``: parameter name -> {"divisibility": 16} / {"equal_to_1": True} (also written as ``:16``/``:1``
    suffixes in signature strings).
    """
    fn: object
    signature: object = None
    constexprs: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)

    def make_ir(self, options):
        from .frontend.codegen import generate
        return generate(self, options)


def get_backend(target: Target):
    if target.backend == "cpu":
        from .targets.cpu.backend import CPUBackend
        return CPUBackend(target)
    if target.backend == "cuda":
        from .targets.cuda.backend import CUDABackend
        return CUDABackend(target)
    raise ValueError(f"unknown backend {target.backend!r}")


def default_target() -> Target:
    forced = os.environ.get("TILEC_BACKEND")
    if forced:
        return Target(forced)
    return Target("cpu")


def compile(src: ASTSource, target: Target | None = None, options: dict | None = None):
    """Compile ``src`` for ``target``; returns a :class:`CompiledKernel` (see ``pipeline.py``)."""
    from .pipeline import compile_source
    return compile_source(src, target or default_target(), dict(options or {}))
