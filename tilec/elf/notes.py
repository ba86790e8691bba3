"""ELF notes, and the AMDGPU metadata note (``NT_AMDGPU_METADATA``, MessagePack) that describes each kernel:
its arguments and their offsets, kernarg size, register and LDS use. The runtime packs kernel arguments from it;
tilec reads register counts and checks its own output against it."""
from __future__ import annotations

import struct

from .constants import NT_AMDGPU_METADATA, SHT_NOTE
from .errors import ElfError
from .msgpack import unpack


def iter_notes(data: bytes):
    """(owner name, type, descriptor bytes) of each note in a note section's bytes (4-byte aligned fields)."""
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, typ = struct.unpack_from("<III", data, pos)
        pos += 12
        name_end = pos + namesz
        desc = (pos + namesz + 3) & ~3
        end = desc + descsz
        if end > len(data):
            raise ElfError("a note runs past the end of its section")
        yield bytes(data[pos:name_end]).rstrip(b"\0").decode("ascii", "replace"), typ, bytes(data[desc:end])
        pos = (end + 3) & ~3


def amdgpu_metadata(elf) -> dict:
    """The decoded AMDGPU metadata of an ``ElfFile`` (``amdhsa.kernels``, ``amdhsa.version``, ...)."""
    for s in elf.sections:
        if s.type == SHT_NOTE:
            for owner, typ, desc in iter_notes(s.data):
                if owner == "AMDGPU" and typ == NT_AMDGPU_METADATA:
                    return unpack(desc)
    raise ElfError("the code object has no AMDGPU metadata note")
