"""Declaring LLVM intrinsics and external functions by name with the overload suffixes LLVM expects
(``llvm.masked.load.v16f32.p0``); llvmlite's ``declare_intrinsic`` knows only a few of them."""
from __future__ import annotations

import llvmlite.ir as ir


def mangle(ty: ir.Type) -> str:
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{mangle(ty.element)}"
    if isinstance(ty, ir.PointerType):
        return "p0"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return ty.intrinsic_name


def declare(module: ir.Module, name: str, ret: ir.Type, args, overloads=()) -> ir.Function:
    """The function ``name`` (+ ``.<mangled overloads>``) declared once per module."""
    full = ".".join([name] + [mangle(t) for t in overloads])
    fn = module.globals.get(full)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), full)
    return fn


def call(builder: ir.IRBuilder, name: str, ret: ir.Type, args, overloads=(), **kw):
    fn = declare(builder.module, name, ret, [a.type for a in args], overloads)
    return builder.call(fn, list(args), **kw)
