"""``tilec-opt``: run passes over textual tir or gir, ``-p "convert-to-gir{num-warps=8},coalesce"``, and print IR
that parses back. It is the driver of ``python -m tilec.passes`` plus ``--target BACKEND[:ARCH]``, which asks the
backend for the facts its passes use (CUDA: ``arch`` for accelerate-dot, 32-lane warps) and, without ``-p``, for
its pass list after the tir pipeline: ``tilec-opt --target cuda:90 k.tir`` shows the gir a compile would lower.
"""
from __future__ import annotations

import sys

from ..passes.cli import TargetSetting, UsageError
from ..passes.cli import main as _driver
from .targets import parse_target


def target_setting(spec: str) -> TargetSetting:
    """The option defaults and pass list of the backend ``spec`` names (``cuda:90``, ``cpu``)."""
    try:
        target, backend = parse_target(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    defaults = {}
    if isinstance(getattr(backend, "arch", None), int):
        defaults["arch"] = backend.arch
    if getattr(backend, "warp_size", None):
        defaults["warp_size"] = backend.warp_size
    defaults.update(getattr(backend, "pass_defaults", {}))  # e.g. HIP: no NVIDIA matrix units for lone passes

    def typed(options: dict):
        """The backend's options for the driver's ``num_warps`` and ``num_stages``."""
        return backend.parse_options({"num_warps": options["num_warps"], "num_stages": options["num_stages"]})

    def passes(options: dict) -> list:
        return backend.passes(typed(options)) if hasattr(backend, "passes") else []

    return TargetSetting(str(target), defaults, passes, typed)


def main(argv=None) -> int:
    return _driver(argv, prog="tilec-opt", targets=target_setting)


if __name__ == "__main__":
    sys.exit(main())
