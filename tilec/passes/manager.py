"""Pass infrastructure: passes by name (``get_pass``; the ``Pass`` base and its registry are in ``base.py``), the
default tir pipeline, and the ``PassManager`` that runs, times, verifies, dumps and stops in the debugger.

One manager runs a whole compile: the tir pipeline and then the backend's own passes (the GPU passes for a GPU
target), numbered continuously. Everything is driven by the environment so it works from any entry point (the JIT,
tests, tools) without plumbing:

- ``TILEC_DUMP_IR=1`` prints the IR before the first pass and after every pass to stderr, each under a header
  naming the pass, the kernel and the pass's time; ``TILEC_DUMP_IR=name1,name2`` limits this to those kernels (a
  name that no compiled kernel had is reported once when the process exits).
- ``TILEC_DUMP_DIR=<dir>`` writes ``<dir>/<kernel>/<variant>/NN-<pass>.tir`` files (``00-input.tir`` first; one
  folder per compiled specialisation, so autotune configs and specialisations never overwrite each other), each
  opening with a comment that names the pass, the kernel and the variant. The pipeline adds every backend stage
  there (``<kernel>.plan``, ``.llir``, ``.asm``, ``.gir``, ``.ptx``, ...; ``stage_files.py``).
- ``TILEC_DUMP_IR_LOC=1`` ends each op in every dump with its ``loc("file":line:col)`` (the parser reads it).
- ``TILEC_PASS_TIMING=1`` prints each compile's pass and stage times to stderr.
- ``TILEC_PRINT_BEFORE=<pass>[,...]`` / ``TILEC_PRINT_AFTER=<pass>[,...]`` print the IR only right before / after
  the named passes (``all`` for every pass).
- ``TILEC_BREAK_BEFORE=<pass>[,...]`` stops in the debugger (``breakpoint()``, so ``PYTHONBREAKPOINT`` applies)
  right before the named pass runs, with the IR in the local ``module`` (``p module`` prints it) and the pass in
  ``pass_``; the banner says which run of the pass it is.
  Each name in these three lists may carry ``#n`` (``cse#2``: only the pass's second run in the pipeline) and
  ``@kernel`` (``coalesce@softmax_kernel``) to apply to one kernel. A pass or kernel name that does not exist is an
  error listing those that do (:class:`~tilec.errors.ConfigurationError`), never silently nothing.
- ``TILEC_DEBUG=1`` verifies the IR after every pass (as does ``PassManager(..., verify=True)``).

These act while a kernel compiles, so while any of them is set (:data:`DEBUG_VARIABLES`) compiles skip the
on-disk kernel cache (the pipeline says so once): a warm cache never turns them into silent no-ops.
"""
from __future__ import annotations

import atexit
import os
import re
import sys
import time

from ..errors import ConfigurationError, TilecError, did_you_mean
from ..ir.core import IRError, Operation
from ..ir.printer import print_ir
from ..ir.verifier import verify

# the tir passes: importing them registers them (``base.py``); the manager runs them by name
from . import canonicalize, cse, dce, expand_descriptors, inline, licm  # noqa: F401
from .base import PASS_PACKAGES, PASS_REGISTRY, Pass, load_pass_packages, register_pass_package  # noqa: F401


def load_all_passes():
    """Register every pass there is: the tir passes and those of the registered pass packages (for
    listings)."""
    load_pass_packages()


def get_pass(name: str, **options) -> Pass:
    """An instance of the pass registered as ``name`` (options go to its constructor)."""
    cls = PASS_REGISTRY.get(name)
    if cls is None:
        load_pass_packages()
        cls = PASS_REGISTRY.get(name)
    if cls is None:
        raise KeyError(f"unknown pass {name!r}; known: {', '.join(sorted(PASS_REGISTRY))}")
    return cls(**options)


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


def cleanup_passes() -> list[Pass]:
    """The tir pipeline's cleanups after ``inline`` (canonicalize, cse, licm, canonicalize, cse, dce): what a
    backend runs after passes that write new arithmetic (``expand-descriptors``), each its own pass in the
    dumps rather than a pipeline hidden inside another pass."""
    return tir_pipeline()[1:]


def _names(var: str) -> set[str]:
    return {x.strip() for x in os.environ.get(var, "").split(",") if x.strip()}


#: the variables that act only while a kernel compiles: while one is set, compiles skip the on-disk cache
DEBUG_VARIABLES = ("TILEC_DUMP_IR", "TILEC_DUMP_DIR", "TILEC_DUMP_IR_LOC", "TILEC_PRINT_BEFORE", "TILEC_PRINT_AFTER",
                   "TILEC_BREAK_BEFORE", "TILEC_PASS_TIMING")
#: the variables that name passes (``pass[#n][@kernel]``)
PASS_VARIABLES = ("TILEC_PRINT_BEFORE", "TILEC_PRINT_AFTER", "TILEC_BREAK_BEFORE")
_DUMP_ALL = ("1", "true", "all", "*")


def debug_variables_set() -> list[str]:
    """The debug variables set now (to anything but empty or ``0``)."""
    return [v for v in DEBUG_VARIABLES if os.environ.get(v, "") not in ("", "0")]


def _parse_item(var: str, item: str):
    """``pass[#n][@kernel]`` -> (pass, n or None, kernel or None)."""
    name, _, kernel = item.partition("@")
    name, hashed, occurrence = name.partition("#")
    n = None
    if hashed:
        if not occurrence.isdigit() or int(occurrence) < 1:
            raise ConfigurationError(f"{var}={os.environ.get(var)!r}: in {item!r}, '#' must be followed by a run "
                                     f"number counted from 1 ('{name}#2': the second time {name} runs)")
        n = int(occurrence)
    return name.strip(), n, (kernel.strip() or None)


#: the names of the kernel-language functions defined so far (the frontend adds each @jit function's)
KERNEL_NAMES: set = set()


def check_debug_variables(kernel_name: str):
    """Refuse a pass or kernel name in the debug variables that does not exist, listing those that do: a typo
    must not quietly select nothing. Kernel names are those of the @jit functions defined so far
    (:data:`KERNEL_NAMES`) and the kernel compiling now."""
    kernels = KERNEL_NAMES | {kernel_name}
    passes = None
    for var in PASS_VARIABLES:
        for item in _names(var):
            name, _, kernel = _parse_item(var, item)
            if name != "all":
                if passes is None:
                    load_all_passes()
                    passes = sorted(PASS_REGISTRY)
                if name not in PASS_REGISTRY:
                    raise ConfigurationError(f"{var}={os.environ.get(var)!r}: there is no pass named {name!r}"
                                             f"{did_you_mean(name, passes)}; the passes are {', '.join(passes)} "
                                             "(or 'all')")
            if kernel is not None:
                _check_kernel(var, kernel, kernels)
    dump = os.environ.get("TILEC_DUMP_IR", "")
    if dump not in ("", "0") and dump.lower() not in _DUMP_ALL:
        for kernel in _names("TILEC_DUMP_IR"):
            _check_kernel("TILEC_DUMP_IR", kernel, kernels)


def _check_kernel(var, kernel, kernels):
    if kernel not in kernels:
        names = sorted(kernels)
        shown = ", ".join(names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")
        raise ConfigurationError(f"{var}={os.environ.get(var)!r}: there is no kernel named {kernel!r}"
                                 f"{did_you_mean(kernel, kernels)}; the @jit functions defined so far are {shown}")


_dump_filter_matched: set[str] = set()


def _report_unmatched_dump_filter():
    wanted = _names("TILEC_DUMP_IR") - {"0", *_DUMP_ALL}
    missing = sorted(wanted - _dump_filter_matched)
    if wanted and missing:
        sys.stderr.write(f"tilec: TILEC_DUMP_IR named {', '.join(missing)}, but no compiled kernel had "
                         f"{'that name' if len(missing) == 1 else 'those names'}"
                         + (f" (dumped: {', '.join(sorted(_dump_filter_matched))})" if _dump_filter_matched else "")
                         + "\n")


_atexit_registered = False


def _dump_selected(kernel_name: str) -> bool:
    global _atexit_registered
    v = os.environ.get("TILEC_DUMP_IR", "")
    if v in ("", "0"):
        return False
    if v.lower() in _DUMP_ALL:
        return True
    if not _atexit_registered:
        _atexit_registered = True
        atexit.register(_report_unmatched_dump_filter)
    if kernel_name in _names("TILEC_DUMP_IR"):
        _dump_filter_matched.add(kernel_name)
        return True
    return False


def _pass_selector(var: str, kernel_name: str) -> dict:
    """What ``var`` selects for this kernel: pass name (or ``all``) -> the runs selected (a set of numbers), or
    None for every run."""
    out: dict = {}
    for item in _names(var):
        name, n, kernel = _parse_item(var, item)
        if kernel is None or kernel == kernel_name:
            if n is None or out.get(name, set()) is None:
                out[name] = None
            else:
                out.setdefault(name, set()).add(n)
    return out


def _selected(selector: dict, pass_name: str, run: int = 1) -> bool:
    for name in (pass_name, "all"):
        if name in selector:
            runs = selector[name]
            if runs is None or run in runs:
                return True
    return False


# Functions called as ``observe(manager, label, module)`` with the module before the first pass (label "input")
# and after every pass (label: the pass's name); tools that show the IR pass by pass (the HTML viewer) record it.
PASS_OBSERVERS: list = []


class PassFailure(IRError):
    """A pass raised (or left invalid IR); the message names the pass and the kernel."""


class PassManager:
    """Runs passes over a module for one kernel, timing each (``timings``: list of (pass name, seconds)).

    ``run`` may be called several times on one manager (the tir pipeline, then the backend's passes): numbering
    in dumps continues, and the input is dumped only once. ``variant`` names the specialisation in dump folders.
    ``print_after`` adds pass names (or ``"all"``) to ``TILEC_PRINT_AFTER``'s, for tools that print between passes.
    ``options`` (the compile's typed options) is handed to every pass it runs, as ``pass_.options``.
    """

    def __init__(self, kernel_name: str = "module", verify: bool = False, variant: str | None = None,
                 print_after=(), options=None):
        self.kernel_name = kernel_name
        self.options = options
        self.variant = variant
        self.verify = verify or os.environ.get("TILEC_DEBUG", "") not in ("", "0")
        if debug_variables_set():
            check_debug_variables(kernel_name)
        KERNEL_NAMES.add(kernel_name)  # a kernel compiled from IR text is a name too, from now on
        self.dump = _dump_selected(kernel_name)
        self.dump_dir = os.environ.get("TILEC_DUMP_DIR") or None
        self.print_before = _pass_selector("TILEC_PRINT_BEFORE", kernel_name)
        self.print_after = _pass_selector("TILEC_PRINT_AFTER", kernel_name)
        self.print_after.update({n: None for n in print_after})
        self.break_before = _pass_selector("TILEC_BREAK_BEFORE", kernel_name)
        self.timings: list[tuple[str, float]] = []
        self._step = 0
        self._runs: dict[str, int] = {}  # pass name -> how many times it has run (numbers ``#n`` selections)
        self._planned: dict[str, int] = {}  # the same, counting the passes of the current ``run`` call
        self._last_text: str | None = None
        self._ran = False

    # -- dumping -------------------------------------------------------------------------------------------
    def _folder(self) -> str:
        parts = [self.dump_dir, re.sub(r"[^A-Za-z0-9_.-]", "_", self.kernel_name)]
        if self.variant:
            parts.append(re.sub(r"[^A-Za-z0-9_.-]", "_", self.variant))
        return os.path.join(*parts)

    def _emit(self, label: str, text: str, header: str, to_stderr: bool | None = None):
        where = self.kernel_name + (f" [{self.variant}]" if self.variant else "")
        if self.dump if to_stderr is None else to_stderr:
            sys.stderr.write(f"// -----// {header} on {where} //----- //\n{text}\n")
            sys.stderr.flush()
        if self.dump_dir:
            d = self._folder()
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{self._step:02d}-{label}.tir"), "w") as f:
                f.write(f"// {header} on {where}\n{text}")  # a comment: the file still parses
        self._step += 1

    @property
    def dumping(self) -> bool:
        return self.dump or self.dump_dir is not None

    def _verify(self, module, after: str, verifier=None):
        try:
            (verifier or verify)(module)
        except IRError as e:
            raise PassFailure(f"invalid IR after '{after}' in kernel '{self.kernel_name}': {e}") from e

    def _break(self, module, pass_, run: int):
        """Stop in the debugger before ``pass_``: ``module`` and ``pass_`` are this frame's locals."""
        many = run > 1 or self._planned.get(pass_.name, 1) > 1
        which = f" (its run #{run}: TILEC_BREAK_BEFORE={pass_.name}#{run} stops at this run only)" if many else ""
        sys.stderr.write(f"tilec: stopping before pass '{pass_.name}' on kernel '{self.kernel_name}'{which}; "
                         "the IR is `module` (`p module` prints it), the pass is `pass_`, `c` goes on\n")
        breakpoint()  # noqa: T100  (TILEC_BREAK_BEFORE asked for it)

    # -- running -------------------------------------------------------------------------------------------
    def run(self, module: Operation, passes, final_verifier=None) -> Operation:
        """Run ``passes`` (Pass instances or registered names) in order over ``module``, in place.
        When verifying, ``final_verifier`` also checks the result of the last pass (the GPU passes' layout
        contracts, which hold only once all of them have run)."""
        passes = [get_pass(p) if isinstance(p, str) else p for p in passes]
        if self.options is not None:
            for p in passes:
                p.options = self.options
        self._planned = dict(self._runs)
        for p in passes:
            self._planned[p.name] = self._planned.get(p.name, 0) + 1
        text_needed = self.dumping or self.print_before or self.print_after
        before = self._last_text
        if text_needed and before is None:
            before = print_ir(module)
        if self.dumping and not self._ran:
            self._emit("input", before, "IR before the pipeline")
        if self.verify and not self._ran:
            self._verify(module, "input")
        if PASS_OBSERVERS and not self._ran:
            for observe in PASS_OBSERVERS:
                observe(self, "input", module)
        self._ran = True
        for p in passes:
            run = self._runs[p.name] = self._runs.get(p.name, 0) + 1
            if _selected(self.print_before, p.name, run):
                before = print_ir(module)
                sys.stderr.write(f"// -----// IR before {p.name} on {self.kernel_name} //----- //\n{before}\n")
            if _selected(self.break_before, p.name, run):
                self._break(module, p, run)
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
            for observe in PASS_OBSERVERS:
                observe(self, p.name, module)
            printed = _selected(self.print_after, p.name, run)
            if self.dumping or printed:
                after = print_ir(module)
                same = " (no change)" if after == before else ""
                header = f"IR after {p.name} ({dt * 1e3:.1f} ms){same}"
                if self.dumping:
                    self._emit(p.name, after, header)
                if printed and not self.dump:
                    sys.stderr.write(f"// -----// {header} on {self.kernel_name} //----- //\n{after}\n")
                before = after
            else:
                before = None
            if self.verify:
                self._verify(module, p.name)
        if self.verify and final_verifier is not None and passes:
            self._verify(module, passes[-1].name, final_verifier)
        self._last_text = before
        return module

    def report(self, stages=()) -> str:
        """A one-line-per-pass timing table; ``stages``: (name, seconds) of the backend stages that followed."""
        rows = [(n, t) for n, t in self.timings] + [(f"stage {n}", t) for n, t in stages]
        total = sum(t for _, t in rows)
        lines = [f"{n:<26} {t * 1e3:9.2f} ms" for n, t in rows]
        return "\n".join(lines + [f"{'total':<26} {total * 1e3:9.2f} ms"])
