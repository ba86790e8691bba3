"""The Redis backend of the remote kernel cache, through the ``redis`` client (``pip install "tilec[redis]"``).

Configured from the environment, as Triton's Redis cache is:
  ``TILEC_REDIS_URL``         ``redis://[[user]:password@]host:port/db`` (``rediss://`` for TLS); else
  ``TILEC_REDIS_HOST``, ``TILEC_REDIS_PORT`` (localhost, 6379);
  ``TILEC_REDIS_KEY_PREFIX``  prepended to every key (``tilec:``), so several caches can share one server;
  ``TILEC_REDIS_TTL_S``       seconds an entry lives after it is stored (unset: until the server evicts it; an
                              ``allkeys-lru`` maxmemory policy keeps the fleet's working set);
  ``TILEC_REMOTE_CACHE_TIMEOUT`` seconds to connect or wait for a reply (2).
A variant's entry is one string value (``SET``: atomic, the last publisher's whole bundle wins); the lease to build
it is a second key, ``<prefix><hash>.claim``, taken with ``SET NX PX`` and extended with ``PEXPIRE``. The client
retries nothing itself: a failure goes straight to the remote level, which falls back to the local cache.
"""
from __future__ import annotations

import os
import uuid

from .remote import ReadOnlyError, RemoteBackend


def _url() -> str:
    url = os.environ.get("TILEC_REDIS_URL")
    if url:
        return url
    host = os.environ.get("TILEC_REDIS_HOST") or "localhost"
    port = os.environ.get("TILEC_REDIS_PORT") or "6379"
    return f"redis://{host}:{port}/0"


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return scheme + sep + rest


class RedisBackend(RemoteBackend):
    def __init__(self, url: str | None = None, prefix: str | None = None, timeout_s: float | None = None,
                 ttl_s: float | None = None):
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise ImportError("the Redis kernel cache needs the redis client: pip install redis "
                              "(or tilec's extra, pip install \"tilec[redis]\")") from None
        self.url = url or _url()
        self.prefix = prefix if prefix is not None else os.environ.get("TILEC_REDIS_KEY_PREFIX", "tilec:")
        timeout = timeout_s if timeout_s is not None else float(os.environ.get("TILEC_REMOTE_CACHE_TIMEOUT") or 2)
        ttl = ttl_s if ttl_s is not None else os.environ.get("TILEC_REDIS_TTL_S")
        self.ttl_ms = int(float(ttl) * 1000) if ttl else None
        # RESP2: every server version speaks it (no HELLO handshake)
        self.client = redis.Redis.from_url(self.url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                           retry=Retry(NoBackoff(), 0), retry_on_timeout=False, protocol=2)
        e = redis.exceptions
        self._refusals = tuple(c for c in (getattr(e, "ReadOnlyError", None), getattr(e, "NoPermissionError", None),
                                           getattr(e, "OutOfMemoryError", None)) if c is not None)
        self._token = uuid.uuid4().hex.encode()  # this process's mark on the leases it takes

    def describe(self) -> str:
        return f"redis at {_redacted(self.url)}"

    def _write(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self._refusals as err:
            raise ReadOnlyError(str(err)) from None

    def get(self, key):
        return self.client.get(self.prefix + key)

    def put(self, key, value):
        self._write(self.client.set, self.prefix + key, value, px=self.ttl_ms)

    def delete(self, key):
        self._write(self.client.delete, self.prefix + key)

    def exists(self, key):
        return bool(self.client.exists(self.prefix + key))

    def claim(self, key, ttl_s):
        return bool(self._write(self.client.set, self.prefix + key + ".claim", self._token, nx=True,
                                px=max(1, int(ttl_s * 1000))))

    def refresh(self, key, ttl_s):
        self._write(self.client.pexpire, self.prefix + key + ".claim", max(1, int(ttl_s * 1000)))

    def release(self, key):
        self._write(self.client.delete, self.prefix + key + ".claim")

    def claimed(self, key):
        return bool(self.client.exists(self.prefix + key + ".claim"))
