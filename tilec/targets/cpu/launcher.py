"""Runs a grid: packs the arguments into one struct per launch, then calls the JIT-compiled worker from the
calling thread plus persistent helper threads (``pool.py``: jobs posted natively, taken back when no helper began
them), each with its own scratch area. How many threads a launch uses follows from its work: the programs'
measured time times their number, against the measured cost of handing work to helpers (``_worth_helpers``,
``threads_for``). A grid too small to pay for one helper runs inline on the calling thread, with one
single-argument call; a bigger one wakes as many helpers as each get a share worth their hand-off. The launch
binder's cached launches that run on the calling thread skip ``Launcher.__call__``: they go through the native
launch function (``fastcall.py``: numpy arrays, ints and floats converted natively) or, for arguments of other
kinds, the entries generated for the kernel (``entry.py``).

Ctrl-C: the calling thread never runs programs for much more than :data:`SLICE_S` without coming back to Python
(``wrapper.py``: a worker given a slice returns when it has run out, timed by the CPU's own clock), so a SIGINT
raises KeyboardInterrupt between two slices, however wrong the estimate of the grid's length was; the launcher
then stops the helpers after the programs they are running (``wrapper.STOP``), waits for them, and lets the
KeyboardInterrupt go on. A grid whose inline run outlasts its slice goes on with helpers. A single program runs
to its end."""
from __future__ import annotations

import ctypes
import os
import struct
import threading
import time

import numpy as np

from ...errors import LaunchError
from ..params import PARAM_KINDS_KEY, bf16_bits
from . import fastcall, pool, runtime
from .entry import RETRY_EVERY, entries
from .jit import Engine
from .pointers import host_pointer
from .resources import scratch_per_program
from .wrapper import RUN, RUN_HEADER, STOP, TICKS, WORKER

_WORKER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32,
                             ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)

_RUN_T = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
# the same entry point without declared argument types: called with the argument block's ctypes buffer, which
# ctypes passes as its address with no per-call conversion (the cheapest ctypes call there is); a single program
# ignores the count it returns
_RUN_BLOCK_T = ctypes.CFUNCTYPE(None)
_RUN_COUNT_T = ctypes.CFUNCTYPE(ctypes.c_int64)
_TICKS_T = ctypes.CFUNCTYPE(ctypes.c_int64)

# What waking helper threads costs, measured: a parallel launch's time beyond its share of the work. Shared by all
# kernels (it is the machine's, and it rises when other processes hold the cores). Starts at a guess.
_handoff = {"s": 30e-6, "skipped": 0}
FIRST_INLINE_MAX = 4096   # programs a first launch runs on one thread to measure them
SLICE_S = 0.02            # about the longest the calling thread runs programs before it looks at signals again
_slice = {"ticks": None}  # SLICE_S in the clock ticks the workers read (``wrapper.ticks``), 0 without a clock


def slice_ticks(read) -> int:
    """SLICE_S in clock ticks, calibrated once per process against ``time.perf_counter`` over a millisecond
    (``read``: a kernel's ``tilec_ticks``)."""
    t = _slice["ticks"]
    if t is None:
        c0, t0 = read(), time.perf_counter()
        while time.perf_counter() - t0 < 1e-3:
            pass
        c1, t1 = read(), time.perf_counter()
        t = _slice["ticks"] = max(1, int((c1 - c0) / (t1 - t0) * SLICE_S)) if c1 > c0 else 0
    return t


def _observe_handoff(seconds: float):
    _handoff["s"] = 0.75 * _handoff["s"] + 0.25 * max(seconds, 1e-6)


def _worth_helpers(inline_s: float, n: int) -> bool:
    """Whether ``n`` threads beat one for a grid estimated at ``inline_s`` on one thread."""
    if inline_s * (1 - 1 / n) > _handoff["s"]:
        return True
    if inline_s > 2 * _handoff["s"] / 3:  # close: now and then measure the hand-off again
        _handoff["skipped"] += 1
        if _handoff["skipped"] >= RETRY_EVERY:
            _handoff["skipped"] = 0
            return True
    return False


def threads_for(work_s: float, total: int, most: int) -> int:
    """How many threads (at least two: ``_worth_helpers`` said helpers pay) run a grid of ``total`` programs
    estimated at ``work_s`` seconds on one thread: no more than give each a share of the work above the
    hand-off's cost, so a short grid wakes a helper or two, not the whole pool, and a long one uses every core."""
    return max(2, min(most, total, int(work_s / _handoff["s"])))


def report_faults():
    """A kernel that faults (an unmasked access far outside its arrays, without a debug build's checks) takes
    the process down; before it goes, Python's ``faulthandler`` prints every thread's Python traceback, the
    launch's included (its frames are named after the kernel: ``<tilec launch binder of k>``, ``... in k``).
    Turned on once, by the first CPU kernel loaded, unless the program set up faulthandler itself."""
    import faulthandler
    import sys
    if faulthandler.is_enabled():
        return
    for stream in (sys.stderr, sys.__stderr__):
        try:
            faulthandler.enable(stream, all_threads=True)
            return
        except (AttributeError, ValueError, OSError, RuntimeError):  # no file descriptor behind the stream
            continue


def num_threads() -> int:
    """TILEC_NUM_THREADS, else the cores this process may run on (a container's or ``taskset``'s, not the
    machine's: threads beyond them only take turns)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, int(os.environ.get("TILEC_NUM_THREADS", 0)) or cores)


_busy = threading.Lock()   # one multi-threaded launch at a time; a concurrent one runs inline




# How each parameter kind (``tilec.targets.params``) is packed into its 8-byte slot of the argument block.
_FMT = {"ptr": "Q", "i1": "q", "i8": "q", "i16": "q", "i32": "q", "i64": "q", "u8": "Q", "u16": "Q", "u32": "Q",
        "u64": "Q", "f32": "f4x", "f64": "d", "f16": "e6x", "bf16": "H6x"}


_FMT_CHECK = {k: "<" + f[0] for k, f in _FMT.items()}


_bf16_bits = bf16_bits


def _converter(kind):
    if kind == "ptr":
        return host_pointer
    if kind[0] in "iu":
        return int
    if kind == "bf16":
        return _bf16_bits
    return float


class Launcher:
    """``launcher(grid, args)``: ``grid`` a 3-tuple of positive ints (callers normalise it: ``targets/grid.py``),
    ``args`` the runtime arguments in parameter order.

    The argument block is one buffer: the ``RUN_HEADER`` slots that ``tilec_run`` reads (grid, scratch, slice), then one
    8-byte slot per parameter. Single programs and grids measured too small to pay for waking helpers make one
    single-argument ctypes call, ``tilec_run(block)``, on the calling thread; bigger grids hand the parameter
    slots to the worker on every thread."""

    # the launch binder may pass a numpy array's address (an int) in its place: read once per launch
    takes_addresses = True

    def __init__(self, llir: str, metadata: dict, name: str = "kernel"):
        self.name = name
        report_faults()
        self.engine = Engine(llir, WORKER, RUN, TICKS)
        self.fn = _WORKER_T(self.engine.address)
        self.run = _RUN_T(self.engine.addresses[0])
        self.run_block = _RUN_BLOCK_T(self.engine.addresses[0])
        self.run_count = _RUN_COUNT_T(self.engine.addresses[0])
        self.slice = slice_ticks(_TICKS_T(self.engine.addresses[1]))
        self.asserts = "tilec_cpu_assert" in llir   # only then can a launch record assertion failures
        self.failures = runtime.failures
        kinds = metadata[PARAM_KINDS_KEY]
        try:
            fmt = "".join(_FMT[k] for k in kinds)
        except KeyError as e:
            raise LaunchError(f"unsupported kernel parameter kind {e}") from None
        self.fmt = "<qqqQq" + fmt
        self.convert = [_converter(k) for k in kinds]
        # struct packs ints (and anything with __index__) and floats itself: only pointers and bf16 need a hand
        self.pointers = [i for i, k in enumerate(kinds) if k == "ptr"]
        self.bf16 = [i for i, k in enumerate(kinds) if k == "bf16"]
        self.nargs, self.kinds = len(kinds), list(kinds)
        self.buf = ctypes.create_string_buffer(max(8, struct.calcsize(self.fmt)))
        self.argp = ctypes.addressof(self.buf)
        self.params_p = self.argp + 8 * RUN_HEADER
        self.scratch_size = scratch_per_program(metadata.get("scratch_size", 0))
        self.nthreads = num_threads()
        self.scratch = np.zeros(self.scratch_size * self.nthreads + 64, dtype=np.uint8)
        base = self.scratch.ctypes.data
        base = (base + 63) // 64 * 64
        self.scratch_ptrs = [base + i * self.scratch_size for i in range(self.nthreads)]
        self.scratch0 = self.scratch_ptrs[0]
        self.lock = threading.Lock()
        self.counter = ctypes.c_int64(0)   # a multi-threaded launch's next program (held by ``lock``)
        self.counter_p = ctypes.addressof(self.counter)
        self.spin = pool.spin_ticks(self.slice, SLICE_S)
        # what concurrent launches of this kernel would share besides the argument block: scratch buffers, the
        # assertion-failure list. Without them a single program's launch needs no lock (``entry.py``).
        self.shares_state = self.asserts or int(metadata.get("scratch_size", 0)) > 0
        self.per_program = None   # measured seconds of one program on one thread (running average)
        self.cold = False         # per_program is the first launch's alone
        self.launches = 0         # every RETRY_EVERY-th runs on one thread, to measure per_program again
        self.desc = None   # the native launch function's descriptor (``fastcall.py``), once made
        self._fast = None
        # grids of at most this many programs run inline without asking (``entry.py``): those the estimate keeps
        # on one thread by a clear margin (``_worth_helpers`` neither takes them nor is close to it); set by each
        # launch through ``__call__``, which the entries (and the native launch function) still make every
        # RETRY_EVERY-th time
        self.inline_max = self._inline_max()
        self._entries = {}

    @property
    def inline_max(self) -> int:
        return self._inline

    @inline_max.setter
    def inline_max(self, value: int):
        self._inline = value
        if self.desc is not None:  # the native launch function reads it too
            self.desc[fastcall.INLINE_MAX] = value

    def native(self, count: int):
        """(keyer, launch function) for the launch binder (``fastcall.py``), for values laid out as ``count``
        runtime arguments; None where the native functions are missing, the layout is not the kernel's, a
        parameter's kind is not one they convert (f16, bf16) or the kernel asserts (a debug build, whose launches
        gather failures under the lock). A kernel with scratch buffers gets a scratch area of its own for them,
        claimed by each native launch: one that finds it held goes the Python way, under the lock."""
        if count != self.nargs or self.asserts:
            return None
        codes = [fastcall.KINDS.get(k) for k in self.kinds]
        made = fastcall.native() if None not in codes else None
        if made is None:
            return None
        with self.lock:  # (one descriptor a launcher: the one ``inline_max`` keeps current)
            if self._fast is None:
                self._fast = made.launch(self._descriptor(codes))
        return made.key, self._fast

    def _descriptor(self, codes):
        """The native launch function's words (``fastcall.py``): a kernel with scratch buffers gets an area of
        its own, which its native launches claim one at a time."""
        F = fastcall
        d = (ctypes.c_int64 * (F.WORDS + self.nargs))()
        d[F.RUN], d[F.COUNT], d[F.SCRATCH], d[F.SLICE] = self.engine.addresses[0], self.nargs, self.scratch0, self.slice
        d[F.INLINE_MAX], d[F.RETRY], d[F.SHARED] = self._inline, RETRY_EVERY, int(self.shares_state)
        if self.shares_state:
            self.native_scratch = np.zeros(self.scratch_size + 64, dtype=np.uint8)
            d[F.SCRATCH] = (self.native_scratch.ctypes.data + 63) // 64 * 64
        d[F.WORDS:] = codes
        self.desc = d
        return d

    def _inline_max(self) -> int:
        if self.nthreads == 1:
            return 2**62
        per = self.per_program
        if per is None or per <= 0:
            return 1  # a single program always runs inline; bigger grids are measured first
        return max(1, int(2 * _handoff["s"] / 3 / per))

    def __call__(self, grid, args):
        g0, g1, g2 = grid
        total = g0 * g1 * g2
        if total <= 0:
            return
        if len(args) != self.nargs:
            raise LaunchError(f"kernel takes {self.nargs} runtime arguments, got {len(args)}")
        values = args
        for i in self.pointers:
            if type(values[i]) is not int:  # the launch binder passes numpy arrays' addresses already
                if values is args:
                    values = list(args)
                values[i] = host_pointer(values[i])
        if self.bf16:
            values = list(values)
            for i in self.bf16:
                values[i] = _bf16_bits(values[i])
        failures = runtime.failures
        if total == 1:  # one program: nothing to measure or share, one call on this thread
            with self.lock:
                if self.asserts:
                    before = len(failures)
                try:
                    struct.pack_into(self.fmt, self.buf, 0, 1, 1, 1, self.scratch0, 0, *values)
                except struct.error:
                    self._pack(1, 1, 1, self.scratch0, values)
                self.run_block(self.buf)
                if self.asserts and len(failures) > before:
                    self._raise_failures(failures, before)
            return
        with self.lock:
            before = len(failures)
            per = self.per_program
            if per is None:  # measure one thread first (a big grid only once it has been seen on many)
                inline = total <= FIRST_INLINE_MAX
            elif self.cold:  # the first measure ran cold (fresh output pages, caches): measure again
                inline = per * total < 5 * SLICE_S
            else:
                self.launches += 1
                # now and then measure one thread again: grids short enough that one thread is no great loss
                inline = (self.launches % RETRY_EVERY == 0 and per * total < 5 * SLICE_S
                          or not _worth_helpers(per * total, min(self.nthreads, total)))
            if self.nthreads == 1 or inline:
                self._pack(g0, g1, g2, self.scratch_ptrs[0], values, self.slice)
                t0 = time.perf_counter()
                ran = self.run(self.argp)
                if ran < total:  # its slice ran out: a long grid after all, the rest interruptibly on every thread
                    self._parallel(g0, g1, g2, total, self.nthreads, ran)
                elif per is None or self.cold or total * per >= 2e-6:  # nothing to learn from a trivial grid
                    dt = (time.perf_counter() - t0) / total
                    self.per_program = dt if per is None or self.cold else 0.5 * (per + dt)
                    self.cold = per is None
            else:
                self._pack(g0, g1, g2, 0, values)
                # a big grid seen first runs on every thread, which measures it
                threads = self.nthreads if per is None else threads_for(per * total, total, self.nthreads)
                self._parallel(g0, g1, g2, total, threads)
            self.inline_max = self._inline_max()
            if len(failures) > before:
                self._raise_failures(failures, before)

    @staticmethod
    def _raise_failures(failures, before):
        msgs = failures[before:]
        del failures[before:]
        raise AssertionError("device-side assertion failed: " + "; ".join(msgs[:5]))

    def resume(self, grid, args, start):
        """The rest of a grid whose first ``start`` programs an inline launch entry ran before its slice ran out
        (a grid longer than estimated): on every thread, interruptibly."""
        g0, g1, g2 = grid
        args = list(args)
        for i in self.pointers:
            if type(args[i]) is not int:  # the native launch function's caller passes the arrays themselves
                args[i] = host_pointer(args[i])
        with self.lock:
            before = len(self.failures)
            self._pack(g0, g1, g2, 0, args)
            self._parallel(g0, g1, g2, g0 * g1 * g2, self.nthreads, start)
            self.inline_max = self._inline_max()
            if len(self.failures) > before:
                self._raise_failures(self.failures, before)

    def _pack(self, g0, g1, g2, scratch, values, slice_=0):
        try:
            struct.pack_into(self.fmt, self.buf, 0, g0, g1, g2, scratch, slice_, *values)
        except struct.error:
            self.refuse(values)
            raise

    def refuse(self, values):
        """After ``struct`` refused ``values``: a LaunchError naming the argument that does not fit its kind."""
        for i, (c, v) in enumerate(zip(self.convert, values)):
            try:
                struct.pack(_FMT_CHECK[self.kinds[i]], c(v))
            except (struct.error, TypeError, ValueError, OverflowError) as e:
                raise LaunchError(f"argument {i} ({v!r}) does not fit a {self.kinds[i]} parameter: {e}") from None

    def entries(self, count, keep=None, loose=None, addressed=()):
        """The launch entries for values laid out as ``count`` arguments (``targets/entry.py``), made once per
        layout."""
        layout = (count, keep, loose, addressed)
        made = self._entries.get(layout)
        if made is None:
            made = self._entries[layout] = entries(self, *layout)
        return made

    def _parallel(self, g0, g1, g2, total, threads, start=0):
        """Programs ``start`` on of the grid on up to ``threads`` threads (the caller's included), claiming them
        from one counter; the caller's share in slices of about SLICE_S, so that Ctrl-C stops the launch (see the
        module's note). Helpers that have not begun when the caller runs out of programs are not waited for
        (``pool.py``)."""
        counter, cp = self.counter, self.counter_p   # (launches of one kernel take turns: ``self.lock``)
        counter.value = start
        n = max(1, min(threads, total - start))
        busy = n > 1 and _busy.acquire(blocking=False)
        helpers, ran = (), 0
        try:
            helpers = pool.helpers(n - 1, self.spin) if busy else ()
            n = 1 + len(helpers)
            chunk = 4 * n   # guided: each claim takes (programs left) / (4 n)
            before = [h.gen for h in helpers]
            t0 = time.perf_counter()
            try:
                for i, h in enumerate(helpers, 1):
                    h.post((self.engine.address, self.params_p, cp, total, g0, g1, g2, self.scratch_ptrs[i], chunk,
                            0))
                self._own_share(counter, total, g0, g1, g2, chunk)
            except BaseException:
                self._stop()
                raise
            finally:  # every job posted (up to an interrupt) is taken back or finished before the launch returns
                interrupt = None
                for h, b in zip(helpers, before):
                    if h.gen != b:
                        try:
                            ran += h.resolve(h.gen, self._stop)
                        except KeyboardInterrupt as e:  # (its helper has finished all the same)
                            interrupt = interrupt or e
                if interrupt is not None:
                    raise interrupt
        finally:
            if busy:
                _busy.release()
        if n == 1:
            return
        elapsed = time.perf_counter() - t0
        # the threads that ran programs, each busy for at most the whole launch: a bound on one program's time
        bound = elapsed * (1 + ran) / (total - start)
        if self.per_program is None or self.cold or bound < self.per_program:
            self.per_program, self.cold = bound, False
        if start == 0:
            _observe_handoff(elapsed - self.per_program * total / n)

    def _stop(self):
        self.counter.value = STOP  # the helpers stop after the program each is running

    def _own_share(self, counter, total, g0, g1, g2, chunk):
        """The calling thread's programs, in slices of about SLICE_S; Python looks at signals between two."""
        fn, argp, cp, scratch, slice_ = self.fn, self.params_p, self.counter_p, self.scratch_ptrs[0], self.slice
        while counter.value < total:
            fn(argp, cp, total, g0, g1, g2, scratch, chunk, slice_)
