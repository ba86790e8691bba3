"""What every op family shares: the ``pure`` trait set and the verifier's error helper."""
from __future__ import annotations

from ..core import IRError

PURE = frozenset({"pure"})


def _check(cond, op, msg):
    """Raise the verifier's error for ``op`` unless ``cond`` holds."""
    if not cond:
        raise IRError(f"'{op.name}' op {msg}")
