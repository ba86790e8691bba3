"""Compile options: one frozen dataclass per backend (``cpu/options.py``, ``cuda/options.py``, ``hip/options.py``)
over the fields every backend shares (:class:`Options`), parsed once from the launch or compile keywords.

Each option and its default are written here or in the backend's class and nowhere else: passes, the lowering
and tools read the options object (``options.num_warps``), or a field's default from the class
(``Options.num_warps``) where no compile is at hand. Parsing refuses a keyword no field has, naming the valid
ones and the closest; the fields then check their values. A frozen dataclass hashes and compares by value, so
the options stay part of the compiled kernel's key (``pipeline.cache_key`` reads :meth:`Options.as_dict`).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import BackendError, did_you_mean


class OptionError(BackendError):
    """A compile option that no field of the backend's options has, or a value its field refuses."""


class NumWarpsError(OptionError, AssertionError):
    """``num_warps`` is not a power of two: an ``AssertionError`` too, as Triton raises it."""


def fp_fusion_default() -> bool:
    """Triton's default for ``enable_fp_fusion`` and its switch for it (``TRITON_DEFAULT_FP_FUSION=0``)."""
    return os.environ.get("TILEC_DEFAULT_FP_FUSION", os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")) != "0"


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Options:
    """The options every backend takes (Triton's launch options). A backend's subclass adds its own fields and
    checks; ``parse`` builds one from keywords."""

    #: warps (wavefronts) per program; layouts are chosen for this many, and launches start as many
    num_warps: int = 4
    #: stages of the software pipeline for loops that do not name their own (``tl.range(num_stages=)``)
    num_stages: int = 3
    #: thread-block clusters (accepted for Triton's sake: programs run one block each)
    num_ctas: int = 1
    #: device_assert and the bounds checks compiled in
    debug: bool = False
    #: ``a * b + c`` may contract to a fused multiply-add
    enable_fp_fusion: bool = field(default_factory=fp_fusion_default)
    #: the precision of f32 dots that name none (``tl.dot(input_precision=)``); checked by the frontend at the dot
    #: that uses it, so that compiled code and the interpreter refuse a bad one alike, located there
    default_dot_input_precision: str = "tf32"
    #: a cap on registers per thread (``.maxnreg`` on NVIDIA; accepted and ignored elsewhere)
    maxnreg: int | None = None
    #: Triton's cooperative-grid launch flag (accepted: tilec's launches need no cooperative grid)
    launch_cooperative_grid: bool = False
    #: debug builds check each access against its array (False: the asserts alone, for callers without extents)
    bounds_checks: bool = True

    #: what the backend's messages call it
    backend: ClassVar[str] = "tilec"
    #: keywords accepted and dropped: the target, not an option, says the architecture (the pipeline retargets a
    #: launch's ``arch=`` before options are parsed)
    IGNORED: ClassVar[frozenset] = frozenset({"arch"})
    #: fields a backend fills in from its target (``parse``'s ``fixed``); a launch cannot set them
    FIXED: ClassVar[tuple] = ()

    # -- parsing -----------------------------------------------------------------------------------------------
    @classmethod
    def names(cls) -> list[str]:
        """The keywords a launch or compile may give."""
        return [f.name for f in dataclasses.fields(cls) if f.name not in cls.FIXED]

    @classmethod
    def parse(cls, given: dict | None = None, **fixed) -> "Options":
        """The options for keywords ``given`` (None values: not given) and the target's ``fixed`` fields."""
        given = dict(given or {})
        names = cls.names()
        unknown = sorted(k for k in given if k not in names and k not in cls.IGNORED)
        if unknown:
            hint = did_you_mean(unknown[0], names)
            raise OptionError(f"unknown {cls.backend} option{'s' if len(unknown) > 1 else ''} "
                              f"{', '.join(repr(k) for k in unknown)}{hint}; the {cls.backend} options are "
                              f"{', '.join(names)}")
        values = {k: v for k, v in given.items() if k in names and v is not None}
        for k in ("debug", "bounds_checks", "launch_cooperative_grid", "enable_fp_fusion"):
            if k in values:
                values[k] = bool(values[k])
        return cls(**values, **fixed)

    def __post_init__(self):
        nw = self.num_warps
        if not _int(nw) or nw < 1:
            raise OptionError(f"num_warps must be a positive int, got {nw!r}")
        if nw & (nw - 1):
            raise NumWarpsError(f"num_warps must be a power of 2, got {nw}")
        self.positive("num_stages")
        self.positive("num_ctas")
        if self.maxnreg is not None and (not _int(self.maxnreg) or not 1 <= self.maxnreg <= 255):
            raise OptionError(f"maxnreg must be an int in 1..255 (registers per thread), got {self.maxnreg!r}")

    def positive(self, name: str):
        """Refuse a field that is not an int of at least 1."""
        v = getattr(self, name)
        if not _int(v) or v < 1:
            raise OptionError(f"{name} must be a positive int, got {v!r}")

    # -- reading -----------------------------------------------------------------------------------------------
    def as_dict(self) -> dict:
        """Every field by name: what the kernel's metadata records, the cache key hashes and the frontend reads."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def replace(self, **changes) -> "Options":
        """A copy with ``changes``, checked again."""
        return dataclasses.replace(self, **changes)


def as_dict(options) -> dict:
    """``options`` as a dict: an :class:`Options`' fields, or a backend's own dict as it is (a backend registered
    from outside may keep its options in one)."""
    return options.as_dict() if isinstance(options, Options) else dict(options or {})


def num_warps_of(func, options=None) -> int:
    """The warps a function's code is made for: its own ``num_warps`` (convert-to-gir records it; gir read back
    from text keeps it), else the compile's options', else the default."""
    nw = func.attrs.get("num_warps") if func is not None else None
    if isinstance(nw, int):
        return nw
    return options.num_warps if isinstance(options, Options) else Options.num_warps
