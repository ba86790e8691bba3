"""tilec's linker against ld.lld and llvm-readelf, where they are on PATH (Debian's ``lld`` and ``llvm``
packages; tilec never needs them). Each object is linked both ways: the same symbols are exported, the code is
byte-identical outside relocated words, and every relocated word reaches the same target in both outputs.
ld.lld older than LLVM 15 does not know code object v5, so those objects are compiled as v4 for the comparison
(the relocations are the same)."""
import os
import shutil
import struct
import subprocess

import pytest

from hip_helpers import compile_case
from tilec.elf import constants as C
from tilec.elf import link_shared, read_elf
from tilec.targets.hip import codegen
from tilec.targets.hip.arch import parse_arch

LLD, READELF = shutil.which("ld.lld"), shutil.which("llvm-readelf")
DATA = os.path.join(os.path.dirname(__file__), "data")


def objects(arch="gfx90a"):
    """(name, relocatable object) pairs: a hand-written module using every relocation LLVM emits for kernels
    (constant table, internal and external globals, a call) and a few suite kernels."""
    a = parse_arch(arch)
    with open(os.path.join(DATA, "relocations.ll")) as fh:
        yield "relocations", codegen.llir_to_object(fh.read().replace("COV", "500"), a, 2)
    for case in ("softmax", "matmul", "cumsum_argmax"):
        yield case, codegen.llir_to_object(compile_case(case, arch, 64).asm["llir"], a)


def lld_link(obj: bytes, tmp_path) -> bytes:
    src, out = tmp_path / "k.o", tmp_path / "k.so"
    src.write_bytes(obj)
    p = subprocess.run([LLD, "-shared", str(src), "-o", str(out)], capture_output=True, text=True)
    if p.returncode and "unknown abi version" in p.stderr:
        return None
    assert p.returncode == 0, p.stderr
    return out.read_bytes()



def _family(name: str) -> str:
    """``.rodata.cst16`` -> ``.rodata``: the output section ld.lld puts an input section in."""
    return "." + name.split(".")[1] if name.count(".") > 1 else name


def _targets(f, obj):
    """For each static relocation of ``obj``'s .text: the (section name, offset) or dynamic target it reaches
    in linked file ``f``."""
    o = read_elf(obj)
    syms = o.symbols()
    text_in, text_out = o.section(".text"), f.section(".text")
    sections = [s for s in f.sections if s.flags & C.SHF_ALLOC]
    dynrel = {}
    rd = f.section(".rela.dyn")
    if rd is not None:
        dsyms = f.dynamic_symbols()
        for off, info, add in struct.iter_unpack("<QQq", rd.data):
            dynrel[off] = (dsyms[info >> 32].value if info >> 32 else 0) + add
    out = []
    rela = o.section(".rela.text")
    for r in (o.relocations(rela) if rela else []):
        P = text_out.addr + r.offset
        if r.type in (C.R_AMDGPU_REL32_LO, C.R_AMDGPU_GOTPCREL32_LO):
            lo = struct.unpack_from("<I", text_out.data, r.offset)[0]
            # the HI word follows 8 bytes later with addend + 8: recover the full 64-bit distance
            hi = struct.unpack_from("<I", text_out.data, r.offset + 8)[0]
            target = (P + ((hi << 32) | lo) - r.addend) & (2**64 - 1)
            if r.type == C.R_AMDGPU_GOTPCREL32_LO:
                target = dynrel[target]  # the GOT slot's dynamic relocation says what it holds
            sec = next(s for s in sections if s.addr <= target < s.addr + max(s.size, 1))
            # ld.lld merges .rodata.cst16 into .rodata (and may move it), so targets compare by what they hold
            what = target - sec.addr if sec.type == C.SHT_NOBITS else sec.data[target - sec.addr:][:16]
            out.append((r.offset, syms[r.sym].name, _family(sec.name), what))
    assert text_in.size == text_out.size
    return out


@pytest.mark.skipif(LLD is None, reason="ld.lld is not on PATH (apt-get install lld)")
def test_same_as_lld(tmp_path):
    compared = 0
    for name, obj in objects():
        ref = lld_link(obj, tmp_path)
        if ref is None:  # this ld.lld predates code object v5
            obj = _cov4(name, obj)
            ref = lld_link(obj, tmp_path)
        ours = read_elf(link_shared(obj))
        theirs = read_elf(ref)
        exported = lambda f: sorted((s.name, s.type, s.bind, s.size) for s in f.dynamic_symbols() if s.name)  # noqa
        assert exported(ours) == exported(theirs), name
        loaded = lambda f: {_family(s.name) for s in f.sections if s.flags & C.SHF_ALLOC and s.name != ".gnu.hash"}  # noqa
        assert loaded(ours) == loaded(theirs), name
        relocated = set()
        rela = read_elf(obj).section(".rela.text")
        for r in (read_elf(obj).relocations(rela) if rela else []):
            relocated.update(range(r.offset, r.offset + 4))
        a, b = ours.section(".text").data, theirs.section(".text").data
        assert [i for i in range(len(a)) if a[i] != b[i] and i not in relocated] == [], name
        targets = _targets(ours, obj)
        assert targets == _targets(theirs, obj), name
        if name == "relocations":  # the constant table, the call, ext through the GOT, an internal global
            assert {t[2] for t in targets} >= {".rodata", ".text", ".bss"} and len(targets) >= 3, targets
        compared += 1
    assert compared == 4


def _cov4(name, obj):
    a = parse_arch("gfx90a")
    if name == "relocations":
        with open(os.path.join(DATA, "relocations.ll")) as fh:
            return codegen.llir_to_object(fh.read().replace("COV", "400"), a, 2)
    llir = compile_case(name, "gfx90a", 64).asm["llir"].replace("i32 500 }", "i32 400 }")
    return codegen.llir_to_object(llir, a)


@pytest.mark.skipif(READELF is None, reason="llvm-readelf is not on PATH (apt-get install llvm)")
def test_llvm_readelf_accepts_every_output(tmp_path):
    for name, obj in objects():
        path = tmp_path / f"{name}.so"
        path.write_bytes(link_shared(obj))
        p = subprocess.run([READELF, "--all", "--dyn-syms", str(path)], capture_output=True, text=True)
        assert p.returncode == 0 and "warning" not in p.stderr.lower() and "error" not in p.stderr.lower(), \
            p.stderr
        assert "DYN (Shared object file)" in p.stdout and "EM_AMDGPU" in p.stdout
        assert "NT_AMDGPU_METADATA" in p.stdout
