"""``triton.profiler`` (Proton) under ``tilec.compat``: the names import, every call says tilec has no Proton.

Triton's tutorials import Proton at the top of the file but profile only in their benchmark section, after
checking that the device can run them at all. A missing module would stop such a script before it printed its own
"needs a Blackwell GPU" message or ran its correctness checks; a module whose functions raise lets those parts run
and still fails, with one clear line, at the first real use. Nothing here pretends to measure anything.
"""
from __future__ import annotations

from .errors import TilecError

#: Proton's public names (``triton.profiler`` and ``triton.profiler.viewer``) in Triton 3.6
PROFILER_NAMES = ("start", "activate", "deactivate", "finalize", "profile", "scope", "cpu_timed_scope",
                  "enter_scope", "exit_scope", "state", "enter_state", "exit_state", "metadata_state", "get_data",
                  "clear_data")
VIEWER_NAMES = ("parse", "print_tree", "get_raw_metrics", "read", "main")


class ProfilerUnavailable(TilecError):
    """A program called Triton's Proton profiler, which tilec does not provide."""


def _unavailable(module: str, name: str):
    def call(*args, **kwargs):
        raise ProfilerUnavailable(
            f"{module}.{name}: tilec does not provide Triton's Proton profiler (triton.profiler); time kernels "
            "with triton.testing.do_bench, or look at compiled kernels with python -m tilec.tools.report")
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Raises ProfilerUnavailable: tilec has no {module}.{name}."
    return call


def profiler_names() -> dict:
    return {n: _unavailable("triton.profiler", n) for n in PROFILER_NAMES} | {"DEFAULT_PROFILE_NAME": "proton"}


def viewer_names() -> dict:
    return {n: _unavailable("triton.profiler.viewer", n) for n in VIEWER_NAMES}
