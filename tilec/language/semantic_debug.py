"""What a kernel states about its own values: compiler hints (``tl.multiple_of`` and friends), ``tl.assume``,
and the debug-build checks and output (``tl.device_assert``, ``tl.device_print``).
"""
from __future__ import annotations

import os
import sys

from . import core as tlc
from .core import _unwrap, tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tilec/


class DebugRules:
    """Hints, assumptions and debug checks, for :class:`~tilec.language.semantic.Semantic`."""

    def hint(self, x, kind, values) -> tensor:
        x = self.to_tensor(x)
        values = _unwrap(values)
        values = tuple(_unwrap(v) for v in (values if isinstance(values, (tuple, list)) else (values,)))
        rank = max(1, len(x.shape))
        if len(values) != rank:
            raise ValueError(f"{kind} needs {rank} value(s) for a tensor of shape {list(x.shape)}, got {len(values)}")
        for v in values:
            if not isinstance(v, int) or v < 1:
                raise TypeError(f"{kind} values must be positive compile-time ints, got {v!r}")
        return tensor(self.b.create("hint", [x.handle], x.type, **{kind: values}), x.type)

    def debug_enabled(self) -> bool:
        """``device_assert`` is checked only in debug builds: ``debug=True`` (jit or launch) or TILEC_DEBUG=1."""
        d = self.options.get("debug")
        if d is None:
            d = os.environ.get("TILEC_DEBUG", "0") not in ("", "0")
        return bool(d)

    def source_location(self) -> str:
        """``file:line`` of the kernel statement being built (compiled) or run (interpreted)."""
        loc = getattr(getattr(self.b, "ir", None), "loc", None)
        if loc is not None:
            return f"{loc.file}:{loc.line}"
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
            f = f.f_back
        return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<kernel>"

    def device_assert(self, cond, msg=""):
        if not self.debug_enabled():
            return
        cond = self.cast(self.to_tensor(cond), tlc.int1)
        text = str(_unwrap(msg)) or "assertion failed"
        self.b.create("assert", [cond.handle], None, message=f"{self.source_location()}: {text}")

    def assume(self, cond):
        """``tl.assume``: a runtime promise (``llvm.assume``); a compile-time False is an error, True nothing."""
        c = _unwrap(cond)
        if not isinstance(c, tensor):
            if not c:
                raise AssertionError("tl.assume of a condition that is false at compile time")
            return None
        if c.shape:
            raise TypeError(f"tl.assume needs a scalar condition, got a tensor of shape {list(c.shape)}")
        c = self.cast(c, tlc.int1) if c.dtype != tlc.int1 else c
        self.b.create("assume", [c.handle], None)
        return None

    def device_print(self, prefix, *args, hex=False):
        handles = [self.to_tensor(a).handle for a in args]
        self.b.create("print", handles, None, prefix=str(_unwrap(prefix)), hex=bool(_unwrap(hex)))
