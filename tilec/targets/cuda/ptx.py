"""LLVM IR text -> optimised PTX through llvmlite's NVPTX target, and PTX -> cubin through ptxas when present.

The PTX ISA version is the lowest that the architecture needs (so older drivers can JIT it), at least 7.0 for
the instructions the lowering uses, raised where the kernel's inline PTX (tilec's own, such as eviction priorities,
or the user's ``inline_asm_elementwise``) uses instructions of a later ISA (``_PTX_FOR_FEATURE``).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile

from ...errors import BackendError
from ...gpu import llvm_codegen

_PTX_FOR_ARCH = {70: 60, 75: 63, 80: 70, 86: 71, 87: 74, 89: 78, 90: 78, 100: 86, 101: 86, 103: 88, 120: 87}
#: the compute capabilities tilec compiles for
KNOWN_ARCHS = tuple(sorted(_PTX_FOR_ARCH))

# instruction forms later than the architectures' baseline ISA: (text in the inline PTX, ISA version it needs)
_PTX_FOR_FEATURE = (("L1::evict", 74), ("L2::cache_hint", 74), ("createpolicy", 74), ("L1::no_allocate", 74))


def cpu_name(arch: int) -> str:
    """The architecture name LLVM and ptxas get: sm_90 code uses the architecture-specific sm_90a (warpgroup
    matrix units, bulk tensor copies), which runs on every compute-capability-9.0 GPU."""
    return "sm_90a" if arch == 90 else f"sm_{arch}"


def ptx_version(arch: int) -> int:
    if arch == 90:
        return 83  # sm_90a: PTX ISA 8.0 for warpgroup dots, 8.3 for in-kernel tensor copy descriptors
    best = 70
    for a, v in sorted(_PTX_FOR_ARCH.items()):
        if a <= arch:
            best = v
    return max(best, 70)


def features_version(llir: str) -> int:
    """The PTX ISA version the instruction forms used in ``llir``'s inline PTX need (0: nothing beyond the
    baseline)."""
    return max((v for text, v in _PTX_FOR_FEATURE if text in llir), default=0)


def target_machine(arch: int, opt: int = 3, version: int | None = None):
    return llvm_codegen.target_machine("nvptx64-nvidia-cuda", cpu_name(arch),
                                       f"+ptx{version or ptx_version(arch)}", opt)


def llir_to_ptx(llir: str, arch: int, opt_level: int = 3) -> str:
    mod = llvm_codegen.parse(llir)
    tm = target_machine(arch, version=max(ptx_version(arch), features_version(llir)))
    llvm_codegen.optimise(mod, tm, opt_level)
    with llvm_codegen.emitting("NVPTX"):
        return tm.emit_assembly(mod)


def ptxas_path():
    return shutil.which("ptxas")


@functools.lru_cache(maxsize=None)
def _ptxas_gpu_names(exe: str) -> frozenset:
    p = subprocess.run([exe, "--help"], capture_output=True, text=True)
    return frozenset(re.findall(r"'(sm_\w+)'", p.stdout))


def ptxas_knows(arch: int) -> bool:
    """Whether the ptxas on PATH assembles for ``arch`` (CUDA 13's drops sm_70/sm_72; a PTX-only compile for
    such an architecture still loads, JIT-compiled by the driver). True when it does not say."""
    exe = ptxas_path()
    if exe is None:
        return False
    names = _ptxas_gpu_names(exe)
    return not names or cpu_name(arch) in names


_INFO = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_STACK = re.compile(r"(\d+) bytes stack frame")


def assemble(ptx: str, arch: int, metadata: dict | None = None) -> bytes:
    """PTX -> cubin with ptxas; ptxas's resource report goes into ``metadata``; errors become BackendError."""
    exe = ptxas_path()
    if exe is None:
        raise BackendError("ptxas is not on PATH")
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        p = subprocess.run([exe, f"-arch={cpu_name(arch)}", "-v", "-O3", src, "-o", out], capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise BackendError(f"ptxas rejected the generated PTX for sm_{arch}:\n{p.stderr.strip()}")
        with open(out, "rb") as f:
            data = f.read()
    if metadata is not None:
        log = p.stderr
        m = _INFO.search(log)
        if m:
            metadata["num_regs"] = int(m.group(1))
        m = _SPILL.search(log)
        if m:
            metadata["spill_stores"], metadata["spill_loads"] = int(m.group(1)), int(m.group(2))
        m = _STACK.search(log)
        if m:
            metadata["stack_bytes"] = int(m.group(1))
        metadata["ptxas_log"] = log.strip()
    return data
