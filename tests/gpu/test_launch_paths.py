"""Every GPU launch path through fake drivers (fake_cuda.py, tests/hip/fake_hip.py), for CUDA and AMD alike: each
launch makes its arguments' device current only when it is not and restores the caller's, uses the caller's current
stream, works from several threads; debug builds keep their failure record in device memory; f16/bf16 scalars
travel as the kernel's parameters are; pinned host memory is taken; grids are checked against the target's
limits; a kernel fault names the kernel. No GPU needed (the real thing: test_launch_devices.py, ``-m gpu``)."""
import ctypes
import os
import struct
import sys
import numpy as np
import pytest

import tilec
from tilec.compiler import ASTSource
from tilec.errors import ArgumentError, DeviceAssertionError, KernelFault, LaunchError
from tilec.pipeline import CompiledKernel

from gpu_jit_kernels import add_kernel as add
from launch_kernels import in_threads, positive, scaled

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "hip"))
import fake_cuda  # noqa: E402
import fake_hip  # noqa: E402
import fake_torch  # noqa: E402


class Cuda:
    target = tilec.Target("cuda", 90, 32)
    kernel_words = "a CUDA kernel"
    fault = fake_cuda.CUresult.CUDA_ERROR_MISALIGNED_ADDRESS

    def __init__(self, monkeypatch):
        self.fake = fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=2))

    def array(self, address, device=0, stream=None):
        return fake_cuda.DeviceArray(address, device, stream=stream)

    def current(self):
        return self.fake.device_of(self.fake.current)

    def make_current(self, device):
        from tilec.targets.cuda import driver
        driver.context(device)

    def switches(self):
        return [c for c in self.fake.calls if c[0] == "cuCtxSetCurrent"]

    def pin(self, host, device_address):
        self.fake.pinned[host] = device_address


class Hip:
    target = tilec.Target("hip", "gfx942", 64)
    kernel_words = "an AMD kernel"
    fault = fake_hip.hipError_t.hipErrorIllegalAddress

    def __init__(self, monkeypatch):
        self.fake = fake_hip.install(monkeypatch, fake_hip.FakeHip())
        from tilec.gpu import launcher
        monkeypatch.setattr(launcher, "LAST_LAUNCH", {})
        monkeypatch.setattr(launcher, "FAULTS", {})

    def array(self, address, device=0, stream=None):
        a = fake_hip.DeviceArray(address, stream=stream)
        a.device = device
        return a

    def current(self):
        return self.fake.device

    def make_current(self, device):
        self.fake.hipSetDevice(device)

    def switches(self):
        return [c for c in self.fake.calls if c[0] == "hipSetDevice"]

    def pin(self, host, device_address):
        self.fake.pinned[host] = device_address


@pytest.fixture(params=[Cuda, Hip], ids=["cuda", "hip"])
def gpu(request, monkeypatch):
    return request.param(monkeypatch)


_COMPILED: dict = {}


def compiled(gpu, kernel, signature, options=None, **constexprs):
    """A compiled kernel with a launcher of its own (launchers keep function handles of the fake they met)."""
    key = (gpu.target, kernel.__name__, signature, repr(options))
    k = _COMPILED.get(key)
    if k is None:
        k = _COMPILED[key] = tilec.compile(ASTSource(kernel, signature=signature, constexprs=constexprs),
                                           target=gpu.target, options=options or {})
    return CompiledKernel(k.name, k.target, k.asm, k.metadata, k._backend)


def vector_add(gpu):
    return compiled(gpu, add, "*fp32,*fp32,*fp32,i32", BLOCK=64)


def snapshot_values(gpu, launcher):
    """Make each launch record its parameter cells' values as the kernel would see them."""
    gpu.fake.on_launch = lambda launch: launch.update(values=[c.value for c in launcher.cells])


# -- devices, streams, threads -----------------------------------------------------------------------------------
def test_alternating_devices_each_launch_on_its_own(gpu):
    k = vector_add(gpu)
    gpu.make_current(0)
    before = len(gpu.switches())
    for i, device in enumerate([0, 1, 0, 1, 1, 0]):
        a = gpu.array(0x1000 * (i + 1), device)
        k.run((2,), [a, a, a, 100])
        assert gpu.fake.launches[-1]["device"] == device
        assert gpu.current() == 0  # the caller's device, as it was
    # a switch there and one back per launch on device 1, none for device 0 (current already)
    assert len(gpu.switches()) - before == 2 * 3
    assert len(gpu.fake.modules) == 2  # loaded once per device


def test_no_device_in_the_arguments_means_the_current_device(gpu):
    k = vector_add(gpu)
    gpu.make_current(1)
    k.run((1,), [0x1000, None, 0x3000, 5])  # raw addresses and null say nothing about a device
    assert gpu.fake.launches[-1]["device"] == 1 and gpu.current() == 1


def test_streams_of_the_arguments(gpu):
    k = vector_add(gpu)
    if isinstance(gpu, Cuda):
        side = gpu.fake.stream(1)
    else:
        side = 0x5001
    k.run((1,), [gpu.array(0x10, 1, stream=side), gpu.array(0x20, 1), gpu.array(0x30, 1), 5])
    assert gpu.fake.launches[-1]["stream"] == side and gpu.fake.launches[-1]["device"] == 1
    k.run((1,), [gpu.array(0x10, 1), gpu.array(0x20, 1), gpu.array(0x30, 1), 5])
    assert gpu.fake.launches[-1]["stream"] == 0  # the default stream


def test_torch_tensors_launch_on_torchs_current_stream_of_their_device(gpu, monkeypatch):
    streams = ({0: gpu.fake.stream(0), 1: gpu.fake.stream(1)} if isinstance(gpu, Cuda) else {0: 0x7770, 1: 0x7771})
    Tensor = fake_torch.install(monkeypatch, streams, isinstance(gpu, Hip)).Tensor
    k = vector_add(gpu)
    for device in (1, 0, 1):
        t = Tensor(0x9000 + device, device)
        k.run((3,), [t, t, t, 7])
        launch = gpu.fake.launches[-1]
        assert (launch["device"], launch["stream"]) == (device, streams[device])


def test_several_threads_alternating_devices_and_streams(gpu):
    k = vector_add(gpu)
    streams = {d: (gpu.fake.stream(d) if isinstance(gpu, Cuda) else 0x6000 + d) for d in (0, 1)}
    per_thread = 40
    snapshot_values(gpu, k.launcher)

    def work(t):
        gpu.make_current(t % 2)
        for i in range(per_thread):
            device = (i + t) % 2
            a = gpu.array(0x1000 + 16 * t + device, device, stream=streams[device] if i % 3 else None)
            k.run((1 + t,), [a, a, a, i])
            assert gpu.current() == t % 2
    assert in_threads(work, 4) == []
    launches = gpu.fake.launches
    assert len(launches) == 4 * per_thread
    for launch in launches:  # every launch went to the device its arguments are on, with that device's stream
        assert launch["device"] == launch["values"][0] % 16
        assert launch["stream"] in (0, streams[launch["device"]])
        assert launch["values"][3] < per_thread and launch["values"][0] // 16 == 0x100 + launch["grid"][0] - 1
    assert {launch["device"] for launch in launches} == {0, 1}


# -- debug builds ------------------------------------------------------------------------------------------------
def test_debug_build_with_device_assert_launches_and_reports(gpu):
    k = compiled(gpu, positive, "*fp32,i32", {"debug": True}, BLOCK=32)
    inner = k.launcher.inner
    sites = k.metadata["debug_checks"]["sites"]
    site = next(i for i, s in enumerate(sites) if s["kind"] == "assert") + 1
    x = gpu.array(0x4000, 1, stream=gpu.fake.stream(1) if isinstance(gpu, Cuda) else 0x4401)
    k.run((1,), [x, 20])  # nothing failed: no error, and the record was zeroed and read on the launch's stream
    memsets = [c for c in gpu.fake.calls if "Memset" in c[0]]
    copies = [c for c in gpu.fake.calls if "DtoH" in c[0]]
    stream = gpu.fake.launches[-1]["stream"]
    assert memsets[-1][-2:] == (stream, 1) and copies[-1][-2:] == (stream, 1)

    def fail(launch):  # the kernel's part: program (2, 0, 0) claims the record
        words = np.ctypeslib.as_array((ctypes.c_int64 * 16).from_address(inner.cells[2].value))
        words[:6] = [site, 2, 0, 0, 0, 1]
    gpu.fake.on_launch = fail
    with pytest.raises(DeviceAssertionError, match=r"device_assert failed in program \(2, 0, 0\): inputs must be "
                                                   "positive"):
        k.run((3,), [x, 20])
    gpu.fake.on_launch = None
    k.run((3,), [x, 20])  # the record is zeroed again for the next launch


# -- scalars -----------------------------------------------------------------------------------------------------
def _f32(bits16):
    return struct.unpack("<f", struct.pack("<I", bits16 << 16))[0]


@pytest.mark.parametrize("a, b", [(1.5, 3.14159), (np.float16(-2.25), np.float32(1.00390625)), (3, 65504.0),
                                  (np.float32(1e5), np.float64(-0.1))])
def test_f16_and_bf16_scalars_from_python_and_numpy_numbers(gpu, a, b):
    k = compiled(gpu, scaled, "*fp32,fp16,bf16", BLOCK=16)
    assert k.metadata["param_kinds"] == ["ptr", "f16", "bf16"]
    launcher = k.launcher
    snapshot_values(gpu, launcher)
    k.run((1,), [gpu.array(0x100), a, b])
    _, fa, fb = gpu.fake.launches[-1]["values"]
    with np.errstate(over="ignore"):
        assert fa == int(np.array(a, np.float16).view(np.uint16))  # the f16 parameter: its 16 bits
    # the bf16 parameter is an f32 register (the GPU register model): a value of bf16, rounded to nearest even
    expect = float(np.float32(b))
    bits = int(np.array(expect, np.float32).view(np.uint32))
    assert fb == _f32(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)


def test_bf16_values():
    from tilec.gpu.launcher import bf16_value
    assert bf16_value(3.14159) == 3.140625 and bf16_value(1.00390625) == 1.0  # to nearest, ties to even
    assert bf16_value(-0.1) == -0.10009765625 and bf16_value(65504) == 65536 and bf16_value(2) == 2.0
    assert bf16_value(float("inf")) == float("inf") and np.isnan(bf16_value(float("nan")))
    from tilec.gpu.launcher import CONVERT  # fp8 scalars: f32 registers holding a value of the format
    assert CONVERT["f8e4m3"](0.3) == 0.3125 and CONVERT["f8e5m2"](0.3) == 0.3125
    assert CONVERT["f8e4m3"](1000.0) == 448.0 and CONVERT["f8e5m2"](1e6) == 57344.0  # saturating, as the evaluator rounds


def test_bf16_parameter_is_four_bytes_in_the_compiled_kernel(gpu):
    k = compiled(gpu, scaled, "*fp32,fp16,bf16", BLOCK=16)
    if isinstance(gpu, Cuda):
        import re
        params = re.findall(r"\.param (\S+)[^\n]*?scaled_param_(\d)", k.asm["ptx"])
        assert dict((i, t) for t, i in params)["2"] == ".f32"
    else:
        from tilec.targets.hip.launcher import kernarg_layout
        layout, _ = kernarg_layout(k.asm["hsaco"], k.name, k.metadata["param_kinds"])
        assert [ct.__name__ for _, ct in layout][1:] == ["c_ushort", "c_float"]


def test_scalar_cells_follow_the_gpu_register_model():
    from llvmlite import ir
    from tilec.gpu.launcher import CELLS
    from tilec.gpu.lowering.types import _BY_NAME
    for kind, t in _BY_NAME.items():
        size = {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}.get(type(t)) or max(1, t.width // 8)
        assert ctypes.sizeof(CELLS[kind]) == size, kind


def test_scalars_that_do_not_fit_are_argument_errors(gpu):
    k = vector_add(gpu)
    a = gpu.array(0x100)
    with pytest.raises(ArgumentError, match="argument 3 of 'add_kernel' .*2.5.* does not fit its i32 parameter"):
        k.run((1,), [a, a, a, 2.5])
    with pytest.raises(ValueError, match="takes 4 runtime arguments, got 3"):
        k.run((1,), [a, a, a])


# -- pinned host memory ------------------------------------------------------------------------------------------
def test_pinned_host_memory_is_taken_pageable_refused(gpu):
    k = vector_add(gpu)
    snapshot_values(gpu, k.launcher)
    pinned, pageable = np.ones(64, np.float32), np.ones(64, np.float32)
    gpu.pin(pinned.ctypes.data, 0xD000)
    dev = gpu.array(0x2000, 1)
    k.run((1,), [pinned, dev, dev, 64])
    launch = gpu.fake.launches[-1]
    assert launch["values"][0] == 0xD000 and launch["device"] == 1  # the device's address of it
    with pytest.raises(ArgumentError, match=rf"host \(numpy\) array was passed to {gpu.kernel_words} \('add_kernel'\); "
                                            "copy it to the device first, or use pinned host memory"):
        k.run((1,), [pageable, dev, dev, 64])
    with pytest.raises(ValueError):  # as Triton refuses a CPU tensor
        k.run((1,), [dev, pageable, dev, 64])


# -- grids -------------------------------------------------------------------------------------------------------
def test_grid_limits_of_the_target(gpu):
    k = vector_add(gpu)
    a = gpu.array(0x100)
    block = k.launcher.block
    if isinstance(gpu, Hip):  # work-items per dimension are a 32-bit count
        most = (2**32 - 1) // block
        k.run((most,), [a, a, a, 1])
        with pytest.raises(LaunchError, match=rf"kernel 'add_kernel': grid \({most + 1}, 1, 1\) has {most + 1} programs "
                                              rf"along axis 0, over the limit of {most} .*{block} threads.*32 bits"):
            k.run((most + 1,), [a, a, a, 1])
    else:
        k.run((2**31 - 1, 65535, 65535), [a, a, a, 1])
        with pytest.raises(LaunchError, match=r"grid \(1, 65536, 1\) has 65536 programs along axis 1, over the "
                                              "limit of 65535"):
            k.launcher((1, 65536, 1), [a, a, a, 1])


def test_shared_memory_hungry_kernels_opt_in_and_prefer_shared(monkeypatch):
    """Over 48 KB of shared memory: the kernel opts in to its size and asks for the largest shared carveout of the
    L1/shared array (the driver would otherwise configure just enough for the resident blocks); a small kernel
    touches neither."""
    from gpu_jit_kernels import matmul_kernel
    gpu = Cuda(monkeypatch)
    big = compiled(gpu, matmul_kernel, "*fp16,*fp16,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32",
                   {"num_warps": 8, "num_stages": 3}, BM=128, BN=128, BK=64, PREC="ieee")
    assert big.metadata["shared"] > 48 * 1024
    a = gpu.array(0x1000)
    big.run((2, 2), [a, a, a, 200, 200, 200, 200, 1, 200, 1, 200, 1])
    vector_add(gpu).run((1,), [a, a, a, 5])
    fn = gpu.fake.launches[0]["function"]
    assert ("cuFuncSetAttribute", fn, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", big.metadata["shared"]) in \
        gpu.fake.calls
    assert [c for c in gpu.fake.calls if c[0] == "cuFuncSetCacheConfig"] == \
        [("cuFuncSetCacheConfig", fn, "CU_FUNC_CACHE_PREFER_SHARED")]


# -- faults ------------------------------------------------------------------------------------------------------
def test_a_fault_names_the_kernel_it_comes_from(gpu):
    first = vector_add(gpu)
    a = gpu.array(0x100)
    first.run((4,), [a, a, a, 1])
    first.run((5,), [a, a, a, 1])
    gpu.fake.fault = gpu.fault
    other = compiled(gpu, positive, "*fp32,i32", BLOCK=32)  # loaded after the fault: not its own failure
    with pytest.raises(KernelFault, match=r"loading .*failed on device 0: a kernel faulted \(.*(MISALIGNED|Illegal)"
                                          r".*\); the last kernel launched on device 0 was 'add_kernel' \(its launch 2, "
                                          r"grid \(5, 1, 1\)\)\..*one process per test"):
        other.run((1,), [a, 3])
    with pytest.raises(KernelFault, match=r"launching 'add_kernel' on grid \(1, 1, 1\) failed on device 0: a kernel "
                                          r"faulted .*'add_kernel' \(its launch 2"):
        first.run((1,), [a, a, a, 1])  # every later error says where it came from


def test_with_synchronous_launches_the_faulting_launch_names_itself(gpu, monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING" if isinstance(gpu, Cuda) else "HIP_LAUNCH_BLOCKING", "1")
    k = vector_add(gpu)
    a = gpu.array(0x100)
    k.run((4,), [a, a, a, 1])
    gpu.fake.fault = gpu.fault
    with pytest.raises(KernelFault, match=r"kernel 'add_kernel' \(its launch 2, grid \(7, 1, 1\)\) faulted"):
        k.run((7,), [a, a, a, 1])


def test_launch_errors_reach_the_user_at_the_launch_line(gpu):
    """Through ``kernel[grid](...)``: the error, without tilec's own frames under it."""
    import traceback
    a = gpu.array(0x100)
    launches = [lambda: add[(1,)](a, np.zeros(4, np.float32), a, 1, BLOCK=64, target=gpu.target)]
    if isinstance(gpu, Hip):
        launches.append(lambda: add[(2**26,)](a, a, a, 1, BLOCK=64, target=gpu.target))
    for launch in launches:
        with pytest.raises(LaunchError) as info:
            launch()
        frames = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
        assert not [f for f in frames if os.sep + "tilec" + os.sep in f], frames
        assert "'add_kernel'" in str(info.value)


# -- the device a Triton program sees ----------------------------------------------------------------------------
def test_triton_programs_see_the_gpu_the_machine_has(monkeypatch):
    """Without ``TILEC_BACKEND``, ``triton.runtime.driver.active`` is the GPU when the machine has one (a tutorial
    puts its tensors on ``get_active_torch_device()`` and picks configurations by the target's backend and
    architecture), the CPU when it has none; ``TILEC_BACKEND`` still decides when set."""
    from tilec import backends, compat
    monkeypatch.delenv("TILEC_BACKEND", raising=False)
    fake = fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=1, capability=90))
    monkeypatch.setattr(backends, "_PRESENT", {})
    t = compat.driver.active.get_current_target()
    assert (t.backend, t.arch, t.warp_size) == ("cuda", 90, 32)
    assert backends.present_backend() == "cuda"
    monkeypatch.setenv("TILEC_BACKEND", "cpu")
    assert compat.driver.active.get_current_target().backend == "cpu"
    monkeypatch.delenv("TILEC_BACKEND")
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the interpreter runs on the host and takes host arrays
    assert str(compat.driver.active.get_active_torch_device()) == "cpu"
    monkeypatch.delenv("TRITON_INTERPRET")
    assert compat.driver.active.get_current_target().backend == "cuda"
    fake.devices = 0
    monkeypatch.setattr(backends, "_PRESENT", {})
    assert compat.driver.active.get_current_target().backend == "cpu"
    assert str(compat.driver.active.get_active_torch_device()) == "cpu"


def test_triton_programs_see_an_amd_gpu(monkeypatch):
    """An AMD machine (no CUDA driver): the target is hip with the device's architecture and its wave size."""
    from tilec import backends, compat
    monkeypatch.delenv("TILEC_BACKEND", raising=False)
    fake_hip.install(monkeypatch, fake_hip.FakeHip(arch="gfx942:sramecc+:xnack-"))
    fake_cuda.install(monkeypatch, fake_cuda.FakeCuda(devices=0))
    monkeypatch.setattr(backends, "_PRESENT", {})
    t = compat.driver.active.get_current_target()
    assert (t.backend, t.warp_size) == ("hip", 64) and str(t.arch).startswith("gfx942")
