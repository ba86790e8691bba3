"""The error corpus's table format and how one entry runs.

A :class:`Case` is a malformed kernel or launch: the kernel module's source, the launch (Python code run with the
module's ``k`` and a few arrays in scope), the exception class and a fragment of its message, and where the error
points: the source line marked ``# <-`` (and, optionally, the text the caret must sit under). Each case runs in the
interpreter and compiled for the CPU; both must refuse it alike.
"""
from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile
import textwrap
from dataclasses import dataclass

import numpy as np

HEADER = "import numpy as np\nimport tilec\nimport tilec.language as tl\n\n\n"
LAUNCH = "k[(1,)](x, y, 16, BLOCK=16)"
MODES = ("interp", "cpu")


@dataclass
class Case:
    name: str
    source: str            # the kernel module after HEADER; marks the offending line with "# <-"
    error: type
    message: str           # a fragment of str(error), compared case-insensitively
    launch: str = LAUNCH
    caret: str | None = None   # the text the caret points at on the marked line
    located: bool = True   # False: an error about the launch itself, with no kernel location
    xfail: str | None = None   # a known difference or gap, with its reason

    @property
    def text(self) -> str:
        return HEADER + textwrap.dedent(self.source).lstrip("\n")

    @property
    def line(self) -> int | None:
        """1-based line of the ``# <-`` marker in :attr:`text`."""
        hits = [i + 1 for i, t in enumerate(self.text.splitlines()) if "# <-" in t]
        assert len(hits) <= 1, f"{self.name}: several marked lines"
        return hits[0] if hits else None


_DIR = tempfile.mkdtemp(prefix="tilec-error-corpus-")
_COUNT = itertools.count()


def load(case: Case):
    """Write the case's module to a fresh file and import it (kernels need real source files)."""
    path = os.path.join(_DIR, f"case_{case.name}_{next(_COUNT)}.py")
    with open(path, "w") as f:
        f.write(case.text)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


def arrays():
    """The arrays a launch can use: ``x``, ``y`` (float32), ``xi``, ``yi`` (int32), ``xh`` (float16), 64 each."""
    return {"x": np.zeros(64, np.float32), "y": np.zeros(64, np.float32), "xi": np.zeros(64, np.int32),
            "yi": np.zeros(64, np.int32), "xh": np.zeros(64, np.float16), "np": np}


def run(case: Case, mode: str):
    """Run ``case`` in ``mode``: the exception it raised (None if it ran) and the kernel file's path."""
    mod, path = load(case)
    ns = dict(vars(mod))
    ns.update(arrays())
    for v in vars(mod).values():
        if hasattr(v, "interpret") and hasattr(v, "warmup"):
            v.interpret = mode == "interp"
    try:
        exec(compile(case.launch, f"<launch of {case.name}>", "exec"), ns)
    except Exception as e:  # noqa: BLE001 - the error is what the case is about
        return e, path
    return None, path
