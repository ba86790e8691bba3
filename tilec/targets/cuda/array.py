"""A minimal CUDA device array so that tilec kernels run without torch: ``empty``, ``from_numpy``, ``.numpy()``.

It speaks ``__cuda_array_interface__`` (version 3), so torch/cupy/numba can view it and tilec launches accept
it like any other device array. Memory comes from ``cuMemAlloc`` in the device's primary context and is freed
when the array is collected. Contiguous (row-major) only. Its calls make its device current for their duration
and leave the caller's current device as it was.
"""
from __future__ import annotations

import numpy as np

from ...errors import LaunchError
from ..arguments import register_pointer_getter
from . import driver as drv


class DeviceArray:
    __slots__ = ("shape", "dtype", "ptr", "nbytes", "device", "_owner")

    def __init__(self, shape, dtype, ptr: int, device: int = 0, owner=True):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.ptr = int(ptr)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.device = device
        self._owner = owner

    # -- numpy-like surface --------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def strides(self):
        s, out = self.dtype.itemsize, []
        for n in reversed(self.shape):
            out.append(s)
            s *= n
        return tuple(reversed(out))

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"tilec.cuda.DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": None}

    def numpy(self) -> np.ndarray:
        """Copy to a new host array (synchronises with the device)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            with drv.on_device(self.device):
                d = drv.driver()
                drv.check(d.cuCtxSynchronize(), "cuCtxSynchronize", LaunchError)
                drv.check(d.cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes), "cuMemcpyDtoH", LaunchError)
        return out

    def copy_from_numpy(self, a: np.ndarray):
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if a.shape != self.shape:
            raise ValueError(f"shape {a.shape} does not match {self.shape}")
        if self.nbytes:
            with drv.on_device(self.device):
                drv.check(drv.driver().cuMemcpyHtoD(self.ptr, a.ctypes.data, self.nbytes), "cuMemcpyHtoD",
                          LaunchError)
        return self

    def __del__(self):
        if getattr(self, "_owner", False) and self.ptr:
            try:
                drv.driver().cuMemFree(self.ptr)
            except Exception:
                pass
            self.ptr = 0


register_pointer_getter(DeviceArray, lambda v: (v.ptr, v.device, None))  # its own fields: no interface dict


def empty(shape, dtype=np.float32, device: int = 0) -> DeviceArray:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    with drv.on_device(device):
        ptr = drv.alloc(nbytes)
    return DeviceArray(shape, dtype, ptr, device)


def from_numpy(a, device: int = 0) -> DeviceArray:
    a = np.ascontiguousarray(a)
    return empty(a.shape, a.dtype, device).copy_from_numpy(a)


def empty_like(a, device: int = 0) -> DeviceArray:
    return empty(a.shape, a.dtype, device)


def synchronize(device: int | None = None):
    """Wait for the work queued on ``device`` (None: every device tilec has used)."""
    drv.synchronize(device)


__all__ = ["DeviceArray", "empty", "from_numpy", "empty_like", "synchronize"]
