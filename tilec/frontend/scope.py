"""Name resolution inside kernels: local variables, then the function's globals/closure, then a few builtins.

Globals are read-only and, as in Triton, only of kinds that are compile-time values by construction: constexprs
(``SCALE = tl.constexpr(3.0)``), tl dtypes, @jit functions, tl builtins and modules (a module's attributes are read
as they are: ``math.pi``). A plain number, bool, string or None global is refused with Triton's advice unless
``TILEC_ALLOW_NON_CONSTEXPR_GLOBALS=1`` (or Triton's ``TRITON_...``) is set. Whatever a kernel reads this way is
compiled in, and its value is part of the kernel's specialisation (``runtime/jit.py: watched globals``): a global
changed after a launch recompiles at the next one, never serving the old value.
"""
from __future__ import annotations

import numbers
import types

from .. import knobs, language as tl
from ..language.core import constexpr, dtype, tensor
from .function import is_kernel_function
from .pybuiltins import python_builtins

_MISSING = object()


def allowed_global(v) -> bool:
    """Whether a kernel may read ``v`` (a global, closure or module attribute); plain values included."""
    if v is None or isinstance(v, (bool, numbers.Number, str)):
        return True
    return allowed_name(v)


def allowed_name(v) -> bool:
    """Whether a kernel may read ``v`` through a global or closure name: compile-time values by construction."""
    if isinstance(v, (constexpr, dtype, types.ModuleType)):
        return True
    if is_kernel_function(v):
        return True
    if tl.is_builtin(v) or getattr(type(v), "__tilec_attr_ok__", False):
        return True
    # classes a kernel may name: to construct, or as isinstance's second argument (a @jit helper taking either a
    # descriptor or a pointer asks isinstance(x, tl.tensor_descriptor), as Triton's attention tutorial does)
    if isinstance(v, type) and v in (tl.constexpr, tl.static_range, tl.range, tl.tensor, tl.dtype, tl.pointer_type,
                                     tl.block_type, tl.tensor_descriptor):
        return True
    if isinstance(v, tuple):
        return all(allowed_name(x) for x in v)
    return False


def plain_value(v) -> bool:
    """A number, bool, string or None (or a tuple of them): readable through a name only when allowed."""
    if v is None or isinstance(v, (bool, numbers.Number, str)):
        return True
    return isinstance(v, tuple) and all(plain_value(x) or allowed_name(x) for x in v) and any(plain_value(x) for x in v)


def non_constexpr_global_error(name, v) -> str:
    """Triton's refusal of a plain global, with tilec's spelling of its advice."""
    return (f"cannot access global variable {name} (a {type(v).__name__}) from within a @jit function: kernels can "
            f"only read globals that are instantiated as constexpr ({name} = tl.constexpr({v!r})). Note that this is "
            f"different from annotating a variable as constexpr ({name}: tl.constexpr = {v!r}), which is not "
            "supported. Pass it as an argument, or set TILEC_ALLOW_NON_CONSTEXPR_GLOBALS=1 "
            "(or TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1): its value is then compiled in as well")


def normalize(v):
    """Compile-time values are kept as plain Python values (constexpr unwrapped, numpy scalars converted)."""
    if isinstance(v, constexpr):
        v = v.value
    if isinstance(v, numbers.Number) and not isinstance(v, (bool, int, float)):
        if isinstance(v, numbers.Integral):
            return int(v)
        if isinstance(v, numbers.Real):
            return float(v)
    if type(v) is not bool and isinstance(v, bool):
        return bool(v)
    return v


class Scope:
    """Local variables of one function being generated, over its globals."""

    def __init__(self, fn, locals_: dict | None = None):
        self.fn = fn
        self.vars: dict = dict(locals_ or {})
        g = fn.__globals__
        closure = {}
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        self.globals = g
        self.closure = closure
        self.builtins = python_builtins()

    def copy(self) -> "Scope":
        s = Scope.__new__(Scope)
        s.fn, s.vars, s.globals, s.closure, s.builtins = self.fn, dict(self.vars), self.globals, self.closure, \
            self.builtins
        return s

    def lookup(self, name: str):
        """Value of ``name``; raises NameError/TypeError with a user-facing message."""
        v = self.vars.get(name, _MISSING)
        if v is not _MISSING:
            return v
        for table in (self.closure, self.globals):
            v = table.get(name, _MISSING)
            if v is not _MISSING:
                if plain_value(v) and not knobs.flag("TILEC_ALLOW_NON_CONSTEXPR_GLOBALS"):
                    raise NameError(non_constexpr_global_error(name, v))
                if not allowed_global(v):
                    if callable(v) and not isinstance(v, type):
                        raise TypeError(f"cannot call {name}: it is a plain Python function; only tl functions "
                                        "and @tilec.jit functions can be called from a kernel")
                    raise TypeError(
                        f"cannot use global '{name}' of type {type(v).__name__} inside a kernel: only "
                        "constexprs, ints, floats, bools, tl dtypes, @tilec.jit functions and modules are "
                        "readable (pass it as an argument, or make it a tl.constexpr)")
                return normalize(v)
        v = self.builtins.get(name, _MISSING)
        if v is not _MISSING:
            return v
        raise NameError(f"name '{name}' is not defined")

    def __setitem__(self, name, value):
        self.vars[name] = value

    def __contains__(self, name):
        return name in self.vars


def is_tensor(v) -> bool:
    return isinstance(v, tensor)


def is_scalar_const(v) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, tensor)
