"""Builds ops at an insertion point, stamping each with the current source location."""
from __future__ import annotations

from contextlib import contextmanager

from .core import Block, Location, Operation, Region, Value
from .ops import ConstantOp, ForOp, IfOp, ModuleOp, FuncOp, WhileOp, YieldOp
from .types import Type


class Builder:
    def __init__(self, block: Block | None = None, index: int | None = None):
        self.block = block
        self.index = index  # None: append at the end
        self.loc: Location | None = None

    # -- insertion point -----------------------------------------------------------------------------------
    def set_insertion_point_to_end(self, block: Block):
        self.block, self.index = block, None

    def set_insertion_point_before(self, op: Operation):
        self.block = op.parent
        self.index = op.parent.ops.index(op)

    def set_insertion_point_after(self, op: Operation):
        self.block = op.parent
        self.index = op.parent.ops.index(op) + 1

    @contextmanager
    def at_end(self, block: Block):
        saved = (self.block, self.index)
        self.block, self.index = block, None
        try:
            yield self
        finally:
            self.block, self.index = saved

    @contextmanager
    def at_loc(self, loc: Location | None):
        saved = self.loc
        self.loc = loc if loc is not None else saved
        try:
            yield
        finally:
            self.loc = saved

    def insert(self, op: Operation) -> Operation:
        if op.loc is None:
            op.loc = self.loc
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    # -- creation ------------------------------------------------------------------------------------------
    def create(self, op_cls, operands=(), result_types=None, attrs=None, regions=None, name=None) -> Operation:
        """Create and insert ``op_cls``; result types are inferred when not given."""
        attrs = dict(op_cls.attr_defaults, **(attrs or {}))
        if result_types is None:
            result_types = op_cls.infer_result_types(list(operands), attrs)
        names = [name] * len(result_types) if name else None
        return self.insert(op_cls(operands, result_types, attrs, regions, self.loc, names))

    def op(self, op_cls, *operands, result_type=None, name=None, **attrs) -> Value:
        """Create a single-result op and return its result."""
        rt = None if result_type is None else [result_type]
        return self.create(op_cls, operands, rt, attrs, name=name).result

    def constant(self, value, type: Type, name=None) -> Value:
        return self.create(ConstantOp, (), [type], {"value": value}, name=name).result

    # -- structured control flow ---------------------------------------------------------------------------
    def for_(self, lb: Value, ub: Value, step: Value, inits=(), iv_name=None, arg_names=None) -> ForOp:
        """Create a ``for`` whose body block is empty; fill it with ``at_end(op.body)`` and end with a yield."""
        body = Block([lb.type] + [v.type for v in inits], [iv_name] + list(arg_names or [None] * len(inits)))
        return self.create(ForOp, [lb, ub, step, *inits], [v.type for v in inits], regions=[Region([body])])

    def if_(self, cond: Value, result_types=()) -> IfOp:
        return self.create(IfOp, [cond], list(result_types), regions=[Region([Block()]), Region([Block()])])

    def while_(self, inits, after_types) -> WhileOp:
        before = Block([v.type for v in inits])
        after = Block(list(after_types))
        return self.create(WhileOp, list(inits), list(after_types), regions=[Region([before]), Region([after])])

    def yield_(self, *values):
        return self.create(YieldOp, values, [])


def new_module() -> ModuleOp:
    return ModuleOp.create()


__all__ = ["Builder", "new_module", "FuncOp", "ModuleOp"]
