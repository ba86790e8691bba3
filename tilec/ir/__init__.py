"""tir: the tile IR (types, values, ops, blocks/regions, builder, printer, parser, verifier, evaluator)."""
from .types import (Type, ScalarType, PointerType, TileType, FunctionType, i1, i8, i16, i32, i64, u8, u16, u32,
                    u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, scalar)
from .core import IRError, Location, Value, OpResult, BlockArgument, Operation, Block, Region, OP_REGISTRY
from .ops import *  # noqa: F401,F403
from .ops import FuncOp, ModuleOp
from .builder import Builder
from . import printer  # noqa: F401  (modules and functions show their IR text: core.show_ir_with)
