"""Dead-code elimination by liveness (mark and sweep), per function.

Roots are ops with effects (stores, atomics, asserts, calls, ``return``). Liveness then flows backwards through
operands, and through structured ops value by value: a live result of a ``for`` makes its init, its yielded
value and its loop-carried block argument live, and a live loop-carried argument does the same; a live ``if``
result makes the matching yielded values live. Whatever stays unmarked is removed: unused pure ops and loads,
unused results and loop-carried values of ``for``/``if`` (including values that only feed themselves around a
loop, which a use-count view never frees), and ``for``/``if`` left with no live content. ``while`` and other
region ops are kept or removed whole.
"""
from __future__ import annotations

from ..ir.core import BlockArgument, Operation, OpResult, Value
from .base import Pass
from .utils import REGION_TERMINATORS, drop_results, has_own_effect, release_operands
from ..ir import ops as O


def _is_root(op: Operation) -> bool:
    return isinstance(op, O.ReturnOp) or has_own_effect(op)


class _Liveness:
    def __init__(self):
        self.ops: set[int] = set()
        self.values: set[int] = set()
        self.work: list = []

    def op(self, op: Operation):
        if id(op) in self.ops or isinstance(op, (O.FuncOp, O.ModuleOp)):
            return
        self.ops.add(id(op))
        self.work.append(("op", op))

    def value(self, v: Value):
        if id(v) in self.values:
            return
        self.values.add(id(v))
        self.work.append(("value", v))

    def run(self, func: Operation):
        for o in func.walk():
            if o is not func and _is_root(o):
                self.op(o)
        while self.work:
            kind, x = self.work.pop()
            if kind == "op":
                self._op(x)
            else:
                self._value(x)

    def _op(self, op: Operation):
        if isinstance(op, O.ForOp):
            for v in op.operands[:3]:
                self.value(v)
        elif isinstance(op, O.IfOp):
            self.value(op.operands[0])
        elif isinstance(op, O.WhileOp):
            self._whole(op)
        elif not isinstance(op, REGION_TERMINATORS) or not isinstance(op.parent_op, (O.ForOp, O.IfOp)):
            # for/if terminators are live value by value (see _carried and _value)
            for v in op.operands:
                self.value(v)
            for r in op.regions:
                for b in r.blocks:
                    if b.terminator is not None:
                        self.op(b.terminator)
        parent = op.parent_op
        if parent is not None:
            self.op(parent)

    def _whole(self, op: Operation):
        """``while`` (and anything not tracked value by value) is live as a whole."""
        for o in op.walk():
            if id(o) not in self.ops:
                self.ops.add(id(o))
            for v in o.operands:
                self.value(v)
            for r in o.results:
                self.values.add(id(r))
        parent = op.parent_op
        if parent is not None:
            self.op(parent)

    def _value(self, v: Value):
        if isinstance(v, OpResult):
            op = v.op
            self.op(op)
            if isinstance(op, O.ForOp):
                self._carried(op, v.index)
            elif isinstance(op, O.IfOp):
                for r in op.regions:
                    t = r.block.terminator if r.blocks else None
                    if t is not None and v.index < len(t.operands):
                        self.ops.add(id(t))
                        self.value(t.operands[v.index])
        elif isinstance(v, BlockArgument):
            owner = v.block.parent_op
            if owner is not None and isinstance(owner, O.ForOp) and v.index > 0:
                self.values.add(id(owner.results[v.index - 1]))
                self.op(owner)
                self._carried(owner, v.index - 1)
            elif owner is not None and isinstance(owner, O.WhileOp):
                self._whole(owner)

    def _carried(self, op: Operation, i: int):
        self.value(op.operands[3 + i])
        self.value(op.body.args[1 + i])
        y = op.body.terminator
        self.ops.add(id(y))
        self.value(y.operands[i])


class DCE(Pass):
    name = "dce"

    def run(self, module):
        changed = False
        for f in list(module.body.ops):
            changed |= self.run_on(f)
        return changed

    def run_on(self, func: Operation) -> bool:
        live = _Liveness()
        live.run(func)
        dead: list[Operation] = []
        pruned: list[Operation] = []
        self._collect(func, live, dead, pruned)
        for op in dead:
            for o in op.walk(post_order=True):
                o.drop_operands()
        keeps = [[i for i, r in enumerate(op.results) if id(r) in live.values] for op in pruned]
        for op, keep in zip(pruned, keeps):
            release_operands(op, keep)
        for op, keep in zip(pruned, keeps):
            drop_results(op, keep)
        for op in dead:
            op.detach()
        return bool(dead or pruned)

    def _collect(self, op: Operation, live: _Liveness, dead: list, pruned: list):
        for r in op.regions:
            for b in r.blocks:
                for o in b.ops:
                    if o.is_terminator:
                        continue
                    if id(o) not in live.ops:
                        dead.append(o)
                        continue
                    if isinstance(o, (O.ForOp, O.IfOp)) and any(id(x) not in live.values for x in o.results):
                        pruned.append(o)
                    self._collect(o, live, dead, pruned)
