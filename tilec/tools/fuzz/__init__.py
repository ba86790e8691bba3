"""Differential fuzzing of tilec's backends.

Random valid kernels (``generate``) are built as small programs (``program``), rendered to Python source, run on
several backends with the same inputs and compared with dtype-aware tolerances (``runner``); a disagreement is
shrunk to a minimal kernel (``shrink``). ``python -m tilec.tools.fuzz --seed 0 -n 100`` runs a campaign (``cli``).

The generator only writes kernels whose every lane has one defined result: masked loads give ``other=``, integer
divisors are made positive, shift amounts are masked below the width, float-to-int casts are clamped first, and
values whose last bits may legitimately differ between backends (transcendentals, float reductions, dots) never
feed comparisons or integer casts. A disagreement therefore points at a backend, not at undefined behaviour.
"""
from .program import Kernel
from .generate import generate
from .runner import Outcome, run_kernel
from .shrink import shrink

__all__ = ["Kernel", "generate", "Outcome", "run_kernel", "shrink"]
