"""Helpers for evaluator tests: run IR text, independent reference arithmetic on Python ints and float64."""
from __future__ import annotations

import numpy as np

from tilec.ir.evaluator import evaluate_function
from tilec.ir.parser import parse_module
from tilec.ir.types import ScalarType
from tilec.ir.verifier import verify

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]


def module(text: str):
    m = parse_module(text)
    verify(m)
    return m


def run(text: str, *args, name=None):
    m = module(text)
    f = m.lookup(name) if name else m.funcs[0]
    return evaluate_function(f, list(args))


def one_op(op: str, types: list, result: str, args, attrs: str = ""):
    """Evaluate ``%r = op %a0, %a1... {attrs} : result``."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(types)))
    text = (f"func @f({params}) -> ({result}) {{\n  %r = {op} {operands}{' {' + attrs + '}' if attrs else ''}"
            f" : {result}\n  return %r\n}}\n")
    return run(text, *args)[0]


def wrap(v: int, e: ScalarType) -> int:
    v &= (1 << e.bits) - 1
    if e.kind == "int" and v >= 1 << (e.bits - 1):
        v -= 1 << e.bits
    return v


def random_ints(rng, e: ScalarType, shape):
    """Full-range random values (so wrapping matters) with some small ones mixed in."""
    info = np.iinfo(e.numpy)
    big = rng.integers(int(info.min), int(info.max), size=shape, dtype=np.int64 if e.kind == "int" else np.uint64,
                       endpoint=True)
    small = rng.integers(-9 if e.kind == "int" else 0, 10, size=shape)
    return np.where(rng.random(shape) < 0.5, big, small.astype(big.dtype)).astype(e.numpy)


def bf16_ref(x64):
    """float64 -> bf16 by the classic float32 bit trick (independent of the evaluator's method)."""
    with np.errstate(over="ignore"):
        f = np.asarray(x64, dtype=np.float64).astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    u = np.uint64
    r = ((bits + u(0x7FFF) + ((bits >> u(16)) & u(1))) & u(0xFFFF0000)).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), np.float32(np.nan), r)


def round_ref(x64, name):
    x64 = np.asarray(x64, dtype=np.float64)
    if name == "bf16":
        return bf16_ref(x64)
    return x64.astype(ScalarType(name).numpy)


def random_floats(rng, name, shape):
    x = rng.standard_normal(shape) * 4
    x = round_ref(x, name)
    return x
