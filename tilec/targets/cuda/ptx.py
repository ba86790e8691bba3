"""LLVM IR text -> optimised PTX through llvmlite's NVPTX target, and PTX -> cubin through ptxas when present.

The PTX ISA version is the lowest that the architecture needs (so older drivers can JIT it), at least 7.0 for
the instructions the lowering uses, raised where the kernel's inline PTX (tilec's own, such as eviction priorities,
or the user's ``inline_asm_elementwise``) uses instructions of a later ISA (``_PTX_FOR_FEATURE``).
"""
from __future__ import annotations

import functools
import itertools
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
        ptx = tm.emit_assembly(mod)
    return wide_offsets_as_shifts(ptx)


_MUL_WIDE = re.compile(r"mul\.wide\.([su])32 \t(%rd\d+), (%r\d+), (2|4|8|16);")


def wide_offsets_as_shifts(ptx: str) -> str:
    """``mul.wide.{s,u}32 d, x, 2^k`` (an element offset widened to a byte offset) written as a widening ``cvt``
    and ``shl.b64``. NVPTX forms the multiply from the sign extension and shift of every pointer offset; ptxas then
    moves such a multiply into the loop that adds the offset to a loop-carried base, as one ``IMAD.WIDE`` per
    address per iteration, where the shift form keeps the 64-bit offset and adds it with ``IADD3``/``IMAD.X``.
    Measured on an H200 (``benchmarks/gpu_spellings.py``, same run): 128x128x64 fp16 matmuls with A stored
    k-major, with a bias epilogue and ``x @ W.T`` went from 0.89x, 0.93x and 1.01x of Triton to 0.99x, 1.00x and
    1.13x; with the multiplies, their warps stalled at dispatch on the ``IMAD.WIDE`` 3.5 times as often.
    The widened value goes to a register of its own, declared in a scope of its own, so that every register
    keeps one definition (as LLVM emits them)."""
    count = itertools.count()

    def shift(m):
        kind, d, x, k = m.group(1), m.group(2), m.group(3), int(m.group(4))
        t = f"%wide{next(count)}"
        return (f"{{ .reg .b64 \t{t}; cvt.{kind}64.{kind}32 \t{t}, {x}; shl.b64 \t{d}, {t}, {k.bit_length() - 1}; }}")
    return _MUL_WIDE.sub(shift, ptx)


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
#: ptxas's note that it made a kernel's warpgroup dots wait for each other (each ``wgmma`` then runs alone): the
#: reason, as ptxas gives it. Never intended by tilec's code generator, so worth a warning (``backend.py``)
_SERIALISED = re.compile(r"\(C75\d\d\) Potential Performance Loss: (wgmma[^\n]*?serialized[^\n]*)")


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
        m = _SERIALISED.search(log)
        if m:
            metadata["wgmma_serialized"] = " ".join(m.group(1).split())
        metadata["ptxas_log"] = log.strip()
    return data
