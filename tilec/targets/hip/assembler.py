"""Objects for kernels with inline assembly (``tl.inline_asm_elementwise``).

LLVM makes an object by parsing every inline assembly statement with the target's assembler; llvmlite's LLVM is
built without the AMDGPU one, and asking it for such an object aborts the process. So a kernel with inline
assembly goes another way: the ``amdgcn`` stage's assembly text, assembled by an ``llvm-mc`` that knows the
processor: ``TILEC_LLVM_MC``, else ROCm's (``$ROCM_PATH/llvm/bin``, ``/opt/rocm/llvm/bin``), else one on PATH
(``llvm-mc-N``, newest first, then ``llvm-mc``).
An older ``llvm-mc`` (one that knows neither the processor nor code object v5) is passed over; without a
usable one the compile stops with an error that says so, before LLVM could abort. When one that knows the
processor rejects a line of the kernel's inline assembly (a typo, an instruction the processor lacks), its own
message comes first, located at the ``tl.inline_asm_elementwise`` call (the assembly's ``.loc`` directives say
where each instruction came from).
"""
from __future__ import annotations

import linecache
import os
import re
import shutil
import subprocess
import tempfile

from ...errors import BackendError, CompilationError
from .arch import Arch

#: the LLVM release from which ``llvm-mc`` knows the processor (code object v5 needs LLVM 17 anyway); gfx1150 and
#: gfx1151 may date from 17, 18 is the release we are sure of
MIN_LLVM = {"gfx1150": 18, "gfx1151": 18, "gfx1200": 18, "gfx1201": 18, "gfx1152": 19, "gfx950": 20}


def min_llvm(arch: Arch) -> int:
    """The oldest LLVM whose ``llvm-mc`` assembles tilec's code objects for ``arch``."""
    return MIN_LLVM.get(arch.name, 17)

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


#: what ``llvm-mc`` prints for an error: ``<file>:<line>:<column>: error: <message>``, then the line and a caret
_ERROR = re.compile(r"^[^\n]*?:(\d+):(\d+): error: ([^\n]*)\n?((?:[^\n]*\n?){0,2})", re.M)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?', re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")


def version(mc: str) -> str:
    """``llvm-mc``'s LLVM version ("19.1.7"), or "" when it does not say."""
    try:
        out = subprocess.run([mc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else ""


def _in_inline_asm(lines, n: int) -> bool:
    """Whether line ``n`` (1-based) of the assembly lies in an inline assembly block (LLVM brackets each with
    ``;;#ASMSTART`` / ``;;#ASMEND``)."""
    for line in reversed(lines[:n - 1]):
        if ";;#ASMEND" in line:
            return False
        if ";;#ASMSTART" in line:
            return True
    return False


def _kernel_line(text: str, n: int):
    """(file, line, column) of the kernel source line that assembly line ``n`` came from: the last ``.loc``
    directive before it, its file from the ``.file`` table; None without one."""
    files = {m.group(1): os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
             for m in _FILE.finditer(text)}
    for line in reversed(text.splitlines()[:n - 1]):
        m = _LOC.match(line)
        if m and m.group(1) in files and int(m.group(2)) > 0:
            return files[m.group(1)], int(m.group(2)), int(m.group(3))
    return None


def rejected(text: str, stderr: str, mc: str, arch: Arch):
    """The error for an assembler that knew ``arch`` but rejected a line of the kernel's inline assembly:
    its own message first, located at the ``tl.inline_asm_elementwise`` call when the assembly says where that
    is; None when the errors are not in inline assembly (the assembler is too old for tilec's own code)."""
    lines = text.splitlines()
    errors = [m for m in _ERROR.finditer(stderr) if _in_inline_asm(lines, int(m.group(1)))]
    if not errors:
        return None
    shown = "\n".join(f"error: {m.group(3)}\n{m.group(4).rstrip()}" for m in errors[:3])
    ver = version(mc)
    message = (f"{shown}\n(the inline assembly, as {os.path.basename(mc)}{f' (LLVM {ver})' if ver else ''} "
               f"assembles it for {arch.name}; the kernel's whole assembly is its 'amdgcn' stage)")
    where = _kernel_line(text, int(errors[0].group(1)))
    if where is None:
        return BackendError(message)
    file, line, col = where
    return CompilationError(message, file, line, col, linecache.getline(file, line) or None)


def assemble(text: str, arch: Arch) -> bytes:
    """The relocatable object of AMDGPU assembly ``text`` for ``arch``: from the first ``llvm-mc`` that
    assembles it; when one that knew the processor rejected a line of inline assembly, its message."""
    tried, rejection = [], None
    with tempfile.TemporaryDirectory(prefix="tilec-mc-") as d:
        src, obj = os.path.join(d, "kernel.s"), os.path.join(d, "kernel.o")
        text = tag_names(text)
        with open(src, "w") as f:
            f.write(text)
        for mc in candidates():
            cmd = [mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch.name}", "-filetype=obj", "-o", obj, src]
            if arch.codegen_features:
                cmd.insert(3, f"-mattr={arch.codegen_features}")
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                tried.append(f"{mc}: {e}")
                continue
            if r.returncode == 0 and os.path.isfile(obj):
                with open(obj, "rb") as f:
                    return f.read()
            if "not a recognized processor" not in r.stderr and rejection is None:
                rejection = rejected(text, r.stderr, mc, arch)
            first = next((ln for ln in r.stderr.splitlines() if "error" in ln or "not a recognized" in ln), "")
            tried.append(f"{mc}: {first.strip() or f'exit status {r.returncode}'}")
    if rejection is not None:
        raise rejection
    where = "; ".join(tried) if tried else "none found"
    raise BackendError(
        f"the {arch.name} code object of a kernel with inline assembly needs an AMDGPU assembler that knows "
        f"{arch.name}, which tilec's LLVM lacks: set TILEC_LLVM_MC to ROCm's llvm-mc (LLVM {min_llvm(arch)} or "
        f"newer for {arch.name}; docs/amd.md) (tried: {where}); the assembly is in the kernel's 'amdgcn' stage")
