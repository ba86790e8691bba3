"""What to compile and for what: ``Target``, ``ASTSource`` (a @jit function with a specialisation), and choosing
the target — the default, the one ``TILEC_BACKEND`` forces, or the one a launch's arguments call for.

The stages themselves run in ``pipeline.py``; ``tilec.compile`` is ``pipeline.compile_source`` with the default
target. Backends come from the registry in ``backends.py``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .backends import get_backend, owner_of, register_backend  # noqa: F401  (get_backend: the pipeline's)
from .frontend.codegen import generate


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
        return generate(self, options)


def default_target() -> Target:
    """``TILEC_BACKEND`` when set, else the CPU."""
    forced = os.environ.get("TILEC_BACKEND")
    if forced:
        return Target(forced)
    return Target("cpu")


def target_for(values) -> Target:
    """The target a launch with ``values`` compiles for: ``TILEC_BACKEND`` when set, else the first registered
    backend that owns one of the arguments (GPU arrays select their GPU's backend), else the default."""
    if os.environ.get("TILEC_BACKEND"):
        return default_target()
    owner = owner_of(values)
    return Target(owner) if owner is not None else default_target()
