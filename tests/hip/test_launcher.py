"""The HIP launcher against a fake hip-python (fake_hip.py): the kernel-argument buffer laid out from the code
object's metadata note, module and function loading per device, the architecture check, streams, torch on ROCm,
and every error a user can meet, all without ROCm."""
import struct
import sys

import numpy as np
import pytest

import tilec
from fake_hip import DeviceArray, FakeHip, hipError_t, install
from hip_helpers import compile_case
from tilec.backends import owner_of
from tilec.errors import ArgumentError, BackendError, LaunchError
from tilec.targets.arguments import device_of
from tilec.targets.hip import launcher


@pytest.fixture(scope="module")
def vector_add():
    return compile_case("vector_add")  # (x_ptr, y_ptr, out_ptr, n: i32)


def test_arguments_are_packed_where_the_metadata_says(monkeypatch, vector_add):
    fake = install(monkeypatch, FakeHip())
    k = vector_add
    assert k.metadata["param_kinds"] == ["ptr", "ptr", "ptr", "i32"]
    k.run((3,), [DeviceArray(0x1000), DeviceArray(0x2000), DeviceArray(0x3000), 1234])
    (launch,) = fake.launches
    assert launch["grid"] == (3, 1, 1) and launch["block"] == (256, 1, 1)
    assert launch["shared"] == k.metadata["shared"] and launch["stream"] == 0
    assert struct.unpack_from("<QQQi", launch["args"]) == (0x1000, 0x2000, 0x3000, 1234)
    assert len(launch["args"]) == 32  # the explicit arguments only: the runtime appends the hidden ones
    assert fake.modules == [k.asm["hsaco"]] and launch["device"] == 0
    assert not [c for c in fake.calls if c[0] == "hipSetDevice"]  # device 0 was current already
    k.run((5, 2), [DeviceArray(0x10), None, 0x30, -7])  # None is a null pointer, ints are addresses
    assert struct.unpack_from("<QQQi", fake.launches[1]["args"]) == (0x10, 0, 0x30, -7)
    assert fake.launches[1]["grid"] == (5, 2, 1) and fake.calls.count("hipModuleLoadData") == 1  # loaded once


def test_scalar_kinds_and_offsets(monkeypatch):
    import tilec.language as tl

    @tilec.jit
    def scalars(out, a, b, c, d, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, (a + b + c + d).to(tl.float32) + offs)
    from hip_helpers import compile_jit
    out = np.zeros(64, np.float32)
    k = compile_jit(scalars, [out, np.int8(3), np.float64(2.5), np.int64(2 ** 40), np.float32(1.5)], BLOCK=64)
    layout, size = launcher.kernarg_layout(k.asm["hsaco"], k.name, k.metadata["param_kinds"])
    fake = install(monkeypatch, FakeHip())
    k.run((1,), [DeviceArray(0x40), 3, 2.5, 2 ** 40, 1.5])
    buf = fake.launches[0]["args"]
    values = [ct.from_buffer_copy(buf, off).value for off, ct in layout]
    assert values == [0x40, 3, 2.5, 2 ** 40, 1.5]
    assert [off for off, _ in layout] == sorted(off for off, _ in layout) and size <= len(buf)


def test_device_and_stream_from_the_arguments(monkeypatch, vector_add):
    fake = install(monkeypatch, FakeHip())
    a = DeviceArray(0x1000, stream=0xABC)
    vector_add.run((1,), [a, a, a, 16])
    assert fake.launches[0]["stream"] == 0xABC


def test_torch_on_rocm_is_hip_and_uses_the_current_stream(monkeypatch, vector_add):
    """torch on ROCm calls AMD GPUs 'cuda'; torch.version.hip tells them apart."""
    import fake_torch
    torch = fake_torch.install(monkeypatch, {0: 0x5000}, hip=True)
    Tensor = torch.Tensor
    t = Tensor(0x7000)
    assert device_of(t) == "hip"
    assert owner_of([t, np.zeros(1)]) == "hip"  # asked before the CPU
    fake = install(monkeypatch, FakeHip())
    vector_add.run((1,), [t, t, t, 16])
    assert fake.launches[0]["stream"] == 0x5000
    assert struct.unpack_from("<Q", fake.launches[0]["args"])[0] == 0x7000
    torch.version.hip = None
    assert device_of(Tensor(1)) == "cuda"  # CUDA torch: not ours


def test_functions_per_device(monkeypatch, vector_add):
    fake = install(monkeypatch, FakeHip())

    class OnDevice1(DeviceArray):
        device = 1
    k = compile_case("vector_add")  # a launcher of its own (the fixture's has device 0 loaded)
    k.run((1,), [OnDevice1(8), OnDevice1(8), OnDevice1(8), 1])
    k.run((1,), [DeviceArray(8), DeviceArray(8), DeviceArray(8), 1])
    assert ("hipSetDevice", 1) in fake.calls and ("hipSetDevice", 0) in fake.calls
    assert fake.calls.count("hipModuleLoadData") == 2
    assert {launch["function"][0] for launch in fake.launches} == {"module1", "module2"}


def test_wrong_architecture_is_refused(monkeypatch):
    install(monkeypatch, FakeHip(arch="gfx90a:sramecc+:xnack-"))
    k = compile_case("vector_add")
    with pytest.raises(LaunchError, match="compiled for gfx942 but device 0 is gfx90a"):
        k.run((1,), [DeviceArray(8)] * 3 + [1])


def test_host_arrays_and_bad_arguments(monkeypatch, vector_add):
    install(monkeypatch, FakeHip())
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError, match="host .*numpy.* array was passed to an AMD kernel"):
        vector_add.run((1,), [x, x, x, 16])
    with pytest.raises(LaunchError, match="takes 4 runtime arguments, got 3"):
        vector_add.run((1,), [DeviceArray(8)] * 3)
    with pytest.raises(ArgumentError, match="argument 3 of 'add_kernel' .*'sixteen'.* does not fit its i32 param"):
        vector_add.run((1,), [DeviceArray(8)] * 3 + ["sixteen"])
    with pytest.raises(ValueError, match="does not fit its i32 parameter"):  # as Triton's argument errors
        vector_add.run((1,), [DeviceArray(8)] * 3 + [1.5])


def test_runtime_errors_are_launch_errors(monkeypatch, vector_add):
    install(monkeypatch, FakeHip(launch_error=hipError_t.hipErrorInvalidValue))
    k = compile_case("vector_add")
    with pytest.raises(LaunchError, match=r"launching 'add_kernel' on grid \(1, 1, 1\) failed: "
                                          "hipErrorInvalidValue: fake"):
        k.run((1,), [DeviceArray(8)] * 3 + [1])


def test_missing_runtime_is_a_clear_error(monkeypatch):
    install(monkeypatch, FakeHip(init_error=hipError_t.hipErrorNoDevice))
    k = compile_case("vector_add")
    with pytest.raises(BackendError, match="hipInit failed .*hipErrorNoDevice.*no usable AMD GPU"):
        k.run((1,), [DeviceArray(8)] * 3 + [1])

    class Unloadable(FakeHip):
        def hipInit(self, flags):
            raise RuntimeError("failed to dlopen 'libamdhip64.so'")
    install(monkeypatch, Unloadable())
    with pytest.raises(BackendError, match="ROCm runtime is not usable .*libamdhip64"):
        compile_case("vector_add").run((1,), [DeviceArray(8)] * 3 + [1])
    monkeypatch.setitem(sys.modules, "hip", None)  # not installed
    with pytest.raises(BackendError, match="needs hip-python"):
        compile_case("vector_add").run((1,), [DeviceArray(8)] * 3 + [1])


def test_zero_grid_launches_nothing(monkeypatch, vector_add):
    fake = install(monkeypatch, FakeHip())
    vector_add.run((0,), [DeviceArray(8)] * 3 + [1])
    assert fake.launches == []


def test_kernarg_layout_mismatch_is_caught(vector_add):
    with pytest.raises(LaunchError, match="3 explicit arguments|4 explicit arguments"):
        launcher.kernarg_layout(vector_add.asm["hsaco"], vector_add.name, ["ptr", "ptr", "ptr"])
    with pytest.raises(LaunchError, match="argument 3 .* by_value of 4 bytes .* not the f64"):
        launcher.kernarg_layout(vector_add.asm["hsaco"], vector_add.name, ["ptr", "ptr", "ptr", "f64"])
    with pytest.raises(LaunchError, match="no kernel 'nope'"):
        launcher.kernarg_layout(vector_add.asm["hsaco"], "nope", [])


def test_target_without_arch_uses_the_current_device(monkeypatch):
    install(monkeypatch, FakeHip(arch="gfx90a:sramecc+:xnack-"))
    from tilec.targets.hip.backend import HIPBackend
    assert HIPBackend(tilec.Target("hip")).arch.name == "gfx90a"
    install(monkeypatch, FakeHip())
    monkeypatch.setitem(sys.modules, "hip", None)
    assert HIPBackend(tilec.Target("hip")).arch.name == "gfx942"  # no runtime: the default
