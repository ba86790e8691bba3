"""The parameter block every GPU launcher writes a launch's arguments into (tilec/gpu/param_block.py): C's struct
layout for CUDA's per-parameter pointers, the code object's offsets for AMD's buffer, and the cells over it."""
import ctypes
import os
import sys

import pytest

from tilec.gpu.launcher import cell_type
from tilec.gpu.param_block import ParamBlock, packed

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "hip"))
import fake_cuda  # noqa: E402

KINDS = ["i1", "i32", "ptr", "f16", "i8", "f64", "bf16", "u16", "i64", "f32"]


@pytest.mark.parametrize("kinds", [KINDS, KINDS[::-1], ["ptr"], []])
def test_packed_is_the_c_struct_layout(kinds):
    class Struct(ctypes.Structure):
        _fields_ = [(f"p{i}", cell_type(k)) for i, k in enumerate(kinds)]
    layout, size = packed(kinds)
    assert [off for off, _ in layout] == [getattr(Struct, f"p{i}").offset for i in range(len(kinds))]
    assert [ct for _, ct in layout] == [cell_type(k) for k in kinds]
    assert size <= ctypes.sizeof(Struct) and (not kinds or size > layout[-1][0])


def test_cells_write_into_the_buffer_at_their_offsets():
    block = ParamBlock(*packed(["i32", "ptr", "f32"]))
    block.cells[0].value, block.cells[1].value, block.cells[2].value = -5, 0x1234_5678_9ABC, 1.5
    assert block.size == 24 and block.address == ctypes.addressof(block.buffer)
    raw = ctypes.string_at(block.address, block.size)
    assert (ctypes.c_int32.from_buffer_copy(raw, 0).value, ctypes.c_uint64.from_buffer_copy(raw, 8).value,
            ctypes.c_float.from_buffer_copy(raw, 16).value) == (-5, 0x1234_5678_9ABC, 1.5)
    pointers = block.pointers()
    assert list(pointers) == [block.address, block.address + 8, block.address + 16]
    assert len(ParamBlock([], 0).pointers()) == 1 and ParamBlock([], 0).size == 8


def test_cuda_kernel_params_point_at_each_cell_and_the_scratch_last(monkeypatch):
    fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=1))
    from tilec.targets.cuda.launcher import Launcher
    kinds = ["ptr", "i32", "f16", "ptr"]
    k = Launcher("ptx", "k", kinds, 4, 0, {"global_scratch_size": 64})
    argv = (ctypes.c_void_p * 5).from_address(k.argv_addr)
    assert list(argv) == [ctypes.addressof(c) for c in k.cells + [k.scratch_cell]]
    assert [type(c) for c in k.cells] == [cell_type(t) for t in kinds] and type(k.scratch_cell) is ctypes.c_uint64
    k.write([0x1000, 7, 1.0, None])
    assert [c.value for c in k.cells] == [0x1000, 7, 0x3C00, 0]
    plain = Launcher("ptx", "k", kinds, 4, 0, {})
    assert plain.scratch_cell is None and len(plain.argv) == 4


def test_descriptors_the_launch_writes_are_encoded_from_the_cells_and_copied_when_they_change(monkeypatch):
    """``metadata["launch_tensormaps"]``: each launch encodes them from its own arguments (the cells: device
    addresses and integers; constants as given) and copies the header to the head of the scratch, the programs'
    slots after it; tilec's own buffer keeps the header, so an unchanged one is not copied again. A leaf may be
    integer arithmetic of arguments (``gpu/launch_tensormaps.py: leaf_value``)."""
    fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=1))
    from tilec.targets.cuda import driver as drv, launcher as L
    encoded, copies = [], []
    monkeypatch.setattr(drv, "encode_tensormap", lambda code, base, dims, strides, box, swizzle, nan: (
        encoded.append((code, base, dims, strides, box, swizzle, nan)) or base.to_bytes(8, "little") * 16))
    monkeypatch.setattr(drv, "copy_to_device", lambda addr, data, stream: copies.append((addr, data)))
    monkeypatch.setattr(drv, "capturing", lambda stream: False)
    monkeypatch.setattr(L.Launcher, "_scratch", lambda self, device, stream, nbytes: (
        copies.append(("alloc", nbytes)) or 0x9000))
    maps = [{"offset": 0, "leaves": [("param", 0), ("param", 1), ("param", 2), ("param", 3), ("const", 1)],
             "box": [64, 32], "swizzle": 128, "padding": "zero", "elem_bytes": 2, "elem": "f16"},
            {"offset": 128, "leaves": [("param", 4), ("const", 8),  # shape 2 * arg 1 - arg 1, as the kernel computes it
                                       ["sub", 32, True, ["mul", 32, True, ["param", 1], ["const", 2]], ["param", 1]],
                                       ("const", 64), ("const", 1)],
             "box": [8, 64], "swizzle": 0, "padding": "nan", "elem_bytes": 4, "elem": "f32"}]
    k = L.Launcher("ptx", "k", ["ptr", "i32", "i32", "i32", "ptr"], 4, 0,
                   {"global_scratch_size": 256, "launch_tensormaps": maps})
    k.load = lambda device: 1
    k.launch, k.config = (lambda *a: 0), None
    k([2, 3, 1], [0x1000, 100, 48, 56, 0x2000])
    assert copies[0] == ("alloc", 256 + 256 * 6)  # the header, then 256 bytes per program
    # innermost first; byte strides of the outer dimensions; box innermost first; 128-byte swizzle is mode 3
    assert encoded == [(1, 0x1000, [48, 100], [112], [32, 64], 3, False),
                       (7, 0x2000, [100, 8], [256], [64, 8], 0, True)]
    assert copies[1] == (0x9000, (0x1000).to_bytes(8, "little") * 16 + (0x2000).to_bytes(8, "little") * 16)
    k([2, 3, 1], [0x1000, 100, 48, 56, 0x2000])     # the same arguments: nothing encoded or copied again
    assert len(encoded) == 2 and len(copies) == 3
    k([2, 3, 1], [0x3000, 100, 48, 56, 0x2000])     # another A
    assert encoded[-1][1] == 0x3000 and copies[-1][1][:8] == (0x3000).to_bytes(8, "little") and len(copies) == 5


def test_descriptors_the_launch_writes_go_into_a_captured_graph_as_memsets_in_scratch_of_their_own(monkeypatch):
    """A launch captured into a CUDA graph: the header goes to scratch that no later launch writes (here
    tilec's own, kept), as memsets of its words (capturable, unlike a copy from pageable memory)."""
    fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=1))
    from tilec.targets.cuda import driver as drv, launcher as L
    sets, copies = [], []
    monkeypatch.setattr(drv, "encode_tensormap", lambda code, base, *rest: base.to_bytes(4, "little") + bytes(124))
    monkeypatch.setattr(drv, "copy_to_device", lambda addr, data, stream: copies.append(addr))
    monkeypatch.setattr(drv, "memset32", lambda addr, value, count, stream: sets.append((addr, value, count)))
    maps = [{"offset": 0, "leaves": [("param", 0), ("const", 64), ("const", 1)], "box": [64], "swizzle": 0,
             "padding": "zero", "elem_bytes": 4, "elem": "f32"}]
    k = L.Launcher("ptx", "k", ["ptr"], 4, 0, {"global_scratch_size": 0, "launch_tensormaps": maps})
    k.load = lambda device: 1
    k.launch, k.config = (lambda *a: 0), None
    monkeypatch.setattr(drv, "capturing", lambda stream: False)
    k([1, 1, 1], [0x1234])
    eager = k.scratch_cell.value
    assert copies == [eager] and sets == []
    monkeypatch.setattr(drv, "capturing", lambda stream: True)
    k([1, 1, 1], [0x1234])
    graph = k.scratch_cell.value
    assert graph != eager and k._captured and copies == [eager]
    assert sets == [(graph, 0x1234, 1), (graph + 4, 0, 31)]  # the base's word, then a run of zeros


def test_launch_written_descriptor_of_parameters_is_copied_only_when_it_changes(monkeypatch):
    """A host descriptor's leaves are all parameters: the launch reads them from its cells, encodes once per
    distinct value and copies the header only when it differs from what its buffer holds."""
    fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=1))
    from tilec.targets.cuda import driver as drv, launcher as L
    copies, encoded = [], []

    def encode(code, base, dims, strides, *rest):
        encoded.append((base, list(dims), list(strides)))
        return base.to_bytes(8, "little") + bytes(120)
    monkeypatch.setattr(drv, "encode_tensormap", encode)
    monkeypatch.setattr(drv, "copy_to_device", lambda addr, data, stream: copies.append(data[:8]))
    monkeypatch.setattr(drv, "capturing", lambda stream: False)
    maps = [{"offset": 0, "leaves": [("param", 0), ("param", 1), ("param", 2), ("param", 3), ("param", 4)],
             "box": [16, 16], "swizzle": 0, "padding": "zero", "elem_bytes": 2, "elem": "f16"}]
    k = L.Launcher("ptx", "k", ["ptr", "i32", "i32", "i64", "i64"], 4, 0,
                   {"global_scratch_size": 0, "launch_tensormaps": maps})
    monkeypatch.setattr(L.Launcher, "_scratch", lambda self, device, stream, nbytes: 0x9000)
    k.load = lambda device: 1
    k.launch, k.config = (lambda *a: 0), None
    k([1, 1, 1], [0x10000, 48, 32, 48, 1])
    k([1, 1, 1], [0x10000, 48, 32, 48, 1])
    assert copies == [(0x10000).to_bytes(8, "little")] and len(encoded) == 1
    assert encoded[0][1:] == ([32, 48], [96])  # innermost first; byte strides of the outer dimensions
    k([1, 1, 1], [0x20000, 48, 32, 48, 1])
    k([1, 1, 1], [0x10000, 48, 32, 48, 1])  # encoded before: from the cache, copied again (the buffer changed)
    assert [int.from_bytes(c, "little") for c in copies] == [0x10000, 0x20000, 0x10000] and len(encoded) == 2
