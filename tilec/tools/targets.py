"""``--target BACKEND[:ARCH]`` for the tools: ``cuda:90``, ``cuda:sm_90a``, ``cpu``, ``hip:gfx942``."""
from __future__ import annotations

from ..backends import get_backend
from ..compiler import Target
from ..errors import TilecError


def _arch(text: str):
    """``90``, ``sm_90`` and ``sm_90a`` are the int 90 (as ``TILEC_CUDA_ARCH`` reads them); other names stay
    text (``gfx942``); empty is None (the backend's own default)."""
    if not text:
        return None
    digits = text.removeprefix("sm_").rstrip("a")
    return int(digits) if digits.isdigit() else text


def parse_target(spec: str):
    """The ``Target`` and backend object ``spec`` names; ValueError saying why when there is none (an unknown
    backend, an architecture it cannot read)."""
    name, _, arch = spec.strip().partition(":")
    target = Target(name, _arch(arch))
    try:
        return target, get_backend(target)
    except (ValueError, TilecError) as e:
        raise ValueError(f"bad --target {spec!r}: {e}") from None
