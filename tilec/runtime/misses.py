"""The autotuner's dry run: while ``collecting()``, a launch that would compile records the miss instead.

Apart from ``compile_ahead.py`` because the launch path (``jit.py``) asks ``recording()`` on every compile, while
compiling the recorded misses ahead needs the pipeline, the backends and worker processes, which the launch path
never calls.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

_state = threading.local()  # .jobs: the list the current thread's misses are recorded in while collecting


def recording():
    """The list ``JITFunction._compile`` records a miss in instead of compiling, or None (compile as usual)."""
    return getattr(_state, "jobs", None)


@contextmanager
def collecting():
    """Within: this thread's compile misses are recorded as (fn, src, target, options), not compiled."""
    outer = recording()
    _state.jobs = []
    try:
        yield _state.jobs
    finally:
        _state.jobs = outer
