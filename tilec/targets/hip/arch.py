"""AMD GPU architectures: which ``gfx`` names tilec compiles for and the wavefront size each allows.

LLVM misbehaves rather than erring on a bad combination (wave32 on gfx9 silently yields an object without
kernels, ``-wavefrontsize64`` asserts, an unknown processor name compiles for a generic one), so every name and
wave size is checked here before anything reaches LLVM.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import BackendError

#: gfx9 (CDNA and Vega): wavefronts of 64 lanes only. (gfx940 and gfx941 are not here: LLVM 22 no longer knows
#: them and would silently compile for a generic processor.)
GFX9 = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950")
#: gfx10-12 (RDNA): 32 lanes natively, 64 with the ``wavefrontsize64`` feature
RDNA = ("gfx1030", "gfx1031", "gfx1032", "gfx1034", "gfx1035", "gfx1036",
        "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1200", "gfx1201")
KNOWN = GFX9 + RDNA
_FEATURES = ("sramecc", "xnack")


@dataclass(frozen=True)
class Arch:
    """A validated architecture: its ``gfx`` name, wave size and LLVM target features."""
    name: str
    warp_size: int
    features: str

    @property
    def family(self) -> int:
        """9, 10, 11 or 12."""
        return int(self.name[3:-2])

    @property
    def lds_bytes(self) -> int:
        """LDS one workgroup may allocate: 160 KB on gfx950, 64 KB on every other processor here."""
        return 163840 if self.name == "gfx950" else 65536

    @property
    def codegen_features(self) -> str:
        """The LLVM target features code generation and the assembler get: ``features`` plus, on gfx11, the
        "fake16" form of 16-bit instructions (``-real-true16``: a 16-bit value in a whole 32-bit VGPR). LLVM 21
        made "true16" (half registers, ``v0.l``) gfx11's default; ROCm 6's compiler and tools (LLVM 19), and
        Triton 3.6, which passes the same flag, use fake16: code every gfx11 toolchain disassembles and
        assembles, and the form gfx11 drivers and kernels have been tested with (docs/amd.md, "gfx11 and
        true16")."""
        return ",".join(f for f in (self.features, "-real-true16" if self.family == 11 else "") if f)


def parse_arch(arch, warp_size=None) -> Arch:
    """``"gfx942"`` (or ROCm's ``"gfx942:sramecc+:xnack-"``) and a wave size (None or 0/1: the native one) ->
    :class:`Arch`; BackendError naming the problem for anything LLVM would mishandle."""
    if not isinstance(arch, str) or not arch:
        raise BackendError(f"the HIP backend needs an architecture name such as 'gfx942', got {arch!r}")
    name, *flags = arch.strip().lower().split(":")
    if name not in KNOWN:
        raise BackendError(f"unknown AMD GPU architecture {arch!r} (known: {', '.join(KNOWN)})")
    features = []
    for flag in flags:
        if len(flag) < 2 or flag[-1] not in "+-" or flag[:-1] not in _FEATURES:
            raise BackendError(f"unknown feature {flag!r} in AMD GPU architecture {arch!r} "
                               f"(expected sramecc+/- or xnack+/-)")
        features.append(flag[-1] + flag[:-1])
    native = 64 if name in GFX9 else 32
    ws = native if warp_size in (None, 0, 1) else warp_size
    if ws not in (32, 64):
        raise BackendError(f"AMD wavefronts have 32 or 64 lanes, not {ws}")
    if name in GFX9 and ws != 64:
        raise BackendError(f"{name} runs 64-lane wavefronts only, not {ws}")
    if ws == 64 and name not in GFX9:
        features.append("+wavefrontsize64")
    return Arch(name, ws, ",".join(features))
