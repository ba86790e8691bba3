"""The tile IR's operations, declared as small classes, one module per family: ``sources`` (constants, ranges,
program ids), ``elementwise`` (the elementwise bases, fma, compare, select, conversions, pointer arithmetic),
``arithmetic`` (the binary and unary math ops, one line each), ``inline_asm``, ``shape`` (splat, broadcast,
reshapes, gather, hint), ``memory`` (loads, stores, descriptors, atomics), ``reductions`` (reduce, scan, dot) and
``control`` (structured control flow, calls, functions, effects). Everything is importable from here.
"""
from __future__ import annotations

from ..core import IRError, Operation, Region, Block
from ..types import FunctionType, PointerType, ScalarType, TileType, Type, i1, i32, i64
from .base import PURE, _check, stand_in  # noqa: F401  (_check: the verifier helper gpu/ops.py shares)
from .sources import ArangeOp, ConstantOp, NumProgramsOp, ProgramIdOp
from .elementwise import (AddPtrOp, BinaryOp, BitcastOp, CastOp, CmpOp, ElementwiseOp, FmaOp, SelectOp,
                          UnaryOp)
from .arithmetic import (BINARY_OPS, UNARY_DOMAINS, UNARY_OPS, AddOp, AndOp, Atan2Op, DivOp, FDivOp, MaxOp, MinOp,
                         MulOp, OrOp, PowOp, RemOp, ShlOp, ShrOp, SubOp, UMulHiOp, XorOp)
from .inline_asm import InlineAsmOp, InlineAsmSideEffectOp, asm_bits
from .shape import BroadcastOp, ExpandDimsOp, GatherOp, HintOp, ReshapeOp, SplatOp, TransOp
from .memory import AtomicCASOp, AtomicRMWOp, DescriptorLoadOp, DescriptorStoreOp, LoadOp, StoreOp
from .reductions import DotOp, ReduceOp, ScanOp
from .control import (AssertOp, AssumeOp, BarrierOp, CallOp, ConditionOp, ForOp, FuncOp, IfOp, ModuleOp, PrintOp,
                      ReturnOp, WhileOp, YieldOp)
from ..core import OP_REGISTRY


def op_class(name: str):
    try:
        return OP_REGISTRY[name]
    except KeyError:
        raise IRError(f"unknown op '{name}'") from None


__all__ = [
    "IRError", "Operation", "Region", "Block", "FunctionType", "PointerType", "ScalarType", "TileType", "Type",
    "i1", "i32", "i64", "PURE", "op_class", "stand_in", "asm_bits", "BINARY_OPS", "UNARY_OPS", "UNARY_DOMAINS",
    "ConstantOp", "ArangeOp", "ProgramIdOp", "NumProgramsOp",
    "ElementwiseOp", "BinaryOp", "UnaryOp", "FmaOp", "CmpOp", "SelectOp", "CastOp", "BitcastOp", "AddPtrOp",
    "AddOp", "SubOp", "MulOp", "DivOp", "RemOp", "AndOp", "OrOp", "XorOp", "ShlOp", "ShrOp", "MaxOp", "MinOp",
    "PowOp", "Atan2Op", "UMulHiOp", "FDivOp",
    "InlineAsmOp", "InlineAsmSideEffectOp",
    "SplatOp", "BroadcastOp", "ExpandDimsOp", "ReshapeOp", "TransOp", "GatherOp", "HintOp",
    "LoadOp", "StoreOp", "DescriptorLoadOp", "DescriptorStoreOp", "AtomicRMWOp", "AtomicCASOp",
    "ReduceOp", "ScanOp", "DotOp",
    "YieldOp", "ConditionOp", "ReturnOp", "ForOp", "IfOp", "WhileOp", "CallOp", "AssertOp", "AssumeOp", "PrintOp",
    "BarrierOp", "FuncOp", "ModuleOp",
]
