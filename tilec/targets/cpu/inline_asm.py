"""The CPU backend refuses ``inline_asm``: the assembly is written for a GPU (PTX, GCN), and a kernel compiled
for the host has no such instructions to run. The error names the kernel line that asked for it."""
from __future__ import annotations

from ...errors import at_op
from ...ir import ops as O
from .registry import LOWERINGS


@LOWERINGS.register(O.InlineAsmOp)
def refuse_inline_asm(L, op):
    raise at_op(op, "tl.inline_asm_elementwise is not supported on the CPU backend: inline GPU assembly has no "
                    "meaning on the host; compile for a GPU target, or write the operation with tl functions (or "
                    "tl.map_elementwise)")
