"""Kernel launch: a launcher built once per compiled kernel from its parameter types.

The launcher owns a ctypes buffer per parameter and a ``void*[]`` pointing at them; a launch only writes the new
values into those buffers (one pointer read per tensor argument) and calls ``cuLaunchKernel`` (through ctypes,
``driver.raw_launch``) with the function handle, the stream and the array's address as plain ints, so per-launch
Python work is a short loop and no wrapper objects are built. Modules and functions are loaded lazily per device.

Pointer arguments may be torch CUDA tensors (launches then go to torch's current stream), anything with
``__cuda_array_interface__`` (its ``stream`` is honoured), ``tilec.cuda`` arrays, DLPack CUDA tensors, raw ints
(device addresses) or None (null); ``tilec.targets.arguments`` reads them.
"""
from __future__ import annotations

import ctypes

from ...errors import LaunchError
from ..arguments import GETTERS, device_of, is_torch_tensor, pointer_getter
from ..params import PARAM_KINDS_KEY
from . import driver as drv

MAX_STATIC_SMEM = 48 * 1024  # bytes of shared memory a launch gets without opting in

_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
           "u64": ctypes.c_uint64, "f32": ctypes.c_float, "f64": ctypes.c_double, "ptr": ctypes.c_uint64,
           "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16}
_MAX_GRID = (2 ** 31 - 1, 65535, 65535)


def is_cuda_value(v) -> bool:
    """Whether ``v`` is an array in CUDA device memory."""
    return device_of(v) == "cuda"


def _not_on_device(v) -> LaunchError:
    if is_torch_tensor(v):
        return LaunchError("a torch tensor on the CPU was passed to a CUDA kernel; move it with .cuda()")
    return LaunchError(f"a host ({type(v).__module__.split('.')[0]}) array was passed to a CUDA kernel; copy it to "
                       "the device first (tilec.cuda.from_numpy or torch)")


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
        # a hidden last parameter: global scratch of ``scratch`` bytes per program (tensor copy descriptors)
        self.scratch = int(metadata.get("global_scratch_size", 0) or 0)
        self.scratch_cell = ctypes.c_uint64() if self.scratch else None
        self.scratch_bufs: dict = {}  # (device, stream) -> tilec's own buffer; or "user" -> the allocator's
        everything = self.cells + ([self.scratch_cell] if self.scratch else [])
        self.argv = (ctypes.c_void_p * max(1, len(everything)))(*[ctypes.addressof(c) for c in everything])
        self.argv_addr = ctypes.addressof(self.argv)
        self.ptr_cells = [(i, c) for i, (p, c) in enumerate(zip(self.params, self.cells)) if p == "ptr"]
        self.scalar_cells = [(i, c) for i, (p, c) in enumerate(zip(self.params, self.cells)) if p != "ptr"]
        self._modules: dict = {}
        self.launch = None  # driver.raw_launch_ex() or raw_launch(), resolved on the first launch
        self.config = None  # cuLaunchKernelEx's configuration, kept and updated when grid or stream change

    def function(self, device: int) -> int:
        """The kernel's function handle (an int) on ``device``, loading the module there on first use."""
        fn = self.functions.get(device)
        if fn is None:
            drv.context(device)
            mod = drv.load_module(self.image, self.name)
            f = drv.get_function(mod, self.name)
            if self.shared > MAX_STATIC_SMEM:
                drv.set_dynamic_shared(f, self.shared, device, self.name)
            self.metadata.setdefault("driver", drv.function_attributes(f))
            fn = self.functions[device] = int(f)
            self._modules[device] = (mod, f)
        return fn

    def __call__(self, grid, args):
        """Write ``args`` into the parameter buffers and launch over ``grid`` (a 3-tuple)."""
        cells = self.cells
        if len(args) != len(cells):
            raise LaunchError(f"kernel '{self.name}' takes {len(cells)} runtime arguments, got {len(args)}")
        gx, gy, gz = grid if len(grid) == 3 else (tuple(grid) + (1, 1))[:3]
        if not (0 < gx <= 2147483647 and 0 < gy <= 65535 and 0 < gz <= 65535):
            if gx == 0 or gy == 0 or gz == 0:
                return
            raise LaunchError(f"grid {tuple(grid)} is out of range (max {_MAX_GRID})")
        device = stream = None
        try:
            for i, cell in self.ptr_cells:
                v = args[i]
                get = GETTERS.get(type(v)) or pointer_getter(v)
                cell.value, dev, st = get(v)
                if dev == -1:
                    raise _not_on_device(v)
                if device is None:
                    device = dev
                if stream is None:
                    stream = st
            for i, cell in self.scalar_cells:
                cell.value = args[i]
        except TypeError:
            raise LaunchError(f"arguments of '{self.name}' do not match its parameters {self.params}: "
                              f"{[type(a).__name__ for a in args]}") from None
        if device is None:
            device = 0
        if stream is not None and type(stream) is not int:
            stream = stream(device)
        fn = self.functions.get(device) or self.function(device)
        if self.scratch:
            self.scratch_cell.value = self._scratch(device, stream, self.scratch * gx * gy * gz)
        launch = self.launch or self._resolve_launch()
        cfg = self.config
        if cfg is not None:
            if (gx, gy, gz, stream) != self._configured:
                try:
                    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.hStream = gx, gy, gz, stream
                except TypeError:
                    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.hStream = int(gx), int(gy), int(gz), stream
                self._configured = (gx, gy, gz, stream)
            err = launch(self.config_addr, fn, self.argv_addr, None)
            if err:
                raise LaunchError(f"launching '{self.name}' on grid {(gx, gy, gz)} failed: {drv.error_text(err)}")
            return
        try:
            err = launch(fn, gx, gy, gz, self.block, 1, 1, self.shared, stream, self.argv_addr, None)
        except ctypes.ArgumentError:  # grid entries that are int-like but not ints (numpy integers)
            err = launch(fn, int(gx), int(gy), int(gz), self.block, 1, 1, self.shared, stream, self.argv_addr,
                         None)
        if err:
            raise LaunchError(f"launching '{self.name}' on grid {(gx, gy, gz)} failed: {drv.error_text(err)}")

    def _scratch(self, device, stream, nbytes: int) -> int:
        """Address of ``nbytes`` of global scratch for this launch: from ``tilec.set_allocator``'s allocator
        when one is set, else a buffer of the launcher's own per device and stream (reused, grown)."""
        from ..allocator import get_allocator
        alloc = get_allocator()
        if alloc is not None:
            buf = alloc(nbytes, 128, stream)
            self.scratch_bufs["user"] = buf  # alive until the next launch; stream order covers reuse
            try:
                return int(buf.data_ptr())
            except AttributeError:
                raise LaunchError(f"'{self.name}': the set_allocator allocator returned {type(buf).__name__}, "
                                  "which has no data_ptr()") from None
        key = (device, stream)
        buf = self.scratch_bufs.get(key)
        if buf is None or buf.size < nbytes:
            import numpy as np
            from .array import empty
            buf = self.scratch_bufs[key] = empty((max(nbytes, 1 << 16),), np.uint8, device)
        return buf.ptr

    def _resolve_launch(self):
        ex = drv.raw_launch_ex()
        if ex is not None:
            self.config = cfg = drv.launch_config()
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ, cfg.sharedMemBytes = self.block, 1, 1, self.shared
            self.config_addr = ctypes.addressof(cfg)
            self._configured = None
            self.launch = ex
        else:
            self.launch = drv.raw_launch()
        return self.launch


def make_launcher(asm: dict, metadata: dict) -> Launcher:
    image = asm.get("ptx")
    if image is None:
        raise LaunchError("no PTX to load")
    return Launcher(image, metadata["name"], metadata[PARAM_KINDS_KEY], metadata.get("num_warps", 4),
                    metadata.get("shared", 0), metadata)
