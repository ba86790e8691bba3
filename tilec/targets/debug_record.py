"""Launching a debug build: the hidden parameters ``passes/debug_checks.py`` added, and its failure record read back
into tilec's error.

Every backend gets the same treatment: the kernel writes the first failing access or assert into a small record
(host memory on the CPU; on a GPU, device memory that its launcher provides: ``tilec/gpu/launcher.py``) instead of
faulting or trapping, so the process — and on a GPU the context — stays usable; after the grid finishes the
launcher raises :class:`BoundsError` or :class:`DeviceAssertionError` naming the kernel line (with the source line
and a caret), the program, and for accesses the offending offset and the array's size. Nothing here depends on
the backend: a launcher with a ``debug_record`` method provides the record, any other gets a host array.
"""
from __future__ import annotations

import threading

import numpy as np

from ..errors import BoundsError, DeviceAssertionError, located
from ..ir.ops import GatherOp
from .extent import UNKNOWN, byte_extent

RECORD_WORDS = 16  # as passes/debug_checks.py lays it out


def _host_record(array):
    """The record of a launcher without device memory of its own (the CPU's): a host array."""
    def record(args, words):
        array[:] = 0
        return array, lambda: array
    return record


class CheckedLauncher:
    """Wraps a backend launcher: appends the record and each pointer argument's extent, raises after the grid."""

    def __init__(self, inner, metadata):
        self.inner = inner
        info = metadata["debug_checks"]
        self.sites = info["sites"]
        self.pointer_params = info["pointer_params"]
        # a GPU launcher keeps the record in device memory on the launch's device and stream (``debug_record``)
        self.record = getattr(inner, "debug_record", None) or _host_record(np.zeros(RECORD_WORDS, np.int64))
        self.lock = threading.Lock()

    def __call__(self, grid, args):
        args = list(args)
        extents = {}
        hidden = []
        for i in self.pointer_params:
            lo, hi = extents[i] = byte_extent(args[i]) if i < len(args) else UNKNOWN
            hidden += [lo, hi]
        with self.lock:
            rec, read = self.record(args, RECORD_WORDS)
            self.inner(grid, args + [rec] + hidden)
            words = [int(x) for x in read()]
        if words[0]:
            raise self.error(words, extents)

    def error(self, words, extents):
        site = self.sites[words[0] - 1]
        pid = tuple(words[1:4])
        total = words[5]  # one per failing (program, access) pair
        also = f" (1 of {total} failures)" if total > 1 else ""
        where = (site["file"], site["line"], site["col"])
        if site["kind"] == "assert":
            text = site.get("message") or "assertion failed"
            prefix = f"{site['file']}:{site['line']}: "
            text = text[len(prefix):] if text.startswith(prefix) else text
            return DeviceAssertionError(located(*where, f"device_assert failed in program {pid}{also}: {text}"))
        if site["kind"] == "gather":
            detail = GatherOp.bad_index_text(words[4], site["size"], site["axis"])
            return BoundsError(located(*where, f"out-of-bounds gather in program {pid}{also}: {detail}"))
        eb = site["elem_bytes"]
        lo, hi = extents.get(site["param_index"], UNKNOWN)
        size = (hi - max(lo, 0)) // eb
        into = (f"'{site['param']}'" if len(site["candidates"]) == 1 else
                f"'{site['param']}' (it may point into any of {', '.join(repr(c) for c in site['candidates'])})")
        return BoundsError(located(*where, f"out-of-bounds {site['kind']} in program {pid}{also}: offset {words[4]} "
                                           f"of {into}, an array of {size} element{'s' if size != 1 else ''}"))
