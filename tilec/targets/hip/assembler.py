"""Objects for kernels with inline assembly (``tl.inline_asm_elementwise``).

LLVM makes an object by parsing every inline assembly statement with the target's assembler; llvmlite's LLVM is
built without the AMDGPU one, and asking it for such an object aborts the process. So a kernel with inline
assembly goes another way: the ``amdgcn`` stage's assembly text, assembled by an ``llvm-mc`` that knows the
processor: ``TILEC_LLVM_MC``, else ROCm's (``$ROCM_PATH/llvm/bin``, ``/opt/rocm/llvm/bin``), else one on PATH
(``llvm-mc-N``, newest first, then ``llvm-mc``).
An older ``llvm-mc`` (one that knows neither the processor nor code object v5) is passed over; without a
usable one the compile stops with an error that says so, before LLVM could abort.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from ...errors import BackendError
from .arch import Arch

_INLINE_ASM = re.compile(r'\basm\s+(?:sideeffect\s+)?(?:alignstack\s+)?(?:inteldialect\s+)?"')
# a kernel metadata name printed bare (``.name: Y``) that YAML reads as something else (a bool, a number)
_BARE_NAME = re.compile(r"^(\s+(?:- )?\.(?:name|symbol):\s+)([A-Za-z_.$][\w.$]*)$", re.M)


def has_inline_asm(llir: str) -> bool:
    """Whether the LLVM IR text calls inline assembly."""
    return _INLINE_ASM.search(llir) is not None


def tag_names(text: str) -> str:
    """The metadata's names tagged as YAML strings (``!str Y``): LLVM prints them bare, and an assembler reading
    ``Y`` or ``on`` as a bool rejects the metadata."""
    return _BARE_NAME.sub(lambda m: f"{m.group(1)}!str {m.group(2)}", text)


def candidates() -> list[str]:
    """The ``llvm-mc`` programs to try, in order."""
    out = []
    env = os.environ.get("TILEC_LLVM_MC")
    if env:
        out.append(env)
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            out.append(os.path.join(root, "llvm", "bin", "llvm-mc"))
    for d in os.environ.get("PATH", "").split(os.pathsep):  # versioned ones (Debian's llvm-mc-19), newest first
        try:
            names = os.listdir(d or ".")
        except OSError:
            continue
        versioned = [n for n in names if re.fullmatch(r"llvm-mc-\d+", n)]
        out.extend(os.path.join(d, n) for n in sorted(versioned, key=lambda n: -int(n.rsplit("-", 1)[1])))
    found = shutil.which("llvm-mc")
    if found:
        out.append(found)
    return [p for i, p in enumerate(out) if p not in out[:i] and os.path.isfile(p) and os.access(p, os.X_OK)]


def assemble(text: str, arch: Arch) -> bytes:
    """The relocatable object of AMDGPU assembly ``text`` for ``arch``."""
    tried = []
    with tempfile.TemporaryDirectory(prefix="tilec-mc-") as d:
        src, obj = os.path.join(d, "kernel.s"), os.path.join(d, "kernel.o")
        with open(src, "w") as f:
            f.write(tag_names(text))
        for mc in candidates():
            cmd = [mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch.name}", "-filetype=obj", "-o", obj, src]
            if arch.features:
                cmd.insert(3, f"-mattr={arch.features}")
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                tried.append(f"{mc}: {e}")
                continue
            if r.returncode == 0 and os.path.isfile(obj):
                with open(obj, "rb") as f:
                    return f.read()
            first = next((ln for ln in r.stderr.splitlines() if "error" in ln or "not a recognized" in ln), "")
            tried.append(f"{mc}: {first.strip() or f'exit status {r.returncode}'}")
    where = "; ".join(tried) if tried else "none found"
    raise BackendError(
        f"the {arch.name} code object of a kernel with inline assembly needs an AMDGPU assembler that knows "
        f"{arch.name}, which tilec's LLVM lacks: set TILEC_LLVM_MC to ROCm's llvm-mc (LLVM 17 or newer) "
        f"(tried: {where}); the assembly is in the kernel's 'amdgcn' stage")
