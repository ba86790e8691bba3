"""llvmlite plumbing: one-time initialisation, target machines, parsing/verifying with readable errors, and the
new-pass-manager O3 pipeline."""
from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm

from ..errors import BackendError


@functools.cache
def init():
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    no_fatal_parse()
    return True


@functools.cache
def no_fatal_parse() -> bool:
    """Parsing IR that carries debug information makes LLVM verify the module and abort the process when it is
    broken ("Broken module found, compilation aborted!") before ``verify()`` can report it; with the debug-info
    upgrade off, a broken module is a BackendError like any other (llvmlite >= 0.50: LLVM 20 and later)."""
    llvm.set_option("tilec", "-disable-auto-upgrade-debug-info")
    return True


@functools.cache
def host_target_machine(opt: int = 3):
    """A shared target machine for this CPU with all its features (AVX2/AVX-512 where present). Never hand it
    to an execution engine, which takes ownership: use :func:`new_host_target_machine` for that."""
    return new_host_target_machine(opt)


def new_host_target_machine(opt: int = 3):
    init()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=opt, reloc="default", codemodel="jitdefault")


@functools.cache
def host_vector_bytes() -> int:
    """Bytes in this CPU's widest vector register (64 with AVX-512, 32 with AVX, else 16)."""
    init()
    feats = set(llvm.get_host_cpu_features().flatten().split(","))
    return 64 if "+avx512f" in feats else 32 if "+avx" in feats else 16


@functools.cache
def host_identity() -> str:
    """The machine host code is built for: triple, processor and a digest of its features. Part of the CPU's cache
    key, so a cache shared by several machines never serves code optimised for (or only valid on) another."""
    import hashlib
    init()
    feats = llvm.get_host_cpu_features().flatten()
    return f"{llvm.get_process_triple()} {llvm.get_host_cpu_name()} {hashlib.sha256(feats.encode()).hexdigest()[:16]}"


def excerpt(text: str, message: str, context: int = 3) -> str:
    """The lines of ``text`` that an LLVM error message points at (``<string>:LINE:COL``), numbered."""
    lines = text.splitlines()
    hits = [int(m.group(1)) for m in re.finditer(r":(\d+):\d+:", message)]
    if not hits:
        return "\n".join(lines[:2 * context + 1])
    out = []
    for ln in hits[:3]:
        lo, hi = max(0, ln - 1 - context), min(len(lines), ln + context)
        out += [f"{i + 1:6d} {'>' if i + 1 == ln else ' '} {lines[i]}" for i in range(lo, hi)]
    return "\n".join(out)


def parse(text: str, what: str = "LLVM IR"):
    """Parse and verify LLVM IR text; failures raise BackendError quoting the offending lines."""
    init()
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as e:
        msg = str(e).strip()
        raise BackendError(f"LLVM rejected the generated {what}: {msg}\n{excerpt(text, msg)}") from None
    return mod


def optimize(mod, tm, level: int = 3):
    """Run LLVM's default O``level`` module pipeline (new pass manager) tuned for ``tm``."""
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def prepare(ir_module, tm):
    """Stamp an llvmlite.ir module with the machine's triple and data layout."""
    ir_module.triple = tm.triple
    ir_module.data_layout = str(tm.target_data)
    return ir_module
