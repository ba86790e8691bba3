"""``tl.multiple_of`` / ``tl.max_contiguous`` / ``tl.max_constancy`` state facts about a *value*, not about a copy
of it: as in Triton (which attaches them to the value's defining op), ``tl.max_contiguous(tl.multiple_of(x, 16),
16)`` whose result is discarded still makes every access through ``x`` a vector access.

The code generator emits each hint where it is called (a ``hint`` op of its source); ``place_hints`` then moves
it right after the definition of its source (the start of the block for a block argument) and sends every other
use of the source through it, so that the facts hold wherever the value is used, before or after the call.
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.core import BlockArgument


def place_hints(func) -> None:
    """Apply ``func``'s hints to the values they name. In program order: a hint of a hinted value then finds
    its source already redirected to the earlier hint, so chained facts stay chained."""
    for hint in [op for op in func.walk() if isinstance(op, O.HintOp)]:
        src = hint.src
        hint.detach()
        if isinstance(src, BlockArgument):
            src.block.insert(0, hint)
        else:
            block = src.op.parent
            block.insert(block.ops.index(src.op) + 1, hint)
        for user, i in list(src.uses):
            if user is not hint:
                user.set_operand(i, hint.result)
