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
