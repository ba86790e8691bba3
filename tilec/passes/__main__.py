"""``python -m tilec.passes [-p "inline,convert-to-gir{num-warps=8}"] [--verify-each] [--timings] [FILE|-]``: run
passes over textual tir or gir and print the result (the default tir pipeline when ``-p`` is not given). Options
in braces go to one pass; ``--num-warps``, ``--warp-size``, ``--arch`` and ``--num-stages`` to every pass whose
constructor names them. ``tilec-opt`` is the same driver with ``--target`` (see ``cli.py``)."""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
