"""The in-process linker on hand-made objects: every relocation kind lands the value ld.lld would write, GOT
slots and absolute addresses become dynamic RELATIVE64 relocations, and every unlinkable input is an ElfError
naming the symbol or relocation at fault."""
import struct

import pytest

from elf_builder import make_object
from tilec.elf import constants as C
from tilec.elf import link_shared, read_elf
from tilec.elf.errors import ElfError
from tilec.elf.hashtab import sysv_hash
from tilec.elf.msgpack import unpack
from tilec.errors import BackendError

G, L = C.STB_GLOBAL, C.STB_LOCAL
TEXT = (".text", C.SHT_PROGBITS, C.SHF_ALLOC | C.SHF_EXECINSTR, 256, bytes(0x100))
RODATA = (".rodata", C.SHT_PROGBITS, C.SHF_ALLOC, 64, bytes(0x60))
DATA = (".data", C.SHT_PROGBITS, C.SHF_ALLOC | C.SHF_WRITE, 8, bytes(16))
BSS = (".bss", C.SHT_NOBITS, C.SHF_ALLOC | C.SHF_WRITE, 4, 8)
SYMBOLS = [
    ("table", ".rodata", 0x40, 16, L, C.STT_OBJECT, C.STV_DEFAULT),
    ("counter", ".bss", 4, 4, L, C.STT_OBJECT, C.STV_DEFAULT),
    ("kern.num_vgpr", "ABS", 27, 0, L, C.STT_NOTYPE, C.STV_DEFAULT),
    ("kern", ".text", 0, 0x80, G, C.STT_FUNC, C.STV_PROTECTED),
    ("kern.kd", ".rodata", 0, 64, G, C.STT_OBJECT, C.STV_DEFAULT),
    ("ext", ".data", 8, 4, G, C.STT_OBJECT, C.STV_DEFAULT),
    ("hidden", ".data", 0, 4, G, C.STT_OBJECT, C.STV_HIDDEN),
]
RELOCS = {
    ".rodata": [(0x10, C.R_AMDGPU_REL64, "kern", 0x10), (0x50, C.R_AMDGPU_ABS64, "table", 4)],
    ".text": [(0x04, C.R_AMDGPU_REL32_LO, "table", 4), (0x0c, C.R_AMDGPU_REL32_HI, "table", 12),
              (0x14, C.R_AMDGPU_GOTPCREL32_LO, "ext", 4), (0x1c, C.R_AMDGPU_GOTPCREL32_HI, "ext", 12),
              (0x24, C.R_AMDGPU_REL32, "counter", 0), (0x28, C.R_AMDGPU_GOTPCREL, "ext", 0),
              (0x2c, C.R_AMDGPU_REL16, "kern", 0x40), (0x30, C.R_AMDGPU_NONE, 0, 0),
              (0x38, C.R_AMDGPU_REL64, "counter", 0)],
}


def linked(sections=(TEXT, RODATA, DATA, BSS), symbols=SYMBOLS, relocs=RELOCS):
    so = link_shared(make_object(list(sections), list(symbols), relocs))
    f = read_elf(so)
    return so, f, {s.name: s.value for s in f.symbols() if s.name}


def word(f, addr, fmt):
    s = next(s for s in f.sections if s.flags & C.SHF_ALLOC and s.addr <= addr < s.addr + max(s.size, 1))
    return struct.unpack_from(fmt, s.data, addr - s.addr)[0]


def test_every_relocation_kind():
    so, f, sym = linked()
    text, rodata = f.section(".text").addr, f.section(".rodata").addr
    got = f.section(".got")
    assert got is not None and got.size == 8  # one slot: ext, shared by all three GOT relocations
    assert word(f, got.addr, "<Q") == sym["ext"]
    P = lambda off: text + off  # noqa: E731
    rel = lambda S, A, off: (S + A - P(off)) & (2**64 - 1)  # noqa: E731
    assert word(f, rodata + 0x10, "<q") == sym["kern"] + 0x10 - (rodata + 0x10)  # descriptor -> entry
    assert word(f, rodata + 0x50, "<Q") == sym["table"] + 4
    assert word(f, P(0x04), "<I") == rel(sym["table"], 4, 0x04) & 0xFFFFFFFF
    assert word(f, P(0x0c), "<I") == rel(sym["table"], 12, 0x0c) >> 32
    assert word(f, P(0x14), "<I") == rel(got.addr, 4, 0x14) & 0xFFFFFFFF
    assert word(f, P(0x1c), "<I") == rel(got.addr, 12, 0x1c) >> 32
    assert word(f, P(0x24), "<I") == rel(sym["counter"], 0, 0x24) & 0xFFFFFFFF
    assert word(f, P(0x28), "<I") == rel(got.addr, 0, 0x28) & 0xFFFFFFFF
    assert word(f, P(0x2c), "<h") == (sym["kern"] + 0x40 - P(0x2c) - 4) // 4
    assert word(f, P(0x30), "<I") == 0
    assert word(f, P(0x38), "<q") == sym["counter"] - P(0x38)
    # the loader finishes absolute addresses: one RELATIVE64 per GOT slot and per ABS64
    dyn = f.section(".rela.dyn")
    rels = sorted(struct.iter_unpack("<QQq", dyn.data))
    assert rels == sorted([(got.addr, C.R_AMDGPU_RELATIVE64, sym["ext"]),
                           (rodata + 0x50, C.R_AMDGPU_RELATIVE64, sym["table"] + 4)])
    tags = dict(struct.iter_unpack("<qQ", f.section(".dynamic").data))
    assert tags[C.DT_RELA] == dyn.addr and tags[C.DT_RELASZ] == 48 and tags[C.DT_RELAENT] == 24


def test_exports_and_symbols():
    so, f, sym = linked()
    dyn = {s.name for s in f.dynamic_symbols() if s.name}
    assert dyn == {"kern", "kern.kd", "ext"}  # hidden and local symbols stay private
    assert sym["kern.num_vgpr"] == 27  # absolute symbols keep their value
    assert {s.name for s in f.symbols()} >= {"table", "counter", "hidden", "kern", "kern.kd", "ext"}
    symtab = f.section(".symtab")
    assert all(s.bind == C.STB_LOCAL for s in f.symbols()[1:symtab.info])
    assert all(s.bind != C.STB_LOCAL for s in f.symbols()[symtab.info:])
    # the hash table finds every exported symbol
    h = f.section(".hash").data
    nbucket, nchain = struct.unpack_from("<II", h)
    buckets = struct.unpack_from(f"<{nbucket}I", h, 8)
    chains = struct.unpack_from(f"<{nchain}I", h, 8 + 4 * nbucket)
    names = [s.name for s in f.dynamic_symbols()]
    for n in dyn:
        i = buckets[sysv_hash(n.encode()) % nbucket]
        while i and names[i] != n:
            i = chains[i]
        assert names[i] == n


def test_segments():
    so, f, _ = linked()
    loads = [p for p in f.segments if p.type == C.PT_LOAD]
    assert [p.flags for p in loads] == [C.PF_R, C.PF_R | C.PF_X, C.PF_R | C.PF_W]
    for a, b in zip(loads, loads[1:]):
        assert b.vaddr // 0x1000 > (a.vaddr + a.memsz - 1) // 0x1000  # no page holds two permissions
    bss = f.section(".bss")
    assert bss.type == C.SHT_NOBITS and loads[2].memsz > loads[2].filesz
    assert loads[2].vaddr + loads[2].memsz >= bss.addr + bss.size
    assert f.type == C.ET_DYN and f.flags == 0x54C and f.abi_version == 3


def test_undefined_symbols_are_named():
    syms = SYMBOLS + [("erff", "UND", 0, 0, G, C.STT_NOTYPE, C.STV_DEFAULT)]
    with pytest.raises(ElfError, match="undefined symbol.*erff"):
        linked(symbols=syms, relocs={".text": [(0, C.R_AMDGPU_REL32_LO, "erff", 4)]})


@pytest.mark.parametrize("kind,name", [(12, "relocation type 12"), (99, "relocation type 99"),
                                       (C.R_AMDGPU_ABS32_LO, "R_AMDGPU_ABS32_LO"),
                                       (C.R_AMDGPU_RELATIVE64, "R_AMDGPU_RELATIVE64")])
def test_unknown_relocations_are_named(kind, name):
    with pytest.raises(ElfError, match=f"unsupported AMDGPU relocation {name}.*table"):
        linked(relocs={".text": [(0, kind, "table", 0)]})


def test_bad_inputs():
    obj = make_object([TEXT], [], {})
    assert isinstance(ElfError("x"), BackendError)
    with pytest.raises(ElfError, match="not an ELF file"):
        link_shared(b"hello world" * 10)
    with pytest.raises(ElfError, match="relocatable object"):
        link_shared(make_object([TEXT], [], {}, e_type=C.ET_DYN))
    with pytest.raises(ElfError, match="AMDGPU object"):
        link_shared(make_object([TEXT], [], {}, machine=62))
    with pytest.raises(ElfError):
        link_shared(obj[:100])
    with pytest.raises(ElfError, match="outside its section"):
        linked(relocs={".text": [(0xfe, C.R_AMDGPU_REL32_LO, "table", 0)]})
    with pytest.raises(ElfError, match="symbol index 999"):
        linked(relocs={".text": [(0, C.R_AMDGPU_REL32_LO, 999, 0)]})


def test_msgpack():
    assert unpack(b"\x83\xa1a\x01\xa1b\x92\xc3\xc0\xa1c\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00") == \
        {"a": 1, "b": [True, None], "c": 1.0}
    assert unpack(b"\xd9\x03abc") == "abc" and unpack(b"\xff") == -1 and unpack(b"\xcd\x01\x00") == 256
    with pytest.raises(ElfError, match="ends"):
        unpack(b"\x92\x01")
