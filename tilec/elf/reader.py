"""Parse an ELF64 little-endian file into plain records: header fields, sections (with their bytes), symbols and
relocations. Enough for AMDGPU code objects and for checking the linker's own output; anything malformed is an
:class:`ElfError`, never an IndexError or a struct error."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .constants import (ELFCLASS64, ELFDATA2LSB, ELFMAG, EHDR_SIZE, PHDR_SIZE, RELA_SIZE, SHDR_SIZE, SHN_XINDEX,
                        SHT_DYNSYM, SHT_NOBITS, SHT_REL, SHT_RELA, SHT_SYMTAB, SYM_SIZE)
from .errors import ElfError

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
SHDR = struct.Struct("<IIQQQQIIQQ")
SYM = struct.Struct("<IBBHQQ")
RELA = struct.Struct("<QQq")


@dataclass
class Section:
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    align: int
    entsize: int
    data: bytes = b""


@dataclass
class Symbol:
    name: str
    value: int
    size: int
    bind: int
    type: int
    visibility: int
    shndx: int


@dataclass
class Relocation:
    offset: int
    type: int
    sym: int
    addend: int


@dataclass
class Segment:
    type: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int
    align: int


@dataclass
class ElfFile:
    ident: bytes
    type: int
    machine: int
    flags: int
    entry: int
    sections: list = field(default_factory=list)
    segments: list = field(default_factory=list)

    @property
    def os_abi(self) -> int:
        return self.ident[7]

    @property
    def abi_version(self) -> int:
        return self.ident[8]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def symbols(self, table: Section | None = None) -> list:
        """Symbols of ``table`` (default: ``.symtab``), index 0 included."""
        table = table or next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if table is None:
            return []
        strtab = self._section_at(table.link, "symbol string table")
        if table.entsize not in (0, SYM_SIZE) or table.size % SYM_SIZE:
            raise ElfError(f"symbol table {table.name} has entries of {table.entsize} bytes, not {SYM_SIZE}")
        out = []
        for off in range(0, len(table.data), SYM_SIZE):
            name, info, other, shndx, value, size = SYM.unpack_from(table.data, off)
            if shndx == SHN_XINDEX:
                raise ElfError("extended section indexes (SHN_XINDEX) are not supported")
            out.append(Symbol(_string(strtab.data, name, "symbol name"), value, size, info >> 4, info & 0xF,
                              other & 3, shndx))
        return out

    def dynamic_symbols(self) -> list:
        t = next((s for s in self.sections if s.type == SHT_DYNSYM), None)
        return self.symbols(t) if t is not None else []

    def relocations(self, sec: Section) -> list:
        if sec.type == SHT_REL:
            raise ElfError(f"relocation section {sec.name} has no addends (SHT_REL): not produced for AMDGPU")
        if sec.type != SHT_RELA or sec.size % RELA_SIZE:
            raise ElfError(f"{sec.name} is not a well-formed SHT_RELA section")
        out = []
        for off in range(0, len(sec.data), RELA_SIZE):
            r_offset, r_info, addend = RELA.unpack_from(sec.data, off)
            out.append(Relocation(r_offset, r_info & 0xFFFFFFFF, r_info >> 32, addend))
        return out

    def _section_at(self, index: int, what: str) -> Section:
        if not 0 <= index < len(self.sections):
            raise ElfError(f"{what}: section index {index} out of range")
        return self.sections[index]


def _string(table: bytes, offset: int, what: str) -> str:
    if offset >= max(len(table), 1) and offset:
        raise ElfError(f"{what} at offset {offset} lies outside its string table")
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")


def read_elf(data: bytes) -> ElfFile:
    """Parse ``data`` (a whole ELF64 little-endian file)."""
    data = bytes(data)
    if len(data) < EHDR_SIZE or data[:4] != ELFMAG:
        raise ElfError("not an ELF file")
    if data[4] != ELFCLASS64 or data[5] != ELFDATA2LSB:
        raise ElfError("only 64-bit little-endian ELF files are supported")
    (ident, e_type, machine, _version, entry, phoff, shoff, flags, _ehsize, phentsize, phnum, shentsize, shnum,
     shstrndx) = EHDR.unpack_from(data, 0)
    f = ElfFile(ident, e_type, machine, flags, entry)
    if phnum:
        if phentsize != PHDR_SIZE or phoff + phnum * PHDR_SIZE > len(data):
            raise ElfError("program header table is malformed or truncated")
        for i in range(phnum):
            f.segments.append(Segment(*PHDR.unpack_from(data, phoff + i * PHDR_SIZE)))
    if shnum:
        if shentsize != SHDR_SIZE or shoff + shnum * SHDR_SIZE > len(data):
            raise ElfError("section header table is malformed or truncated")
        raw = [SHDR.unpack_from(data, shoff + i * SHDR_SIZE) for i in range(shnum)]
        for i, (name, typ, fl, addr, off, size, link, info, align, entsize) in enumerate(raw):
            if typ != SHT_NOBITS and off + size > len(data):
                raise ElfError(f"section {i} (offset {off}, {size} bytes) runs past the end of the file")
            body = data[off:off + size] if typ != SHT_NOBITS else b""
            f.sections.append(Section(i, str(name), typ, fl, addr, off, size, link, info, align, entsize, body))
        if shstrndx >= shnum:
            raise ElfError("section name table index out of range")
        names = f.sections[shstrndx].data
        for s in f.sections:
            s.name = _string(names, int(s.name), "section name")
    return f
