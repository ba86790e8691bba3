"""The CPU launcher's helper threads: persistent daemon threads that take jobs from their slot (``spin.py``),
and that a launch never waits for unless they have begun its work.

Why: waking a sleeping thread costs from a few microseconds (an idle core) to a scheduler's time slice (a core
that another process holds), and a Python thread then needs the GIL. So a helper that finishes a job spins in
native code for :data:`SPIN_S`, watching its slot, before it sleeps on its ``go`` lock: a loop of launches
finds it awake. And each job is claimed once, by the helper or by the launching thread: a launch whose own
thread has run every program takes back the jobs no helper has begun, rather than wait out a slow wake-up to
learn there was nothing left to do; a helper whose job was taken back leaves it alone.

The posting thread writes the job's words, publishes the generation (a release store), and releases ``go``
where the helper may be asleep on it. Publishing and taking back are single native calls, so a KeyboardInterrupt
comes between them; a launch waiting for a running helper spins briefly, then sleeps between looks (on a machine
with more threads than cores the helper needs that core), and an interrupt meanwhile stops the helpers (the
launch's counter set to ``STOP``) and is raised once they have finished: no helper runs a launch that has
returned."""
from __future__ import annotations

import ctypes
import os
import threading
import time

from .spin import SLOTS, native

SPIN_S = 100e-6   # how long a helper stays awake after a job, watching for the next
WAIT_SLEEP_S = 20e-6   # between two short spins of a launch waiting for a helper (which may be waiting for a core)
_spin_ticks = {"n": None}


def spin_ticks(slice_ticks: int, slice_s: float) -> int:
    """SPIN_S in the clock's ticks (``slice_ticks`` for ``slice_s`` seconds; 0: no clock, counted in spins)."""
    if _spin_ticks["n"] is None:
        _spin_ticks["n"] = int(slice_ticks * SPIN_S / slice_s) if slice_ticks else 20000
    return _spin_ticks["n"]


class Helper(threading.Thread):
    """A daemon thread running its slot's jobs; ``gen``: the generation posted to it last."""

    def __init__(self, ticks: int):
        super().__init__(daemon=True, name="tilec-cpu")
        _natives()   # made before the thread needs them
        self.slot = (ctypes.c_int64 * SLOTS)()
        self.addr = ctypes.addressof(self.slot)
        self.go = threading.Lock()
        self.go.acquire()
        self.gen = 0
        self.ticks = ticks
        self.start()

    def run(self):
        spin_run, addr, go, ticks = native().spin_run, self.addr, self.go, self.ticks
        last = 0
        while True:
            last = spin_run(addr, last, ticks)   # jobs, as they come, until none has come for a while
            go.acquire()                          # then sleep until a launch releases ``go``

    def post(self, words):
        """Post a job (``words``: the worker's address and its nine arguments); returns its generation."""
        self.slot[3:13] = words
        self.gen += 1
        _N.publish(self.addr, self.gen)
        if self.go.locked():  # asleep, or about to be: wake it (if it spins, it comes back to this once more)
            self.go.release()
        return self.gen

    def resolve(self, gen: int, stop) -> bool:
        """Once the launch needs no more help: take the job back (False), or wait until the helper has finished
        it (True). A KeyboardInterrupt meanwhile calls ``stop()`` (the helper stops after its current program)
        and is raised once the helper has finished."""
        if _N.take_back(self.addr, gen):
            return False
        interrupt = None
        while not _N.wait_done(self.addr, gen, self.ticks >> 3):  # spins an eighth of SPIN_S, then sleeps
            try:
                time.sleep(WAIT_SLEEP_S)
            except KeyboardInterrupt as e:
                interrupt = interrupt or e
                stop()
        if interrupt is not None:
            raise interrupt
        return True


class _Natives:
    """The native entry points the posting thread calls, declared to keep the GIL (each is short, and a helper
    that has claimed a job runs it without the GIL)."""

    def __init__(self):
        n = native()
        i64, p = ctypes.c_int64, ctypes.c_void_p
        self.publish = ctypes.PYFUNCTYPE(None, p, i64)(ctypes.cast(n.publish, p).value)
        self.take_back = ctypes.PYFUNCTYPE(i64, p, i64)(ctypes.cast(n.take_back, p).value)
        self.wait_done = ctypes.PYFUNCTYPE(i64, p, i64, i64)(ctypes.cast(n.wait_done, p).value)


_N = None


def _natives() -> _Natives:
    global _N
    if _N is None:
        _N = _Natives()
    return _N


_helpers: list = []
_helpers_lock = threading.Lock()


def _forget_helpers():
    """In a forked child: its helpers' threads stayed in the parent (posting to them would only have every job
    taken back); the child starts its own when it needs them."""
    global _helpers_lock
    _helpers.clear()
    _helpers_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def helpers(n: int, ticks: int) -> list:
    """``n`` helpers (started the first time they are asked for)."""
    with _helpers_lock:
        while len(_helpers) < n:
            _helpers.append(Helper(ticks))
        return _helpers[:n]
