"""Link one relocatable AMDGPU object (ET_REL, as LLVM emits it) into a loadable shared object (ET_DYN), the
form the ROCm loader accepts, without ld.lld.

The layout follows ld.lld's for a code object: three page-separated PT_LOAD segments (read-only: headers,
notes, ``.dynsym``, ``.hash``, ``.dynstr``, ``.rela.dyn``, ``.rodata``; executable: ``.text``; read-write:
``.dynamic``, ``.got``, data, ``.bss``), each placed at an address congruent to its file offset modulo the page
size, plus PT_DYNAMIC and PT_NOTE. Every static relocation is resolved here (the loader applies only dynamic
ones); absolute addresses and GOT slots become ``R_AMDGPU_RELATIVE64`` dynamic relocations. Exported symbols
(global or weak, defined, default or protected visibility: the kernels and their ``.kd`` descriptors) go to
``.dynsym``; ``.symtab`` keeps every symbol at its final address, since the loader reads it too.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from . import constants as C
from .errors import ElfError
from .hashtab import build_hash
from .layout import place_segments
from .reader import read_elf
from .relocations import ABSOLUTE64, GOT_KINDS, apply, relocation_name
from .writer import OutSection, OutSegment, align_up, pack_symbol, string_table, write_elf

_EXPORTED_VIS = (C.STV_DEFAULT, C.STV_PROTECTED)


def link_shared(obj: bytes, soname: str | None = None) -> bytes:
    """The shared object made of relocatable object ``obj``; ElfError naming what cannot be linked
    (undefined symbols, unknown relocations, a file that is not an AMDGPU relocatable object)."""
    return _Link(obj, soname).run()


@dataclass
class _DynamicSections:
    """What the loader reads to find symbols and relocate: sized before layout, filled after it."""
    exported: list  # indices of the symbols in .dynsym, in order
    dynstr_at: dict  # name -> offset in .dynstr
    dynsym: OutSection
    hash: OutSection
    dynstr: OutSection
    rela: OutSection | None  # .rela.dyn, absent without dynamic relocations
    tags: list  # .dynamic's tags, in order
    dynamic: OutSection
    got: OutSection | None
    got_syms: list  # symbol indices with a GOT slot, in slot order


class _Link:
    def __init__(self, obj: bytes, soname):
        self.f = read_elf(obj)
        if self.f.type != C.ET_REL:
            raise ElfError(f"expected a relocatable object (ET_REL), got ELF type {self.f.type}")
        if self.f.machine != C.EM_AMDGPU:
            raise ElfError(f"expected an AMDGPU object (machine {C.EM_AMDGPU}), got machine {self.f.machine}")
        self.soname = soname
        self.syms = self.f.symbols()

    # -- analysis ------------------------------------------------------------------------------------------
    def _check_symbols(self):
        undefined = sorted({s.name for s in self.syms[1:] if s.shndx == C.SHN_UNDEF and s.bind != C.STB_LOCAL})
        if undefined:
            raise ElfError("undefined symbol(s) in the AMDGPU object: " + ", ".join(undefined) +
                           " (code objects cannot call libraries: the kernel must not reference them)")
        common = [s.name for s in self.syms if s.shndx == C.SHN_COMMON]
        if common:
            raise ElfError("common symbol(s) are not supported: " + ", ".join(common))

    def _relocation_sections(self):
        """(relocation section, target input section) for targets that are loaded."""
        out = []
        for s in self.f.sections:
            if s.type in (C.SHT_RELA, C.SHT_REL):
                if not 0 < s.info < len(self.f.sections):
                    raise ElfError(f"{s.name} applies to section index {s.info}, which does not exist")
                target = self.f.sections[s.info]
                if target.flags & C.SHF_ALLOC:
                    out.append((s, target, self.f.relocations(s)))
        return out

    def _check_relocations(self, relocs):
        for _, target, rs in relocs:
            for r in rs:
                if r.sym >= len(self.syms):
                    raise ElfError(f"relocation in {target.name} names symbol index {r.sym}, which does not exist")
                if r.type not in C.RELOCATION_NAMES or r.type == C.R_AMDGPU_RELATIVE64:
                    raise ElfError(f"unsupported AMDGPU relocation {relocation_name(r.type)} in {target.name} "
                                   f"at offset {r.offset:#x} (symbol {self.syms[r.sym].name or r.sym})")

    # -- the link -------------------------------------------------------------------------------------------
    def run(self) -> bytes:
        self._check_symbols()
        relocs = self._relocation_sections()
        self._check_relocations(relocs)
        got_syms = sorted({r.sym for _, _, rs in relocs for r in rs if r.type in GOT_KINDS})
        n_abs = sum(r.type in ABSOLUTE64 for _, _, rs in relocs for r in rs)
        dyn = self._dynamic_sections(got_syms, n_abs)
        loads, out_notes = self._segment_contents(dyn)
        segments, offset = self._place(loads, out_notes, dyn.dynamic)
        self._relocate(relocs, dyn)
        table = self._section_table([s for _, secs in loads for s in secs], dyn)
        self._fill_dynamic(dyn)
        for s in table[-3:]:  # the non-loaded tail: .symtab, .strtab, .shstrtab
            offset = align_up(offset, s.align)
            s.offset = offset
            offset += s.file_size
        shoff = align_up(offset, 8)
        return write_elf(self.f.ident[7:], C.ET_DYN, self.f.machine, self.f.flags, table, segments,
                         table[-1].index, shoff)

    def _dynamic_sections(self, got_syms, n_abs) -> _DynamicSections:
        """The dynamic symbols, their hash and strings, the dynamic relocations, ``.dynamic`` and the GOT, sized
        now and filled once every address is known."""
        exported = [i for i, s in enumerate(self.syms) if i and s.bind in (C.STB_GLOBAL, C.STB_WEAK)
                    and s.shndx != C.SHN_UNDEF and s.visibility in _EXPORTED_VIS
                    and s.type not in (C.STT_SECTION, C.STT_FILE)]
        dyn_names = [self.syms[i].name for i in exported] + ([self.soname] if self.soname else [])
        dynstr_blob, dynstr_at = string_table(dyn_names)
        dynsym = OutSection(".dynsym", C.SHT_DYNSYM, C.SHF_ALLOC, 8, bytearray(C.SYM_SIZE * (1 + len(exported))),
                            entsize=C.SYM_SIZE, info=1)
        hashsec = OutSection(".hash", C.SHT_HASH, C.SHF_ALLOC, 4,
                             bytearray(build_hash([b""] + [self.syms[i].name.encode() for i in exported])), entsize=4)
        dynstr = OutSection(".dynstr", C.SHT_STRTAB, C.SHF_ALLOC, 1, bytearray(dynstr_blob))
        n_dynrel = len(got_syms) + n_abs
        reladyn = OutSection(".rela.dyn", C.SHT_RELA, C.SHF_ALLOC, 8, bytearray(C.RELA_SIZE * n_dynrel),
                             entsize=C.RELA_SIZE) if n_dynrel else None
        dyn_tags = [C.DT_HASH, C.DT_SYMTAB, C.DT_SYMENT, C.DT_STRTAB, C.DT_STRSZ]
        if reladyn is not None:
            dyn_tags += [C.DT_RELA, C.DT_RELASZ, C.DT_RELAENT]
        if self.soname:
            dyn_tags.append(C.DT_SONAME)
        dynamic = OutSection(".dynamic", C.SHT_DYNAMIC, C.SHF_ALLOC | C.SHF_WRITE, 8,
                             bytearray(C.DYN_SIZE * (len(dyn_tags) + 1)), entsize=C.DYN_SIZE)
        got = OutSection(".got", C.SHT_PROGBITS, C.SHF_ALLOC | C.SHF_WRITE, 8, bytearray(8 * len(got_syms))) \
            if got_syms else None
        return _DynamicSections(exported, dynstr_at, dynsym, hashsec, dynstr, reladyn, dyn_tags, dynamic, got,
                                got_syms)

    def _segment_contents(self, dyn):
        """The sections of each PT_LOAD segment, (flags, sections) for the non-empty ones, and the output note
        sections: the input's allocated sections copied one to one, around the dynamic sections."""
        inputs = [s for s in self.f.sections if s.flags & C.SHF_ALLOC and s.type not in (C.SHT_RELA, C.SHT_REL)]
        notes = [s for s in inputs if s.type == C.SHT_NOTE]
        ro = [s for s in inputs if s.type != C.SHT_NOTE and not s.flags & (C.SHF_WRITE | C.SHF_EXECINSTR)]
        text = [s for s in inputs if s.flags & C.SHF_EXECINSTR]
        rw = [s for s in inputs if s.flags & C.SHF_WRITE and not s.flags & C.SHF_EXECINSTR]
        rw.sort(key=lambda s: s.type == C.SHT_NOBITS)  # .bss last: it has no file bytes
        self.out_of = {}

        def copy(s):
            o = OutSection(s.name, s.type, s.flags, max(s.align, 1), bytearray(s.data), s.size if s.type ==
                           C.SHT_NOBITS else 0, s.entsize)
            self.out_of[s.index] = o
            return o

        seg_ro = [copy(s) for s in notes] + [dyn.dynsym, dyn.hash, dyn.dynstr] + \
                 ([dyn.rela] if dyn.rela else []) + [copy(s) for s in ro]
        seg_x = [copy(s) for s in text]
        seg_rw = [dyn.dynamic] + ([dyn.got] if dyn.got else []) + [copy(s) for s in rw]
        loads = [(C.PF_R, seg_ro), (C.PF_R | C.PF_X, seg_x), (C.PF_R | C.PF_W, seg_rw)]
        return [(fl, secs) for fl, secs in loads if secs], [self.out_of[s.index] for s in notes]

    @staticmethod
    def _place(loads, out_notes, dynamic):
        """Addresses and file offsets of the loaded sections; the program headers (PT_LOAD, PT_DYNAMIC, PT_NOTE)
        and the file offset where the loaded part ends."""
        n_phdr = len(loads) + 1 + (1 if out_notes else 0)
        segments, offset = place_segments(loads, C.EHDR_SIZE + C.PHDR_SIZE * n_phdr)
        segments.append(OutSegment(C.PT_DYNAMIC, C.PF_R | C.PF_W, dynamic.offset, dynamic.addr, dynamic.file_size,
                                   dynamic.mem_size, 8))
        if out_notes:
            first, last = out_notes[0], out_notes[-1]
            size = last.offset + last.file_size - first.offset
            segments.append(OutSegment(C.PT_NOTE, C.PF_R, first.offset, first.addr, size, size,
                                       max(s.align for s in out_notes)))
        return segments, offset

    def _address(self, i):
        """The final address of symbol ``i``."""
        s = self.syms[i]
        if s.shndx == C.SHN_ABS:
            return s.value
        o = self.out_of.get(s.shndx)
        if o is None:
            raise ElfError(f"symbol {s.name or i} is defined in section {s.shndx}, which is not loaded")
        return o.addr + (0 if s.type == C.STT_SECTION else s.value)

    def _relocate(self, relocs, dyn):
        """Every static relocation applied in place; GOT slots and absolute addresses also become
        ``R_AMDGPU_RELATIVE64`` dynamic relocations."""
        address, got = self._address, dyn.got
        got_slot = {sym: got.addr + 8 * k for k, sym in enumerate(dyn.got_syms)} if got else {}
        dynrels = []
        for sym, slot in got_slot.items():
            struct.pack_into("<Q", got.data, slot - got.addr, address(sym))
            dynrels.append((slot, address(sym)))
        for rsec, target, rs in relocs:
            o = self.out_of[target.index]
            for r in rs:
                S = address(r.sym) if r.sym else 0
                where = f"{target.name}+{r.offset:#x} ({relocation_name(r.type)} against " \
                        f"{self.syms[r.sym].name or 'section'})"
                apply(o.data, r.offset, r.type, S, r.addend, o.addr + r.offset, got_slot.get(r.sym), where)
                if r.type in ABSOLUTE64:
                    dynrels.append((o.addr + r.offset, S + r.addend))
        if dyn.rela is not None:
            for k, (place, addend) in enumerate(dynrels):
                struct.pack_into("<QQq", dyn.rela.data, k * C.RELA_SIZE, place, C.R_AMDGPU_RELATIVE64, addend)

    def _section_table(self, loaded, dyn):
        """The final section table: null, the loaded sections, then ``.symtab``, ``.strtab``, ``.shstrtab``;
        indices, links and names set."""
        null = OutSection("", C.SHT_NULL, 0, 0)
        table = [null] + loaded
        for i, s in enumerate(table):
            s.index = i
        symtab, strtab = self._symtab(self._address)
        shstrtab = OutSection(".shstrtab", C.SHT_STRTAB, 0, 1)
        table += [symtab, strtab, shstrtab]
        for i, s in enumerate(table):
            s.index = i
        symtab.link = strtab.index
        dyn.dynsym.link = dyn.hash.link = dyn.dynstr.index
        dyn.hash.link = dyn.dynsym.index
        if dyn.rela is not None:
            dyn.rela.link = dyn.dynsym.index
        dyn.dynamic.link = dyn.dynstr.index
        blob, at = string_table(s.name for s in table[1:])
        shstrtab.data = bytearray(blob)
        for s in table:
            s.name_off = at[s.name]
        return table

    def _fill_dynamic(self, dyn):
        """``.dynsym`` and ``.dynamic`` written, now that addresses and section indices are final."""
        for k, i in enumerate(dyn.exported, 1):
            s = self.syms[i]
            struct.pack_into("<24s", dyn.dynsym.data, k * C.SYM_SIZE,
                             pack_symbol(dyn.dynstr_at[s.name], self._address(i), s.size, s.bind, s.type,
                                         s.visibility, self._out_index(s.shndx)))
        values = {C.DT_HASH: dyn.hash.addr, C.DT_SYMTAB: dyn.dynsym.addr, C.DT_SYMENT: C.SYM_SIZE,
                  C.DT_STRTAB: dyn.dynstr.addr, C.DT_STRSZ: len(dyn.dynstr.data),
                  C.DT_SONAME: dyn.dynstr_at.get(self.soname, 0)}
        if dyn.rela is not None:
            values.update({C.DT_RELA: dyn.rela.addr, C.DT_RELASZ: len(dyn.rela.data), C.DT_RELAENT: C.RELA_SIZE})
        for k, tag in enumerate(dyn.tags):
            struct.pack_into("<qQ", dyn.dynamic.data, k * C.DYN_SIZE, tag, values[tag])

    def _out_index(self, shndx: int) -> int:
        if shndx in (C.SHN_ABS, C.SHN_UNDEF):
            return shndx
        return self.out_of[shndx].index

    def _symtab(self, address):
        """``.symtab`` and ``.strtab``: every symbol of a loaded section or absolute, at its final address."""
        keep = [i for i, s in enumerate(self.syms) if i and (s.shndx == C.SHN_ABS or s.shndx in self.out_of)]
        keep.sort(key=lambda i: self.syms[i].bind != C.STB_LOCAL)  # locals first, as ELF requires
        blob, at = string_table(self.syms[i].name for i in keep)
        data = bytearray(C.SYM_SIZE)
        for i in keep:
            s = self.syms[i]
            data += pack_symbol(at[s.name], address(i), s.size, s.bind, s.type, s.visibility,
                                self._out_index(s.shndx))
        first_global = 1 + sum(self.syms[i].bind == C.STB_LOCAL for i in keep)
        symtab = OutSection(".symtab", C.SHT_SYMTAB, 0, 8, data, entsize=C.SYM_SIZE, info=first_global)
        return symtab, OutSection(".strtab", C.SHT_STRTAB, 0, 1, bytearray(blob))
