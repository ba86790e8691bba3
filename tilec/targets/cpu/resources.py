"""What a compiled CPU kernel uses, read from its x86-64 assembly: registers touched, spill
stores, the stack frame, and the widest vector register. Reported in ``metadata`` like a GPU's ptxas report,
so ``n_regs`` is never a meaningless 0. ``shared`` is the per-program scratch area, the CPU's stand-in for a GPU
block's shared memory (Triton's softmax tutorial divides the device's shared memory by it)."""
from __future__ import annotations

import re

_X86_GPR = {"a": "rax", "b": "rbx", "c": "rcx", "d": "rdx", "si": "rsi", "di": "rdi", "bp": "rbp", "sp": "rsp"}
_REG = re.compile(r"%([a-z]+[0-9]*[a-z]?)")


def _family(r: str) -> str | None:
    """The architectural register a (sub-)register name belongs to; None for non-registers."""
    m = re.fullmatch(r"[xyz]mm(\d+)", r)
    if m:
        return "v" + m.group(1)
    m = re.fullmatch(r"r(\d+)[dwb]?", r)
    if m:
        return "r" + m.group(1)
    m = re.fullmatch(r"[re]?([abcd])[xlh]|[re]?(si|di|bp|sp)l?", r)
    if m:
        return _X86_GPR[m.group(1) or m.group(2)]
    return None


def resources(asm: str) -> dict:
    regs = {f for r in _REG.findall(asm) if (f := _family(r)) is not None}
    frames = [int(n) for n in re.findall(r"sub[q]?\s+\$(\d+),\s*%rsp", asm)]
    widths = [w for w, v in (("zmm", 64), ("ymm", 32), ("xmm", 16)) if f"%{w}" in asm]
    return {"num_regs": len(regs), "spill_stores": len(re.findall(r"Spill", asm)),
            "stack_bytes": max(frames, default=0),
            "vector_bytes": {"zmm": 64, "ymm": 32, "xmm": 16}[widths[0]] if widths else 0}


def scratch_per_program(scratch_size: int) -> int:
    """Bytes of scratch each worker (so each running program) gets: the kernel's buffers rounded up to 128,
    plus 128 bytes of slack. The launchers allocate exactly this, and ``metadata["shared"]`` reports it."""
    return (int(scratch_size) + 127) // 128 * 128 + 128
