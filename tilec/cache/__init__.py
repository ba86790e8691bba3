"""The kernel cache, in two levels: the local directory first, then a remote store shared by many processes and
machines (when one is configured), then compile and publish.

``load(key)`` looks in the local directory (``local.py``), then in the remote (``remote.py``), where it may wait
for another process that is building the same variant; a remote hit is copied into the local directory.
``store(...)`` writes the local entry and publishes it to the remote. Both levels check every artifact's SHA-256
and never serve a bad entry (it is discarded and rebuilt); a level that cannot be used warns once and the compile
goes on without it, so the cache never fails a launch.

Settings, all from the environment:
  ``TILEC_CACHE_DIR``             the local directory (default ``~/.cache/tilec``);
  ``TILEC_ALWAYS_COMPILE=1``      bypass both levels;
  ``TILEC_REMOTE_CACHE_BACKEND``  ``redis`` (``redis_backend.py`` has its settings) or ``module:Class``, any
                                  ``remote.RemoteBackend``; unset: the local level only;
  ``TILEC_REMOTE_CACHE_RETRY_S``, ``TILEC_REMOTE_CACHE_WAIT_S``  see ``remote.py``.
``set_remote_backend(obj)`` installs a backend object instead (one built with credentials in code, say).
"""
from __future__ import annotations

import collections
import importlib
import os
import threading

from . import local
from .local import cache_dir
from .notice import CacheWarning, reset as reset_warnings, warn_once
from .remote import ReadOnlyError, RemoteBackend, RemoteLevel

__all__ = ["cache_dir", "enabled", "contains", "load", "store", "abandon", "remote", "set_remote_backend", "stats",
           "reset_stats", "CacheWarning", "RemoteBackend", "ReadOnlyError", "reset_warnings"]

BACKENDS = {"redis": "tilec.cache.redis_backend:RedisBackend"}
_ENV = ("TILEC_REMOTE_CACHE_BACKEND", "TILEC_REDIS_URL", "TILEC_REDIS_HOST", "TILEC_REDIS_PORT",
        "TILEC_REDIS_KEY_PREFIX", "TILEC_REDIS_TTL_S", "TILEC_REMOTE_CACHE_TIMEOUT", "TILEC_REMOTE_CACHE_RETRY_S",
        "TILEC_REMOTE_CACHE_WAIT_S")

# what this process's cache did: local_hits, remote_hits, misses, remote_published, remote_corrupt, remote_errors,
# remote_refused, remote_waits, remote_wait_s
_stats: collections.Counter = collections.Counter()
_lock = threading.Lock()
_remote = {"config": None, "level": None, "explicit": False}


def enabled() -> bool:
    return os.environ.get("TILEC_ALWAYS_COMPILE", "0") not in ("1", "true", "True")


def stats() -> dict:
    """Counts of what the cache did in this process (hits per level, misses, publishes, waits, failures)."""
    return dict(_stats)


def reset_stats() -> None:
    _stats.clear()


def _make_backend(spec: str):
    path = BACKENDS.get(spec.strip().lower(), spec.strip())
    module, _, cls = path.partition(":")
    if not module or not cls:
        raise ValueError(f"TILEC_REMOTE_CACHE_BACKEND={spec!r}: expected 'redis' or 'module:Class'")
    return getattr(importlib.import_module(module), cls)()


def remote() -> RemoteLevel | None:
    """The remote level configured now (rebuilt when its environment changes), or None."""
    if _remote["explicit"]:
        return _remote["level"]
    config = tuple(os.environ.get(k) for k in _ENV)
    if config == _remote["config"]:
        return _remote["level"]
    with _lock:
        if config != _remote["config"]:
            level = None
            spec = config[0]
            if spec:
                try:
                    level = RemoteLevel(_make_backend(spec), _stats)
                except Exception as e:  # noqa: BLE001  (a remote that cannot be set up: local only, said once)
                    warn_once(("remote-setup", spec), f"tilec: the remote kernel cache {spec!r} cannot be used "
                              f"({type(e).__name__}: {e}); using the local cache only")
            _remote["level"], _remote["config"] = level, config
    return _remote["level"]


def set_remote_backend(backend) -> None:
    """Use ``backend`` (a ``RemoteBackend``-like object) as the remote level; None: back to the environment's."""
    with _lock:
        if backend is None:
            _remote.update(config=None, level=None, explicit=False)
        else:
            _remote.update(config=None, level=RemoteLevel(backend, _stats), explicit=True)


def _after_fork_in_child():
    """A forked child builds its own remote level (connections, leases and the heartbeat thread are the parent's)."""
    global _lock
    _lock = threading.Lock()
    level = _remote["level"]
    if _remote["explicit"] and level is not None:
        _remote["level"] = RemoteLevel(level.backend, _stats)
    else:
        _remote.update(config=None, level=None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def contains(key: str) -> bool:
    """Whether an entry for ``key`` is stored locally or remotely (not checked: ``load`` still verifies it)."""
    if not enabled():
        return False
    if local.contains(key):
        return True
    r = remote()
    return r is not None and r.contains(key)


def load(key: str):
    """(asm, metadata) for ``key``, or None: the caller compiles it and calls ``store`` (or ``abandon``). With a
    remote, None means this process now holds the lease to build it, or could not get one in time."""
    hit = local.load(key)
    if hit is not None:
        _stats["local_hits"] += 1
        return hit
    r = remote()
    if r is not None:
        hit = r.load(key) or r.acquire(key)
        if hit is not None:
            _stats["remote_hits"] += 1
            asm, meta = hit
            local.store(key, meta.get("name", "kernel"), asm, meta)
            return hit
    _stats["misses"] += 1
    return None


def store(key: str, name: str, asm: dict, metadata: dict) -> str | None:
    """Keep a compiled entry: written atomically to the local directory (its path returned; None when that is not
    writable) and published to the remote."""
    d = local.store(key, name, asm, metadata)
    r = remote()
    if r is not None:
        r.publish(key, name, asm, metadata)
    return d


def abandon(key: str) -> None:
    """A build that ``load`` left to this process will not be stored (it failed, or it is not cacheable): others
    waiting for it stop waiting."""
    r = remote()
    if r is not None:
        r.release(key)
