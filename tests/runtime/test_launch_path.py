"""The cheap launch path: numpy arrays are probed once per launch (key and address agree with the general way for
every kind of array), single programs run through the one-argument entry, helpers are woken only when the
measured hand-off pays, and a value that does not fit its parameter is a LaunchError naming it."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.runtime import args as A
from tilec.targets import arguments
from tilec.runtime.binder import probe_source
from tilec.targets.cpu import launcher as CL


def _arrays():
    base = np.arange(64, dtype=np.float32)
    ro = base.copy()
    ro.flags.writeable = False
    return [base, base[1:], base[::2], base.reshape(8, 8).T, np.zeros(0, np.float32), ro, np.arange(5, dtype=np.int64)]


def test_probe_agrees_with_the_keyer_and_the_address():
    assert arguments.array_head is not None  # the layout check passed on this interpreter
    for a in _arrays():
        key, value = A.probe(a)
        assert key == A._key_ndarray(a)
        assert value == a.__array_interface__["data"][0]
        assert A._probe_ndarray_slow(a)[0] == key
        assert CL.host_pointer(a) == a.__array_interface__["data"][0]


@tilec.jit
def fill_kernel(out_ptr, n, v, BLOCK: tl.constexpr):
    offs = (tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], tl.float32) + v + offs, mask=offs < n)


@pytest.mark.parametrize("grid", [(1,), (3,), (5, 7), (64, 64)])
def test_every_grid_size_runs_every_program(grid):
    block = 4
    n = grid[0] * (grid[1] if len(grid) > 1 else 1) * block
    out = np.full(n + 4, -1.0, np.float32)
    for _ in range(3):  # first launch, measured inline or parallel, then by the estimate
        fill_kernel[grid](out, n, 0.5, BLOCK=block)
    np.testing.assert_array_equal(out[:n], np.arange(n, dtype=np.float32) + 0.5)
    assert (out[n:] == -1).all()


def test_helpers_only_when_the_handoff_pays(monkeypatch):
    monkeypatch.setitem(CL._handoff, "s", 50e-6)
    monkeypatch.setitem(CL._handoff, "skipped", 0)
    assert not CL._worth_helpers(60e-6, 2)    # saves 30 us, costs 50
    assert CL._worth_helpers(200e-6, 2)
    skipped = CL._handoff["skipped"]
    assert not CL._worth_helpers(10e-6, 8)     # far below: never retried
    assert CL._handoff["skipped"] == skipped
    CL._handoff["skipped"] = 0
    tried = [CL._worth_helpers(90e-6, 2) for _ in range(CL.RETRY_EVERY)]
    assert tried.count(True) == 1 and tried[-1]  # close to the line: measured again now and then
    CL._observe_handoff(10e-6)
    assert CL._handoff["s"] == pytest.approx(0.75 * 50e-6 + 0.25 * 10e-6)


def test_a_value_that_does_not_fit_is_named():
    out = np.zeros(8, np.float32)
    k = fill_kernel.warmup(out, 8, 1.0, BLOCK=8, grid=(1,))
    with pytest.raises(LaunchError, match=r"argument 1 \(\d+\) does not fit a i32"):
        k.run((1,), [out, 2 ** 70, 1.0])
    with pytest.raises(LaunchError, match="does not fit a f32"):
        k.run((1,), [out, 8, "x"])


def _inline_probe():
    ns = {}
    exec(compile("def f(v):\n    try:\n" + probe_source(0, "v") + "\n    except KeyError:\n        return None\n"
                 "    return (_tl_d0, _tl_k0, _tl_a0), _tl_h0\n", "<probe>", "exec"),
         {"_tl_probe": A.probe, "_tl_nd": np.ndarray, "_tl_D": arguments.array_fields and arguments.array_fields[0],
          "_tl_F": arguments.array_fields and arguments.array_fields[1]},
         ns)
    return ns["f"]


def test_the_binders_inline_probes_key_what_the_keyers_key():
    """The launch binder writes the probes of arrays and i32 ints out in place: the same addresses, and keys that
    are equal only where the keyers' keys are (dtype, 16-byte alignment, writability). They keep more apart (the
    whole flags word, the address's low bits): each such key finds the same variant through the miss path."""
    f = _inline_probe()
    arrays = _arrays() + [np.arange(64, dtype=np.float64)[1:], np.arange(8, dtype=np.int64).reshape(2, 4)[:, 1:]]
    for a in arrays:
        assert f(a)[1] == a.__array_interface__["data"][0]
    for a in arrays:
        for b in arrays:
            if f(a)[0] == f(b)[0]:
                assert A._key_ndarray(a) == A._key_ndarray(b)
            if (a.dtype == b.dtype and a.flags.num == b.flags.num
                    and (a.__array_interface__["data"][0] - b.__array_interface__["data"][0]) % 16 == 0):
                assert f(a)[0] == f(b)[0]
    for v in (0, 1, 16, -16, 7, 2**31 - 1, -2**31, 2**31, 2**40, -2**40, True, 1.5):
        assert f(v) == ((A.probe(v)[0], None, None), A.probe(v)[1])


def test_probe_keys_keep_alignment_writability_and_ones_apart():
    f = _inline_probe()
    base = np.zeros(64, np.float32)
    view = base[:]
    ro = base[:]
    ro.flags.writeable = False
    keys = [f(view)[0], f(base[1:])[0], f(base[2:])[0], f(ro)[0], f(view.view(np.int32))[0]]
    assert len(set(keys)) == len(keys)
    assert f(base[4:])[0] == f(view)[0]  # 16 bytes further: still aligned
    assert len({f(v)[0] for v in (1, 2, 16, 32)}) == 3  # 1, plain, divisible by 16


def test_a_grid_of_plain_ints_takes_the_short_way_to_the_same_answer():
    from tilec.targets.grid import normalize_grid
    for g in [(1,), (7,), (2**31 - 1,), (3, 65535), (2, 3, 4), (1, 1, 65535)]:
        assert normalize_grid(g) == (g + (1, 1))[:3]
    assert normalize_grid((0,)) is None and normalize_grid((4, 0, 2)) is None
    for bad in [(2**31,), (1, 65536), (1, 1, 65536), (-1,), (1, -2), (True,), (1.0,), ()]:
        with pytest.raises(ValueError):
            normalize_grid(bad)


def test_grids_the_estimate_keeps_inline_skip_the_launcher_but_for_every_retry(monkeypatch):
    """A grid the estimate keeps on one thread by a clear margin runs from the launch entry itself; every
    RETRY_EVERY-th launch, and every grid above ``inline_max``, goes through the launcher (measuring, deciding)."""
    out = np.zeros(64, np.float32)
    fill_kernel[(4,)](out, 64, 0.0, BLOCK=16)
    launcher = fill_kernel.warmup(out, 64, 0.0, BLOCK=16, grid=(4,)).launcher
    through = []
    call = CL.Launcher.__call__
    monkeypatch.setattr(CL.Launcher, "__call__", lambda self, grid, args: (through.append(grid), call(self, grid, args)))
    monkeypatch.setattr(launcher, "_inline_max", lambda: 4)
    launcher.inline_max = 4
    for i in range(2 * CL.RETRY_EVERY):
        fill_kernel[(4,)](out, 64, float(i), BLOCK=16)
        np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32) + i)
    assert len(through) == 2
    through.clear()
    small = np.zeros(80, np.float32)
    for i in range(3):
        fill_kernel[(5,)](small, 80, 1.0, BLOCK=16)  # above inline_max: the launcher decides each time
    assert len(through) == 3
    np.testing.assert_array_equal(small, np.arange(80, dtype=np.float32) + 1)


def test_entry_adapters_pass_the_kept_values_and_hand_other_counts_to_the_fallback():
    from tilec.targets import entry as E
    calls = []
    single, every = E.entries(lambda grid, args: calls.append((grid, args)), 4, keep=(0, 2, 3))
    single(1, None, 3, 4)
    every((2, 1, 1), 5, None, 6, 7)
    assert calls == [(E.SINGLE, [1, 3, 4]), ((2, 1, 1), [5, 6, 7])]
    calls.clear()
    single, every = E.entries(lambda grid, args: calls.append(("launch", grid, args)), 2,
                              loose=lambda grid, args: calls.append(("fallback", grid, args)))
    single(1, 2)
    single(1)
    single(1, 2, 3)
    every((3, 1, 1), 4)
    assert calls == [("launch", E.SINGLE, [1, 2]), ("fallback", E.SINGLE, [1]), ("fallback", E.SINGLE, [1, 2, 3]),
                     ("fallback", (3, 1, 1), [4])]


def test_cached_launches_keep_ones_and_alignments_on_their_own_variants():
    """Launches alternating between an int equal to 1 and others, and between aligned and misaligned arrays, each
    find their own variant in the launch cache and compute what the general path would."""
    fill_kernel.cache.clear()
    fill_kernel._fast_cache.clear()
    base = np.zeros(80, np.float32)
    for _ in range(3):
        for out, n in [(base, 1), (base, 17), (base[1:], 1), (base[1:], 17)]:
            out[:] = -1
            fill_kernel[(1,)](out, n, 0.5, BLOCK=32)
            np.testing.assert_array_equal(out[:n], np.arange(n, dtype=np.float32) + 0.5)
            assert (out[n:] == -1).all()
    keys = list(fill_kernel.cache)
    assert len(keys) == 4  # (aligned, misaligned) x (n == 1, n plain)


@tilec.jit
def square(a_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, a, input_precision="ieee"))


def test_concurrent_launches_from_threads_each_get_their_own_results():
    """Launch entries of kernels without scratch take no lock (each call packs its own block); those with scratch
    buffers (a dot's packed operands) hold the launcher's: threads launching the same kernels at once all get their
    own answers."""
    import threading
    mats = [np.random.default_rng(t).standard_normal((16, 16)).astype(np.float32) for t in range(4)]
    errors = []

    def work(t):
        try:
            out = np.zeros(64, np.float32)
            c = np.zeros((16, 16), np.float32)
            for i in range(200):
                fill_kernel[(1,)](out, 64, float(1000 * t + i), BLOCK=64)
                np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32) + 1000 * t + i)
                square[(1,)](mats[t], c, N=16)
                np.testing.assert_allclose(c, mats[t] @ mats[t], rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert fill_kernel.warmup(np.zeros(64, np.float32), 64, 0.0, BLOCK=64).launcher.shares_state is False
    assert square.warmup(mats[0], np.zeros((16, 16), np.float32), N=16).launcher.shares_state is True


def test_the_first_launch_and_later_ones_share_one_variant():
    """The in-memory key of a tensor argument is the same on the first launch (when its keyer is made) as on later
    ones: a first torch tensor was keyed by its description, later ones by the keyer, so the second launch
    built a second variant, and on a GPU loaded its module again (a load waits for the device: a launch behind
    busy streams stalled)."""
    torch = pytest.importorskip("torch")
    import tilec.language as tl

    @tilec.jit
    def add3(x, y, out, n, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(out + o, tl.load(x + o, mask=o < n) + tl.load(y + o, mask=o < n), mask=o < n)

    x = torch.rand(37)
    y, out = torch.rand(37), torch.zeros(37)
    for _ in range(3):
        add3[(1,)](x, y, out, 37, BLOCK=64)
    assert torch.equal(out, x + y)
    assert len({id(k) for k in add3.cache.values()}) == 1 and len(add3.cache) == 1


def test_threads_that_first_launch_a_kernel_together_share_one_launcher(monkeypatch):
    """Loading a launcher is done once, however many threads ask at once: a second launcher loaded beside the first
    could leave launch functions pointing at code whose engine is gone."""
    import threading
    import time

    @tilec.jit
    def once(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    x = np.zeros(8, np.float32)
    ck = once.warmup(x, 8, BLOCK=8, grid=(1,))
    ck._launcher = None
    real = ck._backend.load
    loads = []

    def slow_load(*a, **k):  # widen the window in which a second thread could also load
        loads.append(1)
        time.sleep(0.05)
        return real(*a, **k)

    monkeypatch.setattr(ck._backend, "load", slow_load)
    start = threading.Barrier(6)
    got = []

    def ask():
        start.wait()
        got.append(ck.launcher)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len({id(g) for g in got}) == 1
