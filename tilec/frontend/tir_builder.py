"""The Semantic layer's builder for tir: maps tl types to IR types and op names to op classes."""
from __future__ import annotations

from ..ir import ops as irops
from ..ir.builder import Builder
from ..ir.core import Block, Region
from ..ir.types import PointerType, TileType, scalar
from ..language.core import block_type, pointer_type

_OP_CLASSES: dict = {}  # Semantic op names are the IR's registered op names


def _op_class(name):
    cls = _OP_CLASSES.get(name)
    if cls is None:
        cls = _OP_CLASSES[name] = irops.op_class(name)
    return cls


class TirBuilder:
    """Implements the Semantic builder protocol (``constant``, ``create``, ``reduce``, ``scan``, ``inline_asm``) on an
    IR Builder."""

    def __init__(self, builder: Builder | None = None):
        self.ir = builder or Builder()
        self._types: dict = {}

    def to_ir(self, ty):
        t = self._types.get(ty)
        if t is None:
            if isinstance(ty, block_type):
                t = TileType(ty.shape, self.to_ir(ty.element_ty))
            elif isinstance(ty, pointer_type):
                t = PointerType(self.to_ir(ty.element_ty), ty.address_space)
            else:
                if ty.ir_name is None:
                    raise TypeError(f"type {ty!r} has no IR equivalent")
                t = scalar(ty.ir_name)
            self._types[ty] = t
        return t

    def constant(self, value, ty):
        return self.ir.constant(value, self.to_ir(ty))

    def create(self, opname, operands, ty, **attrs):
        cls = _op_class(opname)
        if ty is None:
            self.ir.create(cls, operands, [], attrs)
            return None
        return self.ir.create(cls, operands, [self.to_ir(ty)], attrs).result

    def _combiner(self, srcs, combine) -> Region:
        """The region a reduction or scan combines with: two elements of each source in (accumulators first),
        ``combine(accs, xs)``'s values yielded."""
        elts = [s.type.element for s in srcs]
        body = Block(elts + elts)
        n = len(srcs)
        with self.ir.at_end(body):
            outs = combine(body.args[:n], body.args[n:])
            self.ir.yield_(*outs)
        return Region([body])

    def reduce(self, srcs, axis, result_types, combine):
        region = self._combiner(srcs, combine)
        op = self.ir.create(irops.ReduceOp, srcs, [self.to_ir(t) for t in result_types], {"axis": axis},
                            regions=[region])
        return list(op.results)

    def scan(self, srcs, axis, reverse, combine):
        region = self._combiner(srcs, combine)
        op = self.ir.create(irops.ScanOp, srcs, [s.type for s in srcs], {"axis": axis, "reverse": reverse},
                            regions=[region])
        return list(op.results)

    def inline_asm(self, asm, constraints, operands, types, pure, pack):
        cls = irops.InlineAsmOp if pure else irops.InlineAsmSideEffectOp
        op = self.ir.create(cls, operands, [self.to_ir(t) for t in types],
                            {"asm": asm, "constraints": constraints, "pack": pack})
        return list(op.results)
