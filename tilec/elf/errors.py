"""The error of the ELF toolkit: a BackendError, so a bad code object reaches users like any other backend
failure, naming the symbol, relocation or field at fault."""
from __future__ import annotations

from ..errors import BackendError


class ElfError(BackendError):
    """An ELF file tilec cannot read or link (malformed input, an undefined symbol, an unknown relocation)."""
