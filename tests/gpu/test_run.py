"""Kernels launched on a CUDA device and checked against numpy (skipped without a GPU)."""
import numpy as np
import pytest

from gpu_cases import CASES
from gpu_helpers import case_runtime_args, compile_case, device_arch, to_device

pytestmark = pytest.mark.gpu


def _rel_err(out, ref):
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(out).any(), "output has NaNs (unwritten elements?)"
    return np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_numpy(name, num_warps):
    kernel, make, tol = CASES[name]
    rng = np.random.default_rng(hash(name) % 2**32)
    args, constexprs, grid, outs, ref = make(rng)
    k = compile_case(kernel, args, device_arch(), {"num_warps": num_warps}, **constexprs)
    dev = to_device(args)
    k.run(grid, case_runtime_args(kernel, dev))
    expected = ref(args)
    for i, exp in zip(outs, expected):
        got = dev[i].numpy()
        if tol == 0:
            np.testing.assert_array_equal(got, exp)
        else:
            assert _rel_err(got, exp) < tol, f"{name}: relative error {_rel_err(got, exp):.3g}"


def test_torch_tensors_through_jit():
    torch = pytest.importorskip("torch")
    import tilec
    from gpu_jit_kernels import add_kernel
    n = 98_765
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    add_kernel[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, target=tilec.Target("cuda", device_arch(), 32))
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_launch_errors_are_tilec_errors():
    from tilec.errors import LaunchError
    kernel, make, _ = CASES["vector_add"]
    args, constexprs, grid, *_ = make(np.random.default_rng(0))
    k = compile_case(kernel, args, device_arch(), **constexprs)
    with pytest.raises(LaunchError):
        k.run(grid, case_runtime_args(kernel, args))  # host arrays
    with pytest.raises(LaunchError):
        k.run(grid, [1, 2])


def test_bad_ptx_reports_the_jit_log():
    from tilec.errors import BackendError
    from tilec.targets.cuda import driver
    driver.context(0)
    with pytest.raises(BackendError, match="JIT log|could not load"):
        driver.load_module(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n", "k")


def test_large_dynamic_shared_memory():
    """A layout conversion of a 128x128 f32 tile through shared memory needs 64 KB (> 48 KB opt-in)."""
    from tilec.targets.cuda import array as cuda
    kernel, make, _ = CASES["transpose"]
    rng = np.random.default_rng(3)
    M, N = 200, 300
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((N, M), np.nan, np.float32)
    args = [x, out, M, N]
    k = compile_case(kernel, args, device_arch(), {"num_warps": 8}, BM=128, BN=128)
    assert k.metadata["shared"] > 48 * 1024
    dev = to_device(args)
    k.run((2, 3), case_runtime_args(kernel, dev))
    np.testing.assert_array_equal(dev[1].numpy(), x.T)
    del cuda


def test_dlpack_and_cuda_array_interface_arguments():
    torch = pytest.importorskip("torch")
    kernel, make, _ = CASES["vector_add"]
    args, constexprs, grid, *_ = make(np.random.default_rng(4))
    k = compile_case(kernel, args, device_arch(), **constexprs)
    x, y = torch.from_numpy(args[0]).cuda(), torch.from_numpy(args[1]).cuda()
    out = torch.full_like(x, float("nan"))

    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    class CAIOnly:
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    k.run(grid, [DLPackOnly(x), CAIOnly(y), out, args[3]])
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_device_print(capfd):
    from gpu_jit_kernels import print_kernel
    from tilec.targets.cuda import array as cuda
    x = np.arange(100, 108, dtype=np.int32)
    k = compile_case(print_kernel, [x], device_arch(), BLOCK=8)
    d = cuda.from_numpy(x)
    k.run((1, 1, 1), [d])
    cuda.synchronize()
    out = capfd.readouterr().out
    lines = sorted(line for line in out.splitlines() if "x=" in line)
    assert len(lines) == 8 and "pid (0, 0, 0) idx (3) x=103" in lines


@pytest.mark.parametrize("name", ["matmul", "matmul_f16"])
def test_pipelined_loads_match_numpy(name):
    kernel, make, tol = CASES[name]
    args, constexprs, grid, outs, ref = make(np.random.default_rng(8))
    k = compile_case(kernel, args, device_arch(), {"num_stages": 4}, **constexprs)
    gir = k.asm["gir"]
    # 4-stage rings, filled by asynchronous copies (3 stages ahead + the one in the loop, x2) or, where the
    # operands' alignment leaves less than 4 bytes per copy, through registers one iteration ahead
    assert "smem<4x" in gir and (gir.count("async_copy") >= 2 * 4 or gir.count("local_store") >= 2 * 4)
    dev = to_device(args)
    k.run(grid, case_runtime_args(kernel, dev))
    for i, exp in zip(outs, ref(args)):
        assert _rel_err(dev[i].numpy(), exp) < tol
