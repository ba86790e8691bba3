"""The shared argument inspection (``tilec.targets.arguments``): what every backend and the specialiser learn
about a host value, for each kind of producer."""
import ctypes
import os
import sys

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.runtime import args as spec_args
from tilec.targets import arguments
from tilec.targets.cpu.launcher import host_pointer
from tilec.targets.cuda.launcher import Launcher as CudaLauncher, is_cuda_value

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "gpu"))
import fake_cuda  # noqa: E402


def _not_on_device(v):
    return CudaLauncher("// no ptx", "k", ["ptr"], 4, 0, {}).not_on_device(v)

rng = np.random.default_rng(5)


class ArrayInterfaceOnly:
    """A host array known only through ``__array_interface__``."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


class DLPackOnly:
    """A host array known only through DLPack (numpy's own producer underneath)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class FakeCudaArray:
    """A device array as ``__cuda_array_interface__`` describes it (no memory behind it: only inspected)."""

    def __init__(self, ptr=0x7F0000001000, typestr="<f2", readonly=False, device=1, stream=None):
        self.device = device
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": typestr, "data": (ptr, readonly), "version": 3,
                                         "strides": None, "stream": stream}


def test_numpy_array():
    a = rng.standard_normal(37).astype(np.float32)
    info = arguments.inspect(a)
    assert info == arguments.ArrayInfo(a.ctypes.data, "fp32", "cpu", None, True)
    assert arguments.is_array(a) and arguments.device_of(a) == "cpu"
    assert arguments.address(a) == a.ctypes.data
    assert arguments.pointer_getter(a)(a) == (a.ctypes.data, -1, None)


def test_numpy_views_point_at_their_first_element():
    a = np.arange(100, dtype=np.int16)
    v = a[7:]
    assert arguments.inspect(v).ptr == a.ctypes.data + 7 * 2
    assert host_pointer(v) == a.ctypes.data + 14


@pytest.mark.parametrize("dtype, name", [(np.bool_, "i1"), (np.int8, "i8"), (np.uint16, "u16"), (np.int64, "i64"),
                                         (np.float16, "fp16"), (np.float64, "fp64"), (np.uint64, "u64")])
def test_numpy_element_types(dtype, name):
    assert arguments.inspect(np.zeros(3, dtype)).dtype == name


def test_read_only_arrays_are_not_writable():
    a = np.arange(10, dtype=np.float32)
    a.flags.writeable = False
    assert arguments.inspect(a).writable is False
    b = np.broadcast_to(np.float32(1), (5,))  # broadcast views are read-only
    assert arguments.inspect(b).writable is False
    assert arguments.inspect(ArrayInterfaceOnly(a)).writable is False
    assert arguments.inspect(FakeCudaArray(readonly=True)).writable is False


def test_unsupported_element_types_are_named():
    with pytest.raises(TypeError, match="complex64"):
        arguments.inspect(np.zeros(3, np.complex64))


def test_array_interface_objects():
    a = rng.standard_normal(9)
    w = ArrayInterfaceOnly(a)
    assert arguments.inspect(w) == arguments.ArrayInfo(a.ctypes.data, "fp64", "cpu", None, True)
    assert arguments.pointer_getter(w)(w) == (a.ctypes.data, -1, None)


def test_dlpack_producers():
    a = np.arange(12, dtype=np.int32)[3:]
    d = DLPackOnly(a)
    assert arguments.producer(d) == "dlpack"
    assert arguments.device_of(d) == "cpu"
    assert arguments.inspect(d) == arguments.ArrayInfo(a.ctypes.data, "i32", "cpu", None, True)
    assert arguments.pointer_getter(d)(d) == (a.ctypes.data, -1, None)


def test_cuda_array_interface_objects():
    c = FakeCudaArray(ptr=0x7F0000001000, typestr="<f2", device=1, stream=7)
    assert arguments.inspect(c) == arguments.ArrayInfo(0x7F0000001000, "fp16", "cuda", 1, True)
    assert arguments.device_of(c) == "cuda" and is_cuda_value(c)
    assert arguments.pointer_getter(c)(c) == (0x7F0000001000, 1, 7)


def test_tilec_cuda_arrays_use_their_own_fields():
    from tilec.targets.cuda.array import DeviceArray
    d = DeviceArray((8,), np.float32, 0x7F0000002000, device=0, owner=False)
    assert arguments.pointer_getter(d)(d) == (0x7F0000002000, 0, None)
    assert arguments.inspect(d) == arguments.ArrayInfo(0x7F0000002000, "fp32", "cuda", 0, True)


def test_values_that_are_not_arrays():
    for v in (3, 2.5, True, None, "x"):
        assert arguments.inspect(v) is None and arguments.device_of(v) is None and not arguments.is_array(v)
    assert arguments.address(None) == 0
    assert arguments.pointer_getter(4096)(4096) == (4096, None, None)
    assert arguments.address(np.uint64(4096)) == 4096
    buf = (ctypes.c_float * 4)()
    assert arguments.address(buf) == ctypes.addressof(buf)
    with pytest.raises(LaunchError, match="cannot pass str as a pointer"):
        arguments.address("x")


def test_backends_refuse_memory_of_the_other_side():
    with pytest.raises(LaunchError, match="cuda array was passed to a CPU kernel"):
        host_pointer(FakeCudaArray())
    assert "copy it to the device" in str(_not_on_device(np.zeros(2)))


def test_specialisation_reads_the_same_facts():
    a = np.zeros(8, np.float32)
    w = ArrayInterfaceOnly(a)
    key, sig, div, eq1 = spec_args.describer(w)(w)
    assert sig == "*fp32" and div == (16 if a.ctypes.data % 16 == 0 else 1) and not eq1
    c = FakeCudaArray(typestr="<i4")
    key_c, sig_c, _, _ = spec_args.describer(c)(c)
    assert sig_c == "*i32" and key_c != spec_args.describer(w)(ArrayInterfaceOnly(np.zeros(8, np.int32)))[0]


@tilec.jit
def scale(X, Out, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Out + offs, tl.load(X + offs, mask=m) * a, mask=m)


@pytest.mark.parametrize("wrap", [ArrayInterfaceOnly, DLPackOnly], ids=["array_interface", "dlpack"])
def test_cpu_launch_with_interface_arrays(wrap):
    n = 203
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    scale[(tilec.cdiv(n, 64),)](wrap(x), wrap(out), n, 3.0, BLOCK=64)
    np.testing.assert_allclose(out, 3.0 * x, rtol=1e-6)


# -- torch (skipped without it) ------------------------------------------------------------------------------------
def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    t = torch.arange(10, dtype=torch.float32)[2:]
    info = arguments.inspect(t)
    assert info == arguments.ArrayInfo(t.data_ptr(), "fp32", "cpu", None, True)
    assert arguments.producer(t) == "torch" and arguments.device_of(t) == "cpu"
    assert arguments.pointer_getter(t)(t)[:2] == (t.data_ptr(), -1)
    assert arguments.inspect(torch.zeros(2, dtype=torch.bfloat16)).dtype == "bf16"
    assert arguments.inspect(torch.nn.Parameter(torch.zeros(3))).dtype == "fp32"
    assert "move it to the device (tensor.to(device))" in str(_not_on_device(t))
    with pytest.raises(TypeError, match="complex64"):
        arguments.inspect(torch.zeros(2, dtype=torch.complex64))


def test_torch_cpu_launch():
    torch = pytest.importorskip("torch")
    n = 150
    x = torch.randn(n)
    out = torch.zeros(n)
    scale[(tilec.cdiv(n, 64),)](x, out, n, -2.0, BLOCK=64)
    torch.testing.assert_close(out, -2.0 * x)


# -- the CUDA launcher's argument loop, without a GPU (a fake driver) ------------------------------------------------
def _cuda_launcher(monkeypatch):
    fake = fake_cuda.install(monkeypatch, fake_cuda.FakeCuda())
    launcher = CudaLauncher("// no ptx", "k", ["ptr", "i32", "ptr"], 4, 0, {})
    fake.on_launch = lambda launch: launch.update(values=[c.value for c in launcher.cells])
    return launcher, fake.launches


def test_cuda_launcher_reads_pointers_through_the_shared_inspection(monkeypatch):
    launcher, calls = _cuda_launcher(monkeypatch)
    a, b = FakeCudaArray(ptr=0x7F0000003000, device=0), FakeCudaArray(ptr=0x7F0000004000, device=0)
    launcher((2, 1, 1), [a, 77, b])
    assert (calls[-1]["grid"], calls[-1]["block"][0]) == ((2, 1, 1), 128)
    assert calls[-1]["values"] == [0x7F0000003000, 77, 0x7F0000004000]
    launcher((1, 1, 1), [None, 1, 4096])  # null and raw device addresses pass as they are
    assert calls[-1]["values"] == [0, 1, 4096]


def test_cuda_launcher_refuses_host_memory(monkeypatch):
    launcher, calls = _cuda_launcher(monkeypatch)
    with pytest.raises(LaunchError, match=r"host \(numpy\) array was passed to a CUDA kernel"):
        launcher((1, 1, 1), [np.zeros(4, np.float32), 1, None])
    with pytest.raises(LaunchError, match="cannot pass str"):
        launcher((1, 1, 1), ["x", 1, None])
    torch = pytest.importorskip("torch")
    with pytest.raises(LaunchError, match=r"move it to the device \(tensor\.to\(device\)\)"):
        launcher((1, 1, 1), [torch.zeros(4), 1, None])
    assert calls == []


@tilec.jit
def _copy_2d(x_ptr, y_ptr, n0, n1, sx0, sx1, sy0, sy1, B0: tl.constexpr, B1: tl.constexpr):
    r = tl.arange(0, B0)[:, None]
    c = tl.arange(0, B1)[None, :]
    m = (r < n0) & (c < n1)
    tl.store(y_ptr + r * sy0 + c * sy1, tl.load(x_ptr + r * sx0 + c * sx1, mask=m), mask=m)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "bool", "uint8", "int64"])
def test_torch_tensors_of_every_dtype_and_stride_in_the_interpreter_and_compiled(dtype):
    """The interpreter takes what the compiled path takes: torch tensors of any dtype (bf16, fp8, bool, unsigned)
    and stride (a transposed, sliced view), writing back into the caller's tensor."""
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype, None)
    if dt is None:
        pytest.skip(f"this torch has no {dtype}")
    g = torch.Generator().manual_seed(7)
    base = (torch.randn(13, 22, generator=g) * 4)
    src = (base > 0) if dtype == "bool" else base.abs().to(dt) if dtype == "uint8" else base.to(dt)
    x = src.t()[3:17:2]  # 7 x 13, strided both ways
    for interpret in (True, False):
        y = torch.zeros(20, 9, dtype=dt).t()[:, 1:]  # 9 x 19 view: write a 7 x 13 corner
        tilec.jit(_copy_2d.fn, interpret=interpret)[(1,)](x, y, 7, 13, *x.stride(), *y.stride(), B0=8, B1=16)
        assert torch.equal(y[:7, :13].view(torch.uint8) if dt.itemsize == 1 and dtype != "bool" else y[:7, :13],
                           x.view(torch.uint8) if dt.itemsize == 1 and dtype != "bool" else x), (dtype, interpret)
        assert not y[7:].to(torch.float32).any() and not y[:, 13:].to(torch.float32).any()
