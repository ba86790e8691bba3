"""The cache's one warning per problem: a cache that cannot be used never fails a compile or a launch, it says so
once (per place and kind of problem) and the kernel is compiled or kept in memory instead."""
from __future__ import annotations

import warnings


class CacheWarning(UserWarning):
    """A cache level could not be used (not writable, full, unreachable, read-only); compiling goes on without it."""


_warned: set = set()


def warn_once(tag: tuple, message: str, stacklevel: int = 4) -> bool:
    """Warn with ``message`` the first time ``tag`` is seen in this process; True when it warned."""
    if tag in _warned:
        return False
    _warned.add(tag)
    warnings.warn(message, CacheWarning, stacklevel=stacklevel)
    return True


def reset():
    """Forget which warnings were given (each problem warns once again)."""
    _warned.clear()
