"""Kernel launch on NVIDIA GPUs: what differs from every GPU's launch (``tilec/gpu/launcher.py``).

The launcher owns a ctypes cell per parameter (in one buffer, ``tilec/gpu/param_block.py``) and a ``void*[]``
pointing at them; a launch writes the new values into the cells and calls ``cuLaunchKernelEx`` (or
``cuLaunchKernel``) through ctypes with the function handle, the stream and the array's address as plain ints, so
per-launch Python work is a short loop and no wrapper objects are built. Modules and functions are loaded lazily
per device; kernels with global scratch (in-kernel tensor copy descriptors) get it per launch.

Pointer arguments may be torch CUDA tensors (launches then go to torch's current stream), anything with
``__cuda_array_interface__`` (its ``stream`` is honoured), ``tilec.cuda`` arrays, DLPack CUDA tensors, host memory
the device can reach (pinned torch tensors, ``cuMemHostRegister``), raw ints (device addresses) or None (null);
``tilec.targets.arguments`` reads them.
"""
from __future__ import annotations

import ctypes

from ...errors import LaunchError
from ...gpu.launch_tensormaps import leaf_value
from ...gpu.launcher import GpuLauncher
from ...gpu.param_block import ParamBlock, packed
from ..arguments import device_of
from ..grid import MAX_GRID
from ..params import PARAM_KINDS_KEY
from . import driver as drv, tma
from ..allocator import get_allocator
from .array import empty

MAX_STATIC_SMEM = 48 * 1024  # bytes of shared memory a launch gets without opting in


def is_cuda_value(v) -> bool:
    """Whether ``v`` is an array in CUDA device memory."""
    return device_of(v) == "cuda"


class Launcher(GpuLauncher):
    drv = drv
    kernel_words = "a CUDA kernel"

    def __init__(self, image, name: str, params, num_warps: int, shared: int, metadata: dict):
        self.image = image
        self.shared = shared
        self.metadata = metadata
        # a hidden last parameter: global scratch (``gpu/launch_tensormaps.py``): a header of the tensor copy
        # descriptors the launch writes, then ``scratch`` bytes per program for those the kernel writes
        self.scratch = int(metadata.get("global_scratch_size", 0) or 0)
        self.maps = list(metadata.get("launch_tensormaps") or ())
        self.header = max((m["offset"] for m in self.maps), default=-128) + 128
        self.scratch_bufs: dict = {}  # (device, stream) -> tilec's own buffer; or "user" -> the allocator's
        scratch = bool(self.scratch or self.header)
        self.args = ParamBlock(*packed(list(params) + (["u64"] if scratch else [])))
        cells = self.args.cells
        self.scratch_cell = cells[-1] if scratch else None
        self.map_reads = [_leaf_reader(m["leaves"], cells) for m in self.maps]
        self._encoded: dict = {}  # (descriptor, its leaf values) -> the driver's 128 bytes
        self._written: dict = {}  # scratch address -> the header last copied there (tilec's own buffers)
        self._captured: list = []  # own scratch of launches captured into CUDA graphs (replayed later)
        # CUDA's grid: x up to 2^31-1 blocks, y and z up to 65535, whatever the block size
        self.setup(name, params, cells[:len(params)], 32 * num_warps, MAX_GRID)
        self.argv = self.args.pointers()  # kernelParams: a pointer to each parameter
        self.argv_addr = ctypes.addressof(self.argv)
        self._modules: dict = {}
        self.launch = None  # driver.raw_launch_ex() or raw_launch(), resolved on the first launch
        self.config = None  # cuLaunchKernelEx's configuration, kept and updated when grid or stream change

    def load(self, device: int) -> int:
        """The kernel's function handle (an int) on ``device`` (current), loading the module there."""
        mod = drv.load_module(self.image, self.name)
        f = drv.get_function(mod, self.name)
        if self.shared > MAX_STATIC_SMEM:
            drv.set_dynamic_shared(f, self.shared, device, self.name)
        self.metadata.setdefault("driver", drv.function_attributes(f))
        self._modules[device] = (mod, f)
        return int(f)

    def issue(self, fn, grid, stream, device):
        gx, gy, gz = grid
        if self.scratch_cell is not None:
            nbytes = self.header + self.scratch * gx * gy * gz
            if self.maps and drv.capturing(stream):  # a CUDA graph keeps this launch's scratch and header
                addr = self._capture_scratch(device, stream, nbytes)
                self._write_header(addr, stream, capture=True)
            else:
                addr = self._scratch(device, stream, nbytes)
                if self.maps:
                    self._write_header(addr, stream)
            self.scratch_cell.value = addr
        launch = self.launch or self._resolve_launch()
        cfg = self.config
        if cfg is not None:
            if (gx, gy, gz, stream) != self._configured:
                cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.hStream = gx, gy, gz, stream
                self._configured = (gx, gy, gz, stream)
            err = launch(self.config_addr, fn, self.argv_addr, None)
        else:
            err = launch(fn, gx, gy, gz, self.block, 1, 1, self.shared, stream, self.argv_addr, None)
        if err:
            raise self.launch_failed(err, grid, device)

    def _write_header(self, addr: int, stream, capture: bool = False):
        """Encode the descriptors the launch writes from this launch's arguments (as the cells hold them: device
        addresses, integers) and copy them to the scratch header, unless tilec's own buffer holds them already.
        Into a graph being captured they go as memsets of their words (a copy from pageable memory cannot be
        captured, and a memset node keeps its value)."""
        parts = []  # in header order: the metadata lists them at offsets 0, 128, ...
        for k, (m, read) in enumerate(zip(self.maps, self.map_reads)):
            values = read()
            data = self._encoded.get((k, values))
            if data is None:
                if len(self._encoded) > 256:
                    self._encoded.clear()
                data = self._encoded[(k, values)] = tma.encode_for_launch(m, values)
            parts.append(data)
        header = b"".join(parts)
        if capture:
            words = [int.from_bytes(header[j:j + 4], "little") for j in range(0, len(header), 4)]
            j = 0
            while j < len(words):  # one memset per run of equal words (descriptors hold many zeros)
                n = 1
                while j + n < len(words) and words[j + n] == words[j]:
                    n += 1
                drv.memset32(addr + 4 * j, words[j], n, stream)
                j += n
            return
        if "user" in self.scratch_bufs or self._written.get(addr) != header:
            drv.copy_to_device(addr, header, stream)
            self._written[addr] = header

    def _capture_scratch(self, device, stream, nbytes: int) -> int:
        """Scratch for a launch captured into a CUDA graph: the graph replays it with this address, so it is never
        one that later launches write (``tilec.set_allocator``'s allocator, whose memory the graph's pool owns,
        else a buffer of its own kept as long as the launcher)."""
        alloc = get_allocator()
        if alloc is not None:
            return self._allocated(alloc, nbytes, stream)
        import numpy as np
        buf = empty((nbytes,), np.uint8, device)
        self._captured.append(buf)
        return buf.ptr

    def _scratch(self, device, stream, nbytes: int) -> int:
        """Address of ``nbytes`` of global scratch for this launch: from ``tilec.set_allocator``'s allocator
        when one is set and the programs need scratch of their own (as Triton asks it only for descriptors made in
        the kernel), else a buffer of the launcher's own per device and stream (reused, grown; the descriptors
        the launch writes stay there from one launch to the next)."""
        alloc = get_allocator() if self.scratch else None
        self.scratch_bufs.pop("user", None)
        if alloc is not None:
            return self._allocated(alloc, nbytes, stream)
        key = (device, stream)
        buf = self.scratch_bufs.get(key)
        if buf is None or buf.nbytes < nbytes:
            import numpy as np
            buf = self.scratch_bufs[key] = empty((max(nbytes, 1 << 16),), np.uint8, device)
            self._written.clear()  # a new buffer may lie where an earlier one was
        return buf.ptr

    def _allocated(self, alloc, nbytes: int, stream) -> int:
        """Address of ``nbytes`` from ``tilec.set_allocator``'s allocator, the buffer kept alive until the next
        launch (stream order covers its reuse; a graph's pool owns what a captured launch got)."""
        buf = alloc(nbytes, 128, stream)
        self.scratch_bufs["user"] = buf
        try:
            return int(buf.data_ptr())
        except AttributeError:
            raise LaunchError(f"'{self.name}': the set_allocator allocator returned {type(buf).__name__}, "
                              "which has no data_ptr()") from None

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


def _leaf_reader(leaves, cells):
    """``read() -> values`` of one launch-written descriptor's leaves (base, shape, strides) as this launch's cells
    hold them: a descriptor of parameters only (a host ``TensorDescriptor``'s) reads its cells and nothing else."""
    if all(leaf[0] == "param" for leaf in leaves):
        mine = [cells[leaf[1]] for leaf in leaves]
        return lambda: tuple([c.value or 0 for c in mine])

    def param(i):
        return cells[i].value or 0
    return lambda: tuple(leaf_value(leaf, param) for leaf in leaves)


def make_launcher(asm: dict, metadata: dict) -> Launcher:
    image = asm.get("ptx")
    if image is None:
        raise LaunchError("no PTX to load")
    return Launcher(image, metadata["name"], metadata[PARAM_KINDS_KEY], metadata.get("num_warps", 4),
                    metadata.get("shared", 0), metadata)
