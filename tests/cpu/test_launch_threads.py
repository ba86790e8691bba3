"""How many threads a CPU launch uses follows from its work: a grid whose estimated time does not pay for a helper
runs on the calling thread, a long one on several; a helper's job is claimed once (by the helper, or taken back
by the launching thread, which then does not wait for it); the first, cold launch's measure is replaced by the
next."""
import threading

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.targets.cpu import launcher as CL
from tilec.targets.cpu import pool


@tilec.jit
def _add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@tilec.jit
def _slow(x_ptr, out_ptr, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    acc = x
    for i in range(iters):
        acc = acc * 0.5 + x
    tl.store(out_ptr + offs, acc)


def _launcher(kernel, *args, grid, **cx):
    return kernel.warmup(*args, grid=grid, **cx).launcher


def test_threads_follow_the_work(monkeypatch):
    monkeypatch.setitem(CL._handoff, "s", 10e-6)
    assert CL.threads_for(25e-6, 97, 16) == 2        # a short grid wakes one helper, not the pool
    assert CL.threads_for(45e-6, 97, 16) == 4
    assert CL.threads_for(1.0, 97, 16) == 16         # a long one every core
    assert CL.threads_for(1.0, 3, 16) == 3           # never more than its programs
    counts = [CL.threads_for(w * 1e-6, 10_000, 64) for w in range(0, 2000, 50)]
    assert counts == sorted(counts)


def test_a_short_grid_runs_on_the_calling_thread(monkeypatch):
    x = np.zeros(97 * 64, np.float32)
    out = np.empty_like(x)
    lau = _launcher(_add, x, out, x.size, BLOCK=64, grid=(97,))
    parallel = []
    run = CL.Launcher._parallel
    monkeypatch.setattr(CL.Launcher, "_parallel", lambda self, *a: (parallel.append(a), run(self, *a))[1])
    monkeypatch.setitem(CL._handoff, "s", 1.0)   # helpers would cost a second: nothing is worth them
    for _ in range(3 * CL.RETRY_EVERY):
        _add[(97,)](x, out, x.size, BLOCK=64)
    assert parallel == []
    assert lau.per_program is not None and lau.per_program * 97 < 1.0
    np.testing.assert_array_equal(out, x + 1)


def test_the_same_launcher_decides_from_the_estimate(monkeypatch):
    """The decision is the work's: the same grid goes to helpers once its programs are estimated long."""
    x = np.zeros(97 * 64, np.float32)
    out = np.empty_like(x)
    lau = _launcher(_add, x, out, x.size, BLOCK=64, grid=(97,))
    _add[(97,)](x, out, x.size, BLOCK=64)
    _add[(97,)](x, out, x.size, BLOCK=64)   # (the first launch's measure is replaced by this one)
    threads = []
    run = CL.Launcher._parallel
    monkeypatch.setattr(CL.Launcher, "_parallel",
                        lambda self, g0, g1, g2, total, n, start=0: (threads.append(n),
                                                                    run(self, g0, g1, g2, total, n, start))[1])
    monkeypatch.setitem(CL._handoff, "s", 1e-3)
    monkeypatch.setattr(lau, "nthreads", 4)
    monkeypatch.setattr(lau, "scratch_ptrs", lau.scratch_ptrs * 4)
    monkeypatch.setattr(lau, "per_program", 1e-6)  # 97 us in all: not worth a helper costing 1 ms
    lau.inline_max = lau._inline_max()
    _add[(97,)](x, out, x.size, BLOCK=64)
    assert threads == []
    lau.per_program = 1e-4   # 9.7 ms: worth every helper
    lau.inline_max = lau._inline_max()
    monkeypatch.setattr(lau, "cold", False)  # (a measure taken cold would be taken again, on one thread)
    lau((97, 1, 1), [x, out, x.size])
    assert threads and threads[-1] == 4
    np.testing.assert_array_equal(out, x + 1)


def test_a_long_grid_runs_on_several_threads(monkeypatch):
    if CL.num_threads() < 2:
        pytest.skip("this machine gives the process one core: there is no helper thread to run a grid on")
    programs = 2000
    x = np.random.default_rng(0).random(programs * 16).astype(np.float32)
    out = np.zeros_like(x)
    ran = []
    resolve = pool.Helper.resolve
    monkeypatch.setattr(pool.Helper, "resolve", lambda self, gen, stop: (ran.append(resolve(self, gen, stop)), ran[-1])[1])
    for _ in range(3):  # about 30 ms each: a helper has long enough to wake, however busy the machine
        _slow[(programs,)](x, out, 20_001, BLOCK=16)
    assert any(ran), "no helper ran any program of a long grid"
    want = np.full_like(x, 0)
    want[:] = 2 * x  # acc -> 2x, reached well within the iterations
    np.testing.assert_allclose(out, want, rtol=1e-5)


class _Asleep(pool.Helper):
    """A helper whose thread never comes to its slot."""

    def run(self):
        threading.Event().wait(0)


def test_a_job_no_helper_began_is_taken_back_not_waited_for():
    h = _Asleep(pool.spin_ticks(1, 1.0))
    h.join()
    pool.native()
    gen = h.post((0,) * 10)   # a worker at address 0: running it would crash the process
    assert h.resolve(gen, None) is False
    gen = h.post((0,) * 10)
    assert h.resolve(gen, None) is False


def test_the_first_launch_measure_is_replaced(monkeypatch):
    x = np.zeros(97 * 64, np.float32)
    out = np.empty_like(x)
    lau = _launcher(_add, x, out, x.size, BLOCK=64, grid=(97,))
    lau.per_program, lau.cold = None, False
    lau((97, 1, 1), [x, out, x.size])
    assert lau.cold
    lau.per_program = 1.0   # as if the first launch had been very slow
    lau((97, 1, 1), [x, out, x.size])
    assert not lau.cold and lau.per_program < 1e-2


def test_a_big_grid_seen_first_runs_on_every_thread():
    programs = CL.FIRST_INLINE_MAX + 1
    x = np.arange(programs * 16, dtype=np.float32)
    out = np.zeros_like(x)
    lau = _launcher(_add, x, out, x.size, BLOCK=16, grid=(programs,))
    lau.per_program, lau.cold = None, False
    lau((programs, 1, 1), [x, out, x.size])
    assert lau.per_program is not None
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"),
                    reason="os.fork is POSIX-only: no forked child to start helpers in")
def test_a_forked_child_starts_its_own_helpers():
    import os
    programs = 2000
    x = np.random.default_rng(1).random(programs * 16).astype(np.float32)
    out = np.zeros_like(x)
    _slow[(programs,)](x, out, 20_001, BLOCK=16)   # the parent's helpers exist
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        ok = False
        try:
            out[:] = 0
            _slow[(programs,)](x, out, 20_001, BLOCK=16)
            ok = bool(np.allclose(out, 2 * x, rtol=1e-5)) and all(h.is_alive() for h in pool._helpers)
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


@tilec.jit
def _coords(out_ptr, spin, BLOCK: tl.constexpr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    gx, gy = tl.num_programs(0), tl.num_programs(1)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(spin):  # long enough programs (spin > 0) that helpers take part
        acc = acc * 0.5 + 1.0
    v = x * 1_000_000 + y * 1000 + z + (tl.sum(acc) * 0).to(tl.int32)
    tl.store(out_ptr + (z * gy + y) * gx + x, v)


@pytest.mark.parametrize("grid", [(7, 5, 3), (1, 1, 9), (97, 1, 1), (3, 211, 2), (1000, 3, 1), (13, 17, 19)])
@pytest.mark.parametrize("spin", [0, 3000])
def test_every_program_sees_its_own_coordinates(grid, spin):
    """A worker splits the first id of each claim into (x, y, z) and counts from there (rows and planes wrap):
    every program of 1-, 2- and 3-d grids sees its own, whether one thread runs them all or claims of several
    threads start in the middle of rows."""
    gx, gy, gz = grid
    out = np.full(gx * gy * gz, -1, np.int32)
    _coords[grid](out, spin, BLOCK=16)
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    np.testing.assert_array_equal(out, (x * 1_000_000 + y * 1000 + z).ravel())
