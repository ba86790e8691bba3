"""Python builtins usable in kernels, mapped to what they mean there (``min``/``max``/``abs``/``print`` act on
tensors through the language's semantic layer; the rest keep their Python meaning on compile-time values)."""
from __future__ import annotations

import builtins

from .. import language as tl
from ..language.core import current, tensor


def _is_tensor(v) -> bool:
    return isinstance(v, tensor)


def _py_extreme(op, fold, args):
    """Python's min/max in a kernel: folded with tl.minimum/maximum when any argument is a tensor."""
    if len(args) == 1:
        args = tuple(args[0])
    if any(_is_tensor(a) for a in args):
        acc = args[0]
        for a in args[1:]:
            acc = current().minmax(op, acc, a)
        return acc
    return fold(args)


def py_min(*args):
    return _py_extreme("min", builtins.min, args)


def py_max(*args):
    return _py_extreme("max", builtins.max, args)


def py_abs(x):
    return current().abs(x) if _is_tensor(x) else builtins.abs(x)


def py_print(*args, sep=" "):
    if any(_is_tensor(a) for a in args):
        prefix = sep.join(str(a) for a in args if not _is_tensor(a))
        return current().device_print(prefix, *[a for a in args if _is_tensor(a)])
    builtins.print(*args, sep=sep)


def py_breakpoint(*args, **kwargs):
    """``breakpoint()`` stops the interpreter on its line (Python's own); compiled code has nowhere to stop, so it
    ignores it (a kernel with one still compiles, as the interpreter's check of each kernel requires)."""
    return None


for _f in (py_min, py_max, py_abs, py_print, py_breakpoint):
    _f.__tilec_builtin__ = True


def python_builtins() -> dict:
    """The table a kernel's names fall back to after its locals and globals."""
    return {
        "range": tl.range, "len": len, "float": float, "int": int, "bool": bool, "isinstance": isinstance,
        "min": py_min, "max": py_max, "abs": py_abs, "print": py_print, "breakpoint": py_breakpoint,
        "tuple": tuple, "list": list, "getattr": getattr, "True": True, "False": False, "None": None,
        "ValueError": ValueError, "TypeError": TypeError, "AssertionError": AssertionError,
    }
