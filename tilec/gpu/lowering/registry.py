"""Which function lowers which op on GPUs: one :class:`tilec.ir.dispatch.OpTable`, filled by
``@lowers(OpClass, ...)`` in the lowering modules."""
from __future__ import annotations

from ...ir.dispatch import OpTable

LOWERINGS = OpTable("GPU lowering")
lowers = LOWERINGS.register
lowering_for = LOWERINGS.lookup
