"""The CPU launcher's helper threads: persistent daemon threads, each woken for one job of a launch by a bare lock
(cheaper than futures), that a launch never waits for unless they have begun its work.

Why: waking a sleeping thread costs from a few microseconds (an idle core) to a scheduler's time slice (a core
that another process holds). A launch whose own thread has run every program before a helper got going would
otherwise wait out that helper's wake-up to learn it has nothing to do. So each job is *claimed*: a helper runs
its job only if it takes the job's ``claim`` lock first; the launching thread, done with its share, takes the
claims that are left, and waits only for helpers whose claim it could not take (they are running programs). A
helper that wakes after its claim was taken back goes back to sleep without touching the launch, and is left out
of launches until it has woken (its ``go`` lock still released).

Each step that hands locks over runs as one C call (``_drain``: a ``map`` of lock methods consumed in C), so a
KeyboardInterrupt comes before or after it, never halfway, and the launcher always knows which helpers it must
wait for."""
from __future__ import annotations

import collections
import itertools
import operator
import threading

_drain = collections.deque(maxlen=0).extend   # consumes an iterator in C: no signal is handled halfway
_RELEASE = type(threading.Lock()).release
_ACQUIRE = type(threading.Lock()).acquire
_LOCKED = type(threading.Lock()).locked


class Helper(threading.Thread):
    """A daemon thread that, each time its ``go`` lock is released, runs ``job`` if it can take ``claim``, then
    releases ``done``. At rest ``go``, ``claim`` and ``done`` are all held."""

    def __init__(self):
        super().__init__(daemon=True, name="tilec-cpu")
        self.go, self.claim, self.done = threading.Lock(), threading.Lock(), threading.Lock()
        self.go.acquire()
        self.claim.acquire()
        self.done.acquire()
        self.job = None
        self.error = None
        self.start()

    def run(self):
        go, claim, done = self.go, self.claim, self.done
        while True:
            go.acquire()
            if claim.acquire(False):  # else the launch took its job back: nothing to do, nothing to report
                try:
                    self.job()
                except BaseException as e:  # pragma: no cover - the worker is native code
                    self.error = e
                done.release()


_helpers: list = []
_helpers_lock = threading.Lock()


def idle_helpers(n: int, most: int) -> list:
    """Up to ``n`` helpers asleep and ready for a job (one still waking from a launch that finished without it
    is left out), starting new ones while the pool has fewer than ``most``."""
    with _helpers_lock:
        ready = list(itertools.compress(_helpers, map(_LOCKED, [h.go for h in _helpers])))[:n]
        while len(ready) < n and len(_helpers) < most:
            h = Helper()
            _helpers.append(h)
            ready.append(h)
        return ready


def post(helpers: list, started):
    """Hand each helper its job (``job`` set beforehand), then release ``started``: one C call."""
    _drain(map(_RELEASE, [h.claim for h in helpers] + [h.go for h in helpers] + [started]))


def take_back(helpers: list) -> list:
    """Take back the jobs no helper has begun (one C call); the ``done`` locks of those that have, to wait for."""
    return list(itertools.compress([h.done for h in helpers],
                                   map(operator.not_, map(_ACQUIRE, [h.claim for h in helpers],
                                                          itertools.repeat(False)))))


def wait_all(locks, on_interrupt):
    """Acquire each of ``locks`` (the running helpers' ``done``). A KeyboardInterrupt meanwhile calls
    ``on_interrupt()`` (which stops the helpers) and is raised once every one has finished, so none is left
    running a launch that has returned. The acquisitions run in one C call ending with a fresh lock's: after an
    interrupt, what is left of the iterator says which locks are still to take."""
    interrupt = None
    pending = list(locks)
    while pending:
        items = pending + [threading.Lock()]
        it = iter(items)
        try:
            _drain(map(_ACQUIRE, it))
            pending = []
        except KeyboardInterrupt as e:
            rest = list(it)
            pending = items[len(items) - len(rest) - 1:-1] if rest else []
            interrupt = interrupt or e
            on_interrupt()
    if interrupt is not None:
        raise interrupt
