"""Kernel arguments: what kinds of host values a launch accepts and how each is described for specialisation.

Each accepted Python type gets one small *describer* ``arg -> (key, signature type, divisibility, equal_to_1)``,
found through a dict on ``type(arg)`` so the per-launch cost is one lookup and one call per argument. torch is
never imported here: torch tensors are recognised by their type's module name. What an array is (pointer,
element type, device) is answered by ``tilec.targets.arguments``, shared with the backends' launchers.
"""
from __future__ import annotations

import numpy as np

from ..language.core import signature_name
from ..language.reinterpret import TensorWrapper
from ..targets import arguments
from ..targets.arguments import NUMPY_TO_SIG, TORCH_TO_SIG  # noqa: F401  (the tables, re-exported)
from ..targets.arguments import _addressof, _char_from_buffer
from ..targets.arguments import numpy_element as _np_elem, torch_element as _torch_elem

TOO_WIDE = "integer argument"  # the start of the error for an int no 64-bit parameter type holds

_I32 = (-2**31, 2**31 - 1)
_I64 = (-2**63, 2**63 - 1)


def _describe_ndarray(a):
    elem = _np_elem(a.dtype)
    aligned = a.__array_interface__["data"][0] % 16 == 0
    return (a.dtype, aligned), "*" + elem, 16 if aligned else 1, False


def _key_ndarray(a):
    # writability is part of the key: a read-only array takes the slow path, which refuses it where the kernel
    # writes through that parameter. The buffer protocol answers for writable contiguous arrays cheaply
    # (``arguments.numpy_address``); the others are asked the long way.
    try:
        return (a.dtype, _addressof(_char_from_buffer(a)) & 15 == 0, True)
    except (TypeError, ValueError, BufferError):
        return (a.dtype, a.__array_interface__["data"][0] & 15 == 0, a.flags.writeable)


def _describe_torch(t):
    elem = _torch_elem(t.dtype)
    aligned = t.data_ptr() % 16 == 0
    return ("*" + elem, aligned, t.device.type), "*" + elem, 16 if aligned else 1, False


_TORCH_OK: set = set()  # torch dtypes already checked


def _key_torch(t):
    dt = t.dtype
    if dt not in _TORCH_OK:
        if str(dt) not in TORCH_TO_SIG:
            raise TypeError(f"torch tensors of dtype {dt} are not supported")
        _TORCH_OK.add(dt)
    return (dt, t.data_ptr() & 15 == 0, t.is_cuda)


def _describe_array(a):
    """Any other array (numpy subclasses such as memmaps, ``__cuda_array_interface__``, ``__array_interface__``,
    DLPack), through the shared argument inspection. Writability is part of the key, as for numpy arrays: a
    read-only one must take the path that refuses it where the kernel writes."""
    info = arguments.inspect(a)
    aligned = info.ptr % 16 == 0
    return ("*" + info.dtype, aligned, info.device, info.writable), "*" + info.dtype, 16 if aligned else 1, False


def _int_type(v: int) -> str:
    if _I32[0] <= v <= _I32[1]:
        return "i32"
    if _I64[0] <= v <= _I64[1]:
        return "i64"
    if 0 <= v < 2**64:
        return "u64"
    raise OverflowError(f"{TOO_WIDE} {v} does not fit in 64 bits")


def _describe_int(v):
    t = _int_type(v)
    if v == 1:
        return t + ":1", t, 1, True
    if v % 16 == 0:
        return t + ":16", t, 16, False
    return t, t, 1, False


def _key_int(v):
    if -2147483648 <= v <= 2147483647:
        return "i32:1" if v == 1 else ("i32:16" if v % 16 == 0 else "i32")
    return _describe_int(v)[0]


def _describe_int_nospec(v):
    t = _int_type(v)
    return t + ":nospec", t, 1, False


def _describe_np_int_nospec(v):
    return _describe_int_nospec(int(v))


def _describe_bool(v):
    return "i1", "i1", 1, False


def _describe_float(v):
    return "fp32", "fp32", 1, False


def _describe_np_int(v):
    return _describe_int(int(v))


DESCRIBERS = {
    np.ndarray: _describe_ndarray, int: _describe_int, bool: _describe_bool, float: _describe_float,
    np.bool_: _describe_bool, np.float16: _describe_float, np.float32: _describe_float,
    np.float64: _describe_float,
}
for _t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
    DESCRIBERS[_t] = _describe_np_int

DESCRIBERS[type(None)] = lambda v: ("none", "constexpr", 1, False)  # None specialises like a constexpr

# the launch path only needs keys: cheaper functions for the common kinds (same key as the describer's)
KEYERS = {np.ndarray: _key_ndarray, int: _key_int, float: lambda v: "fp32", bool: lambda v: "i1",
          type(None): lambda v: "none"}


def describer(arg, specialize: bool = True):
    """The describer for ``arg``'s type (cached per type); raises TypeError for unsupported kinds."""
    t = type(arg)
    if not specialize and (t is int or (t in DESCRIBERS and DESCRIBERS[t] is _describe_np_int)):
        return _describe_int_nospec if t is int else _describe_np_int_nospec
    d = DESCRIBERS.get(t)
    if d is not None:
        return d
    kind = arguments.producer(arg)
    if kind == "torch":
        d = _describe_torch
    elif kind is not None:
        d = _describe_array
    elif isinstance(arg, bool):
        d = _describe_bool
    elif isinstance(arg, int):
        d = _describe_int
    elif isinstance(arg, float):
        d = _describe_float
    else:
        raise TypeError(f"unsupported argument type {t.__module__}.{t.__qualname__}")
    DESCRIBERS[t] = d
    if t not in KEYERS:  # the launch path keys this type from now on
        KEYERS[t] = _key_torch if d is _describe_torch else (lambda v, d=d: d(v)[0])
    return d


def host_value(arg):
    """What the backend launcher receives for ``arg`` (numpy scalars become Python numbers)."""
    if isinstance(arg, (np.integer, np.bool_)):
        return int(arg) if not isinstance(arg, np.bool_) else bool(arg)
    if isinstance(arg, np.floating):
        return float(arg)
    return arg


def _describe_wrapper(w: TensorWrapper):
    """A ``triton.reinterpret`` view: the wrapped array's pointer with the view's element type."""
    elem = signature_name(w.dtype)
    aligned = w.data_ptr() % 16 == 0
    dev = getattr(w.device, "type", str(w.device))
    info = arguments.inspect(w)
    writable = info is None or info.writable
    return ("wrapper", "*" + elem, aligned, dev, writable), "*" + elem, 16 if aligned else 1, False


DESCRIBERS[TensorWrapper] = _describe_wrapper
KEYERS[TensorWrapper] = lambda w: _describe_wrapper(w)[0]
arguments.register_pointer_getter(TensorWrapper, lambda w: arguments.pointer_getter(w.base)(w.base))


def _probe_ndarray(a):
    h = _head(id(a))
    address = h.data or 0
    return (a.dtype, address & 15 == 0, bool(h.flags & _WRITEABLE)), address


def _probe_ndarray_slow(a):
    try:
        address = _addressof(_char_from_buffer(a))
        return (a.dtype, address & 15 == 0, True), address
    except (TypeError, ValueError, BufferError):
        return _key_ndarray(a), a


def _probe_ndarray_words(a):
    i = id(a) >> 3
    address = _words[i + _DATA]
    return (a.dtype, address & 15 == 0, _words[i + _FLAGS] & _WRITEABLE != 0), address


# type -> probe(v) = (launch-cache key, what a host launcher takes for it): for numpy arrays the address, read once
# per launch for both the key's alignment bit and the launch (reading it is most of a small launch's cost).
PROBES = {np.ndarray: _probe_ndarray_words if arguments.array_words is not None
          else _probe_ndarray if arguments.array_head is not None else _probe_ndarray_slow}
_head, _WRITEABLE = arguments.array_head, arguments._NPY_WRITEABLE
_words, _DATA, _FLAGS = arguments.array_words or (None, 0, 0)


def probe(v):
    """(``KEYERS[type(v)](v)``, the value a host launcher takes for ``v``); KeyError for types without a keyer."""
    p = PROBES.get(type(v))
    return p(v) if p is not None else (KEYERS[type(v)](v), v)
