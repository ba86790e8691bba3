"""The address behind a CPU kernel's pointer argument, as the launcher (``launcher.py``) and its generated launch
entries (``entry.py``) both read it."""
from __future__ import annotations

import numpy as np

from ...errors import LaunchError
from ..arguments import GETTERS, _addressof, _char_from_buffer, array_words, device_of, pointer_getter

_words, _DATA = array_words[:2] if array_words is not None else (None, 0)


def host_pointer(v) -> int:
    """The address behind a pointer argument (host arrays of any kind, raw ints, None); LaunchError for arrays
    in device memory."""
    if type(v) is int:  # an address (the launch binder resolves numpy arrays to theirs)
        return v
    if type(v) is np.ndarray:  # the common case, without the getter table
        if _words is not None:
            return _words[(id(v) >> 3) + _DATA]
        try:
            return _addressof(_char_from_buffer(v))
        except (TypeError, ValueError, BufferError):
            return v.__array_interface__["data"][0]
    g = GETTERS.get(type(v)) or pointer_getter(v)
    address, device, _ = g(v)
    if device is not None and device >= 0:
        raise LaunchError(f"a {device_of(v)} array was passed to a CPU kernel; copy it to host memory first")
    return address
