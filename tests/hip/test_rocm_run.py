"""Kernels launched on an AMD GPU and checked against numpy: every GPU test case (the matmuls on MFMA/WMMA
included), the jit with torch ROCm tensors on torch's stream, and launch errors. Run with ``-m rocm`` where
ROCm, hip-python and torch for ROCm are installed; skipped everywhere else (CI has no AMD GPU)."""
import numpy as np
import pytest

import tilec
from gpu_cases import CASES
from gpu_helpers import case_runtime_args
from hip_helpers import source

pytestmark = pytest.mark.rocm


def _device_arch():
    from tilec.targets.hip import driver
    return driver.current_arch().split(":")[0]


def _to_device(args):
    import torch
    return [torch.from_numpy(np.ascontiguousarray(a)).to("cuda") if isinstance(a, np.ndarray) else a for a in args]


def _rel_err(out, ref):
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(out).any(), "output has NaNs (unwritten elements?)"
    return np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30)


@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_numpy(name, num_warps):
    import torch
    kernel, make, tol = CASES[name]
    rng = np.random.default_rng(hash(name) % 2**32)
    args, constexprs, grid, outs, ref = make(rng)
    k = tilec.compile(source(kernel, args, **constexprs), tilec.Target("hip", _device_arch()),
                      {"num_warps": num_warps})
    dev = _to_device(args)
    k.run(grid, case_runtime_args(kernel, dev))
    torch.cuda.synchronize()
    for i, exp in zip(outs, ref(args)):
        got = dev[i].cpu().numpy()
        if tol == 0:
            np.testing.assert_array_equal(got, exp)
        else:
            assert _rel_err(got, exp) < tol, f"{name}: relative error {_rel_err(got, exp):.3g}"


def test_torch_tensors_through_jit_pick_the_hip_backend():
    import torch
    from gpu_jit_kernels import add_kernel
    n = 98_765
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        add_kernel[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    s.synchronize()
    assert torch.equal(out, x + y)


def test_launch_errors_are_tilec_errors():
    from tilec.errors import LaunchError
    kernel, make, _ = CASES["vector_add"]
    args, constexprs, grid, *_ = make(np.random.default_rng(0))
    k = tilec.compile(source(kernel, args, **constexprs), tilec.Target("hip", _device_arch()))
    with pytest.raises(LaunchError, match="host"):
        k.run(grid, case_runtime_args(kernel, args))
