"""Remote backends for the tests of the remote level's rules, named by ``module:Class`` as a user's would be:
an in-memory store shared by every instance in the process, one with only ``get``/``put``, and failing ones."""
from tilec.cache import ReadOnlyError, RemoteBackend

STORE: dict = {}
CLAIMS: set = set()
CALLS: list = []


class MemoryBackend(RemoteBackend):
    def get(self, key):
        CALLS.append(("get", key))
        return STORE.get(key)

    def put(self, key, value):
        CALLS.append(("put", key))
        STORE[key] = value

    def delete(self, key):
        STORE.pop(key, None)

    def exists(self, key):
        return key in STORE

    def claim(self, key, ttl_s):
        if key in CLAIMS:
            return False
        CLAIMS.add(key)
        return True

    def release(self, key):
        CLAIMS.discard(key)

    def claimed(self, key):
        return key in CLAIMS


class GetPutOnly:
    """The least a backend may be: no base class, no delete, no claims."""

    def get(self, key):
        return STORE.get(key)

    def put(self, key, value):
        STORE[key] = value


class Unreachable(RemoteBackend):
    def get(self, key):
        CALLS.append(("get", key))
        raise ConnectionRefusedError(111, "Connection refused")

    put = exists = claim = get


class ReadOnly(MemoryBackend):
    def put(self, key, value):
        CALLS.append(("put", key))
        raise ReadOnlyError("READONLY You can't write against a read only replica.")

    def claim(self, key, ttl_s):
        raise ReadOnlyError("READONLY You can't write against a read only replica.")


class BrokenConstructor(RemoteBackend):
    def __init__(self):
        raise RuntimeError("no credentials configured")


class LateEntry(MemoryBackend):
    """The entry appears (and its builder's lease is gone) just after this process's first look: the race
    between a miss and taking the lease."""
    first_look: set = set()

    def get(self, key):
        if key not in LateEntry.first_look:
            LateEntry.first_look.add(key)
            return None
        return super().get(key)
