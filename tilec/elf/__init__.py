"""A minimal ELF toolkit for AMD GPU code objects, so that no external linker is needed.

LLVM emits a relocatable object (ET_REL) per compiled module; the ROCm runtime loads only a linked shared object
(ET_DYN), what ``ld.lld -shared`` would make. :func:`link_shared` does that link for one object in process.
Files: ``constants.py`` (numbers from the ELF and AMDGPU specifications), ``reader.py`` (parse an ELF64 file),
``relocations.py`` (what each AMDGPU relocation computes), ``hashtab.py`` (the SysV symbol hash table), ``layout.py`` (sections into segments),
``writer.py`` (serialise sections and segments), ``linker.py`` (ET_REL -> ET_DYN), ``msgpack.py`` and
``notes.py`` (read the AMDGPU metadata note).
"""
from __future__ import annotations

from .linker import link_shared
from .notes import amdgpu_metadata
from .reader import read_elf

__all__ = ["link_shared", "read_elf", "amdgpu_metadata"]
