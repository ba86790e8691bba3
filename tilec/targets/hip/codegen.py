"""LLVM IR text -> AMDGPU assembly and relocatable objects through llvmlite's AMDGPU target.

Code generation mutates the module it runs on, and emitting assembly then an object from the same module aborts
the process inside LLVM; so every emission starts from its own parse of the IR text. A compile wants both (the
assembly to read, the object to load): :func:`llir_to_amdgcn_and_object` optimises once and emits the two
from parses of the optimised text in their own LLVM contexts, the object on a second thread (LLVM runs
without the GIL), so the second emission costs no second optimisation and overlaps the first.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ...gpu import llvm_codegen
from .arch import Arch

TRIPLE = "amdgcn-amd-amdhsa"


def target_machine(arch: Arch, opt: int = 3):
    return llvm_codegen.target_machine(TRIPLE, arch.name, arch.codegen_features, opt)


def _optimised(llir: str, arch: Arch, opt: int):
    """A fresh module parsed from ``llir``, verified and optimised, and its target machine."""
    mod = llvm_codegen.parse(llir)
    tm = target_machine(arch, opt)
    llvm_codegen.optimise(mod, tm, opt)
    return mod, tm


def llir_to_amdgcn(llir: str, arch: Arch, opt: int = 3) -> str:
    mod, tm = _optimised(llir, arch, opt)
    with llvm_codegen.emitting("AMDGPU"):
        return tm.emit_assembly(mod)


def llir_to_amdgcn_and_object(llir: str, arch: Arch, opt: int = 3) -> tuple:
    """(assembly text, relocatable object) of ``llir``, optimised once."""
    import llvmlite.binding as llvm
    mod, _ = _optimised(llir, arch, opt)
    optimised = str(mod)

    def emit(kind):
        ctx = llvm.create_context()
        m = llvm.parse_assembly(optimised, context=ctx)
        tm = target_machine(arch, opt)
        return tm.emit_assembly(m) if kind == "asm" else tm.emit_object(m)
    with llvm_codegen.emitting("AMDGPU"), ThreadPoolExecutor(max_workers=1) as pool:
        obj = pool.submit(emit, "obj")
        return emit("asm"), obj.result()


def llir_to_object(llir: str, arch: Arch, opt: int = 3) -> bytes:
    """The relocatable ELF object (ET_REL) of ``llir``; link it with :func:`tilec.elf.link_shared`."""
    mod, tm = _optimised(llir, arch, opt)
    with llvm_codegen.emitting("AMDGPU"):
        return tm.emit_object(mod)
