"""Serialise an ELF64 file from laid-out sections and segments: the header, the program headers right after it,
each section's bytes at its offset, and the section header table at the end. Layout decisions (offsets,
addresses) are the linker's; this file only writes them down."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .constants import EHDR_SIZE, ELFCLASS64, ELFDATA2LSB, ELFMAG, EV_CURRENT, PHDR_SIZE, SHDR_SIZE, SHT_NOBITS
from .reader import EHDR, PHDR, SHDR


@dataclass
class OutSection:
    name: str
    type: int
    flags: int
    align: int
    data: bytearray = field(default_factory=bytearray)
    size: int = 0            # NOBITS only: the size in memory
    entsize: int = 0
    link: int = 0
    info: int = 0
    addr: int = 0
    offset: int = 0
    index: int = 0
    name_off: int = 0

    @property
    def mem_size(self) -> int:
        return self.size if self.type == SHT_NOBITS else len(self.data)

    @property
    def file_size(self) -> int:
        return 0 if self.type == SHT_NOBITS else len(self.data)


@dataclass
class OutSegment:
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int
    align: int


def string_table(names) -> tuple:
    """(bytes, {name: offset}) of an ELF string table holding ``names`` (index 0 is the empty string)."""
    blob, where = bytearray(b"\0"), {"": 0}
    for n in names:
        if n not in where:
            where[n] = len(blob)
            blob += n.encode() + b"\0"
    return bytes(blob), where


def write_elf(ident_tail: bytes, e_type: int, machine: int, flags: int, sections: list, segments: list,
              shstrndx: int, shoff: int) -> bytes:
    """``sections`` (index 0 the null section, each with its final offset) and ``segments`` -> file bytes.
    ``ident_tail``: e_ident bytes 7.. (OS/ABI, ABI version, padding)."""
    ident = ELFMAG + bytes([ELFCLASS64, ELFDATA2LSB, EV_CURRENT]) + ident_tail
    ident = ident[:16].ljust(16, b"\0")
    out = bytearray(shoff + SHDR_SIZE * len(sections))
    EHDR.pack_into(out, 0, ident, e_type, machine, EV_CURRENT, 0, EHDR_SIZE if segments else 0, shoff, flags,
                   EHDR_SIZE, PHDR_SIZE, len(segments), SHDR_SIZE, len(sections), shstrndx)
    for i, p in enumerate(segments):
        PHDR.pack_into(out, EHDR_SIZE + i * PHDR_SIZE, p.type, p.flags, p.offset, p.vaddr, p.vaddr, p.filesz,
                       p.memsz, p.align)
    for i, s in enumerate(sections):
        if s.file_size:
            out[s.offset:s.offset + s.file_size] = s.data
        SHDR.pack_into(out, shoff + i * SHDR_SIZE, s.name_off, s.type, s.flags, s.addr, s.offset, s.mem_size,
                       s.link, s.info, s.align, s.entsize)
    return bytes(out)


def pack_symbol(name_off: int, value: int, size: int, bind: int, typ: int, vis: int, shndx: int) -> bytes:
    return struct.pack("<IBBHQQ", name_off, (bind << 4) | typ, vis, shndx, value, size)


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a if a > 1 else x
