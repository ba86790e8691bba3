"""What the frontend knows of a kernel-language function: the Python function, its source, and its parameters.

``KernelFunction`` is the frontend's side of ``@tilec.jit``: everything code generation reads (``fn``, ``source``,
``params``, ``signature``, ``noinline``). The runtime's ``JITFunction`` extends it with launching and caching, so
the frontend recognises a @jit function (a callee, a global it may read) by ``is_kernel_function`` without
knowing the runtime that launches it.
"""
from __future__ import annotations

import inspect

from ..language.core import constexpr
from ..passes.manager import KERNEL_NAMES
from .source import Source


class Param:
    """A kernel parameter: constexpr or runtime, its default, and whether launches specialise on its value."""
    __slots__ = ("name", "index", "is_constexpr", "has_default", "default", "specialize")

    def __init__(self, p: inspect.Parameter, index: int, do_not_specialize=()):
        self.name = p.name
        self.index = index
        ann = p.annotation
        self.is_constexpr = ann is constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
        self.has_default = p.default is not inspect.Parameter.empty
        self.default = p.default if self.has_default else None
        self.specialize = p.name not in do_not_specialize and index not in do_not_specialize

    def __repr__(self):
        return f"Param({self.name}{': constexpr' if self.is_constexpr else ''})"


PLAIN_PARAMETERS_ONLY = ("kernels take plain positional parameters only (no *args, **kwargs or keyword-only/"
                         "positional-only markers)")


class KernelFunction:
    """A Python function written in the kernel language (a kernel or a helper called from kernels)."""

    def __init__(self, fn, do_not_specialize=(), noinline=False):
        KERNEL_NAMES.add(fn.__name__)  # what the debug variables may name
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.noinline = noinline
        self.signature = inspect.signature(fn)
        dns = set(do_not_specialize or ())
        self.params = [Param(p, i, dns) for i, p in enumerate(self.signature.parameters.values())]
        self.plain_parameters = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())
        self._source = None

    @property
    def source(self) -> Source:
        if self._source is None:
            self._source = Source(self.fn)
        return self._source

    @property
    def src(self) -> str:
        return self.source.text


def is_kernel_function(v) -> bool:
    """Whether ``v`` is a @jit function (callable from kernels, readable as a global inside them)."""
    return isinstance(v, KernelFunction)


def hashable(v):
    """``v`` itself when it can be a dict key, else its repr (constexpr values in specialisation keys)."""
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)
