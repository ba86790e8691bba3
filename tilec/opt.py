"""``python -m tilec.opt``: the ``tilec-opt`` tool (``tools/opt.py``) under a short module name."""
from __future__ import annotations

import sys

from .tools.opt import main

if __name__ == "__main__":
    sys.exit(main())
