"""Configs compiled ahead in worker processes (``runtime/compile_ahead.py``): the same choice and results as
compiling in process, failures reported as in process, nothing started when every variant is cached, and kernels
a worker cannot import compiled in process."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec import cache
from tilec.errors import CompilationError
from tilec.runtime import compile_ahead as CA
from tilec.runtime.autotuner import Config, autotune

from . import kernels
from .test_autotune import GRID, FakeBench, data


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILEC_ALWAYS_COMPILE", raising=False)
    kernels.scale_add.cache.clear()
    kernels.scale_add._fast_cache.clear()
    yield tmp_path / "cache"
    kernels.scale_add.cache.clear()
    kernels.scale_add._fast_cache.clear()


def _spy(monkeypatch):
    started = []
    real = CA.subprocess.Popen

    def popen(*a, **k):
        started.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(CA.subprocess, "Popen", popen)
    return started


def _tune(blocks, times):
    bench = FakeBench(times)
    k = autotune(bench.configs(blocks), key=["n"], do_bench=bench, restore_value=["out_ptr"])(kernels.scale_add)
    x, o = data(300)
    want = o.copy()
    k[GRID](x, o, 300, 2.0)
    return k, o - want, x


@pytest.mark.parametrize("workers", ["0", "1"])
def test_same_choice_and_results_with_workers_on_and_off(fresh_cache, monkeypatch, workers):
    monkeypatch.setenv(CA.ENV, workers)
    started = _spy(monkeypatch)
    k, delta, x = _tune([16, 32, 64, 128], {16: 3.0, 32: 1.0, 64: 2.0, 128: 4.0})
    assert k.best_config.kwargs == {"BLOCK": 32}
    np.testing.assert_allclose(delta, 2.0 * x, rtol=1e-5, atol=1e-5)  # one launch's worth, tuning left nothing
    assert len(started) == int(workers)
    assert len(os.listdir(fresh_cache)) > 0


def test_a_worker_fills_the_cache(fresh_cache):
    x, o = data(64)
    found = []
    with CA.collecting() as found:
        for b in (16, 32):
            assert kernels.scale_add.warmup(x, o, 64, 1.0, BLOCK=b, grid=(1,)) is None  # recorded, not compiled
    assert not kernels.scale_add.cache
    batch = CA.plan(found)
    assert len(batch) == 2 and all(job[0] == kernels.__name__ for _, job in batch)
    folder = fresh_cache.parent / "batch"
    folder.mkdir()
    (folder / "jobs").write_bytes(pickle.dumps([job for _, job in batch]))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
    subprocess.run([sys.executable, "-m", "tilec.runtime.compile_worker", str(folder)], env=env, check=True,
                   timeout=300)
    assert CA.plan(found) == []  # both variants are cached now
    k = kernels.scale_add.warmup(x, o, 64, 1.0, BLOCK=16, grid=(1,))
    assert k.metadata["hash"] and cache.contains(k.metadata["hash"])


def test_configs_that_fail_in_workers_fail_as_in_process(fresh_cache, monkeypatch, capsys):
    monkeypatch.setenv(CA.ENV, "1")
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")
    started = _spy(monkeypatch)
    k, delta, x = _tune([48, 64, 96], {48: 0.1, 64: 1.0, 96: 0.1})  # 48 and 96 cannot compile
    assert k.best_config.kwargs == {"BLOCK": 64} and len(started) == 1
    np.testing.assert_allclose(delta, 2.0 * x, rtol=1e-5, atol=1e-5)
    err = capsys.readouterr().err
    assert err.count("skipped (CompilationError") == 2 and "power of 2" in err
    bench = FakeBench({48: 0.1, 96: 0.1})
    all_bad = autotune(bench.configs([48, 96]), key=["n"], do_bench=bench)(kernels.scale_add)
    x, o = data(200)
    with pytest.raises(CompilationError, match="power of 2") as info:
        all_bad[GRID](x, o, 200, 1.0)
    assert any("every config" in note for note in info.value.__notes__)


def test_nothing_starts_when_every_variant_is_cached(fresh_cache, monkeypatch):
    monkeypatch.setenv(CA.ENV, "0")
    _tune([16, 32, 64], {16: 1.0, 32: 2.0, 64: 3.0})  # fills the on-disk cache
    kernels.scale_add.cache.clear()
    kernels.scale_add._fast_cache.clear()
    monkeypatch.setenv(CA.ENV, "2")
    started = _spy(monkeypatch)
    k, _, _ = _tune([16, 32, 64], {16: 1.0, 32: 2.0, 64: 3.0})
    assert k.best_config.kwargs == {"BLOCK": 16} and started == []


def test_kernels_a_worker_cannot_import_compile_in_process(fresh_cache, monkeypatch):
    monkeypatch.setenv(CA.ENV, "2")
    started = _spy(monkeypatch)

    @tilec.jit
    def local_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    assert not CA.reachable(local_copy) and CA.reachable(kernels.scale_add)
    k = autotune([Config({"BLOCK": 16}), Config({"BLOCK": 32})], key=["n"], warmup=1, rep=2)(local_copy)
    x, o = data(100)
    k[GRID](x, o, 100)
    np.testing.assert_array_equal(o, x)
    assert started == []


def test_how_many_workers(monkeypatch):
    monkeypatch.setenv(CA.ENV, "3")
    assert CA.workers_for(0) == 0 and CA.workers_for(1) == 1 and CA.workers_for(8) == 3
    monkeypatch.setenv(CA.ENV, "0")
    assert CA.workers_for(8) == 0
    monkeypatch.delenv(CA.ENV)
    monkeypatch.setattr(CA, "_cpus", lambda: 4)
    monkeypatch.setattr(CA.os, "getloadavg", lambda: (1.2, 1.0, 1.0))
    assert CA.workers_for(1) == 0 and CA.workers_for(2) == 1 and CA.workers_for(8) == 2
    monkeypatch.setattr(CA.os, "getloadavg", lambda: (3.5, 3.0, 3.0))
    assert CA.workers_for(8) == 0  # the other CPUs are busy: a worker would only slow tuning down
