"""Element types as the fuzzer sees them: Triton's names, numpy storage, precision, and Triton's promotion rules.

The promotion rules are written out here from Triton's documented behaviour rather than imported from
``tilec.language``: the generator has to predict each value's type to write valid kernels, and a prediction that
disagrees with tilec shows up as a kernel that both backends reject (counted as "invalid" by the runner).
"""
from __future__ import annotations

import numpy as np

SINT = ("int8", "int16", "int32", "int64")
UINT = ("uint8", "uint16", "uint32", "uint64")
INTS = SINT + UINT
FP8 = ("float8e5", "float8e4nv")
FLOATS = ("float16", "bfloat16", "float32", "float64") + FP8
#: types an array argument can have (numpy has no bf16 or fp8: those appear only through casts)
STORABLE = ("float16", "float32", "float64") + INTS

_BITS = {"int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
         "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64, "float8e5": 8, "float8e4nv": 8}
#: unit roundoff of each float type (relative spacing of its values)
EPS = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7,
       "float8e5": 2.0 ** -2, "float8e4nv": 2.0 ** -3}


def bits(dt: str) -> int:
    return _BITS[dt]


def is_float(dt: str) -> bool:
    return dt in FLOATS


def is_int(dt: str) -> bool:
    """A non-bool integer type."""
    return dt in INTS


def is_signed(dt: str) -> bool:
    return dt in SINT or dt == "int1"


def kind_rank(dt: str) -> int:
    return 0 if dt == "int1" else 2 if is_float(dt) else 1


def numpy_dtype(dt: str):
    return np.dtype({"int1": "bool"}.get(dt, dt))


class Invalid(Exception):
    """The program is not a valid kernel (or would have undefined results)."""


def _integer_promote(a: str, b: str) -> str:
    sa, sb = is_signed(a), is_signed(b)
    if sa == sb:
        return a if bits(a) > bits(b) else b
    if not sa:
        return a if bits(a) >= bits(b) else b
    return b if bits(b) >= bits(a) else a


def computation_type(a: str, a_weak: bool, b: str, b_weak: bool, div_or_mod: bool = False) -> str:
    """Triton's element type for ``a op b``; ``*_weak`` marks a Python literal, which adopts the tensor's type
    when its kind (bool < int < float) is not above the tensor's."""
    if a_weak and b_weak:
        raise Invalid("two literals")
    if a_weak != b_weak:
        s, t = (a, b) if a_weak else (b, a)
        if kind_rank(s) <= kind_rank(t):
            if div_or_mod and t in ("float16", "bfloat16"):
                return "float32"
            return t
    pair = (a, b)
    if "float64" in pair:
        return "float64"
    if "float32" in pair:
        return "float32"
    if "float16" in pair:
        return "float32" if div_or_mod else "float16"
    if "bfloat16" in pair:
        return "float32" if div_or_mod or a != b else "bfloat16"
    if a in FP8 and b in FP8:
        return a if a == b else "float16"
    if a in FP8 or b in FP8:
        return a if a in FP8 else b
    if div_or_mod and is_signed(a) != is_signed(b):
        raise Invalid(f"/, //, % of {a} and {b} (mixed signedness)")
    return _integer_promote(a, b)


def literal_type(v) -> str:
    if isinstance(v, bool):
        return "int1"
    return "int32" if isinstance(v, int) else "float32"


def literal_fits(v, dt: str) -> bool:
    """A weak literal used with a ``dt`` tensor must be representable in it."""
    if not isinstance(v, int) or not is_int(dt):
        return True
    n = bits(dt)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if is_signed(dt) else (0, (1 << n) - 1)
    return lo <= v <= hi


def sum_type(dt: str) -> str:
    """The type ``tl.sum``/``tl.cumsum`` accumulate in."""
    if dt == "bfloat16":
        return "float32"
    if is_int(dt) and bits(dt) < 32:
        return "int32" if is_signed(dt) else "uint32"
    return dt


def minmax_reduce_type(dt: str) -> str:
    if is_int(dt) and bits(dt) < 32:
        return "int32" if is_signed(dt) else "uint32"
    return dt
