"""Pass infrastructure: the ``Pass`` base, a name registry, and the ``PassManager`` that runs, times, verifies
and dumps.

Dumping is driven by the environment so it works from any entry point (the JIT, tests, tools) without plumbing:

- ``TILEC_DUMP_IR=1`` prints the IR before the first pass and after every pass to stderr, each under a header
  naming the pass and its time; ``TILEC_DUMP_IR=name1,name2`` limits this to those kernels.
- ``TILEC_DUMP_DIR=<dir>`` writes ``<dir>/<kernel>/NN-<pass>.tir`` files (``00-input.tir`` first).
- ``TILEC_DEBUG=1`` verifies the IR after every pass (as does ``PassManager(..., verify=True)``).
"""
from __future__ import annotations

import os
import re
import sys
import time
from typing import ClassVar

from ..errors import TilecError
from ..ir.core import IRError, Operation
from ..ir.printer import print_ir

PASS_REGISTRY: dict[str, type["Pass"]] = {}


class Pass:
    """A transformation of a whole module. Subclasses set ``name`` (registering the class) and implement
    ``run``; ``run`` may return False to report that it changed nothing (None means "unknown")."""

    name: ClassVar[str] = "<pass>"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "name" in cls.__dict__:
            PASS_REGISTRY[cls.name] = cls

    def run(self, module) -> bool | None:
        raise NotImplementedError

    def __repr__(self):
        return f"<pass {self.name}>"


def _load_builtin_passes():
    # Importing the pass modules registers them; done lazily so manager.py has no import cycle with them.
    from . import canonicalize, cse, dce, inline, licm  # noqa: F401


def get_pass(name: str, **options) -> Pass:
    """An instance of the pass registered as ``name`` (options go to its constructor)."""
    _load_builtin_passes()
    cls = PASS_REGISTRY.get(name)
    if cls is None:  # target pass packages register their passes when imported
        import importlib
        import pkgutil
        for sub in ("tilec.gpu.passes",):
            try:
                pkg = importlib.import_module(sub)
                for info in pkgutil.iter_modules(pkg.__path__):
                    importlib.import_module(f"{pkg.__name__}.{info.name}")
            except Exception:  # a target package that cannot load has no passes to offer
                continue
        cls = PASS_REGISTRY.get(name)
    if cls is None:
        raise KeyError(f"unknown pass {name!r}; known: {', '.join(sorted(PASS_REGISTRY))}")
    return cls(**options)


def parse_pipeline(spec: str) -> list[Pass]:
    """``"inline,canonicalize,cse"`` -> pass instances (for tools and tests)."""
    return [get_pass(n.strip()) for n in spec.split(",") if n.strip()]


def tir_pipeline() -> list[Pass]:
    """The default target-independent pipeline.

    - ``inline`` first: every later pass then sees whole kernels, and constants passed to callees meet the
      callee's arithmetic.
    - ``canonicalize`` folds constants (specialised ``1`` arguments, constexpr arithmetic) and removes
      identities, which exposes equal expressions to ...
    - ``cse``, which must precede ``licm`` so that one invariant computation is hoisted once, not once per
      duplicate.
    - ``licm`` moves invariant address arithmetic out of loops; hoisted ops can meet equal ops outside the loop
      and freshly constant loop-carried values can fold, so a second ``canonicalize`` + ``cse`` round follows.
    - ``dce`` last removes what the rewrites left unused (including dead loop-carried values, which the greedy
      canonicaliser's local view cannot see).
    """
    return [get_pass(n) for n in ("inline", "canonicalize", "cse", "licm", "canonicalize", "cse", "dce")]


def _dump_selected(kernel_name: str) -> bool:
    v = os.environ.get("TILEC_DUMP_IR", "")
    if v in ("", "0"):
        return False
    if v.lower() in ("1", "true", "all", "*"):
        return True
    return kernel_name in {s.strip() for s in v.split(",")}


class PassFailure(IRError):
    """A pass raised (or left invalid IR); the message names the pass and the kernel."""


class PassManager:
    """Runs passes over a module for one kernel, timing each (``timings``: list of (pass name, seconds))."""

    def __init__(self, kernel_name: str = "module", verify: bool = False):
        self.kernel_name = kernel_name
        self.verify = verify or os.environ.get("TILEC_DEBUG", "") not in ("", "0")
        self.dump = _dump_selected(kernel_name)
        self.dump_dir = os.environ.get("TILEC_DUMP_DIR") or None
        self.timings: list[tuple[str, float]] = []
        self._step = 0

    # -- dumping -------------------------------------------------------------------------------------------
    def _emit(self, label: str, text: str, header: str):
        if self.dump:
            sys.stderr.write(f"// -----// {header} //----- //\n{text}\n")
            sys.stderr.flush()
        if self.dump_dir:
            d = os.path.join(self.dump_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", self.kernel_name))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{self._step:02d}-{label}.tir"), "w") as f:
                f.write(text)
        self._step += 1

    @property
    def dumping(self) -> bool:
        return self.dump or self.dump_dir is not None

    def _verify(self, module, after: str):
        from ..ir.verifier import verify
        try:
            verify(module)
        except IRError as e:
            raise PassFailure(f"invalid IR after '{after}' in kernel '{self.kernel_name}': {e}") from e

    # -- running -------------------------------------------------------------------------------------------
    def run(self, module: Operation, passes) -> Operation:
        """Run ``passes`` (Pass instances or registered names) in order over ``module``, in place."""
        passes = [get_pass(p) if isinstance(p, str) else p for p in passes]
        before = print_ir(module) if self.dumping else None
        if before is not None:
            self._emit("input", before, "IR before the pipeline")
        if self.verify:
            self._verify(module, "input")
        for p in passes:
            t0 = time.perf_counter()
            try:
                p.run(module)
            except Exception as e:
                dt = time.perf_counter() - t0
                self.timings.append((p.name, dt))
                if self.dumping:
                    self._emit(f"{p.name}-failed", print_ir(module),
                               f"IR after failing {p.name} ({dt * 1e3:.1f} ms)")
                if isinstance(e, (PassFailure, TilecError)):
                    e.add_note(f"in pass '{p.name}' on kernel '{self.kernel_name}'")
                    raise
                raise PassFailure(f"pass '{p.name}' failed on kernel '{self.kernel_name}': "
                                  f"{type(e).__name__}: {e}") from e
            dt = time.perf_counter() - t0
            self.timings.append((p.name, dt))
            if self.dumping:
                after = print_ir(module)
                same = " (no change)" if after == before else ""
                self._emit(p.name, after, f"IR after {p.name} ({dt * 1e3:.1f} ms){same}")
                before = after
            if self.verify:
                self._verify(module, p.name)
        return module

    def report(self) -> str:
        """A one-line-per-pass timing table."""
        total = sum(t for _, t in self.timings)
        rows = [f"{n:<16} {t * 1e3:9.2f} ms" for n, t in self.timings]
        return "\n".join(rows + [f"{'total':<16} {total * 1e3:9.2f} ms"])
