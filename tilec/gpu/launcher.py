"""Launching a compiled kernel on a GPU, shared by every vendor: arguments written into the kernel's parameter cells,
the device and stream chosen, the grid checked against the target's limits, the device made current around the
launch, the failure record of debug builds on device memory, and faults attributed to a kernel.

A vendor's launcher subclasses :class:`GpuLauncher` and writes only what differs: how its parameter cells are laid
out (``cells``), how a module is loaded on a device (``load``) and how a launch is issued (``issue``); its driver
module (``drv``) answers the same few calls for every vendor:

- ``enter(device)`` makes the device current in the calling thread when it is not and returns what to restore
  (None: nothing), ``leave(token)`` restores it, ``current_device()`` says which one is current;
- ``alloc(nbytes)``, ``memset32(address, value, count, stream)``, ``copy_to_host(host_address, address, nbytes,
  stream)`` (which waits for the stream), on the current device;
- ``host_device_pointer(address)``: the device's address of pinned (page-locked, mapped) host memory, None for
  memory the device cannot reach;
- ``fault_code(err)``: whether a driver error is a kernel fault (sticky: the context is lost).

Each launch: pointer arguments give the device (the first that has one; else the current device) and the stream
(the first that has one: torch's current stream for torch tensors, an array interface's own stream; else the
default stream); the device is made current only if it is not already, and the previous one restored after the
launch, so a launch leaves the caller's current device as it found it (as torch's device guard does). Launches of
one kernel from several threads take turns at the parameter cells (one lock per launcher).
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading

import numpy as np

from ..errors import ArgumentError, KernelFault, LaunchError
from ..ir.types import scalar
from ..targets.arguments import GETTERS, is_torch_tensor, pointer_getter
from ..targets.params import bf16_bits, f16_bits
from ..ir.numerics import quantize
from ..targets.grid import normalize_grid

# -- how a parameter kind travels: the ctypes cell of the kernel's parameter, and what a value becomes first -----
# The cells follow the GPU register model (gpu/lowering/types.py): f16 is a 16-bit parameter (its bits); bf16 and
# fp8 scalars live in f32 registers, so their parameters are f32 cells holding a value of the format.
_pack_u32, _unpack_f32 = struct.Struct("<I").pack, struct.Struct("<f").unpack


def bf16_value(v) -> float:
    """``v`` rounded to bf16 (as :func:`bf16_bits`), as the f32 a bf16 parameter holds."""
    return _unpack_f32(_pack_u32(bf16_bits(v) << 16))[0]


def _fp8(name):
    t = scalar(name)
    return lambda v: float(quantize(float(v), t))


CELLS = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
         "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
         "u64": ctypes.c_uint64, "f32": ctypes.c_float, "f64": ctypes.c_double, "ptr": ctypes.c_uint64,
         "f16": ctypes.c_uint16, "bf16": ctypes.c_float, "f8e4m3": ctypes.c_float, "f8e5m2": ctypes.c_float}
CONVERT = {"f16": f16_bits, "bf16": bf16_value, "f8e4m3": _fp8("f8e4m3"), "f8e5m2": _fp8("f8e5m2")}
#: kinds that take any real number (the others take integers only), for naming an argument that does not fit
_FLOAT_KINDS = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2"}


def cell_type(kind: str):
    """The ctypes type of a parameter of ``kind``; LaunchError for kinds no GPU kernel takes."""
    try:
        return CELLS[kind]
    except KeyError:
        raise LaunchError(f"unsupported kernel parameter type {kind!r}") from None


# -- which launch a fault belongs to ---------------------------------------------------------------------------
#: device -> the launcher of the last launch issued there (its ``launches`` and ``last_grid`` say which launch);
#: device -> the first fault's description
LAST_LAUNCH: dict = {}
FAULTS: dict = {}


def _describe(launcher, n=None, grid=None) -> str:
    n, grid = (launcher.launches, launcher.last_grid) if n is None else (n, grid)
    return f"'{launcher.name}' (its launch {n}, grid {tuple(grid)})"


def fault_error(drv, what: str, err_text: str, device, own=None) -> KernelFault:
    """The error for a kernel fault that a driver call (``what``) reported on ``device``. Faults surface at the next
    call after the kernel, so the culprit is ``own`` (the launch that reported it, when launches are synchronous)
    (``(launcher, its launch count, grid)``) or else the last kernel launched on the device; the first attribution is
    kept for every later error there."""
    known = FAULTS.get(device)
    if known is None:
        if own is not None:
            culprit = f"kernel {_describe(*own)} faulted: {err_text}"
        else:
            last = LAST_LAUNCH.get(device)
            culprit = (f"a kernel faulted ({err_text}); the last kernel launched on device {device} was "
                       f"{_describe(last)}" if last is not None else
                       f"a kernel faulted ({err_text}) before any tilec kernel was launched on device {device}")
        known = FAULTS[device] = culprit
    hint = (f"Faults are reported by the first driver call after the kernel; {drv.BLOCKING_ENV}=1 makes each launch "
            "report its own, and a debug build (debug=True or TILEC_DEBUG=1) names the out-of-bounds access. The "
            "device cannot be used again in this process: run one process per test (docs/debugging.md).")
    return KernelFault(f"{what} failed on device {device}: {known}. {hint}")


class _Record:
    """A debug build's failure record on one device: ``words`` int64 in device memory, and a host copy."""

    def __init__(self, drv, words: int):
        self.nbytes = 8 * words
        self.address = drv.alloc(self.nbytes)
        self.host = np.zeros(words, np.int64)


class GpuLauncher:
    """``launcher(grid, args)``: ``grid`` a 3-tuple of ints (``targets/grid.py`` checked it against the limits every
    backend shares), ``args`` the runtime arguments in parameter order.

    Subclasses set ``drv`` and ``kernel_words`` (for messages: "a <vendor> kernel"), call :meth:`setup` with one ctypes
    cell per parameter, and implement ``load(device) -> function`` (with the device current) and ``issue(function,
    grid, stream, device)`` (raising :meth:`launch_failed`'s error when the driver refuses). ``grid_limit``: the
    largest grid this launch can have on the target, per dimension."""

    drv = None
    kernel_words = "a GPU kernel"

    def setup(self, name: str, kinds, cells, block: int, grid_limit):
        self.name, self.params, self.block = name, list(kinds), block
        self.nargs = len(self.params)
        self.cells = cells
        self.grid_limit = tuple(grid_limit)
        self.ptr_cells = [(i, c) for i, (k, c) in enumerate(zip(kinds, cells)) if k == "ptr"]
        self.scalar_cells = [(i, c) for i, (k, c) in enumerate(zip(kinds, cells)) if k != "ptr" and k not in CONVERT]
        self.converted_cells = [(i, c, CONVERT[k]) for i, (k, c) in enumerate(zip(kinds, cells)) if k in CONVERT]
        self.functions: dict = {}
        self.lock = threading.Lock()
        self.launches = 0
        self.last_grid = None
        self.records: dict = {}

    # -- arguments ---------------------------------------------------------------------------------------------
    def _mismatch(self, args, error=None) -> ArgumentError:
        if len(args) != self.nargs:
            return ArgumentError(f"kernel '{self.name}' takes {self.nargs} runtime arguments, got {len(args)}")
        for i, _ in self.scalar_cells + [(i, c) for i, c, _ in self.converted_cells]:
            v, k = args[i], self.params[i]
            if k in _FLOAT_KINDS and not isinstance(v, (int, float, np.integer, np.floating)) or \
                    k not in _FLOAT_KINDS and not isinstance(v, (int, np.integer, bool, np.bool_)):
                return ArgumentError(f"argument {i} of '{self.name}' ({type(v).__name__} {v!r}) does not fit its "
                                     f"{k} parameter")
        return ArgumentError(f"arguments of '{self.name}' do not match its parameters {self.params}: "
                             f"{[type(a).__name__ for a in args]}" + (f" ({error})" if error else ""))

    def write(self, args):
        """Write ``args`` into the cells; returns (device or None, stream or None or callable(device) -> stream,
        [(cell, value)] of host arrays whose device address is found once the device is current)."""
        device = stream = host = None
        try:
            for i, cell in self.ptr_cells:
                v = args[i]
                cell.value, dev, st = (GETTERS.get(type(v)) or pointer_getter(v))(v)
                if dev is not None:
                    if dev < 0:
                        host = (host or []) + [(cell, v)]
                    elif device is None:
                        device = dev
                if stream is None:
                    stream = st
            for i, cell in self.scalar_cells:
                cell.value = args[i]
            for i, cell, convert in self.converted_cells:
                cell.value = convert(args[i])
        except ArgumentError:
            raise
        except (TypeError, ValueError, OverflowError) as e:
            raise self._mismatch(args, e) from None
        return device, stream, host

    def placement(self, args):
        """(device, stream) a launch with ``args`` (or the first of them) goes to, without writing anything."""
        device = stream = None
        for i, _ in self.ptr_cells:
            if i >= len(args):
                break
            v = args[i]
            _, dev, st = (GETTERS.get(type(v)) or pointer_getter(v))(v)
            if device is None and dev is not None and dev >= 0:
                device = dev
            if stream is None:
                stream = st
        if device is None:
            device = self.drv.current_device()
        if stream is not None and type(stream) is not int:
            stream = stream(device)
        return device, stream or 0

    def _host_arrays(self, host):
        """Host arrays in pinned memory become the device's address of it (as Triton takes them); any other host
        array is refused."""
        for cell, v in host:
            mapped = self.drv.host_device_pointer(cell.value)
            if mapped is None:
                raise self.not_on_device(v)
            cell.value = mapped

    def not_on_device(self, v) -> ArgumentError:
        where = self.kernel_words
        if is_torch_tensor(v):
            return ArgumentError(f"a torch tensor in (pageable) host memory was passed to {where} ('{self.name}'); "
                                 "move it to the device (tensor.to(device)), or pin it (.pin_memory())")
        return ArgumentError(f"a host ({type(v).__module__.split('.')[0]}) array was passed to {where} "
                             f"('{self.name}'); copy it to the device first, or use pinned host memory")

    # -- launch ------------------------------------------------------------------------------------------------
    def grid_error(self, grid) -> LaunchError:
        axis, n, limit = next((a, n, lim) for a, (n, lim) in enumerate(zip(grid, self.grid_limit)) if n > lim)
        return LaunchError(f"kernel '{self.name}': grid {tuple(grid)} has {n} programs along axis {axis}, over the "
                           f"limit of {limit} for this target and block size ({self.block} threads)"
                           + self.grid_limit_reason(axis))

    def grid_limit_reason(self, axis: int) -> str:
        """Why the limit along ``axis`` is what it is, for the message (the vendor's rule)."""
        return ""

    def __call__(self, grid, args):
        try:
            gx, gy, gz = grid
        except (TypeError, ValueError):
            grid = normalize_grid(grid, self.name)
            if grid is None:
                return
            gx, gy, gz = grid
        lx, ly, lz = self.grid_limit
        if not (0 < gx <= lx and 0 < gy <= ly and 0 < gz <= lz):
            if gx == 0 or gy == 0 or gz == 0:
                return
            raise self.grid_error(grid)
        if type(grid) is not tuple or len(grid) != 3:
            grid = (gx, gy, gz)
        if len(args) != self.nargs:
            raise self._mismatch(args)
        drv = self.drv
        with self.lock:
            device, stream, host = self.write(args)
            if device is None:
                device = drv.current_device()
            token = drv.enter(device)
            try:
                if host is not None:
                    self._host_arrays(host)
                if stream is not None and type(stream) is not int:
                    stream = stream(device)
                fn = self.functions.get(device)
                if fn is None:
                    fn = self.functions[device] = self.load(device)
                self.issue(fn, grid, stream or 0, device)
                self.launches += 1
                self.last_grid = grid
                LAST_LAUNCH[device] = self
            finally:
                if token is not None:
                    drv.leave(token)

    def launch_failed(self, err, grid, device) -> LaunchError:
        """The error for a launch the driver refused with ``err``."""
        text = self.drv.error_text(err)
        what = f"launching '{self.name}' on grid {grid}"
        if self.drv.fault_code(err):
            blocking = os.environ.get(self.drv.BLOCKING_ENV, "0") not in ("", "0")
            return fault_error(self.drv, what, text, device, (self, self.launches + 1, grid) if blocking else None)
        return LaunchError(f"{what} failed: {text}")

    # -- debug builds ------------------------------------------------------------------------------------------
    def debug_record(self, args, words: int):
        """``(address, read)`` for a debug build's failure record of ``words`` int64 (``targets/debug_record.py``):
        zeroed in device memory on the stream the launch with ``args`` goes to; ``read()`` waits for that stream and
        returns the words."""
        device, stream = self.placement(args)
        drv = self.drv
        token = drv.enter(device)
        try:
            rec = self.records.get(device)
            if rec is None:
                rec = self.records[device] = _Record(drv, words)
            drv.memset32(rec.address, 0, 2 * words, stream)
        finally:
            if token is not None:
                drv.leave(token)

        def read():
            token = drv.enter(device)
            try:
                drv.copy_to_host(rec.host.ctypes.data, rec.address, rec.nbytes, stream)
            finally:
                if token is not None:
                    drv.leave(token)
            return rec.host
        return rec.address, read
