"""The CUDA driver through ``cuda.bindings.driver`` (cuda-python), imported on first use so that compiling needs
neither the package nor a GPU.

Contexts are the devices' primary contexts (the ones torch and other runtimes use), so memory from any of them
is valid in tilec launches. Modules are loaded from PTX with the JIT's error log captured into the raised
:class:`BackendError`; functions are cached per device.
"""
from __future__ import annotations

import threading

from ...errors import BackendError, LaunchError

_lock = threading.Lock()
_state = {"driver": None, "init": False, "contexts": {}}


def driver():
    """The ``cuda.bindings.driver`` module; BackendError when cuda-python is missing."""
    d = _state["driver"]
    if d is None:
        try:
            from cuda.bindings import driver as d
        except ImportError:
            try:
                from cuda import cuda as d  # older cuda-python layout
            except ImportError:
                raise BackendError("running CUDA kernels needs cuda-python (pip install cuda-python) and an "
                                   "NVIDIA driver; compiling to PTX does not") from None
        _state["driver"] = d
    return d


def raw_launch():
    """``cuLaunchKernel`` called through ctypes on the driver library that cuda-python already loaded: the
    cheapest call from Python (ints in, an int error code out, no wrapper objects per launch). Arguments:
    (function handle int, gx, gy, gz, bx, by, bz, shared bytes, stream int, params address, extra address).
    Falls back to cuda-python's wrapper where the library cannot be opened this way or TILEC_CUDA_LAUNCH=bindings.
    """
    fn = _state.get("raw_launch")
    if fn is None:
        fn = _state["raw_launch"] = _make_raw_launch()
    return fn


def raw_launch_ex():
    """``cuLaunchKernelEx`` through ctypes, or None (older drivers, TILEC_CUDA_LAUNCH=plain or =bindings).
    Its launch configuration is one struct the caller keeps (:func:`launch_config`), so a launch whose grid and
    stream did not change passes four ints."""
    if "raw_launch_ex" not in _state:
        import ctypes
        import os
        f = None
        if os.environ.get("TILEC_CUDA_LAUNCH", "") not in ("plain", "bindings"):
            driver()
            f = _libcuda_symbol("cuLaunchKernelEx", [ctypes.c_void_p] * 4)
        _state["raw_launch_ex"] = f
    return _state["raw_launch_ex"]


def _libcuda_symbol(name: str, argtypes):
    """``name`` from the driver library as a ctypes function returning the CUresult int, or None."""
    import ctypes
    for lib in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            f = getattr(ctypes.CDLL(lib), name)
        except (OSError, AttributeError):
            continue
        f.argtypes = argtypes
        f.restype = ctypes.c_int
        return f
    return None


def launch_config():
    """A ``CUlaunchConfig`` (grid, block, shared bytes, stream, no attributes) to fill and pass by address."""
    import ctypes
    u = ctypes.c_uint

    class CUlaunchConfig(ctypes.Structure):
        _fields_ = [("gridDimX", u), ("gridDimY", u), ("gridDimZ", u), ("blockDimX", u), ("blockDimY", u),
                    ("blockDimZ", u), ("sharedMemBytes", u), ("hStream", ctypes.c_void_p),
                    ("attrs", ctypes.c_void_p), ("numAttrs", u)]
    return CUlaunchConfig()


def _make_raw_launch():
    import ctypes
    import os
    d = driver()
    if os.environ.get("TILEC_CUDA_LAUNCH", "") != "bindings":
        u = ctypes.c_uint
        f = _libcuda_symbol("cuLaunchKernel", [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p,
                                               ctypes.c_void_p, ctypes.c_void_p])
        if f is not None:
            return f
    launch = d.cuLaunchKernel
    function, stream = d.CUfunction, d.CUstream
    funcs: dict = {}
    streams: dict = {}

    def via_bindings(fn, gx, gy, gz, bx, by, bz, shared, st, params, extra):
        f = funcs.get(fn)
        if f is None:
            f = funcs[fn] = function(fn)
        s = streams.get(st)
        if s is None:
            s = streams[st] = stream(st or 0)
        return int(launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra or 0)[0])
    return via_bindings


def error_text(err) -> str:
    d = driver()
    try:
        if isinstance(err, int):
            err = d.CUresult(err)
        _, name = d.cuGetErrorName(err)
        _, desc = d.cuGetErrorString(err)
        return f"{name.decode() if name else err}: {desc.decode() if desc else ''}"
    except Exception:
        return str(err)


def check(result, what: str, exc=BackendError):
    """Unpack a cuda-python result tuple ``(err, *values)``; raise ``exc`` naming ``what`` on failure."""
    err = result[0]
    if int(err) != 0:
        raise exc(f"{what} failed: {error_text(err)}")
    rest = result[1:]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else rest


def init():
    if not _state["init"]:
        with _lock:
            if not _state["init"]:
                check(driver().cuInit(0), "cuInit")
                _state["init"] = True


def device_count() -> int:
    init()
    return check(driver().cuDeviceGetCount(), "cuDeviceGetCount")


def context(device: int = 0):
    """Make the primary context of ``device`` current in this thread and return it."""
    init()
    d = driver()
    ctx = _state["contexts"].get(device)
    if ctx is None:
        with _lock:
            ctx = _state["contexts"].get(device)
            if ctx is None:
                dev = check(d.cuDeviceGet(device), f"cuDeviceGet({device})")
                ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
                _state["contexts"][device] = ctx
    check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def device_attribute(name: str, device: int = 0) -> int:
    d = driver()
    init()
    dev = check(d.cuDeviceGet(device), "cuDeviceGet")
    attr = getattr(d.CUdevice_attribute, name)
    return check(d.cuDeviceGetAttribute(attr, dev), f"cuDeviceGetAttribute({name})")


def compute_capability(device: int = 0) -> int:
    return 10 * device_attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", device) + \
        device_attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", device)


def load_module(image: bytes | str, kernel_name: str = "?"):
    """A module from PTX text (JIT-compiled by the driver) or a cubin; the JIT log is in the error."""
    d = driver()
    data = image.encode() + b"\0" if isinstance(image, str) else bytes(image)
    log_size = 16384
    err_log = bytearray(log_size)
    info_log = bytearray(log_size)
    opts = [d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            d.CUjit_option.CU_JIT_INFO_LOG_BUFFER, d.CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]
    vals = [err_log, log_size, info_log, log_size]
    try:
        res = d.cuModuleLoadDataEx(data, len(opts), opts, vals)
    except TypeError:  # a cuda-python without log-buffer support
        res = d.cuModuleLoadData(data)
        err_log = bytearray()
    if int(res[0]) != 0:
        log = bytes(err_log).split(b"\0", 1)[0].decode(errors="replace").strip()
        raise BackendError(f"the CUDA driver could not load kernel '{kernel_name}': {error_text(res[0])}"
                           + (f"\nJIT log:\n{log}" if log else ""))
    return res[1]


def get_function(module, name: str):
    d = driver()
    return check(d.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")


def function_attributes(fn) -> dict:
    d = driver()
    A = d.CUfunction_attribute
    out = {}
    for key, attr in (("num_regs", "CU_FUNC_ATTRIBUTE_NUM_REGS"), ("local_bytes", "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"),
                      ("static_shared", "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"),
                      ("max_threads", "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")):
        try:
            out[key] = check(d.cuFuncGetAttribute(getattr(A, attr), fn), attr)
        except (BackendError, AttributeError):
            pass
    return out


def set_dynamic_shared(fn, nbytes: int, device: int = 0, kernel: str = "kernel"):
    """Opt in to more than 48 KB of dynamic shared memory (up to the device's per-block opt-in limit)."""
    d = driver()
    limit = device_attribute("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device)
    if nbytes > limit:
        raise LaunchError(f"out of resources: kernel '{kernel}' needs {nbytes} bytes of shared memory, device "
                          f"{device} allows {limit} per block (use smaller blocks or fewer num_stages)")
    check(d.cuFuncSetAttribute(fn, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")


def synchronize():
    check(driver().cuCtxSynchronize(), "cuCtxSynchronize", LaunchError)
