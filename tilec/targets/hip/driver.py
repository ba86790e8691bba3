"""The ROCm runtime through hip-python (``from hip import hip``), imported on first use so that cross-compiling
needs neither the package nor ROCm.

hip-python imports without ROCm and fails at its first call (it cannot dlopen ``libamdhip64.so``), so usability
is probed with ``hipInit``; every way the runtime can be missing is a :class:`BackendError` saying what to
install. Calls return ``(hipError_t, value...)`` tuples or a bare error; :func:`check` unpacks both. Launches go
through ``hipModuleLaunchKernel`` with the kernel arguments as one packed buffer (``extra``), addresses as ints.
The calls every GPU launcher makes (``tilec/gpu/launcher.py``: ``enter``/``leave``/``current_device``, ``alloc``,
``memset32``, ``copy_to_host``, ``host_device_pointer``, ``fault_code``) are here for HIP.
"""
from __future__ import annotations

import sys
import threading

from ...errors import BackendError, LaunchError
from ...gpu.launcher import fault_error

_lock = threading.Lock()
_state: dict = {"hip": None, "archs": {}}
#: what launchers say about synchronous launches in a fault's message
BLOCKING_ENV = "HIP_LAUNCH_BLOCKING"
#: hipError_t codes of kernel faults, after which the device cannot be used again (hip_runtime_api.h)
FAULTS = {700: "hipErrorIllegalAddress", 710: "hipErrorAssert", 719: "hipErrorLaunchFailure"}

#: ``extra`` markers of hipModuleLaunchKernel (hip_runtime_api.h): the argument buffer, its size, the end
LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE, LAUNCH_PARAM_END = 1, 2, 3


def _code(err) -> int:
    err = err[0] if isinstance(err, tuple) else err
    return int(getattr(err, "value", err) or 0)


def runtime():
    """The ``hip`` module of hip-python with the runtime initialised; BackendError naming what is missing."""
    hip = _state["hip"]
    if hip is not None:
        return hip
    try:
        from hip import hip
    except ImportError:
        raise BackendError("launching AMD kernels needs hip-python (pip install 'tilec[hip]', the version matching "
                           "the installed ROCm) and ROCm; cross-compiling needs neither") from None
    try:
        err = hip.hipInit(0)
    except Exception as e:  # hip-python raises RuntimeError when libamdhip64.so cannot be opened
        raise BackendError(f"the ROCm runtime is not usable ({e}); install ROCm matching hip-python's version")\
            from None
    if _code(err) != 0:
        raise BackendError(f"hipInit failed ({error_text(err)}): no usable AMD GPU")
    _state["hip"] = hip
    return hip


def error_text(err) -> str:
    hip = _state["hip"]
    err = err[0] if isinstance(err, tuple) else err
    try:
        text = hip.hipGetErrorString(err) if hip is not None else None
        text = text[1] if isinstance(text, tuple) else text
        text = text.decode() if isinstance(text, bytes) else text
    except Exception:
        text = None
    name = getattr(err, "name", None) or f"error {_code(err)}"
    return f"{name}: {text}" if text else str(name)


def fault_code(err) -> bool:
    """Whether ``err`` is a kernel fault (the device is lost to this process)."""
    return _code(err) in FAULTS


def check(result, what: str, exc=BackendError):
    """Unpack a hip-python result ``(err, *values)`` (or a bare ``err``); raise ``exc`` naming ``what`` on
    failure (a kernel fault: :class:`KernelFault` naming the kernel it comes from)."""
    if _code(result) != 0:
        if fault_code(result):
            current = runtime().hipGetDevice()
            device = int(current[1]) if _code(current) == 0 else "?"
            raise fault_error(sys.modules[__name__], what, error_text(result), device)
        raise exc(f"{what} failed: {error_text(result)}")
    if not isinstance(result, tuple):
        return None
    rest = result[1:]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def device_count() -> int:
    return check(runtime().hipGetDeviceCount(), "hipGetDeviceCount")


def set_device(device: int) -> None:
    check(runtime().hipSetDevice(device), f"hipSetDevice({device})", LaunchError)


def current_device() -> int:
    """The calling thread's current device."""
    return int(check(runtime().hipGetDevice(), "hipGetDevice", LaunchError) or 0)


def enter(device: int):
    """Make ``device`` current in this thread if it is not; returns the device to restore afterwards (None:
    it was current)."""
    current = current_device()
    if current == device:
        return None
    set_device(device)
    return current


def leave(token) -> None:
    set_device(token)


def alloc(nbytes: int) -> int:
    """``nbytes`` of device memory on the current device."""
    return int(check(runtime().hipMalloc(max(int(nbytes), 1)), f"hipMalloc({nbytes})", LaunchError))


def free(address: int) -> None:
    try:
        runtime().hipFree(address)
    except Exception:  # noqa: BLE001  (at interpreter exit the runtime may be gone)
        pass


def memset32(address: int, value: int, count: int, stream) -> None:
    """Set ``count`` 32-bit words at ``address`` to ``value``, in order on ``stream``."""
    check(runtime().hipMemsetD32Async(address, value, count, stream or 0), "hipMemsetD32Async", LaunchError)


def copy_to_host(host_address: int, address: int, nbytes: int, stream) -> None:
    """Copy ``nbytes`` from device ``address`` to host memory after the work queued on ``stream``, and wait."""
    hip = runtime()
    check(hip.hipMemcpyDtoHAsync(host_address, address, nbytes, stream or 0), "hipMemcpyDtoHAsync", LaunchError)
    check(hip.hipStreamSynchronize(stream or 0), "hipStreamSynchronize", LaunchError)


def host_device_pointer(address: int):
    """The device address of pinned host memory (``hipHostMalloc``, torch's ``pin_memory()`` on ROCm), or None for
    pageable memory the device cannot reach."""
    try:
        result = runtime().hipHostGetDevicePointer(address, 0)
    except Exception:  # noqa: BLE001  (an address hip-python cannot even describe)
        return None
    if _code(result) != 0:
        return None
    return int(result[1]) or None


def device_arch(device: int) -> str:
    """The device's ``gcnArchName`` (e.g. ``gfx942:sramecc+:xnack-``), cached."""
    arch = _state["archs"].get(device)
    if arch is None:
        hip = runtime()
        props = hip.hipDeviceProp_t()
        check(hip.hipGetDeviceProperties(props, device), f"hipGetDeviceProperties({device})")
        arch = props.gcnArchName
        arch = arch.decode() if isinstance(arch, bytes) else str(arch)
        _state["archs"][device] = arch
    return arch


def current_arch() -> str | None:
    """The current device's architecture name, or None without a usable runtime (never raises: compiling
    for ``Target("hip")`` without an architecture falls back to a default then)."""
    try:
        hip = runtime()
        device = check(hip.hipGetDevice(), "hipGetDevice")
        return device_arch(int(device or 0))
    except Exception:
        return None


def load_module(image: bytes, name: str):
    """``hipModuleLoadData`` of a linked code object."""
    with _lock:
        return check(runtime().hipModuleLoadData(image), f"loading the code object of '{name}'")


def get_function(module, name: str):
    return check(runtime().hipModuleGetFunction(module, name.encode()), f"hipModuleGetFunction('{name}')")


def launch(function, grid, block: int, shared: int, stream: int, extra_addr: int):
    """``hipModuleLaunchKernel`` of ``function`` over ``grid`` with the packed argument buffer the ``extra``
    array at ``extra_addr`` names; returns the error (None on success)."""
    gx, gy, gz = grid
    err = runtime().hipModuleLaunchKernel(function, gx, gy, gz, block, 1, 1, shared, stream or 0, None, extra_addr)
    return err if _code(err) != 0 else None
