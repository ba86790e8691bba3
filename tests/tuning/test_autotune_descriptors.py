"""Autotuning a kernel whose host descriptors get their block shape from each config's ``pre_hook`` (Triton's
pattern: the descriptor is made with a placeholder block shape, the hook sets the config's): every compile of a
config, the timing loop's and compile-ahead's dry run alike, sees the block shape that config's hook sets."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.runtime import compile_ahead as CA
from tilec.runtime.autotuner import Config, autotune

RNG = np.random.default_rng(77)


def _block_shape_hook(nargs):
    nargs["src"].block_shape = [nargs["BM"], nargs["BN"]]
    nargs["dst"].block_shape = [nargs["BM"], nargs["BN"]]


def _scale(src, dst, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    tl.static_assert(src.block_shape == [BM, BN])
    x = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], x * alpha + 1.0)


class Timings:
    """do_bench stand-in: the 'time' of a config is looked up by its (BM, BN), seen through the pre_hook."""

    def __init__(self, times):
        self.times, self.current, self.timed = times, None, []

    def hook(self, nargs):
        _block_shape_hook(nargs)
        self.current = (nargs["BM"], nargs["BN"])

    def __call__(self, fn, quantiles=None, **_):
        fn()
        self.timed.append(self.current)
        t = self.times[self.current]
        return [t, t, t] if quantiles else t


def _tuned(bench, shapes):
    configs = [Config({"BM": bm, "BN": bn}, num_warps=4, pre_hook=bench.hook) for bm, bn in shapes]
    return autotune(configs, key=["alpha"], do_bench=bench)(tilec.jit(_scale))


def _grid(meta, m, n):
    return (tilec.cdiv(m, meta["BM"]), tilec.cdiv(n, meta["BN"]))


@pytest.mark.parametrize("m,n", [(37, 52), (100, 20)])
def test_configs_compile_with_the_block_shape_their_pre_hook_sets(m, n):
    bench = Timings({(8, 16): 2.0, (16, 8): 1.0, (32, 4): 3.0})
    k = _tuned(bench, [(8, 16), (16, 8), (32, 4)])
    x = RNG.standard_normal((m, n)).astype(np.float32)
    y = np.full((m, n), np.nan, np.float32)
    src = tilec.TensorDescriptor.from_tensor(x, [1, 1])  # placeholder block shapes, as Triton's tutorials make them
    dst = tilec.TensorDescriptor.from_tensor(y, [1, 1])
    k[lambda meta: _grid(meta, m, n)](src, dst, 3.0)
    assert bench.timed == [(8, 16), (16, 8), (32, 4)]
    assert k.best_config.kwargs == {"BM": 16, "BN": 8}
    np.testing.assert_allclose(y, x.astype(np.float64) * 3.0 + 1.0, rtol=1e-6, atol=1e-6)


def test_compile_ahead_dry_run_sees_each_configs_block_shape(monkeypatch):
    found = []
    real = CA.compile_ahead
    monkeypatch.setattr(CA, "compile_ahead", lambda misses: (found.extend(misses), real(misses))[1])
    bench = Timings({(8, 16): 1.0, (16, 8): 2.0})
    k = _tuned(bench, [(8, 16), (16, 8)])
    x = RNG.standard_normal((45, 36)).astype(np.float32)
    y = np.zeros_like(x)
    src, dst = (tilec.TensorDescriptor.from_tensor(a, [1, 1]) for a in (x, y))
    k[lambda meta: _grid(meta, 45, 36)](src, dst, 0.5)
    np.testing.assert_allclose(y, x.astype(np.float64) * 0.5 + 1.0, rtol=1e-6, atol=1e-6)
    shapes = sorted(str(src_.constexprs["src"]).count("(8, 16)") + 2 * str(src_.constexprs["src"]).count("(16, 8)")
                    for _, src_, _, _ in found)
    assert shapes == [1, 2], [str(s.constexprs["src"]) for _, s, _, _ in found]
