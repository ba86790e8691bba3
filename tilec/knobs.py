"""Environment switches that Triton also has, read under either name: ``TILEC_X`` or Triton's ``TRITON_X``, so a
Triton user's habits (``TRITON_INTERPRET=1 python script.py``) work as they do with Triton, with or without
``python -m tilec run``. tilec's name wins when both are set (an empty value counts as unset)."""
from __future__ import annotations

import os

#: tilec's name -> Triton's name, for the switches both have
TRITON_NAMES = {
    "TILEC_INTERPRET": "TRITON_INTERPRET",
    "TILEC_DEBUG": "TRITON_DEBUG",
    "TILEC_ALLOW_NON_CONSTEXPR_GLOBALS": "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS",
}


def value(name: str, default=None):
    """``name``'s value, else its Triton alias's, else ``default``."""
    v = os.environ.get(name) or None
    if v is None and name in TRITON_NAMES:
        v = os.environ.get(TRITON_NAMES[name]) or None
    return default if v is None else v


def flag(name: str) -> bool:
    """A switch is on when set to anything but empty, ``0``, ``false`` or ``off``."""
    return str(value(name, "")).strip().lower() not in ("", "0", "false", "off", "no")
