"""Kernel launch: a launcher built once per compiled kernel from its parameter types.

The launcher owns a ctypes buffer per parameter and a ``void*[]`` pointing at them; a launch only writes the new
values into those buffers (one pointer read per tensor argument) and calls ``cuLaunchKernel`` with the array's
address, so per-launch Python work is a short loop. Modules and functions are loaded lazily per device.

Pointer arguments may be torch CUDA tensors (launches then go to torch's current stream), anything with
``__cuda_array_interface__`` (its ``stream`` is honoured), ``tilec.cuda`` arrays, DLPack CUDA tensors, raw ints
(device addresses) or None (null).
"""
from __future__ import annotations

import ctypes

from ...errors import LaunchError
from . import driver as drv

_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
           "u64": ctypes.c_uint64, "f32": ctypes.c_float, "f64": ctypes.c_double, "ptr": ctypes.c_uint64,
           "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16}
_MAX_GRID = (2 ** 31 - 1, 65535, 65535)


# ---------------------------------------------------------------------------------------------------------------
# argument inspection
# ---------------------------------------------------------------------------------------------------------------
def _is_torch_tensor(v) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "data_ptr") and hasattr(v, "is_cuda")


def is_cuda_value(v) -> bool:
    if _is_torch_tensor(v):
        return bool(v.is_cuda)
    if hasattr(v, "__cuda_array_interface__"):
        return True
    dev = getattr(v, "__dlpack_device__", None)
    if dev is not None:
        try:
            return dev()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
        except Exception:
            return False
    return False


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _dlpack_pointer(v):
    cap = v.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = get(cap, b"dltensor")
    t = _DLTensor.from_address(p)  # DLManagedTensor starts with its DLTensor
    if t.device.device_type not in (2, 13):
        raise LaunchError("a DLPack argument does not live on a CUDA device")
    return (t.data or 0) + t.byte_offset, t.device.device_id, cap


def pointer_of(v):
    """(device address, device index or None, stream or None) of a pointer argument."""
    if v is None:
        return 0, None, None
    if isinstance(v, int):
        return v, None, None
    if _is_torch_tensor(v):
        if not v.is_cuda:
            raise LaunchError("a torch tensor on the CPU was passed to a CUDA kernel; move it with .cuda()")
        return v.data_ptr(), v.device.index, "torch"
    cai = getattr(v, "__cuda_array_interface__", None)
    if cai is not None:
        return cai["data"][0], getattr(v, "device", None) if isinstance(getattr(v, "device", None), int) else None, \
            cai.get("stream")
    if hasattr(v, "__dlpack__"):
        ptr, dev, _cap = _dlpack_pointer(v)
        return ptr, dev, None
    if hasattr(v, "__array_interface__"):
        raise LaunchError("a host (numpy) array was passed to a CUDA kernel; copy it to the device first "
                          "(tilec.cuda.from_numpy or torch)")
    raise LaunchError(f"cannot pass {type(v).__name__} as a pointer to a CUDA kernel")


def _torch_stream(device):
    import torch
    return torch.cuda.current_stream(device).cuda_stream


# ---------------------------------------------------------------------------------------------------------------
# launcher
# ---------------------------------------------------------------------------------------------------------------
class Launcher:
    def __init__(self, image, name: str, params, num_warps: int, shared: int, metadata: dict):
        self.image, self.name, self.params = image, name, list(params)
        self.block = 32 * num_warps
        self.shared = shared
        self.metadata = metadata
        self.functions: dict = {}
        try:
            self.cells = [_CTYPES[p]() for p in self.params]
        except KeyError as e:
            raise LaunchError(f"unsupported kernel parameter type {e}") from None
        self.argv = (ctypes.c_void_p * max(1, len(self.cells)))(*[ctypes.addressof(c) for c in self.cells])
        self.argv_addr = ctypes.addressof(self.argv)
        self.ptr_slots = [i for i, p in enumerate(self.params) if p == "ptr"]

    def function(self, device: int):
        fn = self.functions.get(device)
        if fn is None:
            drv.context(device)
            mod = drv.load_module(self.image, self.name)
            fn = drv.get_function(mod, self.name)
            if self.shared > 48 * 1024:
                drv.set_dynamic_shared(fn, self.shared, device)
            self.metadata.setdefault("driver", drv.function_attributes(fn))
            self.functions[device] = (mod, fn)
            return fn
        return fn[1]

    def __call__(self, grid, args):
        if len(args) != len(self.cells):
            raise LaunchError(f"kernel '{self.name}' takes {len(self.cells)} runtime arguments, got {len(args)}")
        gx, gy, gz = (tuple(int(g) for g in grid) + (1, 1, 1))[:3]
        if gx * gy * gz == 0:
            return
        for g, lim in zip((gx, gy, gz), _MAX_GRID):
            if g < 0 or g > lim:
                raise LaunchError(f"grid {tuple(grid)} is out of range (max {_MAX_GRID})")
        device, stream = None, None
        cells, params = self.cells, self.params
        for i, v in enumerate(args):
            if params[i] == "ptr":
                ptr, dev, st = pointer_of(v)
                cells[i].value = ptr
                if dev is not None and device is None:
                    device = dev
                if st is not None and stream is None:
                    stream = st
            else:
                try:
                    cells[i].value = v
                except TypeError:
                    raise LaunchError(f"argument {i} of '{self.name}' must be a {params[i]} scalar, "
                                      f"got {type(v).__name__}") from None
        device = device or 0
        if stream == "torch":
            stream = _torch_stream(device)
        fn = self.function(device)
        d = drv.driver()
        err = d.cuLaunchKernel(fn, gx, gy, gz, self.block, 1, 1, self.shared, stream or 0, self.argv_addr, 0)[0]
        if int(err) != 0:
            raise LaunchError(f"launching '{self.name}' on grid {(gx, gy, gz)} failed: {drv.error_text(err)}")


def make_launcher(asm: dict, metadata: dict) -> Launcher:
    image = asm.get("ptx")
    if image is None:
        raise LaunchError("no PTX to load")
    return Launcher(image, metadata["name"], metadata.get("cuda_params", ()), metadata.get("num_warps", 4),
                    metadata.get("shared", 0), metadata)
