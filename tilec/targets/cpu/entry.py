"""The CPU launcher's launch entries (``targets/entry.py``): Python functions generated once per compiled kernel and
argument layout, so that a cached launch that runs on the calling thread is a few lines with everything written
out — each pointer's address read in place, one ``struct`` pack of the whole argument block into a fresh bytes
object and one ctypes call of ``tilec_run`` with it.

The block is the call's own (bytes, never written by the kernel), so a kernel without scratch buffers and
without assertions shares nothing between concurrent launches and takes no lock; the others hold the launcher's
lock while the program runs, as the launcher does (its scratch area, the assertion-failure list).

Single programs always run so. A bigger grid does when the launcher's estimate keeps it on one thread by a clear
margin (``Launcher.inline_max``), except every RETRY_EVERY-th launch, which goes through the launcher itself: it
measures the programs again, updates the estimate and decides between one thread and helpers, as it does for
every grid the estimate leaves in doubt.
"""
from __future__ import annotations

import itertools
import struct

import numpy as np

from .. import entry as E
from ..arguments import array_fields
from ..params import bf16_bits as _bf16_bits
from .pointers import host_pointer

RETRY_EVERY = 64   # launches kept inline by the estimate before helpers are tried again (it may have fallen)


def _pointer(name: str) -> str:
    """Statements making ``name`` (an address, a numpy array or any other pointer argument) an address."""
    if array_fields is None:
        return f"    if type({name}) is not int:\n        {name} = _host_pointer({name})\n"
    return (f"    if type({name}) is not int:\n"
            f"        {name} = _D[id({name}) >> 3] if type({name}) is _nd else _host_pointer({name})\n")


def entries(launcher, count: int, keep=None, loose=None, addressed=()):
    """``(single, any)`` for a ``targets/cpu/launcher.Launcher``; see ``targets/entry.py``."""
    args = E.kept(count, keep)
    if len(args) != launcher.nargs:  # the launcher names the mismatch
        return E.entries(_Plain(launcher), count, keep, loose)
    known = {f"v{i}" for i in addressed}
    ns = {"_SINGLE": E.SINGLE, "_MISSING": E.MISSING, "_fallback": loose, "_launcher": launcher,
          "_pack": struct.Struct(launcher.fmt).pack, "_error": struct.error, "_run": launcher.run_block,
          "_count": launcher.run_count, "_slice": launcher.slice,
          "_scratch": launcher.scratch0, "_host_pointer": host_pointer, "_bf16": _bf16_bits, "_nd": np.ndarray,
          "_D": array_fields and array_fields[0], "_acquire": launcher.lock.acquire,
          "_release": launcher.lock.release, "_RETRY_EVERY": RETRY_EVERY, "_tick": itertools.count(1)}
    body = ""  # the arguments as the block takes them
    for name, kind in zip(args, launcher.kinds):
        if kind == "ptr" and name not in known:
            body += _pointer(name)
        elif kind == "bf16":
            body += f"    {name} = _bf16({name})\n"
    listed = ", ".join(args)
    tag = f"CPU launch entry of {launcher.name}"
    inline = _run_inline("1, 1, 1, _scratch, 0", listed, launcher, ns, "    ", "_run(block)")
    params, check = E.signature(count, loose, None)
    single = E.generate("single", params, check + body + inline, ns, tag)
    # a grid runs in one slice (``wrapper.py``); one that outlasts it was longer than estimated: the launcher
    # runs the rest
    inline = _run_inline("g0, g1, g2, _scratch, _slice", listed, launcher, ns, "        ", "ran = _count(block)")
    params, check = E.signature(count, loose, "g")
    every = E.generate("any", params, check + body + "    g0, g1, g2 = g\n"
                       "    if g0 * g1 * g2 <= _launcher.inline_max and next(_tick) % _RETRY_EVERY:\n"
                       + inline +
                       "        if ran < g0 * g1 * g2:\n"
                       f"            _launcher.resume(g, [{listed}], ran)\n"
                       "        return\n"
                       f"    return _launcher(g, [{listed}])\n", ns, tag)
    return single, every


def _run_inline(header: str, listed: str, launcher, ns: dict, indent: str, call: str) -> str:
    """Statements running the grid on this thread: one block packed (``header``: its first slots), one ``call``,
    under the lock only where the kernel shares state between launches."""
    code = (f"try:\n"
            f"    block = _pack({header}, {listed})\n"
            f"except _error:\n"
            f"    _launcher.refuse([{listed}])\n"
            f"    raise\n")
    if launcher.shares_state:
        if launcher.asserts:
            ns["_failures"] = launcher.failures
            code += (f"_acquire()\ntry:\n    before = len(_failures)\n    {call}\n"
                     "    if len(_failures) > before:\n        _launcher._raise_failures(_failures, before)\n"
                     "finally:\n    _release()\n")
        else:
            code += f"_acquire()\ntry:\n    {call}\nfinally:\n    _release()\n"
    else:
        code += f"{call}\n"
    return "".join(indent + line + "\n" for line in code.splitlines())


class _Plain:
    """The launcher seen without its own entries (the adapters' list call)."""

    def __init__(self, launcher):
        self.launcher = launcher

    def __call__(self, grid, args):
        return self.launcher(grid, args)
