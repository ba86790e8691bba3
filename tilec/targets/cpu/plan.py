"""The ``plan`` stage artifact: the unoptimised LLVM module the CPU lowering built, and as its text the tir
kernel printed with the lowering's decisions as comments (which values got scratch buffers and why, loop nests
and their vector widths, how each access is done, dot micro-kernel shapes, strength-reduced loop-carried
tiles). The pipeline keeps the text in ``asm["plan"]``; the module goes on to the ``llir`` stage."""
from __future__ import annotations

from ...ir.printer import Printer


class LoweringPlan:
    """The lowering's decisions (``text``) and the LLVM module it built (``llvm_module``)."""

    def __init__(self, text: str, llvm_module):
        self.text = text
        self.llvm_module = llvm_module

    def stage_text(self) -> str:
        return self.text

    __str__ = stage_text


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
    head = f"// plan: CPU lowering decisions; per-worker scratch {scratch_size} bytes\n"
    return head + "\n".join(p.lines) + "\n"
