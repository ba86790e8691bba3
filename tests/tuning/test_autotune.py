"""@autotune and @heuristics: choice per key, caching, pruning, output protection, failures, stacking."""
import numpy as np
import pytest

import tilec
from tilec.runtime.autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from tilec.errors import CompilationError

from . import kernels

RNG = np.random.default_rng(1234)
GRID = lambda meta: (tilec.cdiv(meta["n"], meta["BLOCK"]),)  # noqa: E731


class FakeBench:
    """A do_bench whose 'time' for a config is looked up by its BLOCK (seen through a config pre_hook): tests
    decide which config wins, and count what was timed."""

    def __init__(self, times):
        self.times = times
        self.timed = []
        self.block = None

    def hook(self, nargs):
        self.block = nargs["BLOCK"]

    def __call__(self, fn, quantiles=None, **_):
        fn()
        self.timed.append(self.block)
        t = self.times[self.block]
        return [t, t, t] if quantiles else t

    def configs(self, blocks, **kw):
        return [Config({"BLOCK": b}, pre_hook=self.hook, **kw) for b in blocks]


def data(n, dtype=np.float32):
    return RNG.standard_normal(n).astype(dtype), RNG.standard_normal(n).astype(dtype)


def test_picks_fastest_and_caches_per_key():
    bench = FakeBench({32: 3.0, 64: 1.0, 128: 2.0})
    k = autotune(bench.configs([32, 64, 128]), key=["n"], do_bench=bench, restore_value=["out_ptr"])(
        kernels.scale_add)
    assert isinstance(k, Autotuner) and len(k.configs) == 3
    x, o = data(1000)
    want = 2.0 * x.astype(np.float64) + o
    k[GRID](x, o, 1000, 2.0)
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    assert k.best_config.kwargs == {"BLOCK": 64}
    assert bench.timed == [32, 64, 128]
    assert list(k.cache.values()) == [k.best_config]
    assert set(k.configs_timings) == set(k.configs)

    k[GRID](x, o, 1000, 2.0)  # same key: no tuning
    assert bench.timed == [32, 64, 128]

    bench.times = {32: 0.5, 64: 1.0, 128: 2.0}
    x2, o2 = data(777)
    want2 = 2.0 * x2.astype(np.float64) + o2
    k[GRID](x2, o2, 777, 2.0)  # new n: tuned again
    assert len(bench.timed) == 6 and k.best_config.kwargs == {"BLOCK": 32}
    np.testing.assert_allclose(o2, want2, rtol=1e-6, atol=1e-6)

    x3, o3 = data(777, np.float64)
    k[GRID](x3, o3, 777, 2.0)  # same n, new dtype: tuned again
    assert len(bench.timed) == 9 and len(k.cache) == 3
    assert any("float64" in key for key in k.cache)


def test_a_config_changed_after_tuning_launches_as_changed():
    """Launches after the first reuse what a tuned config passes down, unless the config's fields changed."""
    bench = FakeBench({32: 1.0, 64: 2.0})
    k = autotune(bench.configs([32, 64]), key=["n"], do_bench=bench, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(1000)
    want = 2.0 * x.astype(np.float64) + o
    k[GRID](x, o, 1000, 2.0)
    assert k.best_config.kwargs == {"BLOCK": 32}
    k.best_config.kwargs["BLOCK"] = 128  # one program of 128 covers 128 elements, so the grid follows it
    k[GRID](x, o, 1000, 2.0)
    assert bench.block == 128  # the config's pre_hook saw the new value
    np.testing.assert_allclose(o, 2.0 * x.astype(np.float64) + want, rtol=1e-6, atol=1e-6)


def test_default_bench_really_times():
    configs = [Config({"BLOCK": b}) for b in (64, 256)]
    k = autotune(configs, key=["n"], warmup=1, rep=3, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(3001)
    want = -1.5 * x.astype(np.float64) + o
    k[GRID](x, o, 3001, -1.5)
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    assert k.best_config in configs
    for t in k.configs_timings.values():
        assert 0 < t[1] <= t[0] <= t[2] < 1000  # p20 <= median <= p80, in ms


def test_prune_configs_by():
    bench = FakeBench({16: 1.0, 32: 2.0, 64: 3.0, 128: 4.0, 256: 5.0})
    seen = {}

    def early(configs, nargs, **kwargs):
        seen["nargs"] = sorted(nargs)
        return [c for c in configs if c.kwargs["BLOCK"] >= 32]

    def perf_model(n, BLOCK, **_):
        return abs(BLOCK - 128)  # predicted: 128 best, then 64/256

    k = autotune(bench.configs([16, 32, 64, 128, 256]), key=["n"], do_bench=bench, restore_value=["out_ptr"],
                 prune_configs_by={"early_config_prune": early, "perf_model": perf_model, "top_k": 2})(
        kernels.scale_add)
    x, o = data(500)
    want = 3.0 * x.astype(np.float64) + o
    k[GRID](x, o, 500, 3.0)
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    assert seen["nargs"] == ["alpha", "n", "out_ptr", "x_ptr"]
    assert sorted(bench.timed) in ([64, 128], [128, 256])
    assert k.best_config.kwargs["BLOCK"] in (64, 128)

    frac = autotune(bench.configs([16, 32, 64, 128, 256]), key=["n"], do_bench=bench, restore_value=["out_ptr"],
                    prune_configs_by={"perf_model": perf_model, "top_k": 0.2})(kernels.scale_add)
    bench.timed.clear()
    frac[GRID](x, o, 500, 3.0)
    assert bench.timed == [] and frac.best_config.kwargs == {"BLOCK": 128}  # one left: nothing to time


@pytest.mark.parametrize("mode", ["none", "reset_to_zero", "restore_value"])
def test_tuning_leaves_outputs_as_one_launch(mode):
    """scale_add accumulates into out: every timed run would count again unless the outputs are protected."""
    bench = FakeBench({32: 2.0, 64: 1.0})
    kw = {} if mode == "none" else {mode: ["out_ptr"]}
    k = autotune(bench.configs([32, 64]), key=["n"], do_bench=bench, **kw)(kernels.scale_add)
    x, o = data(300)
    start = o.copy()
    k[GRID](x, o, 300, 1.0)
    one = x.astype(np.float64) + (0 if mode == "reset_to_zero" else start)
    if mode == "none":
        assert not np.allclose(o, one)  # tuning ran the kernel more than once
    else:
        np.testing.assert_allclose(o, one, rtol=1e-6, atol=1e-6)
    o2 = start.copy()
    k[GRID](x, o2, 300, 1.0)  # cached: exactly one launch, no hooks
    np.testing.assert_allclose(o2, x.astype(np.float64) + start, rtol=1e-6, atol=1e-6)


def test_failing_configs_are_skipped(capsys, monkeypatch):
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")  # one line per config, with why it was skipped
    bench = FakeBench({48: 0.1, 64: 1.0, 96: 0.1})  # 48 and 96 cannot compile (arange needs powers of two)
    k = autotune(bench.configs([48, 64, 96]), key=["n"], do_bench=bench, restore_value=["out_ptr"])(
        kernels.scale_add)
    x, o = data(200)
    want = x.astype(np.float64) + o
    k[GRID](x, o, 200, 1.0)
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    assert k.best_config.kwargs == {"BLOCK": 64}
    err = capsys.readouterr().err
    assert err.count("[tilec autotune] scale_add") == 3
    assert "skipped (CompilationError" in err and "power of 2" in err

    all_bad = autotune(bench.configs([48, 96]), key=["n"], do_bench=bench)(kernels.scale_add)
    with pytest.raises(CompilationError, match="power of 2") as info:
        all_bad[GRID](x, o, 200, 1.0)
    assert any("every config" in note for note in info.value.__notes__)


def test_print_autotuning(monkeypatch, capsys):
    bench = FakeBench({32: 2.0, 64: 1.0})
    k = autotune(bench.configs([32, 64], num_warps=2), key=["n"], do_bench=bench, reset_to_zero=["out_ptr"])(
        kernels.scale_add)
    x, o = data(100)
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")
    k[GRID](x, o, 100, 1.0)
    out, err = capsys.readouterr()
    assert "Autotuning kernel scale_add finished after" in out and "best config: BLOCK: 64, num_warps: 2" in out
    assert err.count("[tilec autotune] scale_add") == 2 and "2/2 {BLOCK: 64" in err
    k[GRID](x, o, 100, 1.0)
    assert capsys.readouterr().out == ""  # cached: nothing to report


def test_conflicting_meta_parameter():
    bench = FakeBench({32: 2.0, 64: 1.0})
    k = autotune(bench.configs([32, 64]), key=["n"], do_bench=bench, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(10)
    with pytest.raises(ValueError, match="BLOCK"):
        k[GRID](x, o, 10, 1.0, BLOCK=32)


def test_bad_hook_names():
    with pytest.raises(ValueError, match="'out' is not a parameter of scale_add"):
        autotune([Config({"BLOCK": 32})], key=["n"], reset_to_zero=["out"])(kernels.scale_add)


def test_heuristics_compute_meta_parameters():
    k = heuristics({"BLOCK": lambda a: tilec.next_power_of_2(a["n_cols"])})(kernels.row_sum)
    assert isinstance(k, Heuristics) and k.arg_names[:3] == ["x_ptr", "out_ptr", "n_cols"]
    for cols in (5, 33, 100):
        x = RNG.standard_normal((7, cols)).astype(np.float32)
        out = np.empty(7, np.float32)
        k[(7,)](x, out, cols)
        np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [256, 250])
def test_autotune_over_heuristics(n):
    """Heuristics below autotune see each config's values (EVEN depends on BLOCK); the other order works too."""
    bench = FakeBench({32: 2.0, 64: 1.0, 128: 3.0})
    even = {"EVEN": lambda a: a["n"] % a["BLOCK"] == 0}
    inner = autotune(bench.configs([32, 64, 128]), key=["n"], do_bench=bench)(heuristics(even)(kernels.copy_even))
    outer = heuristics({"EVEN": lambda a: a["n"] % 64 == 0})(
        autotune([Config({"BLOCK": 64})], key=["n"])(kernels.copy_even))
    for k in (inner, outer):
        x = RNG.standard_normal(n).astype(np.float32)
        out = np.full(n + 64, 7.0, np.float32)
        k[GRID](x, out, n)
        np.testing.assert_array_equal(out[:n], x)
        np.testing.assert_array_equal(out[n:], 7.0)  # the masked variant ran where BLOCK does not divide n


def test_warmup_compiles_every_config():
    k = autotune([Config({"BLOCK": b}) for b in (32, 64)], key=["n"])(kernels.scale_add)
    x, o = data(50)
    compiled = k.warmup(x, o, 50, 1.0, grid=(1,))
    assert len(compiled) == 2 and all(c is not None for c in compiled)


def test_other_backends_options_in_configs_are_ignored():
    """Configs written for AMD GPUs carry e.g. waves_per_eu among the meta-parameters; tilec has no such knob."""
    bench = FakeBench({32: 2.0, 64: 1.0})
    configs = [Config({"BLOCK": b, "waves_per_eu": 2}, pre_hook=bench.hook) for b in (32, 64)]
    k = autotune(configs, key=["n"], do_bench=bench, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(90)
    want = x.astype(np.float64) + o
    k[GRID](x, o, 90, 1.0)
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)
    assert k.best_config.kwargs == {"BLOCK": 64, "waves_per_eu": 2}


def test_cache_results_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    bench = FakeBench({32: 2.0, 64: 1.0, 128: 3.0})

    def fresh(blocks):
        return autotune(bench.configs(blocks), key=["n"], do_bench=bench, cache_results=True,
                        restore_value=["out_ptr"])(kernels.scale_add)

    x, o = data(333)
    want = x.astype(np.float64) + o
    fresh([32, 64, 128])[GRID](x, o, 333, 1.0)
    assert bench.timed == [32, 64, 128]
    assert len(list(tmp_path.glob("autotune/*/*.json"))) == 1

    second = fresh([32, 64, 128])  # a new process would look like this: nothing in memory
    second[GRID](x, o, 333, 1.0)
    assert bench.timed == [32, 64, 128] and second.best_config.kwargs == {"BLOCK": 64}
    np.testing.assert_allclose(o, want + x, rtol=1e-6, atol=1e-6)  # two real launches, no tuning runs

    fresh([32, 128])[GRID](x, o, 333, 1.0)  # other candidates: tuned again
    assert bench.timed[3:] == [32, 128]


def test_calling_without_grid_says_how():
    k = autotune([Config({"BLOCK": 32})], key=["n"])(kernels.scale_add)
    with pytest.raises(RuntimeError, match=r"launch it as scale_add\[grid\]"):
        k(1, 2)


def test_user_hooks_run_around_every_timed_launch():
    bench = FakeBench({32: 2.0, 64: 1.0})
    events = []
    k = autotune(bench.configs([32, 64]), key=["n"], do_bench=bench,
                 pre_hook=lambda nargs: events.append(("pre", nargs["BLOCK"])),
                 post_hook=lambda nargs, exception: events.append(("post", nargs["BLOCK"], exception)))(
        kernels.scale_add)
    x, o = data(64)
    k[GRID](x, o, 64, 1.0)
    assert events == [("pre", 32), ("post", 32, None), ("pre", 64), ("post", 64, None)]


def test_key_names_that_are_not_parameters_warn():
    with pytest.warns(UserWarning, match=r"key names \['N'\] are not parameters of scale_add"):
        autotune([Config({"BLOCK": 32}), Config({"BLOCK": 64})], key=["N", "n"])(kernels.scale_add)


def test_quiet_by_default(capsys, monkeypatch):
    """Without TILEC_PRINT_AUTOTUNING nothing is printed when stderr is not a terminal (a terminal gets one
    progress line, rewritten in place)."""
    monkeypatch.delenv("TILEC_PRINT_AUTOTUNING", raising=False)
    monkeypatch.delenv("TRITON_PRINT_AUTOTUNING", raising=False)
    bench = FakeBench({32: 2.0, 64: 1.0})
    k = autotune(bench.configs([32, 64]), key=["n"], do_bench=bench, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(100)
    k[GRID](x, o, 100, 1.0)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert k.best_config.kwargs == {"BLOCK": 64}
