"""The ``cir`` stage artifact: the tir kernel printed with the CPU lowering's decisions as comments (which
values got scratch buffers and why, loop nests and their vector widths, how each access is done, dot
micro-kernel shapes, strength-reduced loop-carried tiles). It is a ``str`` so the pipeline keeps it as the
stage's text, and it carries the unoptimised LLVM module to the ``llir`` stage."""
from __future__ import annotations

from ...ir.printer import Printer


class CIR(str):
    """Plan text; ``.llvm_module`` and ``.meta`` travel to the next stage."""

    llvm_module = None
    meta = None


class _AnnotatingPrinter(Printer):
    def __init__(self, notes):
        super().__init__(locations=False)
        self.notes = notes

    def op(self, op, indent=0):
        start = len(self.lines)
        super().op(op, indent)
        notes = self.notes.get(op)
        if notes and start < len(self.lines):
            self.lines[start] += "  // " + "; ".join(notes)


def render(module, notes, scratch_size) -> str:
    p = _AnnotatingPrinter(notes)
    p.op(module)
    head = f"// cir: CPU lowering plan; per-worker scratch {scratch_size} bytes\n"
    return head + "\n".join(p.lines) + "\n"
