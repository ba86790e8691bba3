"""A stand-in for hip-python's ``hip`` module (``from hip import hip``) that records what the launcher asks of
the runtime: no ROCm is needed to test argument packing, device and stream selection and error handling.

Calls return ``(hipError_t, value)`` tuples as hip-python does; ``hipModuleLaunchKernel`` reads the ``extra``
array at the address it gets (markers, buffer pointer, size pointer) and keeps a copy of the argument buffer, the
device current in the calling thread and the stream. "Device memory" is host memory the fake allocates, so memsets
and copies really happen; ``on_launch(launch)`` may play a kernel's part (write its results there). The current
device is per thread, as in HIP; ``pinned`` maps host addresses the device can reach to their device addresses.
"""
from __future__ import annotations

import ctypes
import enum
import sys
import threading
import types


class hipError_t(enum.IntEnum):
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorNoDevice = 100
    hipErrorInvalidImage = 200
    hipErrorIllegalAddress = 700
    hipErrorLaunchFailure = 719


class hipDeviceProp_t:
    def __init__(self):
        self.gcnArchName = b""


class FakeHip:
    def __init__(self, arch="gfx942:sramecc+:xnack-", init_error=hipError_t.hipSuccess, launch_error=None):
        self.arch, self.init_error, self.launch_error = arch, init_error, launch_error
        self.hipError_t, self.hipDeviceProp_t = hipError_t, hipDeviceProp_t
        self.calls, self.launches, self.modules = [], [], []
        self.local = threading.local()
        self.memory = {}       # address -> the ctypes buffer behind it
        self.pinned = {}       # host address -> device address
        self.on_launch = None  # launch dict -> None: what the kernel does
        self.fault = None      # a fault every later call reports
        self.lock = threading.Lock()

    @property
    def device(self):
        return getattr(self.local, "device", 0)

    @device.setter
    def device(self, value):
        self.local.device = value

    def hipInit(self, flags):
        self.calls.append("hipInit")
        return (self.init_error,)

    def hipGetErrorString(self, err):
        return f"fake {hipError_t(int(err)).name}".encode()

    def hipGetDeviceCount(self):
        return hipError_t.hipSuccess, 1

    def hipSetDevice(self, device):
        self.calls.append(("hipSetDevice", device))
        self.device = device
        return (hipError_t.hipSuccess,)

    def hipGetDevice(self):
        return hipError_t.hipSuccess, self.device

    def hipGetDeviceProperties(self, props, device):
        props.gcnArchName = self.arch.encode()
        return (hipError_t.hipSuccess,)

    def hipModuleLoadData(self, image):
        self.calls.append("hipModuleLoadData")
        if self.fault is not None:
            return self.fault, None
        if bytes(image[:4]) != b"\x7fELF":
            return hipError_t.hipErrorInvalidImage, None
        self.modules.append(bytes(image))
        return hipError_t.hipSuccess, f"module{len(self.modules)}"

    def hipModuleGetFunction(self, module, name):
        self.calls.append(("hipModuleGetFunction", module, name))
        return hipError_t.hipSuccess, (module, name)

    def hipModuleLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        assert params is None and isinstance(extra, int)
        ptrs = (ctypes.c_void_p * 5).from_address(extra)
        assert (ptrs[0], ptrs[2], ptrs[4]) == (1, 2, 3), "extra: BUFFER_POINTER, ptr, BUFFER_SIZE, ptr, END"
        size = ctypes.c_size_t.from_address(ptrs[3]).value
        launch = {"function": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared, "stream": stream,
                  "args": ctypes.string_at(ptrs[1], size), "device": self.device,
                  "thread": threading.get_ident()}
        with self.lock:
            self.launches.append(launch)
        if self.fault is not None:
            return (self.fault,)
        if self.on_launch is not None and not self.launch_error:
            self.on_launch(launch)
        return (self.launch_error or hipError_t.hipSuccess,)

    # -- memory (host memory standing in for the device's) -----------------------------------------------------
    def hipMalloc(self, size):
        buf = ctypes.create_string_buffer(size)
        address = ctypes.addressof(buf)
        self.memory[address] = buf
        self.calls.append(("hipMalloc", size, self.device))
        return hipError_t.hipSuccess, address

    def hipFree(self, address):
        self.memory.pop(int(address), None)
        return (hipError_t.hipSuccess,)

    def hipMemsetD32Async(self, dst, value, count, stream):
        self.calls.append(("hipMemsetD32Async", count, stream, self.device))
        (ctypes.c_uint32 * count).from_address(dst)[:] = [value] * count
        return (self.fault or hipError_t.hipSuccess,)

    def hipMemcpyDtoHAsync(self, dst, src, size, stream):
        self.calls.append(("hipMemcpyDtoHAsync", size, stream, self.device))
        if self.fault is not None:
            return (self.fault,)
        ctypes.memmove(dst, src, size)
        return (hipError_t.hipSuccess,)

    def hipStreamSynchronize(self, stream):
        self.calls.append(("hipStreamSynchronize", stream, self.device))
        return (self.fault or hipError_t.hipSuccess,)

    def hipHostGetDevicePointer(self, address, flags):
        mapped = self.pinned.get(int(address))
        return (hipError_t.hipSuccess, mapped) if mapped is not None else (hipError_t.hipErrorInvalidValue, None)


def install(monkeypatch, fake):
    """Make ``from hip import hip`` give ``fake`` and forget any runtime the driver cached."""
    from tilec.targets.hip import driver
    pkg = types.ModuleType("hip")
    pkg.hip = fake
    monkeypatch.setitem(sys.modules, "hip", pkg)
    monkeypatch.setitem(sys.modules, "hip.hip", fake)
    monkeypatch.setitem(driver._state, "hip", None)
    monkeypatch.setitem(driver._state, "archs", {})
    return fake


class DeviceArray:
    """An array in (pretend) GPU memory, seen through ``__cuda_array_interface__``."""

    def __init__(self, address, shape=(16,), typestr="<f4", stream=None):
        self.__cuda_array_interface__ = {"data": (address, False), "shape": shape, "typestr": typestr,
                                         "version": 3, "stream": stream}
