"""Structural validation of a linked AMDGPU code object, parsed independently of the linker's own layout
decisions: what the ROCm loader relies on."""
from __future__ import annotations

import struct

from tilec.elf import amdgpu_metadata, read_elf
from tilec.elf import constants as C

#: EF_AMDGPU_MACH values (the low byte of e_flags) of the architectures the tests compile for
EF_AMDGPU_MACH = {"gfx90a": 0x3f, "gfx942": 0x4c, "gfx1100": 0x41}


def validate_hsaco(data: bytes, kernel: str, arch: str | None = None, warp_size: int | None = None,
                   abi_version: int = 3) -> dict:
    """Check ``data`` and return its decoded metadata entry for ``kernel``."""
    f = read_elf(data)
    assert f.type == C.ET_DYN and f.machine == C.EM_AMDGPU
    assert f.os_abi == C.ELFOSABI_AMDGPU_HSA and f.abi_version == abi_version
    if arch in EF_AMDGPU_MACH:
        assert f.flags & 0xff == EF_AMDGPU_MACH[arch]
    loads = [p for p in f.segments if p.type == C.PT_LOAD]
    assert 2 <= len(loads) <= 3
    assert sum(p.type == C.PT_DYNAMIC for p in f.segments) == 1
    assert sum(p.type == C.PT_NOTE for p in f.segments) == 1
    end = 0
    for p in loads:
        assert p.align == 0x1000 and p.offset % p.align == p.vaddr % p.align
        assert p.vaddr >= end and p.memsz >= p.filesz and p.offset + p.filesz <= len(data)
        end = p.vaddr + p.memsz
    assert loads[0].offset == 0 and loads[0].flags == C.PF_R
    assert any(p.flags == C.PF_R | C.PF_X for p in loads)
    # every loaded section lies inside a segment with matching offset and address
    for s in f.sections:
        if s.flags & C.SHF_ALLOC and s.type != C.SHT_NOBITS:
            seg = [p for p in loads if p.vaddr <= s.addr and s.addr + s.size <= p.vaddr + p.memsz]
            assert len(seg) == 1, s.name
            assert s.addr - seg[0].vaddr == s.offset - seg[0].offset, s.name
    for name in (".dynsym", ".dynstr", ".hash", ".dynamic", ".text", ".note", ".symtab"):
        assert f.section(name) is not None, name
    # the dynamic section points at the dynamic symbol table, strings and hash table
    dyn = f.section(".dynamic")
    tags = dict(struct.iter_unpack("<qQ", dyn.data))
    assert tags[C.DT_SYMTAB] == f.section(".dynsym").addr and tags[C.DT_STRTAB] == f.section(".dynstr").addr
    assert tags[C.DT_HASH] == f.section(".hash").addr and tags[C.DT_SYMENT] == C.SYM_SIZE
    # the kernel and its descriptor are exported, and the descriptor's entry offset reaches the kernel
    dsyms = {s.name: s for s in f.dynamic_symbols()}
    assert kernel in dsyms and kernel + ".kd" in dsyms, sorted(dsyms)
    k, kd = dsyms[kernel], dsyms[kernel + ".kd"]
    assert k.type == C.STT_FUNC and kd.type == C.STT_OBJECT and kd.size == 64
    text = f.section(".text")
    assert text.addr <= k.value < text.addr + text.size
    rodata = next(s for s in f.sections if s.flags & C.SHF_ALLOC and s.addr <= kd.value < s.addr + s.size)
    entry_offset = struct.unpack_from("<q", rodata.data, kd.value - rodata.addr + 16)[0]
    assert kd.value + entry_offset == k.value
    assert {s.name for s in f.symbols()} >= {kernel, kernel + ".kd"}
    assert not f.section(".rela.rodata") and not f.section(".rela.text")
    # the metadata note names the kernel, with its descriptor symbol and resource counts
    md = amdgpu_metadata(f)
    assert md["amdhsa.version"][0] == 1
    entry = next(e for e in md["amdhsa.kernels"] if e[".name"] == kernel)
    assert entry[".symbol"] == kernel + ".kd"
    for key in (".vgpr_count", ".sgpr_count", ".kernarg_segment_size", ".group_segment_fixed_size",
                ".private_segment_fixed_size", ".vgpr_spill_count", ".sgpr_spill_count"):
        assert isinstance(entry[key], int), key
    if warp_size is not None:
        assert entry[".wavefront_size"] == warp_size
    return entry
