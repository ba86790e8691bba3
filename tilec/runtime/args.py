"""Kernel arguments: what kinds of host values a launch accepts and how each is described for specialisation.

Each accepted Python type gets one small *describer* ``arg -> (key, signature type, divisibility, equal_to_1)``,
found through a dict on ``type(arg)`` so the per-launch cost is one lookup and one call per argument. torch is
never imported here: torch tensors are recognised by their type's module name.
"""
from __future__ import annotations

import numpy as np

# numpy dtype -> signature element type
NUMPY_TO_SIG = {
    np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64", np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32",
    np.dtype(np.float64): "fp64",
}
TORCH_TO_SIG = {
    "torch.bool": "i1", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
    "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32", "torch.uint64": "u64",
    "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float64": "fp64",
    "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
}
_I32 = (-2**31, 2**31 - 1)
_I64 = (-2**63, 2**63 - 1)


def _np_elem(dt: np.dtype) -> str:
    s = NUMPY_TO_SIG.get(dt)
    if s is None:
        name = dt.name
        if name == "bfloat16":  # ml_dtypes
            return "bf16"
        if name.startswith("float8_e4m3"):
            return "fp8e4nv"
        if name.startswith("float8_e5m2"):
            return "fp8e5"
        raise TypeError(f"arrays of dtype {dt} are not supported")
    return s


def _describe_ndarray(a):
    elem = _np_elem(a.dtype)
    aligned = a.__array_interface__["data"][0] % 16 == 0
    return (a.dtype, aligned), "*" + elem, 16 if aligned else 1, False


def _key_ndarray(a):
    return (a.dtype, a.__array_interface__["data"][0] & 15 == 0)


def _describe_torch(t):
    elem = TORCH_TO_SIG.get(str(t.dtype))
    if elem is None:
        raise TypeError(f"torch tensors of dtype {t.dtype} are not supported")
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


def _describe_array_interface(a):
    ai = a.__array_interface__
    elem = _np_elem(np.dtype(ai["typestr"]))
    aligned = ai["data"][0] % 16 == 0
    return ("*" + elem, aligned), "*" + elem, 16 if aligned else 1, False


def _describe_cuda_array_interface(a):
    cai = a.__cuda_array_interface__
    elem = _np_elem(np.dtype(cai["typestr"]))
    aligned = cai["data"][0] % 16 == 0
    return ("cuda", "*" + elem, aligned), "*" + elem, 16 if aligned else 1, False


def on_device(arg) -> bool:
    """Whether ``arg`` lives in GPU memory (a CUDA array or a torch tensor on a non-CPU device)."""
    if hasattr(arg, "__cuda_array_interface__"):
        return True
    dev = getattr(arg, "device", None)
    return type(arg).__module__.startswith("torch") and getattr(dev, "type", "cpu") != "cpu"


def _int_type(v: int) -> str:
    if _I32[0] <= v <= _I32[1]:
        return "i32"
    if _I64[0] <= v <= _I64[1]:
        return "i64"
    if 0 <= v < 2**64:
        return "u64"
    raise OverflowError(f"integer argument {v} does not fit in 64 bits")


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
    if t.__module__.startswith("torch") and hasattr(arg, "data_ptr"):
        d = _describe_torch
    elif hasattr(arg, "__cuda_array_interface__"):
        d = _describe_cuda_array_interface
    elif hasattr(arg, "__array_interface__"):
        d = _describe_array_interface
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
