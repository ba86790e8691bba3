"""A stand-in for cuda-python's driver module (``cuda.bindings.driver``) that keeps the rules the CUDA launcher must
follow: no GPU is needed to test device and context selection, streams, debug records, pinned host memory and
fault reports.

Calls return ``(CUresult, value...)`` tuples as cuda-python does. The current context is per thread, as in CUDA;
a module belongs to the context current when it was loaded, a stream to its device's context, and launching a
function or using a stream of another context than the current one fails with CUDA_ERROR_INVALID_HANDLE (what a
real driver reports when a launch reaches the wrong device). "Device memory" is host memory the fake allocates,
so memsets and copies really happen; ``on_launch(launch)`` may play a kernel's part. ``fault`` set to an error
makes every later call report it (a sticky fault); ``pinned`` maps host addresses to device addresses.
"""
from __future__ import annotations

import ctypes
import enum
import threading
import types


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_MISALIGNED_ADDRESS = 716
    CUDA_ERROR_LAUNCH_FAILED = 719


def _names(*names):
    return types.SimpleNamespace(**{n: n for n in names})


CONTEXT_BASE = 0x7000


class FakeCuda:
    CUresult = CUresult
    CUjit_option = _names("CU_JIT_ERROR_LOG_BUFFER", "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES",
                          "CU_JIT_INFO_LOG_BUFFER", "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES")
    CUfunction_attribute = _names("CU_FUNC_ATTRIBUTE_NUM_REGS", "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES",
                                  "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
                                  "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")
    CUdevice_attribute = _names("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
                                "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
                                "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    CUpointer_attribute = _names("CU_POINTER_ATTRIBUTE_DEVICE_POINTER")
    CUfunc_cache = _names("CU_FUNC_CACHE_PREFER_NONE", "CU_FUNC_CACHE_PREFER_SHARED")

    def __init__(self, devices=2, capability=90):
        self.devices, self.capability = devices, capability
        self.local = threading.local()
        self.lock = threading.Lock()
        self.calls, self.launches, self.modules = [], [], []
        self.functions = {}      # handle -> context it was loaded in
        self.streams = {0: None}  # handle -> context (None: the default stream of whichever is current)
        self.memory = {}
        self.pinned = {}
        self.on_launch = None
        self.fault = None
        self.launch_error = None

    # -- plumbing ----------------------------------------------------------------------------------------------
    @property
    def current(self) -> int:
        return getattr(self.local, "ctx", 0)

    def device_of(self, ctx):
        return ctx - CONTEXT_BASE if ctx else None

    def stream(self, device: int) -> int:
        """A new stream on ``device`` (as torch.cuda.Stream(device) would make)."""
        with self.lock:
            handle = 0x5000 + len(self.streams)
            self.streams[handle] = CONTEXT_BASE + device
        return handle

    def _call(self, *record):
        with self.lock:
            self.calls.append(record)
        return self.fault

    def CUcontext(self, handle):
        return int(handle)

    def CUstream(self, handle):
        return int(handle)

    def CUfunction(self, handle):
        return int(handle)

    def CUdeviceptr(self, handle):
        return int(handle)

    # -- errors, devices, contexts -----------------------------------------------------------------------------
    def cuGetErrorName(self, err):
        return CUresult.CUDA_SUCCESS, CUresult(int(err)).name.encode()

    def cuGetErrorString(self, err):
        return CUresult.CUDA_SUCCESS, f"fake {CUresult(int(err)).name.lower()}".encode()

    def cuInit(self, flags):
        return (CUresult.CUDA_SUCCESS,)

    def cuDeviceGetCount(self):
        return CUresult.CUDA_SUCCESS, self.devices

    def cuDeviceGet(self, n):
        if not 0 <= n < self.devices:
            return CUresult.CUDA_ERROR_INVALID_VALUE, None
        return CUresult.CUDA_SUCCESS, n

    def cuDeviceGetAttribute(self, attr, dev):
        values = {"CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": self.capability // 10,
                  "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": self.capability % 10,
                  "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 232448}
        return CUresult.CUDA_SUCCESS, values[attr]

    def cuDevicePrimaryCtxRetain(self, dev):
        return CUresult.CUDA_SUCCESS, CONTEXT_BASE + dev

    def cuCtxGetCurrent(self):
        return CUresult.CUDA_SUCCESS, self.current

    def cuCtxSetCurrent(self, ctx):
        self._call("cuCtxSetCurrent", self.device_of(int(ctx)))
        self.local.ctx = int(ctx)
        return (CUresult.CUDA_SUCCESS,)

    def cuCtxGetDevice(self):
        if not self.current:
            return CUresult.CUDA_ERROR_INVALID_CONTEXT, None
        return CUresult.CUDA_SUCCESS, self.device_of(self.current)

    def cuCtxSynchronize(self):
        return (self._call("cuCtxSynchronize", self.device_of(self.current)) or CUresult.CUDA_SUCCESS,)

    # -- modules and launches ----------------------------------------------------------------------------------
    def cuModuleLoadDataEx(self, data, n, opts, vals):
        err = self._call("cuModuleLoadDataEx", self.device_of(self.current))
        if err:
            return err, None
        if not self.current:
            return CUresult.CUDA_ERROR_INVALID_CONTEXT, None
        with self.lock:
            self.modules.append((self.current, bytes(data)))
            return CUresult.CUDA_SUCCESS, len(self.modules)

    def cuModuleGetFunction(self, module, name):
        with self.lock:
            handle = 0x100 * module + len(self.functions) + 1
            self.functions[handle] = self.modules[module - 1][0]
        return CUresult.CUDA_SUCCESS, handle

    def cuFuncGetAttribute(self, attr, fn):
        return CUresult.CUDA_SUCCESS, 32

    def cuFuncSetAttribute(self, fn, attr, value):
        self._call("cuFuncSetAttribute", int(fn), attr, value)
        return (CUresult.CUDA_SUCCESS,)

    def cuFuncSetCacheConfig(self, fn, config):
        self._call("cuFuncSetCacheConfig", int(fn), config)
        return (CUresult.CUDA_SUCCESS,)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        ctx, current = self.functions.get(int(f)), self.current
        launch = {"function": int(f), "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                  "stream": int(stream), "params": params, "device": self.device_of(current),
                  "thread": threading.get_ident()}
        with self.lock:
            self.launches.append(launch)
        if self.fault:
            return (self.fault,)
        if ctx != current or self.streams.get(int(stream), current) not in (None, current):
            return (CUresult.CUDA_ERROR_INVALID_HANDLE,)
        if self.launch_error:
            return (self.launch_error,)
        if self.on_launch is not None:
            self.on_launch(launch)
        return (CUresult.CUDA_SUCCESS,)

    # -- memory (host memory standing in for the device's) -----------------------------------------------------
    def cuMemAlloc(self, size):
        if not self.current:
            return CUresult.CUDA_ERROR_INVALID_CONTEXT, None
        buf = ctypes.create_string_buffer(size)
        address = ctypes.addressof(buf)
        with self.lock:
            self.memory[address] = (buf, self.device_of(self.current))
        return CUresult.CUDA_SUCCESS, address

    def cuMemFree(self, address):
        self.memory.pop(int(address), None)
        return (CUresult.CUDA_SUCCESS,)

    def cuMemsetD32Async(self, address, value, count, stream):
        err = self._call("cuMemsetD32Async", count, int(stream), self.device_of(self.current))
        if not err:
            (ctypes.c_uint32 * count).from_address(int(address))[:] = [value] * count
        return (err or CUresult.CUDA_SUCCESS,)

    def cuMemcpyDtoHAsync(self, dst, src, size, stream):
        err = self._call("cuMemcpyDtoHAsync", size, int(stream), self.device_of(self.current))
        if not err:
            ctypes.memmove(int(dst), int(src), size)
        return (err or CUresult.CUDA_SUCCESS,)

    def cuMemcpyDtoH(self, dst, src, size):
        return self.cuMemcpyDtoHAsync(dst, src, size, 0)

    def cuMemcpyHtoD(self, dst, src, size):
        err = self._call("cuMemcpyHtoD", size, self.device_of(self.current))
        if not err:
            ctypes.memmove(int(dst), int(src), size)
        return (err or CUresult.CUDA_SUCCESS,)

    def cuStreamSynchronize(self, stream):
        return (self._call("cuStreamSynchronize", int(stream), self.device_of(self.current)) or
                CUresult.CUDA_SUCCESS,)

    def cuPointerGetAttribute(self, attr, address):
        mapped = self.pinned.get(int(address))
        return (CUresult.CUDA_SUCCESS, mapped) if mapped is not None else (CUresult.CUDA_ERROR_INVALID_VALUE, 0)


def install(monkeypatch, fake):
    """Make tilec's CUDA driver use ``fake`` (and forget contexts, raw calls and fault reports of earlier tests)."""
    from tilec.gpu import launcher
    from tilec.targets.cuda import driver
    monkeypatch.setattr(driver, "_state", {"driver": fake, "init": False, "contexts": {}, "libcuda": False})
    monkeypatch.setattr(launcher, "LAST_LAUNCH", {})
    monkeypatch.setattr(launcher, "FAULTS", {})
    return fake


class DeviceArray:
    """An array in (pretend) device memory of ``device``, seen through ``__cuda_array_interface__``."""

    def __init__(self, address, device=0, shape=(16,), typestr="<f4", stream=None):
        self.device = device
        self.__cuda_array_interface__ = {"data": (address, False), "shape": shape, "typestr": typestr,
                                         "version": 3, "stream": stream}
