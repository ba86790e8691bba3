"""Hand-made relocatable AMDGPU objects for the linker tests: sections, symbols and relocations chosen by the
test, written with tilec.elf's writer (an ET_REL file needs no segments)."""
from __future__ import annotations

import struct

from tilec.elf import constants as C
from tilec.elf.writer import OutSection, align_up, pack_symbol, string_table, write_elf


def make_object(sections, symbols, relocations, machine=C.EM_AMDGPU, e_type=C.ET_REL, flags=0x54C):
    """``sections``: [(name, type, flags, align, bytes or NOBITS size)]; ``symbols``: [(name, section name or
    'ABS'/'UND', value, size, bind, type, visibility)] (locals first); ``relocations``: {section name: [(offset,
    kind, symbol name or index, addend)]}. Section symbols are added for every section, first."""
    out = [OutSection("", C.SHT_NULL, 0, 0)]
    for name, typ, fl, al, body in sections:
        s = OutSection(name, typ, fl, al)
        if typ == C.SHT_NOBITS:
            s.size = body
        else:
            s.data = bytearray(body)
        out.append(s)
    index = {s.name: i for i, s in enumerate(out)}
    syms = [("", 0, 0, 0, C.STB_LOCAL, C.STT_NOTYPE, 0, 0)]
    for i in range(1, len(out)):
        syms.append(("", i, 0, 0, C.STB_LOCAL, C.STT_SECTION, 0, i))
    for name, sec, value, size, bind, typ, vis in symbols:
        shndx = {"ABS": C.SHN_ABS, "UND": C.SHN_UNDEF}.get(sec, index.get(sec))
        syms.append((name, shndx, value, size, bind, typ, vis, 0))
    sym_index = {s[0]: i for i, s in enumerate(syms) if s[0]}
    strblob, at = string_table(s[0] for s in syms)
    symdata = b"".join(pack_symbol(at[n], v, sz, b, t, vis, sh) for n, sh, v, sz, b, t, vis, _ in syms)
    first_global = sum(s[4] == C.STB_LOCAL for s in syms)
    strtab = OutSection(".strtab", C.SHT_STRTAB, 0, 1, bytearray(strblob))
    symtab = OutSection(".symtab", C.SHT_SYMTAB, 0, 8, bytearray(symdata), entsize=C.SYM_SIZE, info=first_global)
    out += [strtab, symtab]
    symtab.link = len(out) - 2
    for target, rels in relocations.items():
        data = b"".join(struct.pack("<QQq", off, (sym_index.get(sym, sym) << 32) | kind, add)
                        for off, kind, sym, add in rels)
        out.append(OutSection(".rela" + target, C.SHT_RELA, C.SHF_INFO_LINK, 8, bytearray(data), entsize=24,
                              link=len(out) - 1, info=index[target]))
    shstr = OutSection(".shstrtab", C.SHT_STRTAB, 0, 1)
    out.append(shstr)
    blob, names = string_table(s.name for s in out[1:])
    shstr.data = bytearray(blob)
    offset = C.EHDR_SIZE
    for s in out:
        s.name_off = names[s.name]
        if s.type not in (C.SHT_NULL, C.SHT_NOBITS):
            offset = align_up(offset, s.align)
            s.offset = offset
            offset += len(s.data)
    return write_elf(bytes([C.ELFOSABI_AMDGPU_HSA, 3]), e_type, machine, flags, out, [], len(out) - 1,
                     align_up(offset, 8))
