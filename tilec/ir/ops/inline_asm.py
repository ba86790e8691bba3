"""Target assembly run elementwise (``tl.inline_asm_elementwise``): pure and side-effecting forms."""
from __future__ import annotations

from ..core import IRError, Operation
from ..types import PointerType, Type
from .base import _check
from ..asm_operands import check_counts, check_packing, parse_constraints


def asm_bits(t: Type) -> int:
    """Bits an element of ``t`` has as an inline-assembly operand: its memory form (bool: 8, pointer: 64)."""
    e = t.element
    if isinstance(e, PointerType):
        return 64
    return 8 if e.bits == 1 else e.bits


class InlineAsmOp(Operation):
    """Target assembly (``tl.inline_asm_elementwise``) run once per ``pack`` elements: operands and results share
    one shape (or are all scalars); ``constraints`` lists the outputs, then the inputs, then clobbers, by the
    rules of ``asm_operands``. Pure: its results depend on its operands only, so it may be merged or removed;
    ``inline_asm_sideeffect`` is the one that may not. Only GPU targets give it a meaning."""
    name = "inline_asm"
    operand_names = ("*args",)
    attr_types = {"asm": str, "constraints": str, "pack": int}
    traits = frozenset({"pure", "elementwise"})

    def verify_(self):
        _check(self.results, self, "needs at least one result")
        vals = list(self.operands) + list(self.results)
        shapes = {v.type.shape if v.type.is_tile else None for v in vals}
        _check(len(shapes) == 1, self, "operands and results must share one shape (or all be scalars)")
        pack = self.attrs["pack"]
        _check(isinstance(pack, int) and pack >= 1, self, f"pack must be a positive int, got {pack!r}")
        shape = shapes.pop()
        numel = 1 if shape is None else self.results[0].type.numel
        _check(numel % pack == 0, self, f"pack={pack} does not divide the {numel} elements")
        try:
            for v in vals:
                check_packing(asm_bits(v.type), pack, str(v.type.element))
            c = parse_constraints(self.attrs["constraints"])
            check_counts(c, [asm_bits(o.type) for o in self.operands], [asm_bits(r.type) for r in self.results],
                         pack, self.attrs["constraints"])
        except ValueError as e:
            raise IRError(f"'{self.name}' op {e}") from None


class InlineAsmSideEffectOp(InlineAsmOp):
    """``inline_asm`` that may have effects beyond its results (``is_pure=False``): never merged, removed or
    assumed to give equal results for equal operands."""
    name = "inline_asm_sideeffect"
    traits = frozenset({"elementwise", "reads", "writes"})
