"""The remote level: a store that many processes and machines share (Redis, or any backend of this interface).

A backend keeps opaque values by key; this level puts one ``entry.pack`` bundle per kernel variant in it, checks
each value it reads (``entry.unpack``: checksums, the key it was stored under) and never serves a bad one: a
truncated, edited or misfiled value is deleted and the kernel rebuilt and published again. Every store is one
``put`` of a whole bundle, so concurrent publishers of one key each write a complete entry and readers see one of
them. The remote is only ever a speed-up: an unreachable remote warns once and is left alone for
``TILEC_REMOTE_CACHE_RETRY_S`` seconds (30) before it is tried again; one that refuses writes (a read-only replica,
no permission, out of memory) warns once and is still read, publishing being retried after the same interval.

Builds are coordinated where the backend can: a process that misses claims the key (a lease of a few seconds,
kept alive by a heartbeat while it compiles) and others wait for its entry instead of compiling the same kernel,
so a fleet starting at once compiles each variant once. A claimer that dies lets its lease lapse and a waiter
builds; no waiter waits longer than ``TILEC_REMOTE_CACHE_WAIT_S`` (300; 0: no claims, every process compiles).
"""
from __future__ import annotations

import os
import threading
import time

from . import entry
from .notice import warn_once


class ReadOnlyError(Exception):
    """Raised by a backend's ``put``/``delete``/``claim`` when the store refuses writes (read-only, no permission,
    full); reads go on."""


class RemoteBackend:
    """The interface of a remote kernel store. ``get`` and ``put`` are all a backend must provide; the rest have
    defaults for a store that cannot delete or coordinate. Any exception but ``ReadOnlyError`` means the store is
    unreachable. A backend named by ``TILEC_REMOTE_CACHE_BACKEND=module:Class`` is built as ``Class()`` and reads
    its own settings from the environment."""

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or None."""
        raise NotImplementedError

    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` atomically (a reader sees the old value or the whole new one)."""
        raise NotImplementedError

    def delete(self, key: str) -> None:
        """Remove ``key`` (a value that failed its checks)."""

    def exists(self, key: str) -> bool:
        return self.get(key) is not None

    def claim(self, key: str, ttl_s: float) -> bool:
        """Take the lease to build ``key`` for ``ttl_s`` seconds unless another holds it; True when taken (a
        store that cannot coordinate answers True: every process builds)."""
        return True

    def refresh(self, key: str, ttl_s: float) -> None:
        """Extend a lease this process holds."""

    def release(self, key: str) -> None:
        """Give a lease up (the build failed or was not stored)."""

    def claimed(self, key: str) -> bool:
        """Whether some process holds the lease to build ``key``."""
        return False

    def describe(self) -> str:
        return type(self).__name__


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


class RemoteLevel:
    """One backend, used so that its failures never reach a compile: see the module's docstring."""

    LEASE_S = 5.0  # a lease lapses this long after its holder's last heartbeat

    def __init__(self, backend, stats):
        self.backend = backend
        self.where = backend.describe() if hasattr(backend, "describe") else type(backend).__name__
        self.stats = stats
        self.retry_s = _env_float("TILEC_REMOTE_CACHE_RETRY_S", 30.0)
        self.wait_s = _env_float("TILEC_REMOTE_CACHE_WAIT_S", 300.0)
        self._down_until = 0.0
        self._no_writes_until = 0.0
        self._lock = threading.Lock()
        self._held: set = set()
        self._beat = None

    # -- failures ---------------------------------------------------------------------------------------------
    def usable(self) -> bool:
        return time.monotonic() >= self._down_until

    def _unreachable(self, err: BaseException):
        self._down_until = time.monotonic() + self.retry_s
        self.stats["remote_errors"] += 1
        warn_once(("remote-down", self.where),
                  f"tilec: the remote kernel cache {self.where} cannot be reached ({type(err).__name__}: {err}); "
                  f"using the local cache only (tried again every {self.retry_s:g} s)")

    def _refused(self, err: BaseException):
        self._no_writes_until = time.monotonic() + self.retry_s
        self.stats["remote_refused"] += 1
        warn_once(("remote-readonly", self.where),
                  f"tilec: the remote kernel cache {self.where} refuses writes ({err}); kernels are read from it "
                  "but compiled ones are kept in the local cache only")

    def _call(self, fn, *args, default=None, write=False):
        if not self.usable() or (write and time.monotonic() < self._no_writes_until):
            return default
        try:
            return fn(*args)
        except ReadOnlyError as e:
            self._refused(e)
        except Exception as e:  # noqa: BLE001  (any failure of the store: never a failed compile)
            self._unreachable(e)
        return default

    # -- entries ----------------------------------------------------------------------------------------------
    def contains(self, key: str) -> bool:
        return bool(self._call(self.backend.exists, key, default=False))

    def load(self, key: str):
        """(asm, metadata) for ``key`` from the remote, or None; a bad value is deleted, never served."""
        value = self._call(self.backend.get, key)
        if value is None:
            return None
        try:
            return entry.unpack(key, value)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            self.stats["remote_corrupt"] += 1
            self._call(getattr(self.backend, "delete", lambda k: None), key, write=True)
            return None

    def publish(self, key: str, name: str, asm: dict, metadata: dict) -> bool:
        """Store the entry for ``key`` (and give up this process's lease on it); True when stored."""
        try:
            value = entry.pack(key, name, asm, metadata)
            ok = self._call(self.backend.put, key, value, default=False, write=True) is not False
            if ok:
                self.stats["remote_published"] += 1
            return ok
        finally:
            self.release(key)

    # -- coordinated builds -----------------------------------------------------------------------------------
    def acquire(self, key: str):
        """After a miss: the entry another process is building (waited for), or None once this process holds the
        lease to build it itself (or the remote cannot coordinate, is down, or the wait ran out)."""
        if self.wait_s <= 0:
            return None
        claim = getattr(self.backend, "claim", None)
        claimed = getattr(self.backend, "claimed", None)
        if claim is None or claimed is None:
            return None
        deadline, pause, waited = time.monotonic() + self.wait_s, 0.005, False
        t0 = time.perf_counter()
        try:
            while True:
                if not self.usable() or time.monotonic() >= deadline or time.monotonic() < self._no_writes_until:
                    return None  # down, waited long enough, or no lease can be taken: build here
                if self._call(claim, key, self.LEASE_S, default=False, write=True):
                    self._hold(key)
                    hit = self.load(key)  # published (and its lease given up) since this process last looked
                    if hit is not None:
                        self.release(key)
                    return hit
                if self._call(claimed, key, default=False):
                    waited = True
                time.sleep(pause)  # the holder builds, or just finished: its entry is read next
                pause = min(pause * 1.5, 0.1)
                hit = self.load(key)
                if hit is not None:
                    return hit
        finally:
            if waited:
                self.stats["remote_waits"] += 1
                self.stats["remote_wait_s"] += time.perf_counter() - t0

    def release(self, key: str):
        with self._lock:
            if key not in self._held:
                return
            self._held.discard(key)
        self._call(getattr(self.backend, "release", lambda k: None), key, write=True)

    def _hold(self, key: str):
        with self._lock:
            self._held.add(key)
            if self._beat is None or not self._beat.is_alive():
                self._beat = threading.Thread(target=self._heartbeat, name="tilec-cache-lease", daemon=True)
                self._beat.start()

    def _heartbeat(self):
        refresh = getattr(self.backend, "refresh", None)
        while True:
            time.sleep(self.LEASE_S / 3)
            with self._lock:
                keys = list(self._held)
                if not keys:
                    self._beat = None
                    return
            for k in keys:
                if refresh is not None:
                    self._call(refresh, k, self.LEASE_S, write=True)
