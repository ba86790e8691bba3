"""The globals a kernel's code was built from, watched so that a changed one is never served stale.

A kernel (and every @jit function it calls) may read globals that are compiled in: constexprs, dtypes, module
attributes, the @jit functions it calls by name, and plain values where ``TILEC_ALLOW_NON_CONSTEXPR_GLOBALS`` is
set. Their current values form one more part of the kernel's specialisation key: the launch binder, the general
launch path and the interpreter's compile-time check look them up at each launch, so a changed global misses the
in-memory cache and compiles (or finds on disk) the variant for its new value, and the on-disk key
(``JITFunction.cache_key``) carries the values too, so another process never loads a kernel built for old ones.

The watch is found from the source (names and ``module.attr`` reads, through the functions' globals and
closures), once per kernel and again after each compile (a callee rebound to another @jit function brings its own
globals). A kernel that reads none (the common case) gets no per-launch cost at all.
"""
from __future__ import annotations

import ast
import inspect
import sys
import types

from ..frontend.function import hashable, is_kernel_function
from ..language.core import constexpr, dtype

#: the key part of a watched name that no longer exists (the next compile reports the name)
GONE = object()


class Watch:
    """The watched globals of one kernel: ``entries`` are ``(holder, name)`` pairs read by :meth:`key`: a globals
    dict and a name, a closure cell and None, or a module and an attribute."""
    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = tuple(entries)

    def __bool__(self):
        return bool(self.entries)

    def __eq__(self, other):
        return isinstance(other, Watch) and len(self.entries) == len(other.entries) and all(
            a[0] is b[0] and a[1] == b[1] for a, b in zip(self.entries, other.entries))

    __hash__ = None

    def key(self) -> tuple:
        """The watched values now, as a hashable tuple (type-exact: 1, 1.0 and True differ)."""
        out = []
        for holder, name in self.entries:
            try:
                if type(holder) is dict:
                    v = holder[name]
                elif name is None:
                    v = holder.cell_contents
                else:
                    v = getattr(holder, name)
            except (KeyError, ValueError, AttributeError):
                v = GONE
            out.append(value_key(v))
        return tuple(out)


def value_key(v):
    """``v`` as a key part that tells apart values Python calls equal (1, 1.0, True; constexpr(1) and 1)."""
    t = type(v)
    if t is constexpr:
        return (constexpr, value_key(v.value))
    if t is tuple:
        return (tuple, tuple(value_key(x) for x in v))
    return (t, hashable(v))


def _watchable(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, constexpr, dtype, tuple)):
        return True
    return is_kernel_function(v)


def references(fn):
    """``(holder, name, value)`` for every global, closure name and ``module.attr`` the source of ``fn`` (a @jit
    function) reads, parameters excluded; closures shadow globals as in Python."""
    f = fn.fn
    cells = {}
    if f.__closure__:
        cells = dict(zip(f.__code__.co_freevars, f.__closure__))
    g = f.__globals__
    params = {p.name for p in fn.params}
    seen = set()
    for node in ast.walk(fn.source.tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            name = node.id
            base = None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name, base = node.value.id, node.attr
        else:
            continue
        if name in params or (name, base) in seen:
            continue
        seen.add((name, base))
        if name in cells:
            try:
                holder, hname, v = cells[name], None, cells[name].cell_contents
            except ValueError:
                continue
        elif name in g:
            holder, hname, v = g, name, g[name]
        else:
            continue
        if base is None:
            yield holder, hname, v
        elif inspect.ismodule(v) and hasattr(v, base) and not _fixed_module(v):
            yield v, base, getattr(v, base)


def _fixed_module(m) -> bool:
    """Modules whose attributes a kernel reads as constants of the language or the platform (``tl.float16``,
    ``math.pi``): not watched."""
    top = m.__name__.split(".")[0]
    return top in ("tilec", "triton") or top in sys.stdlib_module_names


def watch_of(fn) -> Watch:
    """The globals ``fn`` and the @jit functions it reaches through them read, as a :class:`Watch`."""
    entries, done, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        if id(f) in done:
            continue
        done.add(id(f))
        for holder, name, v in references(f):
            if isinstance(v, types.ModuleType) or not _watchable(v):
                continue
            if is_kernel_function(v):
                stack.append(v)
            if not any(h is holder and n == name for h, n in entries):
                entries.append((holder, name))
    return Watch(entries)
