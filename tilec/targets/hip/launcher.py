"""Kernel launch on AMD GPUs: a launcher built once per compiled kernel.

The kernel-argument buffer is laid out from the code object's own metadata note (``.args``: offset, size and
kind of every explicit argument), checked against the parameter kinds tilec compiled, so the launch writes each
value where the kernel reads it; the runtime appends the hidden arguments (grid sizes and the rest of code object
v5's implicit block) itself. A launch writes the values into ctypes cells over that buffer and calls
``hipModuleLaunchKernel`` with it as ``extra``. Modules and function handles are loaded per device on first use,
after checking that the device's architecture is the one compiled for.

Pointer arguments: torch tensors on ROCm (``device.type == "cuda"`` there; ``torch.version.hip`` tells them
apart, see ``targets/arguments.py``) launch on torch's current stream; DLPack ROCm tensors,
``__cuda_array_interface__`` producers (ROCm builds of CuPy and others), pinned host memory, raw int addresses and
None (null) are accepted too. What every GPU's launch shares (arguments, device and stream, grid limits, debug
records, faults) is ``tilec/gpu/launcher.py``; here is what is AMD's own: the argument buffer, the architecture
check, ``hipModuleLaunchKernel``, and the grid limit (a dimension's work-items, programs x threads, are a 32-bit
count in the dispatch packet).
"""
from __future__ import annotations

import ctypes

from ...elf import amdgpu_metadata, read_elf
from ...errors import LaunchError
from ...gpu.launcher import GpuLauncher, cell_type
from ...gpu.param_block import ParamBlock
from ..grid import MAX_GRID
from ..params import PARAM_KINDS_KEY
from . import driver as drv

#: work-items along one grid dimension (programs x threads per program) are a 32-bit count in the AQL packet
MAX_WORK_ITEMS = 2**32 - 1


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
        ct = cell_type(kind)
        want = "global_buffer" if kind == "ptr" else "by_value"
        off, size = int(arg[".offset"]), int(arg[".size"])
        if arg.get(".value_kind") != want or size != ctypes.sizeof(ct):
            raise LaunchError(f"argument {i} of '{name}' is {arg.get('.value_kind')} of {size} bytes in the code "
                              f"object, not the {kind} tilec compiled")
        layout.append((off, ct))
        end = max(end, off + size)
    return layout, end


class Launcher(GpuLauncher):
    drv = drv
    kernel_words = "an AMD kernel"

    def __init__(self, image: bytes, name: str, params, block: int, shared: int, arch: str, metadata: dict):
        self.image, self.shared, self.arch = image, shared, arch
        self.metadata = metadata
        self.args = ParamBlock(*kernarg_layout(image, name, params))
        self.size = ctypes.c_size_t(self.args.size)
        self.setup(name, params, self.args.cells, block,
                   (min(MAX_GRID[0], MAX_WORK_ITEMS // block), MAX_GRID[1], MAX_GRID[2]))
        self.extra = (ctypes.c_void_p * 5)(drv.LAUNCH_PARAM_BUFFER_POINTER, self.args.address,
                                           drv.LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           drv.LAUNCH_PARAM_END)
        self.extra_addr = ctypes.addressof(self.extra)
        self._modules: dict = {}

    def grid_limit_reason(self, axis: int) -> str:
        if axis == 0 and self.grid_limit[0] < MAX_GRID[0]:
            return (f": AMD GPUs count a dimension's work-items (programs x {self.block} threads) in 32 bits; use "
                    "fewer, larger programs or a second grid dimension")
        return ""

    def load(self, device: int):
        """The kernel's function handle on ``device`` (current), after checking its architecture."""
        have = drv.device_arch(device).split(":")[0]
        if have != self.arch:
            raise LaunchError(f"'{self.name}' was compiled for {self.arch} but device {device} is {have}; "
                              f"compile with Target('hip', '{have}')")
        mod = drv.load_module(self.image, self.name)
        self._modules[device] = mod
        return drv.get_function(mod, self.name)

    def issue(self, fn, grid, stream, device):
        err = drv.launch(fn, grid, self.block, self.shared, stream, self.extra_addr)
        if err is not None:
            raise self.launch_failed(err, grid, device)


def make_launcher(asm: dict, metadata: dict) -> Launcher:
    image = asm.get("hsaco")
    if image is None:
        raise LaunchError("no AMD code object to load")
    drv.runtime()  # a clear error first when hip-python or ROCm is missing
    return Launcher(image, metadata["name"], metadata[PARAM_KINDS_KEY],
                    metadata.get("warp_size", 64) * metadata.get("num_warps", 4), metadata.get("shared", 0),
                    metadata["arch"], metadata)
