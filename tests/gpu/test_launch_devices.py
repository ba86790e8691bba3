"""Launch paths on a real CUDA device (``-m gpu``): f16/bf16 scalars from Python and numpy numbers, the caller's
current stream, several GPUs in one process (alternating devices, side streams, threads; skipped on one GPU), debug
records on another device, pinned host memory as an argument, a faulting kernel named, and the context staying
usable after launch errors that do not lose it. The same paths without a GPU: test_launch_paths.py."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
from tilec.compiler import ASTSource
from tilec.errors import ArgumentError, DeviceAssertionError, LaunchError
from gpu_helpers import device_arch
from gpu_jit_kernels import add_kernel as add
from launch_kernels import busy_for, in_threads, positive, scaled

pytestmark = pytest.mark.gpu
ROOT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)


def target():
    return tilec.Target("cuda", device_arch(), 32)


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


def _two_gpus():
    torch = _torch()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs two GPUs, this machine has {torch.cuda.device_count()}")
    return torch


# -- scalars -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, want_a, want_b", [
    (1.5, 3.14159, 1.5, 3.140625),                        # bf16 rounds to nearest
    (np.float16(-2.25), np.float32(1.00390625), -2.25, 1.0),  # a tie rounds to even
    (3, np.float64(-0.1), 3.0, -0.10009765625),
])
def test_f16_and_bf16_scalars(a, b, want_a, want_b):
    from tilec.targets.cuda import array as cuda
    k = tilec.compile(ASTSource(scaled, signature="*fp32,fp16,bf16", constexprs={"BLOCK": 16}), target=target())
    out = cuda.from_numpy(np.full(16, np.nan, np.float32))
    k.run((1,), [out, a, b])
    np.testing.assert_array_equal(out.numpy(), np.float32(want_a) * np.arange(16, dtype=np.float32) +
                                  np.float32(want_b))


# -- streams -----------------------------------------------------------------------------------------------------
def test_launches_go_to_torchs_current_stream():
    """A launch inside ``torch.cuda.stream(side)`` queues behind the side stream's busy kernel. What the output holds
    meanwhile is copied on a third stream into pinned memory: reading it through ``.item()`` would copy to pageable
    memory, which waits for the busy kernel too (measured: 356 ms) and made the result look already there."""
    torch = _torch()
    n = 100_003
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (tilec.cdiv(n, 1024),)
    add[grid](x, y, out, n, BLOCK=1024)  # compiled and loaded before timing matters
    out.fill_(float("nan"))
    waited = torch.zeros(1, dtype=torch.int64, device="cuda")
    busy_for[(1,)](waited, 16)  # compiled and loaded before timing matters (16: as 500_000_000 specialises)
    snapshot = torch.empty(n, pin_memory=True)
    torch.cuda.synchronize()
    side, other = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(side):
        busy_for[(1,)](waited, 500_000_000)  # keeps the side stream busy for half a second
        add[grid](x, y, out, n, BLOCK=1024)
    with torch.cuda.stream(other):
        snapshot.copy_(out, non_blocking=True)
        copied = other.record_event()
    copied.synchronize()
    assert not side.query(), "the side stream finished its busy kernel before the check"
    assert torch.isnan(snapshot).all(), "the launch ran before the work queued ahead of it on torch's current stream"
    side.synchronize()
    assert waited.item() >= 500_000_000 and torch.equal(out, x + y)


# -- several GPUs ------------------------------------------------------------------------------------------------
def test_alternating_devices_in_one_process():
    """cuda:0, cuda:1, cuda:0, cuda:1: the fourth launch failed with CUDA_ERROR_INVALID_HANDLE when the device was
    made current only where a module was first loaded."""
    torch = _two_gpus()
    n = 5000
    current = torch.cuda.current_device()
    for round_ in range(3):
        for dev in (0, 1, 0, 1):
            x = torch.randn(n, device=f"cuda:{dev}")
            y = torch.randn(n, device=f"cuda:{dev}")
            out = torch.full_like(x, float("nan"))
            add[(tilec.cdiv(n, 512),)](x, y, out, n, BLOCK=512)
            assert torch.cuda.current_device() == current  # the caller's device, as it was
            torch.cuda.synchronize(dev)
            assert torch.equal(out, x + y), (round_, dev)


def test_several_gpus_side_streams_and_threads():
    torch = _two_gpus()
    n, rounds = 70_001, 12

    def work(t):
        streams = [torch.cuda.Stream(device=d) for d in (0, 1)]
        for i in range(rounds):
            dev = (i + t) % 2
            x = torch.randn(n, device=f"cuda:{dev}")
            y = torch.randn(n, device=f"cuda:{dev}")
            out = torch.full_like(x, float("nan"))
            s = streams[dev]
            s.wait_stream(torch.cuda.current_stream(dev))
            with torch.cuda.stream(s):
                add[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
            s.synchronize()
            assert torch.equal(out, x + y), f"thread {t} round {i} on cuda:{dev}: wrong result"
    assert in_threads(work, 4) == []


def test_debug_record_on_the_arguments_device():
    torch = _two_gpus()
    k = positive
    x = torch.rand(40, device="cuda:1") + 0.5
    with torch.cuda.device(0):
        k[(1,)](x, 40, BLOCK=64, debug=True)  # passes
        x[7] = -1.0
        with pytest.raises(DeviceAssertionError, match="inputs must be positive"):
            k[(1,)](x, 40, BLOCK=64, debug=True)
        assert torch.cuda.current_device() == 0
    x[7] = 1.0
    k[(1,)](x, 40, BLOCK=64, debug=True)


def test_tilec_arrays_on_the_second_device():
    _two_gpus()
    from tilec.targets.cuda import array as cuda
    a = np.arange(1000, dtype=np.float32)
    x, y, out = (cuda.from_numpy(v, device=1) for v in (a, 2 * a, np.zeros_like(a)))
    add[(2,)](x, y, out, 1000, BLOCK=512)
    cuda.synchronize()
    np.testing.assert_array_equal(out.numpy(), 3 * a)


# -- pinned host memory ------------------------------------------------------------------------------------------
def test_pinned_host_memory_as_an_argument():
    torch = _torch()
    n = 3000
    x = torch.randn(n).pin_memory()
    y = torch.randn(n, device="cuda")
    out = torch.full((n,), float("nan")).pin_memory()
    add[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)  # a CUDA tensor among them: the CUDA backend
    torch.cuda.synchronize()
    assert torch.equal(out, x + y.cpu())
    z = torch.zeros(n).pin_memory()  # host memory only: the CUDA backend when asked for it
    add[(tilec.cdiv(n, 1024),)](x, x, z, n, BLOCK=1024, target=target())
    torch.cuda.synchronize()
    assert torch.equal(z, 2 * x)
    with pytest.raises(ValueError, match="pageable"):  # as Triton refuses a plain CPU tensor
        add[(1,)](torch.zeros(n), y, y, n, BLOCK=1024, target=target())


# -- errors that leave the context usable, and faults that do not -----------------------------------------------
def test_the_context_stays_usable_after_launch_errors():
    from tilec.targets.cuda import array as cuda
    a = np.arange(300, dtype=np.float32)
    x, out = cuda.from_numpy(a), cuda.empty(300, np.float32)
    with pytest.raises(ArgumentError):
        add[(1,)](x, np.zeros(300, np.float32), out, 300, BLOCK=512, target=target())
    with pytest.raises((LaunchError, ValueError)):
        add[(1, 70000)](x, x, out, 300, BLOCK=512)
    add[(1,)](x, x, out, 300, BLOCK=512)
    np.testing.assert_array_equal(out.numpy(), 2 * a)


_FAULT = textwrap.dedent("""
    import sys
    import numpy as np
    import tilec, tilec.language as tl
    from tilec.compiler import ASTSource
    from tilec.targets.cuda import array as cuda, driver

    @tilec.jit
    def bad_store(p, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(p + offs, offs.to(tl.float32))

    @tilec.jit
    def fill(p, BLOCK: tl.constexpr):
        tl.store(p + tl.arange(0, BLOCK), 1.0)

    target = tilec.Target("cuda", driver.compute_capability(0), 32)
    buf = cuda.empty(256, np.float32)
    k = tilec.compile(ASTSource(bad_store, signature="*fp32", constexprs={"BLOCK": 64}), target=target)
    address = buf.ptr + 2 if sys.argv[1] == "misaligned" else 8
    try:
        k.run((1,), [address])
        fill[(1,)](buf, BLOCK=64)  # a later, unrelated kernel: its module load meets the fault
        buf.numpy()
        print("NO ERROR")
    except Exception as e:
        print(type(e).__name__ + ": " + str(e))
""")


@pytest.mark.parametrize("kind, code", [("misaligned", "MISALIGNED_ADDRESS"), ("illegal", "ILLEGAL_ADDRESS")])
@pytest.mark.parametrize("blocking", [False, True])
def test_a_faulting_kernel_is_named(tmp_path, kind, code, blocking):
    """In a process of its own: the fault loses the CUDA context."""
    script = tmp_path / "fault.py"
    script.write_text(_FAULT)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT), CUDA_LAUNCH_BLOCKING="1" if blocking else "0")
    p = subprocess.run([sys.executable, str(script), kind], capture_output=True, text=True, env=env, timeout=300)
    out = p.stdout + p.stderr
    assert out.startswith("KernelFault: "), out
    assert code in out and "'bad_store' (its launch 1, grid (1, 1, 1))" in out, out
    assert "one process per test" in out
    if blocking:
        assert "kernel 'bad_store' (its launch 1, grid (1, 1, 1)) faulted" in out, out
