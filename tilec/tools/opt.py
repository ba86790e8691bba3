"""``tilec-opt``: run passes over textual tir or gir, ``-p "convert-to-gir{num-warps=8},coalesce"``, and print IR
that parses back. It is the driver of ``python -m tilec.passes`` plus ``--target BACKEND[:ARCH]``, which asks the
backend for the facts its passes use (CUDA: ``arch`` for accelerate-dot, 32-lane warps) and, without ``-p``, for
its pass list after the tir pipeline: ``tilec-opt --target cuda:90 k.tir`` shows the gir a compile would lower.
"""
from __future__ import annotations

import sys

from ..backends import get_backend
from ..compiler import Target
from ..errors import TilecError
from ..passes.cli import TargetSetting, UsageError
from ..passes.cli import main as _driver


def _arch(text: str):
    """``90``, ``sm_90`` and ``sm_90a`` are the int 90 (as ``TILEC_CUDA_ARCH`` reads them); other names stay
    text (``gfx942``); empty is None (the backend's own default)."""
    if not text:
        return None
    digits = text.removeprefix("sm_").rstrip("a")
    return int(digits) if digits.isdigit() else text


def target_setting(spec: str) -> TargetSetting:
    """The option defaults and pass list of the backend ``spec`` names (``cuda:90``, ``cpu``)."""
    name, _, arch = spec.strip().partition(":")
    try:
        backend = get_backend(Target(name, _arch(arch)))
    except (ValueError, TilecError) as e:
        raise UsageError(f"bad --target {spec!r}: {e}") from None
    defaults = {}
    if isinstance(getattr(backend, "arch", None), int):
        defaults["arch"] = backend.arch
    if getattr(backend, "warp_size", None):
        defaults["warp_size"] = backend.warp_size

    def passes(options: dict) -> list:
        if not hasattr(backend, "passes"):
            return []
        wanted = {"num_warps": options["num_warps"], "num_stages": options["num_stages"]}
        return backend.passes(backend.parse_options(wanted))

    return TargetSetting(str(Target(name, getattr(backend, "arch", None))), defaults, passes)


def main(argv=None) -> int:
    return _driver(argv, prog="tilec-opt", targets=target_setting)


if __name__ == "__main__":
    sys.exit(main())
