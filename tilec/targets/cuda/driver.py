"""The CUDA driver through ``cuda.bindings.driver`` (cuda-python), imported on first use so that compiling needs
neither the package nor a GPU.

Contexts are the devices' primary contexts (the ones torch and other runtimes use), so memory from any of them
is valid in tilec launches. Modules are loaded from PTX with the JIT's error log captured into the raised
:class:`BackendError`; functions are cached per device.

The calls every GPU launcher makes (``tilec/gpu/launcher.py``: ``enter``/``leave``/``current_device``, ``alloc``,
``memset32``, ``copy_to_host``, ``host_device_pointer``, ``fault_code``) are here for CUDA. The per-launch ones
(launching, the current context) go through ctypes on the driver library cuda-python loaded; with
``_state["libcuda"]`` False everything goes through the ``driver`` module, which tests replace with a fake.
"""
from __future__ import annotations

import ctypes
import sys
import threading

from ...errors import BackendError, LaunchError, OutOfResources, TilecError
from ...gpu.launcher import fault_error

_lock = threading.Lock()
_state = {"driver": None, "init": False, "contexts": {}, "libcuda": True}
#: what launchers say about synchronous launches in a fault's message
BLOCKING_ENV = "CUDA_LAUNCH_BLOCKING"
#: CUresult codes of kernel faults: sticky errors, after which the context cannot be used again (cuda.h)
FAULTS = {700: "ILLEGAL_ADDRESS", 702: "LAUNCH_TIMEOUT", 710: "ASSERT", 714: "HARDWARE_STACK_ERROR",
          715: "ILLEGAL_INSTRUCTION", 716: "MISALIGNED_ADDRESS", 717: "INVALID_ADDRESS_SPACE", 718: "INVALID_PC",
          719: "LAUNCH_FAILED"}


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
        import os
        f = None
        if os.environ.get("TILEC_CUDA_LAUNCH", "") not in ("plain", "bindings"):
            driver()
            f = _libcuda_symbol("cuLaunchKernelEx", [ctypes.c_void_p] * 4)
        _state["raw_launch_ex"] = f
    return _state["raw_launch_ex"]


def _libcuda_symbol(name: str, argtypes):
    """``name`` from the driver library as a ctypes function returning the CUresult int, or None (also where the
    driver module is not cuda-python's own: ``_state["libcuda"]`` False)."""
    if not _state["libcuda"]:
        return None
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
    u = ctypes.c_uint

    class CUlaunchConfig(ctypes.Structure):
        _fields_ = [("gridDimX", u), ("gridDimY", u), ("gridDimZ", u), ("blockDimX", u), ("blockDimY", u),
                    ("blockDimZ", u), ("sharedMemBytes", u), ("hStream", ctypes.c_void_p),
                    ("attrs", ctypes.c_void_p), ("numAttrs", u)]
    return CUlaunchConfig()


def _make_raw_launch():
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


def fault_code(err) -> bool:
    """Whether ``err`` (a CUresult) is a kernel fault, sticky for the context."""
    return int(err) in FAULTS


def check(result, what: str, exc=BackendError):
    """Unpack a cuda-python result tuple ``(err, *values)``; raise ``exc`` naming ``what`` on failure (a kernel
    fault: :class:`KernelFault` naming the kernel it comes from)."""
    err = result[0]
    if int(err) != 0:
        if fault_code(err):
            try:
                device = current_device()
            except TilecError:
                device = "?"
            raise fault_error(sys.modules[__name__], what, error_text(err), device)
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


def primary_context(device: int):
    """The primary context of ``device`` (retained once; cuda-python's object)."""
    ctx = _state["contexts"].get(device)
    if ctx is None:
        init()
        d = driver()
        with _lock:
            ctx = _state["contexts"].get(device)
            if ctx is None:
                dev = check(d.cuDeviceGet(device), f"cuDeviceGet({device})", LaunchError)
                ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain", LaunchError)
                _state.setdefault("handles", {})[device] = _handle(ctx)
                _state.setdefault("devices", {})[_handle(ctx)] = device
                _state["contexts"][device] = ctx
    return ctx


def context(device: int = 0):
    """Make the primary context of ``device`` current in this thread and return it."""
    ctx = primary_context(device)
    check(driver().cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def _handle(ctx) -> int:
    return int(ctx or 0)


_tls = threading.local()


def _context_calls():
    """``(get, set)``: the calling thread's current context as an int handle, and making one current, through
    ctypes on libcuda (a launch makes both) or else cuda-python's calls."""
    calls = _state.get("context_calls")
    if calls is not None:
        return calls
    raw_get = _libcuda_symbol("cuCtxGetCurrent", [ctypes.c_void_p])
    raw_set = _libcuda_symbol("cuCtxSetCurrent", [ctypes.c_void_p])
    if raw_get is not None and raw_set is not None:
        def get():
            try:
                cell = _tls.cell
            except AttributeError:
                cell = _tls.cell = ctypes.c_void_p()
            err = raw_get(ctypes.addressof(cell))
            if err:
                raise LaunchError(f"cuCtxGetCurrent failed: {error_text(err)}")
            return cell.value or 0

        def set_(handle):
            err = raw_set(handle)
            if err:
                raise LaunchError(f"cuCtxSetCurrent failed: {error_text(err)}")
    else:
        d = driver()

        def get():
            return _handle(check(d.cuCtxGetCurrent(), "cuCtxGetCurrent", LaunchError))

        def set_(handle):
            check(d.cuCtxSetCurrent(d.CUcontext(handle)), "cuCtxSetCurrent", LaunchError)
    calls = _state["context_calls"] = (get, set_)
    return calls


def enter(device: int):
    """Make ``device``'s primary context current in this thread if it is not; returns the context to restore
    after the work (None: ``device`` was current already, or no context was, which then stays set)."""
    try:
        want = _state["handles"][device]
        get, set_ = _state["context_calls"]
    except KeyError:  # the first time on this device (or at all)
        primary_context(device)
        want = _state["handles"][device]
        get, set_ = _context_calls()
    current = get()
    if current == want:
        return None
    set_(want)
    return current or None


def leave(token) -> None:
    """Make the context ``enter`` returned current again."""
    _context_calls()[1](token)


def current_device() -> int:
    """The device of the calling thread's current context (0 when none is current)."""
    init()
    current = _context_calls()[0]()
    if not current:
        return 0
    device = _state.get("devices", {}).get(current)
    if device is None:  # a context of someone else's: ask which device it is on
        device = int(check(driver().cuCtxGetDevice(), "cuCtxGetDevice", LaunchError))
    return device


class on_device:
    """``with on_device(n):`` the work inside runs with device ``n`` current; the caller's context is restored."""

    def __init__(self, device: int):
        self.device = device

    def __enter__(self):
        self.token = enter(self.device)

    def __exit__(self, *exc):
        if self.token is not None:
            leave(self.token)


def _stream(stream):
    return driver().CUstream(stream or 0)


def alloc(nbytes: int) -> int:
    """``nbytes`` of device memory on the current device."""
    return int(check(driver().cuMemAlloc(max(int(nbytes), 1)), f"cuMemAlloc({nbytes})", LaunchError))


def free(address: int) -> None:
    try:
        driver().cuMemFree(address)
    except Exception:  # noqa: BLE001  (at interpreter exit the driver may be gone)
        pass


def memset32(address: int, value: int, count: int, stream) -> None:
    """Set ``count`` 32-bit words at ``address`` to ``value``, in order on ``stream``."""
    check(driver().cuMemsetD32Async(address, value, count, _stream(stream)), "cuMemsetD32Async", LaunchError)


def capturing(stream) -> bool:
    """Whether ``stream`` is being captured into a CUDA graph (False where the driver cannot say). Through
    ctypes on the driver library where it can (a launch asks this), else cuda-python's wrapper."""
    f = _state.get("is_capturing")
    if f is None:
        driver()
        f = _libcuda_symbol("cuStreamIsCapturing", [ctypes.c_void_p, ctypes.c_void_p]) or False
        _state["is_capturing"] = f
    if f:
        status = ctypes.c_int(0)
        return f(stream or None, ctypes.addressof(status)) == 0 and status.value != 0
    wrapped = getattr(driver(), "cuStreamIsCapturing", None)
    if wrapped is None:
        return False
    err, status = wrapped(_stream(stream))
    return not err and int(status) != 0


def copy_to_device(address: int, data: bytes, stream) -> None:
    """Copy ``data`` to device ``address`` in order on ``stream`` (from pageable memory: the driver takes its own
    copy of the bytes before returning)."""
    check(driver().cuMemcpyHtoDAsync(address, data, len(data), _stream(stream)), "cuMemcpyHtoDAsync", LaunchError)


def encode_tensormap(elem_code: int, base: int, dims, strides, box, swizzle_code: int, nan_fill: bool) -> bytes:
    """The 128 bytes of a tiled tensor copy descriptor (``cuTensorMapEncodeTiled``): ``elem_code`` the driver's
    data type, ``dims``/``box`` innermost first, ``strides`` the byte strides of dimensions 1.. (innermost
    first), element strides 1, no interleave, no L2 promotion; out-of-bounds elements read zero, or NaN where
    ``nan_fill`` (what the kernel's own ``tensormap.replace`` writes for the same descriptor)."""
    f = _state.get("encode_tiled")
    if f is None:
        driver()
        p, u32, i = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
        f = _libcuda_symbol("cuTensorMapEncodeTiled", [p, i, u32, p, p, p, p, p, i, i, i, i])
        if f is None:
            raise LaunchError("tensor copy descriptors written by the launch need the driver library "
                              "(cuTensorMapEncodeTiled)")
        _state["encode_tiled"] = f
    n = len(dims)
    out = (ctypes.c_uint64 * 16)()
    u64s, u32s = ctypes.c_uint64 * max(n, 1), ctypes.c_uint32 * max(n, 1)
    err = f(ctypes.addressof(out), elem_code, n, base, u64s(*dims), u64s(*strides), u32s(*box), u32s(*([1] * n)),
            0, swizzle_code, 0, 1 if nan_fill else 0)
    if err:
        raise LaunchError(f"cuTensorMapEncodeTiled failed ({error_text(err)}): base {base:#x}, dims {list(dims)}, "
                          f"byte strides {list(strides)}, box {list(box)}")
    return bytes(out)


def copy_to_host(host_address: int, address: int, nbytes: int, stream) -> None:
    """Copy ``nbytes`` from device ``address`` to host memory after the work queued on ``stream``, and wait."""
    d = driver()
    check(d.cuMemcpyDtoHAsync(host_address, address, nbytes, _stream(stream)), "cuMemcpyDtoHAsync", LaunchError)
    check(d.cuStreamSynchronize(_stream(stream)), "cuStreamSynchronize", LaunchError)


def host_device_pointer(address: int):
    """The device address of host memory the device can reach (pinned: ``cudaHostAlloc``, torch's
    ``pin_memory()``, ``cuMemHostRegister``), or None for pageable memory."""
    d = driver()
    attr = d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER
    try:
        err, value = d.cuPointerGetAttribute(attr, address)
        value = int(value) if int(err) == 0 else 0
    except Exception:  # noqa: BLE001  (a pointer cuda-python cannot even describe)
        return None
    return value or None


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
        if fault_code(res[0]):  # not the module: the context, lost to an earlier kernel's fault
            check(res, f"loading kernel '{kernel_name}'")
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
        raise OutOfResources(f"out of resources: kernel '{kernel}' needs {nbytes} bytes of shared memory, device "
                             f"{device} allows {limit} per block (use smaller blocks or fewer num_stages)",
                             nbytes, limit, "shared memory")
    check(d.cuFuncSetAttribute(fn, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
    # The unified L1/shared array is split per kernel; left to the driver, it gives shared memory just enough for
    # the resident blocks. A kernel this hungry for shared memory streams its operands through it (cp.async/TMA
    # rings that bypass L1), so it asks for the largest carveout, as Triton's launcher does.
    check(d.cuFuncSetCacheConfig(fn, d.CUfunc_cache.CU_FUNC_CACHE_PREFER_SHARED), "cuFuncSetCacheConfig")


def synchronize(device: int | None = None):
    """Wait for the work queued on ``device`` (None: every device tilec has used, else the current one)."""
    devices = [device] if device is not None else sorted(_state["contexts"]) or [None]
    for dev in devices:
        if dev is None:
            check(driver().cuCtxSynchronize(), "cuCtxSynchronize", LaunchError)
            continue
        with on_device(dev):
            check(driver().cuCtxSynchronize(), "cuCtxSynchronize", LaunchError)
