"""The ROCm runtime through hip-python (``from hip import hip``), imported on first use so that cross-compiling
needs neither the package nor ROCm.

hip-python imports without ROCm and fails at its first call (it cannot dlopen ``libamdhip64.so``), so usability
is probed with ``hipInit``; every way the runtime can be missing is a :class:`BackendError` saying what to
install. Calls return ``(hipError_t, value...)`` tuples or a bare error; :func:`check` unpacks both. Launches go
through ``hipModuleLaunchKernel`` with the kernel arguments as one packed buffer (``extra``), addresses as ints.
"""
from __future__ import annotations

import threading

from ...errors import BackendError, LaunchError

_lock = threading.Lock()
_state: dict = {"hip": None, "archs": {}}

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


def check(result, what: str, exc=BackendError):
    """Unpack a hip-python result ``(err, *values)`` (or a bare ``err``); raise ``exc`` naming ``what`` on
    failure."""
    if _code(result) != 0:
        raise exc(f"{what} failed: {error_text(result)}")
    if not isinstance(result, tuple):
        return None
    rest = result[1:]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def set_device(device: int) -> None:
    check(runtime().hipSetDevice(device), f"hipSetDevice({device})", LaunchError)


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


def launch(function, grid, block: int, shared: int, stream: int, extra_addr: int) -> None:
    """``hipModuleLaunchKernel`` of ``function`` over ``grid`` with the packed argument buffer the ``extra``
    array at ``extra_addr`` names."""
    gx, gy, gz = grid
    err = runtime().hipModuleLaunchKernel(function, gx, gy, gz, block, 1, 1, shared, stream or 0, None, extra_addr)
    if _code(err) != 0:
        raise LaunchError(f"hipModuleLaunchKernel failed: {error_text(err)}")
