"""What each AMDGPU relocation writes, as in ld.lld: ``S`` the symbol's address, ``A`` the addend, ``P`` the
place's address, ``G`` the address of the symbol's GOT slot. Relocations the loader must finish (absolute
addresses, which depend on where the code object lands) also produce a dynamic ``R_AMDGPU_RELATIVE64``.

Kernel objects carry REL64 (descriptor -> entry), REL32_LO/HI (constant tables, internal globals, calls) and
GOTPCREL32_LO/HI (externally visible globals); the others are handled because they are as simple, and anything
else is an :class:`ElfError` naming it.
"""
from __future__ import annotations

import struct

from . import constants as C
from .errors import ElfError

_MASK64 = (1 << 64) - 1

#: kinds that address the symbol's GOT slot instead of the symbol
GOT_KINDS = frozenset({C.R_AMDGPU_GOTPCREL, C.R_AMDGPU_GOTPCREL32_LO, C.R_AMDGPU_GOTPCREL32_HI})
#: kinds whose value is an absolute address: the loader adds the load base (64-bit only)
ABSOLUTE64 = frozenset({C.R_AMDGPU_ABS64})


def relocation_name(kind: int) -> str:
    return C.RELOCATION_NAMES.get(kind, f"relocation type {kind}")


def apply(buf: bytearray, offset: int, kind: int, S: int, A: int, P: int, G: int | None, where: str):
    """Write relocation ``kind`` into ``buf`` at ``offset`` (the place ``P`` in the output)."""
    if kind == C.R_AMDGPU_NONE:
        return
    if kind in GOT_KINDS:
        if G is None:
            raise ElfError(f"{relocation_name(kind)} at {where} has no GOT slot (a linker bug)")
        v = G + A - P
    elif kind in (C.R_AMDGPU_REL32, C.R_AMDGPU_REL64, C.R_AMDGPU_REL32_LO, C.R_AMDGPU_REL32_HI, C.R_AMDGPU_REL16):
        v = S + A - P
    elif kind == C.R_AMDGPU_ABS64:
        v = S + A
    else:
        raise ElfError(f"unsupported AMDGPU relocation {relocation_name(kind)} at {where}")
    v &= _MASK64
    if kind in (C.R_AMDGPU_REL64, C.R_AMDGPU_ABS64):
        _put(buf, offset, "<Q", v, where)
    elif kind in (C.R_AMDGPU_REL32_HI, C.R_AMDGPU_GOTPCREL32_HI):
        _put(buf, offset, "<I", v >> 32, where)
    elif kind == C.R_AMDGPU_REL16:
        # a branch: signed 16-bit count of dwords from the end of the 4-byte instruction
        d = _signed(v) - 4
        if d % 4 or not -(1 << 17) <= d < (1 << 17):
            raise ElfError(f"R_AMDGPU_REL16 at {where}: branch distance {d} out of range")
        _put(buf, offset, "<H", (d // 4) & 0xFFFF, where)
    else:  # REL32, REL32_LO, GOTPCREL, GOTPCREL32_LO: the low 32 bits
        if kind in (C.R_AMDGPU_REL32, C.R_AMDGPU_GOTPCREL) and not -(1 << 31) <= _signed(v) < (1 << 32):
            raise ElfError(f"{relocation_name(kind)} at {where}: value {_signed(v)} does not fit 32 bits")
        _put(buf, offset, "<I", v & 0xFFFFFFFF, where)


def _signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _put(buf, offset, fmt, value, where):
    if offset < 0 or offset + struct.calcsize(fmt) > len(buf):
        raise ElfError(f"relocation at {where} lies outside its section")
    struct.pack_into(fmt, buf, offset, value)
