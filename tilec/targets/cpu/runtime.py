"""``print`` and ``assert`` call back into Python through ctypes callbacks whose addresses are given to the JIT
as the symbols ``tilec_cpu_print`` and ``tilec_cpu_assert``. Assertion failures are collected and raised by the
launcher after the grid finishes."""
from __future__ import annotations

import ctypes
import sys
import threading

import llvmlite.ir as ir

from ...codegen import llvm_types as LT
from .loops import nest
from .nodes import Point, ev
from ...ir import ops as O
from .registry import lowers

_PRINT_T = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                            ctypes.c_int64, ctypes.c_int32, ctypes.c_double, ctypes.c_int64)
_ASSERT_T = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
_lock = threading.Lock()
failures: list = []


@_PRINT_T
def _print_cb(prefix, x, y, z, index, kind, f, i):
    text = prefix.decode(errors="replace")
    val = f if kind == 0 else (hex(i & 0xFFFFFFFFFFFFFFFF) if kind == 2 else i)
    where = f"pid ({x}, {y}, {z})" + (f" idx {index}" if index >= 0 else "")
    with _lock:
        print(f"{where} {text}{val}", file=sys.stdout, flush=True)


@_ASSERT_T
def _assert_cb(msg, x, y, z):
    with _lock:
        failures.append(f"pid ({x}, {y}, {z}): {msg.decode(errors='replace')}")


SYMBOLS = {"tilec_cpu_print": ctypes.cast(_print_cb, ctypes.c_void_p).value,
           "tilec_cpu_assert": ctypes.cast(_assert_cb, ctypes.c_void_p).value}


def _cstring(L, text):
    g = L.strings.get(text)
    if g is None:
        data = bytearray(text.encode() + b"\0")
        ty = ir.ArrayType(LT.I8, len(data))
        g = ir.GlobalVariable(L.m, ty, name=f"tilec.str.{len(L.strings)}")
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, data)
        L.strings[text] = g
    return g


def _emit_print(L, prefix, value, t, hexa, index):
    b = L.b
    fn = _decl(L, "tilec_cpu_print", [LT.PTR, LT.I32, LT.I32, LT.I32, LT.I64, LT.I32, LT.F64, LT.I64])
    e = t.element
    if e.is_float:
        f = b.fpext(value, LT.F64) if e.bits < 64 else value
        args = [LT.const(LT.I32, 0), f, LT.const(LT.I64, 0)]
    else:
        if e.is_ptr:
            iv = b.ptrtoint(value, LT.I64)
        elif e.bits < 64:
            iv = b.sext(value, LT.I64) if e.is_signed else b.zext(value, LT.I64)
        else:
            iv = value
        args = [LT.const(LT.I32, 2 if hexa else 1), LT.const(LT.F64, 0.0), iv]
    b.call(fn, [_cstring(L, prefix)] + list(L.pids) + [index] + args)


def _decl(L, name, args):
    fn = L.m.globals.get(name)
    if fn is None:
        fn = ir.Function(L.m, ir.FunctionType(LT.VOID, args), name)
    return fn


def _linear(b, idx, shape):
    lin = LT.const(LT.I64, 0)
    for i, n in zip(idx, shape):
        lin = b.add(b.mul(lin, LT.const(LT.I64, n)), b.sext(i, LT.I64))
    return lin


@lowers(O.PrintOp)
def op_print(L, op):
    prefix, hexa = op.attrs.get("prefix", ""), op.attrs.get("hex", False)
    for v in op.operands:
        node = L.get(v)
        if not v.type.is_tile:
            _emit_print(L, prefix, node, v.type, hexa, LT.const(LT.I64, -1))
            continue
        shape = v.type.shape
        nest(L.b, shape, 1, lambda idx: _emit_print(L, prefix, ev(L, node, Point(shape, idx), 1), v.type, hexa,
                                                   _linear(L.b, idx, shape)))


@lowers(O.AssertOp)
def op_assert(L, op):
    b = L.b
    fn = _decl(L, "tilec_cpu_assert", [LT.PTR, LT.I32, LT.I32, LT.I32])
    msg = _cstring(L, op.attrs.get("message", "") or "assertion failed")
    node = L.get(op.cond)

    def check(c):
        with b.if_then(b.not_(c), likely=False):
            b.call(fn, [msg] + list(L.pids))
    if not op.cond.type.is_tile:
        check(node)
        return
    shape = op.cond.type.shape
    nest(b, shape, 1, lambda idx: check(ev(L, node, Point(shape, idx), 1)))
