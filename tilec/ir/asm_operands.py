"""The operands of ``inline_asm`` (``tl.inline_asm_elementwise``), by Triton's rules, in one place: the language
checks a call against them, the verifier an op, and the GPU lowering builds its calls from them.

One run of the assembly handles ``pack`` elements of every argument and result. Elements narrower than 32 bits
share 32-bit operands (up to ``pack`` of them: 4 x i8 or 2 x f16 in one register), so a value of ``bits``-bit
elements takes ``pack // per`` operands of ``per`` elements each; wider elements take one operand each. The
constraint string names every operand: outputs first (``=r``, ``=&r`` early-clobber), results in order and each
result's operands in order; then the inputs the same way (a register code, or an output's index for an input
tied to it); then clobbers (``~{memory}``). Which register codes exist is the target's knowledge
(``GpuTarget.inline_asm_operand``); here only the string's shape is checked, so that LLVM, which may abort the
process on a malformed constraint string, never sees one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_CODE = re.compile(r"[A-Za-z]")
_CLOBBER = re.compile(r"~\{[A-Za-z0-9_.]+\}")


def elements_per_operand(bits: int, pack: int) -> int:
    """Elements of ``bits`` bits that share one operand when ``pack`` elements go to one run."""
    return min(32 // bits, pack) if bits < 32 else 1


def operands_per_value(bits: int, pack: int) -> int:
    """Operands one value (argument or result) of ``bits``-bit elements takes in one run."""
    return pack // elements_per_operand(bits, pack)


def check_packing(bits: int, pack: int, what: str):
    """``pack`` elements of ``bits`` bits must fill whole operands of a power-of-two element count."""
    per = elements_per_operand(bits, pack)
    if pack % per or per & (per - 1):
        raise ValueError(f"pack={pack} does not split into operands of {what} ({bits}-bit) elements: use a "
                         f"power of two")


@dataclass(frozen=True)
class Constraints:
    """A parsed constraint string: output codes (without ``=``), input codes, clobbers (``~{...}``).
    ``early`` marks early-clobber outputs."""
    outputs: tuple
    inputs: tuple
    clobbers: tuple
    early: tuple

    def tied(self, i: int) -> int | None:
        """The output input ``i`` is tied to (it then takes that output's register), or None."""
        c = self.inputs[i]
        return int(c) if c.isdigit() else None

    def llvm(self) -> str:
        """The constraint string LLVM gets (normalised: no spaces)."""
        outs = ["=" + ("&" if e else "") + c for c, e in zip(self.outputs, self.early)]
        return ",".join(outs + list(self.inputs) + list(self.clobbers))


def parse_constraints(text: str) -> Constraints:
    """Split and check ``text``; ValueError says what is wrong with it."""
    if not isinstance(text, str):
        raise TypeError("inline_asm_elementwise: constraints must be a string")
    outputs, inputs, clobbers, early = [], [], [], []
    entries = [e.strip() for e in text.split(",")] if text.strip() else []
    for e in entries:
        if not e:
            raise ValueError(f"empty entry in constraints {text!r}")
        if e.startswith("~"):
            if not _CLOBBER.fullmatch(e):
                raise ValueError(f"bad clobber {e!r} in constraints {text!r} (expected ~{{name}})")
            clobbers.append(e)
            continue
        if clobbers:
            raise ValueError(f"constraint {e!r} after a clobber in {text!r}: clobbers come last")
        if e.startswith("="):
            if inputs:
                raise ValueError(f"output constraint {e!r} after an input in {text!r}: outputs come first")
            code = e[1:]
            early.append(code.startswith("&"))
            code = code.lstrip("&")
            if not _CODE.fullmatch(code):
                raise ValueError(f"bad output constraint {e!r} in {text!r} (expected '=' and one register "
                                 "letter, such as =r)")
            outputs.append(code)
            continue
        if e.startswith("+"):
            raise ValueError(f"read-write constraint {e!r} in {text!r}: list the output and tie an input to it "
                             "by its index instead")
        if e.isdigit():
            if int(e) >= len(outputs):
                raise ValueError(f"input constraint {e!r} in {text!r} ties to output {e}, but there are "
                                 f"{len(outputs)} outputs")
        elif not _CODE.fullmatch(e):
            raise ValueError(f"bad input constraint {e!r} in {text!r} (expected one register letter, such as r, "
                             "or an output's index)")
        inputs.append(e)
    return Constraints(tuple(outputs), tuple(inputs), tuple(clobbers), tuple(early))


def check_counts(c: Constraints, arg_bits, result_bits, pack: int, text: str):
    """The constraint string names as many outputs and inputs as the results and arguments take."""
    want_out = sum(operands_per_value(b, pack) for b in result_bits)
    want_in = sum(operands_per_value(b, pack) for b in arg_bits)
    per = f" (pack={pack})" if pack > 1 else ""
    if len(c.outputs) != want_out:
        raise ValueError(f"constraints {text!r} name {len(c.outputs)} outputs, but {len(result_bits)} result(s)"
                         f"{per} take {want_out}")
    if len(c.inputs) != want_in:
        raise ValueError(f"constraints {text!r} name {len(c.inputs)} inputs, but {len(arg_bits)} argument(s)"
                         f"{per} take {want_in}")
