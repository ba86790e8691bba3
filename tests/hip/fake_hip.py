"""A stand-in for hip-python's ``hip`` module (``from hip import hip``) that records what the launcher asks of
the runtime: no ROCm is needed to test argument packing, device and stream selection and error handling.

Calls return ``(hipError_t, value)`` tuples as hip-python does; ``hipModuleLaunchKernel`` reads the ``extra``
array at the address it gets (markers, buffer pointer, size pointer) and keeps a copy of the argument buffer.
"""
from __future__ import annotations

import ctypes
import enum
import sys
import types


class hipError_t(enum.IntEnum):
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorNoDevice = 100
    hipErrorInvalidImage = 200
    hipErrorLaunchFailure = 719


class hipDeviceProp_t:
    def __init__(self):
        self.gcnArchName = b""


class FakeHip:
    def __init__(self, arch="gfx942:sramecc+:xnack-", init_error=hipError_t.hipSuccess, launch_error=None):
        self.arch, self.init_error, self.launch_error = arch, init_error, launch_error
        self.hipError_t, self.hipDeviceProp_t = hipError_t, hipDeviceProp_t
        self.calls, self.launches, self.modules = [], [], []
        self.device = 0

    def hipInit(self, flags):
        self.calls.append("hipInit")
        return (self.init_error,)

    def hipGetErrorString(self, err):
        return f"fake {hipError_t(int(err)).name}".encode()

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
        self.launches.append({"function": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "stream": stream, "args": ctypes.string_at(ptrs[1], size)})
        return (self.launch_error or hipError_t.hipSuccess,)


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
