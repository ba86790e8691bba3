"""Loop-invariant code motion: move ops whose inputs are all defined outside a ``for``/``while`` to just
before the loop.

Loops are visited innermost first and each body front to back, so a chain of invariant ops leaves in one
sweep and an op hoisted out of an inner loop is considered again for the enclosing one. Only speculatable ops
move (``utils.is_speculatable``): a hoisted op also runs when the loop runs zero times, which is harmless for
pure arithmetic but not for loads (the address may be invalid then), stores, atomics, integer division by a
possibly-zero value, or loops that may not terminate.
"""
from __future__ import annotations

from ..ir.core import Operation
from .base import Pass
from .utils import defined_outside, is_speculatable, values_used_from_outside
from ..ir import ops as O


def _invariant(op: Operation, loop: Operation) -> bool:
    return all(defined_outside(v, loop) for v in values_used_from_outside(op))


class LICM(Pass):
    name = "licm"

    def run(self, module):
        moved = 0
        for op in list(module.walk(post_order=True)):
            if isinstance(op, (O.ForOp, O.WhileOp)) and op.parent is not None:
                moved += self.hoist_from(op)
        return moved > 0

    def hoist_from(self, loop: Operation) -> int:
        moved = 0
        for r in loop.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    if op.is_terminator or not op.results:
                        continue
                    if is_speculatable(op) and _invariant(op, loop):
                        op.move_before(loop)
                        moved += 1
        return moved
