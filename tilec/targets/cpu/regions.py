"""Lowering the scalar combine regions of ``reduce``/``scan`` at any vector width: the region's ops are the
ordinary elementwise ops, emitted on ``w``-lane values, so a sum is a vector ``fadd`` and an argmax pair is a
vector compare + select."""
from __future__ import annotations

from ...codegen import llvm_types as LT
from ...codegen.elementwise import emit_op
from ...errors import BackendError
from .nodes import splat
from ...ir import ops as O


def combine(L, block, inputs, w):
    """Run ``block`` (args bound to ``inputs``, LLVM values of width ``w``) and return the yielded values."""
    env = dict(zip(block.args, inputs))

    def get(v):
        if v in env:
            return env[v]
        outer = L.vals.get(v)
        if outer is None or not hasattr(outer, "type") or hasattr(outer, "shape"):
            raise BackendError("combine region uses a value the CPU backend cannot see")
        return splat(L.b, outer, w)

    for op in block.ops:
        if isinstance(op, O.YieldOp):
            return [get(v) for v in op.operands]
        args = [get(v) for v in op.operands]
        t = op.results[0].type if op.results else None
        if isinstance(op, O.ConstantOp):
            r = LT.const_of(t, op.attrs["value"], w)  # bf16/fp8 constants as their codes
        elif op.is_elementwise:
            r = emit_op(L.b, type(op), op.attrs, args, [v.type for v in op.operands], t, w)
        else:
            raise BackendError(f"'{op.name}' is not supported inside a reduce/scan combine region on CPU")
        env[op.results[0]] = r
    raise BackendError("combine region has no yield")
