"""Runs a grid: packs the arguments into one struct per launch, then calls the JIT-compiled worker from the
calling thread plus persistent helper threads (ctypes releases the GIL for the call), each with its own scratch
area. Helpers are started and joined with bare locks (cheaper than futures). A grid whose measured work is too
small to pay for waking helpers runs inline on the calling thread."""
from __future__ import annotations

import ctypes
import os
import struct
import threading
import time

import numpy as np

from ...errors import LaunchError
from ..arguments import GETTERS, device_of, pointer_getter
from ..params import PARAM_KINDS_KEY
from . import runtime
from .jit import Engine
from .wrapper import WORKER

_WORKER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32,
                             ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
INLINE_BELOW_S = 60e-6   # estimated grid time under which helpers are not woken


def num_threads() -> int:
    return max(1, int(os.environ.get("TILEC_NUM_THREADS", 0)) or (os.cpu_count() or 1))


class _Helper(threading.Thread):
    """A daemon thread that runs one job each time its ``go`` lock is released, then releases ``done``."""

    def __init__(self):
        super().__init__(daemon=True, name="tilec-cpu")
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job = None
        self.error = None
        self.start()

    def run(self):
        while True:
            self.go.acquire()
            try:
                self.job()
            except BaseException as e:  # pragma: no cover - the worker is native code
                self.error = e
            self.done.release()


_helpers: list = []
_helpers_lock = threading.Lock()
_busy = threading.Lock()   # one multi-threaded launch at a time; a concurrent one runs inline


def _get_helpers(n):
    with _helpers_lock:
        while len(_helpers) < n:
            _helpers.append(_Helper())
        return _helpers[:n]


def host_pointer(v) -> int:
    """The address behind a pointer argument (host arrays of any kind, raw ints, None); LaunchError for arrays
    in device memory."""
    g = GETTERS.get(type(v)) or pointer_getter(v)
    address, device, _ = g(v)
    if device is not None and device >= 0:
        raise LaunchError(f"a {device_of(v)} array was passed to a CPU kernel; copy it to host memory first")
    return address



# How each parameter kind (``tilec.targets.params``) is packed into its 8-byte slot of the argument block.
_FMT = {"ptr": "Q", "i1": "q", "i8": "q", "i16": "q", "i32": "q", "i64": "q", "u8": "Q", "u16": "Q", "u32": "Q",
        "u64": "Q", "f32": "f4x", "f64": "d", "f16": "e6x", "bf16": "H6x"}


def _bf16_bits(v):
    bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _converter(kind):
    if kind == "ptr":
        return host_pointer
    if kind[0] in "iu":
        return int
    if kind == "bf16":
        return _bf16_bits
    return float


class Launcher:
    def __init__(self, llir: str, metadata: dict):
        self.engine = Engine(llir, WORKER)
        self.fn = _WORKER_T(self.engine.address)
        kinds = metadata[PARAM_KINDS_KEY]
        try:
            self.fmt = "<" + "".join(_FMT[k] for k in kinds)
        except KeyError as e:
            raise LaunchError(f"unsupported kernel parameter kind {e}") from None
        self.convert = [_converter(k) for k in kinds]
        self.buf = ctypes.create_string_buffer(max(8, struct.calcsize(self.fmt)))
        self.scratch_size = (int(metadata.get("scratch_size", 0)) + 127) // 128 * 128 + 128
        self.nthreads = num_threads()
        self.scratch = np.zeros(self.scratch_size * self.nthreads + 64, dtype=np.uint8)
        base = self.scratch.ctypes.data
        base = (base + 63) // 64 * 64
        self.scratch_ptrs = [base + i * self.scratch_size for i in range(self.nthreads)]
        self.lock = threading.Lock()
        self.per_program = None   # measured seconds of one program on one thread (running average)

    def __call__(self, grid, args):
        g = tuple(int(x) for x in grid) + (1,) * (3 - len(grid))
        total = g[0] * g[1] * g[2]
        if total <= 0:
            return
        if len(args) != len(self.convert):
            raise LaunchError(f"kernel takes {len(self.convert)} runtime arguments, got {len(args)}")
        with self.lock:
            struct.pack_into(self.fmt, self.buf, 0, *[c(a) for c, a in zip(self.convert, args)])
            counter = ctypes.c_int64(0)
            argp, cp = ctypes.addressof(self.buf), ctypes.addressof(counter)
            n = min(self.nthreads, total)
            if self.per_program is not None and self.per_program * total < INLINE_BELOW_S:
                n = 1
            if n > 1 and not _busy.acquire(blocking=False):
                n = 1
            chunk = 4 * n   # guided: each claim takes (programs left) / (4 n)
            before = len(runtime.failures)
            t0 = time.perf_counter()
            if n == 1:
                self.fn(argp, cp, total, g[0], g[1], g[2], self.scratch_ptrs[0], chunk)
            else:
                helpers = _get_helpers(n - 1)
                try:
                    for i, h in enumerate(helpers, 1):
                        h.job = (lambda i=i: self.fn(argp, cp, total, g[0], g[1], g[2], self.scratch_ptrs[i], chunk))
                        h.go.release()
                    self.fn(argp, cp, total, g[0], g[1], g[2], self.scratch_ptrs[0], chunk)
                finally:
                    for h in helpers:
                        h.done.acquire()
                    _busy.release()
                errors = [h.error for h in helpers if h.error is not None]
                for h in helpers:
                    h.error = None
                if errors:
                    raise LaunchError(f"a CPU worker thread failed: {errors[0]!r}") from errors[0]
            dt = (time.perf_counter() - t0) * n / total
            self.per_program = dt if self.per_program is None else 0.5 * (self.per_program + dt)
            if len(runtime.failures) > before:
                msgs = runtime.failures[before:]
                del runtime.failures[before:]
                raise AssertionError("device-side assertion failed: " + "; ".join(msgs[:5]))
