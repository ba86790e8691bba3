"""How each kernel parameter travels at launch, in one vocabulary for every backend: ``"ptr"`` for pointers, else
the scalar type's name (``"i1"``, ``"i8"`` .. ``"i64"``, ``"u8"`` .. ``"u64"``, ``"f16"``, ``"bf16"``, ``"f32"``,
``"f64"``). Backends write ``metadata["param_kinds"]`` with it at compile time and their launchers read it."""
from __future__ import annotations

from ..errors import BackendError

PARAM_KINDS_KEY = "param_kinds"


def param_kind(t) -> str:
    """The kind of a kernel parameter of tir type ``t`` (kernel parameters are pointers or scalars)."""
    if t.is_tile:
        raise BackendError(f"kernel parameters cannot be tiles ({t})")
    return "ptr" if t.is_ptr else t.element.name


def param_kinds(types) -> list:
    return [param_kind(t) for t in types]
