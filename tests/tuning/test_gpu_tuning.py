"""Autotuning and timing on an NVIDIA GPU through tilec's own CUDA arrays (no torch): run with ``-m gpu``."""
import numpy as np
import pytest

import tilec
from tilec.runtime.autotuner import Config, autotune
from tilec.testing import do_bench

from . import kernels

pytestmark = pytest.mark.gpu
GRID = lambda meta: (tilec.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731


@pytest.fixture
def cuda(monkeypatch):
    monkeypatch.setenv("TILEC_BACKEND", "cuda")
    from tilec.runtime import args
    from tilec.targets.cuda import array
    probe = array.empty((1,), np.float32)
    try:
        args.describer(probe)
    except TypeError:
        # the launch path does not take __cuda_array_interface__ objects yet: describe them here, as
        # __array_interface__ objects are (same key, signature and alignment facts)
        def describe(a):
            ai = a.__cuda_array_interface__
            elem = args._np_elem(np.dtype(ai["typestr"]))
            aligned = ai["data"][0] % 16 == 0
            return ("*" + elem, aligned, "cuda"), "*" + elem, 16 if aligned else 1, False
        monkeypatch.setitem(args.DESCRIBERS, array.DeviceArray, describe)
    return array


@pytest.mark.parametrize("mode", ["reset_to_zero", "restore_value"])
def test_autotune_on_gpu_keeps_outputs(cuda, mode):
    rng = np.random.default_rng(7)
    n = 100_003
    xh = rng.standard_normal(n).astype(np.float32)
    oh = rng.standard_normal(n).astype(np.float32)
    x, o = cuda.from_numpy(xh), cuda.from_numpy(oh)
    k = autotune([Config({"BLOCK": b}, num_warps=w) for b, w in ((128, 4), (1024, 4), (1024, 8))], key=["n"],
                 warmup=2, rep=10, **{mode: ["out_ptr"]})(kernels.scale_add)
    k[GRID](x, o, n, 2.0)
    base = 0 if mode == "reset_to_zero" else oh.astype(np.float64)
    np.testing.assert_allclose(o.numpy(), 2.0 * xh.astype(np.float64) + base, rtol=1e-5, atol=1e-5)
    assert k.best_config in k.configs and all(0 < t[0] < 100 for t in k.configs_timings.values())


def test_do_bench_waits_for_the_device(cuda):
    n = 1 << 24
    x, o = cuda.from_numpy(np.ones(n, np.float32)), cuda.from_numpy(np.zeros(n, np.float32))
    run = lambda: kernels.scale_add[(n // 1024,)](x, o, n, 1.0, BLOCK=1024)  # noqa: E731
    t = do_bench(run, warmup=5, rep=20)
    # 3 x 64 MiB of traffic: at least ~0.05 ms on any current GPU, if the timer waited for the kernels
    assert 0.04 < t < 50


def test_driver_properties_on_gpu(cuda):
    from tilec import compat
    props = compat.driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] > 0 and props["warpSize"] == 32 and props["max_shared_mem"] >= 48 * 1024
    assert compat.driver.active.get_current_target().backend == "cuda"
    assert compat.driver.active.get_active_torch_device() in ("cuda",) or str(
        compat.driver.active.get_active_torch_device()).startswith("cuda")
