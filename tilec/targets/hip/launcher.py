"""Kernel launch on AMD GPUs: a launcher built once per compiled kernel.

The kernel-argument buffer is laid out from the code object's own metadata note (``.args``: offset, size and
kind of every explicit argument), checked against the parameter kinds tilec compiled, so the launch writes each
value where the kernel reads it; the runtime appends the hidden arguments (grid sizes and the rest of code object
v5's implicit block) itself. A launch writes the values into ctypes cells over that buffer and calls
``hipModuleLaunchKernel`` with it as ``extra``. Modules and function handles are loaded per device on first use,
after checking that the device's architecture is the one compiled for.

Pointer arguments: torch tensors on ROCm (``device.type == "cuda"`` there; ``torch.version.hip`` tells them
apart, see ``targets/arguments.py``) launch on torch's current stream; DLPack ROCm tensors,
``__cuda_array_interface__`` producers (ROCm builds of CuPy and others), raw int addresses and None (null) are
accepted too.
"""
from __future__ import annotations

import ctypes

from ...elf import amdgpu_metadata, read_elf
from ...errors import LaunchError
from ..arguments import GETTERS, is_torch_tensor, pointer_getter
from ..params import PARAM_KINDS_KEY
from . import driver as drv

_CTYPES = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
           "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
           "u64": ctypes.c_uint64, "f32": ctypes.c_float, "f64": ctypes.c_double, "ptr": ctypes.c_uint64,
           "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16}


def kernarg_layout(hsaco: bytes, name: str, kinds) -> tuple[list, int]:
    """``([(offset, ctype) per parameter], explicit size)`` from the metadata note of ``hsaco``; LaunchError when
    the kernel is missing or its explicit arguments do not match ``kinds`` (a compiler bug, caught before any
    launch writes a value to the wrong place)."""
    kernels = amdgpu_metadata(read_elf(hsaco)).get("amdhsa.kernels", [])
    entry = next((k for k in kernels if k.get(".name") == name), None)
    if entry is None:
        raise LaunchError(f"the code object has no kernel '{name}'")
    explicit = [a for a in entry.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if len(explicit) != len(kinds):
        raise LaunchError(f"kernel '{name}' has {len(explicit)} explicit arguments in its code object but "
                          f"{len(kinds)} parameters")
    layout, end = [], 0
    for i, (arg, kind) in enumerate(zip(explicit, kinds)):
        ct = _CTYPES.get(kind)
        if ct is None:
            raise LaunchError(f"unsupported kernel parameter type {kind!r}")
        want = "global_buffer" if kind == "ptr" else "by_value"
        off, size = int(arg[".offset"]), int(arg[".size"])
        if arg.get(".value_kind") != want or size != ctypes.sizeof(ct):
            raise LaunchError(f"argument {i} of '{name}' is {arg.get('.value_kind')} of {size} bytes in the code "
                              f"object, not the {kind} tilec compiled")
        layout.append((off, ct))
        end = max(end, off + size)
    return layout, end


class Launcher:
    def __init__(self, image: bytes, name: str, params, block: int, shared: int, arch: str, metadata: dict):
        self.image, self.name, self.params = image, name, list(params)
        self.block, self.shared, self.arch = block, shared, arch
        self.metadata = metadata
        layout, size = kernarg_layout(image, name, self.params)
        self.buffer = ctypes.create_string_buffer(max(8, -(-size // 8) * 8))
        self.size = ctypes.c_size_t(len(self.buffer))
        self.cells = [ct.from_buffer(self.buffer, off) for off, ct in layout]
        self.extra = (ctypes.c_void_p * 5)(drv.LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.buffer),
                                           drv.LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           drv.LAUNCH_PARAM_END)
        self.extra_addr = ctypes.addressof(self.extra)
        self.ptr_cells = [(i, c) for i, (p, c) in enumerate(zip(self.params, self.cells)) if p == "ptr"]
        self.scalar_cells = [(i, c) for i, (p, c) in enumerate(zip(self.params, self.cells)) if p != "ptr"]
        self.functions: dict = {}
        self._modules: dict = {}

    def function(self, device: int):
        """The kernel's function handle on ``device``, loading the code object there on first use."""
        fn = self.functions.get(device)
        if fn is None:
            drv.set_device(device)
            have = drv.device_arch(device).split(":")[0]
            if have != self.arch:
                raise LaunchError(f"'{self.name}' was compiled for {self.arch} but device {device} is {have}; "
                                  f"compile with Target('hip', '{have}')")
            mod = drv.load_module(self.image, self.name)
            fn = self.functions[device] = drv.get_function(mod, self.name)
            self._modules[device] = mod
        return fn

    def __call__(self, grid, args):
        if len(args) != len(self.cells):
            raise LaunchError(f"kernel '{self.name}' takes {len(self.cells)} runtime arguments, got {len(args)}")
        gx, gy, gz = (int(g) for g in (tuple(grid) + (1, 1))[:3])  # checked by targets/grid.py before here
        if gx == 0 or gy == 0 or gz == 0:
            return
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
        device = device or 0
        if stream is not None and type(stream) is not int:
            stream = stream(device)
        fn = self.functions.get(device) or self.function(device)
        try:
            drv.launch(fn, (gx, gy, gz), self.block, self.shared, stream, self.extra_addr)
        except LaunchError as e:
            raise LaunchError(f"launching '{self.name}' on grid {(gx, gy, gz)}: {e}") from None


def _not_on_device(v) -> LaunchError:
    if is_torch_tensor(v):
        return LaunchError("a torch tensor on the CPU was passed to an AMD kernel; move it with .cuda() (torch on "
                           "ROCm names AMD GPUs 'cuda')")
    return LaunchError(f"a host ({type(v).__module__.split('.')[0]}) array was passed to an AMD kernel; copy it to "
                       "the GPU first (torch on ROCm, or any DLPack / __cuda_array_interface__ producer)")


def make_launcher(asm: dict, metadata: dict) -> Launcher:
    image = asm.get("hsaco")
    if image is None:
        raise LaunchError("no AMD code object to load")
    drv.runtime()  # a clear error first when hip-python or ROCm is missing
    return Launcher(image, metadata["name"], metadata[PARAM_KINDS_KEY],
                    metadata.get("warp_size", 64) * metadata.get("num_warps", 4), metadata.get("shared", 0),
                    metadata["arch"], metadata)
