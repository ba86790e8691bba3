"""Run a Python script and keep every kernel it compiles.

The script runs as ``python -m tilec run`` runs it (as ``__main__``, with ``import triton`` resolving to tilec), so
what gets compiled is exactly what its own launches and warmups ask for: every specialisation, autotuning
config and backend it reaches, with the options it passed. Compiles are seen through
``pipeline.COMPILE_OBSERVERS``, cache hits included, so a warm kernel cache hides nothing.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass

from .. import compat, pipeline
from ..__main__ import run_reporting


@dataclass
class Compiled:
    """One compile the script caused: what was compiled (``src``), for what (``target``), with which launch
    ``options``, and the result."""
    src: object
    target: object
    options: dict
    kernel: object

    @property
    def name(self) -> str:
        return self.kernel.name


@contextmanager
def observing():
    """A list that fills with a ``Compiled`` per distinct compiled kernel (by hash) while the block runs."""
    seen: list[Compiled] = []
    hashes: set[str] = set()

    def observe(src, target, options, kernel):
        key = kernel.metadata.get("hash") or id(kernel)
        if key not in hashes:
            hashes.add(key)
            seen.append(Compiled(src, target, dict(options), kernel))

    pipeline.COMPILE_OBSERVERS.append(observe)
    try:
        yield seen
    finally:
        pipeline.COMPILE_OBSERVERS.remove(observe)


def run_script(path: str, args=()) -> int:
    """Run ``path`` as ``__main__`` with ``args``; its exit status (1 after an uncaught exception, whose
    traceback is printed from the script's own frames). The interpreter state it changes (``sys.argv``,
    ``sys.path``, the Triton compatibility layer) is put back afterwards."""
    argv, path_before, had_compat = list(sys.argv), list(sys.path), compat.installed()
    try:
        return run_reporting(target=path, args=list(args))
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        sys.stderr.write(f"{e.code}\n")
        return 1
    finally:
        sys.argv[:] = argv
        sys.path[:] = path_before
        if not had_compat:
            compat.uninstall()


def collect(path: str, args=()) -> tuple[list[Compiled], int]:
    """Run the script; the kernels it compiled, in order, and its exit status."""
    with observing() as seen:
        status = run_script(path, args)
    return seen, status
