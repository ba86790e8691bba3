"""Declared outputs: what a torch custom operator built on tilec kernels returns, said once and used twice.

``torch.compile`` and ``torch.export`` never run the operator's body while tracing (its kernels need real memory);
they run a fake implementation that makes tensors of the right shape, dtype, device and strides. ``like`` declares
an output by the argument it resembles, so tilec derives that fake implementation, and checks the real outputs of
eager calls against the same declaration (a wrong declaration would otherwise go unnoticed until a compiled graph
misreads the output's memory).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch


def _call_by_name(fn, arguments: dict):
    """Call ``fn`` with the operator's arguments that it names (all of them when it takes ``**kwargs``)."""
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn(**arguments)
    missing = [n for n in params if n not in arguments and params[n].default is inspect.Parameter.empty]
    if missing:
        raise TypeError(f"{getattr(fn, '__name__', fn)} names {', '.join(missing)}, which the operator does not "
                        f"take (its parameters: {', '.join(arguments)})")
    return fn(**{n: arguments[n] for n in params if n in arguments})


@dataclass(frozen=True)
class Like:
    """An output resembling parameter ``param``: by default ``torch.empty_like(param)`` (its shape, dtype, device
    and strides); ``contiguous=True``: its shape, contiguous whatever the parameter's strides; ``shape`` (a tuple,
    or a function of the operator's arguments named by its parameters) makes it a new contiguous tensor of that
    shape; ``dtype`` overrides the dtype."""
    param: str
    shape: object = None
    dtype: object = None
    contiguous: bool = False

    def make(self, arguments: dict, device=None) -> torch.Tensor:
        """The declared output for these arguments (``device="meta"``: its layout only, no memory)."""
        try:
            base = arguments[self.param]
        except KeyError:
            raise TypeError(f"like({self.param!r}): the operator has no parameter {self.param!r} "
                            f"(its parameters: {', '.join(arguments)})") from None
        if not isinstance(base, torch.Tensor):
            raise TypeError(f"like({self.param!r}): {self.param} is a {type(base).__name__}, not a tensor")
        dtype = self.dtype or base.dtype
        if self.shape is None and not self.contiguous:
            return torch.empty_like(base, dtype=dtype, device=device)
        shape = base.shape if self.shape is None else \
            _call_by_name(self.shape, arguments) if callable(self.shape) else self.shape
        return torch.empty(tuple(shape), dtype=dtype, device=device if device is not None else base.device)

    def plainly_matches(self, real: torch.Tensor, arguments: dict) -> bool:
        """The common case without making the declared tensor: a contiguous output of the declared shape, dtype
        and device where the declaration gives a contiguous one. False: compare with ``make`` instead."""
        base = arguments.get(self.param)
        if not isinstance(base, torch.Tensor) or real.dtype != (self.dtype or base.dtype) or \
                real.device != base.device or not real.is_contiguous():
            return False
        if self.shape is None:
            return real.shape == base.shape and (self.contiguous or base.is_contiguous())
        shape = _call_by_name(self.shape, arguments) if callable(self.shape) else self.shape
        return tuple(real.shape) == tuple(shape)

    def describe(self) -> str:
        extra = "".join(f", {k}=..." for k in ("shape", "dtype") if getattr(self, k) is not None)
        return f"like({self.param!r}{extra}{', contiguous=True' if self.contiguous else ''})"


def like(param: str, *, shape=None, dtype=None, contiguous: bool = False) -> Like:
    """Declare an output resembling the operator's tensor parameter ``param`` (see ``Like``)."""
    if not isinstance(param, str):
        raise TypeError(f"like() takes the name of a tensor parameter, not {type(param).__name__}")
    return Like(param, shape, dtype, contiguous)


def normalize(out) -> tuple[tuple, bool]:
    """(declared outputs, whether the operator returns a tuple) from ``out=``: None, one ``like``, or a sequence."""
    if out is None:
        return (), False
    if isinstance(out, Like):
        return (out,), False
    outs = tuple(out)
    for o in outs:
        if not isinstance(o, Like):
            raise TypeError(f"out= takes like(...) declarations, not {type(o).__name__}")
    return outs, True


def fake_outputs(outs: tuple, as_tuple: bool, arguments: dict):
    """What the fake implementation returns: the declared outputs made for (fake) arguments."""
    made = tuple(o.make(arguments) for o in outs)
    if not outs:
        return None
    return made if as_tuple else made[0]


def _same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Strides that address the same elements (those of dimensions of size 1 never matter)."""
    return all(sa == sb for n, sa, sb in zip(a.shape, a.stride(), b.stride()) if n > 1)


def check_outputs(op_name: str, outs: tuple, as_tuple: bool, arguments: dict, result):
    """Raise a clear error where a real call's result is not what the declaration says."""
    got = (result if isinstance(result, (tuple, list)) else (result,)) if as_tuple else (result,)
    if not outs:
        if result is not None:
            raise TypeError(f"{op_name} declares no outputs (out=None) but returned {type(result).__name__}")
        return
    if (as_tuple and not isinstance(result, (tuple, list))) or len(got) != len(outs):
        raise TypeError(f"{op_name} declares {len(outs)} output(s) but returned "
                        f"{len(result) if isinstance(result, (tuple, list)) else 1}")
    for i, (decl, real) in enumerate(zip(outs, got)):
        if not isinstance(real, torch.Tensor):
            raise TypeError(f"{op_name}: output {i} ({decl.describe()}) is a {type(real).__name__}, not a tensor")
        if decl.plainly_matches(real, arguments):
            continue
        want = decl.make(arguments, device="meta")
        device = arguments[decl.param].device
        if real.shape == want.shape and real.dtype == want.dtype and real.device == device and \
                (real.stride() == want.stride() or _same_strides(real, want)):
            continue  # the common case, decided in a few comparisons
        problems = [f"{what} {g} where the declaration gives {w}" for what, g, w in (
            ("shape", tuple(real.shape), tuple(want.shape)), ("dtype", real.dtype, want.dtype),
            ("device", real.device, device)) if g != w]
        if not problems:
            problems.append(f"strides {real.stride()} where the declaration gives {want.stride()} (declare "
                            f"like({decl.param!r}, contiguous=True) for a contiguous output, or make it with "
                            f"torch.empty_like({decl.param}))")
        raise TypeError(f"{op_name}: output {i} ({decl.describe()}) has " + "; ".join(problems))
