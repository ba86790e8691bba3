"""Which function lowers which op on the CPU: one :class:`tilec.ir.dispatch.OpTable`, filled by
``@lowers(OpClass, ...)`` next to each lowering (``fn(lowering, op)``)."""
from __future__ import annotations

from ...ir.dispatch import OpTable

LOWERINGS = OpTable("CPU lowering")
lowers = LOWERINGS.register
