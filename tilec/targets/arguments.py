"""What a host value passed to a kernel is, for every backend and for specialisation: whether it is a pointer-like
array and, if so, its data pointer, element type, device and writability.

Understood: numpy arrays, torch tensors (CPU or GPU; torch is never imported here, its tensors are recognised by
their type's module), objects with ``__cuda_array_interface__`` or ``__array_interface__``, DLPack producers
(``__dlpack__`` / ``__dlpack_device__``) and ``tilec.cuda`` arrays. Two ways to ask:

- :func:`inspect` gives the full answer (:class:`ArrayInfo`) — for specialisation, error messages and tests;
- :func:`pointer_getter` gives, once per Python type, a small function ``value -> (address, device, stream)``
  that launchers call per launch: ``device`` is -1 for host memory, the GPU's ordinal for device memory and None
  when unknown (raw int addresses, None); ``stream`` is None, an int, or ``callable(device) -> int`` (the
  producer's current stream, e.g. torch's).

Element types are named as in signatures (``"fp32"``, ``"i64"``, ``"bf16"``, ...); devices as backends name them
(``"cpu"``, ``"cuda"``, ``"hip"``, or the producer's own word for anything else).
"""
from __future__ import annotations

import ctypes
import sys
from typing import NamedTuple

import numpy as np

from ..errors import ArgumentError

# numpy dtype -> signature element type
NUMPY_TO_SIG = {
    np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64", np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32",
    np.dtype(np.float64): "fp64",
}
# str(torch dtype) -> signature element type
TORCH_TO_SIG = {
    "torch.bool": "i1", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
    "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32", "torch.uint64": "u64",
    "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float64": "fp64",
    "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5",
}
# DLPack device types
_DL_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 10: "hip", 13: "cuda"}  # kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, ..Managed


class ArrayInfo(NamedTuple):
    ptr: int            # address of the first element
    dtype: str          # signature element type
    device: str         # "cpu", "cuda", "hip", ...
    index: int | None   # the device's ordinal (None on the host or when the producer does not say)
    writable: bool


def numpy_element(dt: np.dtype) -> str:
    """The signature element type of a numpy dtype; TypeError when kernels cannot take it."""
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


def torch_element(dt) -> str:
    s = TORCH_TO_SIG.get(str(dt))
    if s is None:
        raise TypeError(f"torch tensors of dtype {dt} are not supported")
    return s


# -----------------------------------------------------------------------------------------------------------------
# what kind of producer a value comes from (decided once per Python type)
# -----------------------------------------------------------------------------------------------------------------
def is_torch_tensor(v) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "data_ptr") and hasattr(v, "is_cuda")


def _producer(v) -> str | None:
    if isinstance(v, np.ndarray):
        return "numpy"
    if hasattr(v, "__tilec_base__"):  # a view of another array with its own element type (triton.reinterpret)
        return "view"
    if isinstance(v, np.generic):  # numpy scalars speak __array_interface__ but are values, not arrays
        return None
    if is_torch_tensor(v):
        return "torch"
    if hasattr(v, "__cuda_array_interface__"):
        return "cai"
    if hasattr(v, "__array_interface__"):
        return "ai"
    if hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
        return "dlpack"
    return None


_PRODUCERS: dict = {}


def producer(v) -> str | None:
    """'numpy', 'torch', 'cai', 'ai', 'dlpack', 'view', or None for values that are not arrays (cached per
    type)."""
    t = type(v)
    p = _PRODUCERS.get(t, 0)
    if p == 0:
        p = _PRODUCERS[t] = _producer(v)
    return p


def _torch_device(t) -> str:
    kind = t.device.type
    if kind == "cuda":
        torch = sys.modules.get("torch")
        if getattr(getattr(torch, "version", None), "hip", None):
            return "hip"
    return kind


def _dlpack_device(v) -> tuple[str, int]:
    kind, index = v.__dlpack_device__()
    kind = int(kind)
    return _DL_DEVICES.get(kind, f"dlpack:{kind}"), int(index)


def device_of(v) -> str | None:
    """The device an array's memory lives on ("cpu", "cuda", ...), or None when ``v`` is not an array."""
    p = producer(v)
    if p is None:
        return None
    if p == "view":
        return device_of(v.__tilec_base__)
    if p == "numpy" or p == "ai":
        return "cpu"
    if p == "torch":
        return _torch_device(v)
    if p == "cai":
        return "cuda"
    try:
        return _dlpack_device(v)[0]
    except Exception:
        return None


def is_array(v) -> bool:
    """Whether ``v`` is a pointer-like array a kernel can take for a pointer parameter."""
    return producer(v) is not None


# -----------------------------------------------------------------------------------------------------------------
# DLPack: the pointer and element type behind a capsule
# -----------------------------------------------------------------------------------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _dltensor(v):
    """(DLTensor view, capsule): the capsule owns the view, keep it while reading."""
    cap = v.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return _DLTensor.from_address(get(cap, b"dltensor")), cap  # DLManagedTensor starts with its DLTensor


_DL_TYPES = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8", (1, 16): "u16",
             (1, 32): "u32", (1, 64): "u64", (2, 16): "fp16", (2, 32): "fp32", (2, 64): "fp64", (4, 16): "bf16",
             (6, 8): "i1"}  # (DLDataTypeCode, bits): kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool


def _dl_element(dt: _DLDataType) -> str:
    name = _DL_TYPES.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    if name is None:
        raise TypeError(f"DLPack arrays of type code {dt.code}, {dt.bits} bits, {dt.lanes} lanes are not supported")
    return name


# -----------------------------------------------------------------------------------------------------------------
# the full answer
# -----------------------------------------------------------------------------------------------------------------
def inspect(v) -> ArrayInfo | None:
    """Pointer, element type, device and writability of an array; None when ``v`` is not an array. Raises
    TypeError for arrays of element types kernels cannot take."""
    p = producer(v)
    if p is None:
        return None
    if p == "view":  # the viewed array's memory, the view's element type (set by whoever describes the view)
        return inspect(v.__tilec_base__)
    if p == "numpy":
        return ArrayInfo(v.ctypes.data, numpy_element(v.dtype), "cpu", None, bool(v.flags.writeable))
    if p == "torch":
        dev = v.device
        return ArrayInfo(v.data_ptr(), torch_element(v.dtype), _torch_device(v), dev.index, True)
    if p == "cai" or p == "ai":
        ai = v.__cuda_array_interface__ if p == "cai" else v.__array_interface__
        ptr, readonly = ai["data"]
        index = getattr(v, "device", None) if p == "cai" else None
        return ArrayInfo(int(ptr or 0), numpy_element(np.dtype(ai["typestr"])), "cuda" if p == "cai" else "cpu",
                         index if isinstance(index, int) else None, not readonly)
    device, index = _dlpack_device(v)
    t, _cap = _dltensor(v)
    return ArrayInfo((t.data or 0) + t.byte_offset, _dl_element(t.dtype), device,
                     None if device == "cpu" else index, True)


# -----------------------------------------------------------------------------------------------------------------
# the launch-time answer: (address, device, stream) through one function per Python type
# -----------------------------------------------------------------------------------------------------------------
_char_from_buffer, _addressof = ctypes.c_char.from_buffer, ctypes.addressof


class _ArrayHead(ctypes.Structure):
    """The head of numpy's array object (``PyArrayObject_fields``, part of numpy's stable C ABI): its data
    pointer and flags read in one ctypes access, several times cheaper than any Python-level attribute."""
    _fields_ = [("refcnt", ctypes.c_ssize_t), ("type", ctypes.c_void_p), ("data", ctypes.c_void_p),
                ("nd", ctypes.c_int), ("dims", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("base", ctypes.c_void_p), ("descr", ctypes.c_void_p), ("flags", ctypes.c_int)]


_NPY_WRITEABLE = 0x0400


def _head_reader():
    """``head(a)`` -> the _ArrayHead of exact ndarray ``a``, or None where this interpreter's object layout is not
    the one assumed (checked once against numpy's own answers; free-threaded builds differ)."""
    try:
        base = np.arange(8, dtype=np.float32)
        samples = [base, base[2:], base[::2], np.zeros(0, np.int8), base.reshape(2, 4).T]
        ro = base.copy()
        ro.flags.writeable = False
        samples.append(ro)
        for a in samples:
            h = _ArrayHead.from_address(id(a))
            if (h.data or 0) != a.__array_interface__["data"][0] or bool(h.flags & _NPY_WRITEABLE) != a.flags.writeable:
                return None
    except Exception:  # noqa: BLE001  (any surprise: use the Python-level way)
        return None
    return _ArrayHead.from_address


array_head = _head_reader()


def _word_reader():
    """``(words, data, flags)``: a read-only view of the process's memory as 8-byte words, and the word indices,
    relative to ``id(a) >> 3``, of an exact ndarray's data pointer and flags. Indexing it reads both fields with
    no object built per read (``array_head`` builds one), for the launch path's probe of every array argument.
    None where the layout is not the one assumed (64-bit little-endian, fields on word boundaries, checked against
    numpy's own answers as ``array_head`` is)."""
    if array_head is None or sys.byteorder != "little" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    data, flags = _ArrayHead.data.offset, _ArrayHead.flags.offset
    if data % 8 or flags % 8:
        return None
    try:
        words = memoryview((ctypes.c_char * (2**62)).from_address(0)).cast("B").cast("Q").toreadonly()
        base = np.arange(8, dtype=np.float32)
        ro = base.copy()
        ro.flags.writeable = False
        for a in (base, base[2:], base[::2], np.zeros(0, np.int8), base.reshape(2, 4).T, ro):
            i = id(a)
            if i % 8 or (words[(i >> 3) + data // 8] != (a.__array_interface__["data"][0] or 0)
                         or (words[(i >> 3) + flags // 8] & _NPY_WRITEABLE != 0) != a.flags.writeable):
                return None
    except Exception:  # noqa: BLE001  (any surprise: use array_head)
        return None
    return words, data // 8, flags // 8


array_words = _word_reader()


def _field_reader():
    """``(data, flags)``: two read-only word views of memory that start at the data pointer's and the flags' offsets
    in numpy's array head, so that ``data[id(a) >> 3]`` is exact ndarray ``a``'s data address and
    ``flags[id(a) >> 3]`` its flags: the launch binder's probe without an addition per field. None without
    ``array_words``."""
    if array_words is None:
        return None
    _, data, flags = array_words
    try:
        views = [memoryview((ctypes.c_char * (2**62)).from_address(8 * w)).cast("B").cast("Q").toreadonly()
                 for w in (data, flags)]
        words = array_words[0]
        for a in (np.arange(8, dtype=np.float32), np.zeros(0, np.int8)):
            i = id(a) >> 3
            if views[0][i] != words[i + data] or views[1][i] != words[i + flags]:
                return None
    except Exception:  # noqa: BLE001  (any surprise: the binder reads through array_words)
        return None
    return tuple(views)


array_fields = _field_reader()


def numpy_address(a) -> int:
    """The data address of a numpy array. A writable contiguous array is read through the buffer protocol,
    several times cheaper than ``a.ctypes.data`` or ``__array_interface__`` (both build objects on every call,
    which dominated a small launch); read-only, non-contiguous and empty arrays take the general way."""
    try:
        return _addressof(_char_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


def _numpy_getter(a):
    return numpy_address(a), -1, None


def _torch_getter():
    import torch  # a torch tensor exists, so torch is already imported
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    stream = raw if raw is not None else (lambda dev: torch.cuda.current_stream(dev).cuda_stream)

    def get(t):
        return t.data_ptr(), t.get_device(), stream
    return get


def _cai_getter(v):
    cai = v.__cuda_array_interface__
    dev = getattr(v, "device", None)
    st = cai.get("stream")
    return cai["data"][0], dev if isinstance(dev, int) else None, st if isinstance(st, int) and st > 2 else None


def _ai_getter(v):
    return v.__array_interface__["data"][0], -1, None


def _dlpack_getter(v):
    device, index = _dlpack_device(v)
    t, _cap = _dltensor(v)
    return (t.data or 0) + t.byte_offset, -1 if device == "cpu" else index, None


def _int_getter(v):
    return int(v), None, None


def _none_getter(v):
    return 0, None, None


def _ctypes_getter(v):
    if isinstance(v, ctypes.Array):
        return ctypes.addressof(v), -1, None
    return ctypes.cast(v, ctypes.c_void_p).value or 0, -1, None


GETTERS: dict = {type(None): _none_getter, int: _int_getter, np.ndarray: _numpy_getter}


def register_pointer_getter(t: type, getter):
    """A faster getter for arrays of type ``t`` (their producer's own attributes instead of an interface)."""
    GETTERS[t] = getter


def pointer_getter(v):
    """The ``value -> (address, device, stream)`` function for ``type(v)`` (made once per type, then cached in
    :data:`GETTERS`); ArgumentError (a LaunchError and ValueError) for values that cannot be pointer arguments."""
    t = type(v)
    g = GETTERS.get(t)
    if g is not None:
        return g
    p = producer(v)
    if p == "torch":
        g = _torch_getter()
    else:
        g = {"numpy": _numpy_getter, "cai": _cai_getter, "ai": _ai_getter, "dlpack": _dlpack_getter}.get(p)
    if g is None:
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            g = _int_getter
        elif isinstance(v, (ctypes.Array, ctypes._Pointer)):
            g = _ctypes_getter
        else:
            raise ArgumentError(f"cannot pass {t.__name__} as a pointer argument")
    GETTERS[t] = g
    return g


def address(v) -> int:
    """The address behind a pointer argument (an array's data pointer, a raw int, 0 for None)."""
    return pointer_getter(v)(v)[0]
