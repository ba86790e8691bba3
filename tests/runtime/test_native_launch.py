"""The native way of a cached CPU launch (``targets/cpu/fastcall.py``): its keyer tells apart every pair of
arguments that the binder's Python probes tell apart, its launch function packs every value as ``struct`` would
(or refuses it, and the Python way then launches or names it), and launches through it find the same variants,
compute the same results and raise the same errors as the Python way. (Threads launching at once, through it now:
``test_launch_path.py: test_concurrent_launches_from_threads_each_get_their_own_results``.)"""
import ctypes
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tilec
import tilec.language as tl
from tilec.errors import LaunchError
from tilec.runtime.binder import NATIVE_KEY
from tilec.targets import entry as E
from tilec.targets.cpu import fastcall as F
from tilec.targets.cpu import launcher as CL
from test_launch_path import _inline_probe, fill_kernel, square

native = F.native()
pytestmark = pytest.mark.skipif(native is None, reason="no native launch functions on this interpreter")

_BASE = np.arange(96, dtype=np.float64)


def _read_only(a):
    a = a.view()
    a.flags.writeable = False
    return a


def _arrays():
    """Arrays of several dtypes, offsets, strides and writabilities, over one buffer."""
    return st.builds(lambda dt, start, step, ro: (_read_only if ro else (lambda a: a))(
        _BASE.view(dt)[start::step]), st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.uint8]),
        st.integers(0, 20), st.sampled_from([1, 2, 3]), st.booleans())


_VALUES = st.one_of(_arrays(), st.integers(-2**64, 2**64), st.sampled_from([0, 1, 16, -16, 2**31 - 1, -2**31, 2**31]),
                    st.floats(allow_nan=False), st.booleans(), st.none())


@given(st.lists(_VALUES, min_size=2, max_size=2))
def test_equal_native_keys_mean_equal_python_keys(pair):
    probe = _inline_probe()
    a, b = pair
    ka, kb = native.key(a), native.key(b)
    for v, k in ((a, ka), (b, kb)):
        known = type(v) in (np.ndarray, float, bool) or type(v) is int and -2**63 <= v < 2**63
        assert (k is not None) == known
    if ka is not None and ka == kb:
        assert probe(a)[0] == probe(b)[0]


def _descriptor(kinds):
    d = (ctypes.c_int64 * (F.WORDS + len(kinds)))()
    d[F.RUN], d[F.COUNT], d[F.INLINE_MAX], d[F.RETRY] = native.echo, len(kinds), 2**62, 2**62
    d[F.WORDS:] = [F.KINDS[k] for k in kinds]
    return d


_PACKED = {"ptr": "Q", "i32": "q", "i64": "q", "u64": "Q", "f32": "f4x", "f64": "d"}


@given(st.lists(st.sampled_from(sorted(_PACKED)), min_size=4, max_size=4),
       st.lists(st.one_of(st.integers(-2**65, 2**65), st.floats(allow_nan=False), st.booleans(), st.just("x")),
                min_size=4, max_size=4))
def test_the_launch_function_packs_what_struct_packs_or_refuses(kinds, values):
    d = _descriptor(kinds)
    f = native.launch(d)
    try:
        expected = list(struct.unpack("<4Q", struct.pack("<" + "".join(_PACKED[k] for k in kinds), *values)))
    except (struct.error, OverflowError, TypeError):
        expected = None
    got = f((1, 1, 1), *values)
    if got == F.REFUSED:
        return  # the Python way converts it (or names it): never a value of its own
    assert got == 0 and expected is not None
    assert [w & (2**64 - 1) for w in list(native.seen)[F.HEADER:]] == expected


def test_numpy_arrays_pass_their_data_address():
    d = _descriptor(["ptr", "ptr", "i32", "f32"])
    a = np.arange(10, dtype=np.float32)[3:]
    assert native.launch(d)((1, 1, 1), a, 1 << 40, 7, 0.5) == 0
    assert list(native.seen)[F.HEADER:F.HEADER + 3] == [a.__array_interface__["data"][0], 1 << 40, 7]


def _native_launcher(kernel, specialised, rest):
    """The launcher behind the native key of these arguments (a kernel's first launches from several threads may
    each load it: ``warmup().launcher`` need not be this one)."""
    return kernel._fast_cache[(NATIVE_KEY, native.key(*specialised), *rest)][1]


def _warm(out, n):
    for _ in range(3):  # the first compiles (and finds the watched globals), the next ones store the keys
        fill_kernel[(2,)](out, n, 0.5, BLOCK=16)


def test_cached_launches_take_the_native_way_with_the_same_results():
    out = np.zeros(32, np.float32)
    _warm(out, 32)
    launcher = _native_launcher(fill_kernel, (out, 32, 0.5), (16,))
    ticks = launcher.desc[F.TICK]
    for i in range(5):
        fill_kernel[(2,)](out, 32, float(i), BLOCK=16)
        np.testing.assert_array_equal(out, np.arange(32, dtype=np.float32) + i)
    assert launcher.desc[F.TICK] == ticks + 5


def test_a_read_only_array_is_refused_after_native_launches():
    out = np.zeros(32, np.float32)
    _warm(out, 32)
    with pytest.raises(TypeError, match="read-only"):
        fill_kernel[(2,)](_read_only(out), 32, 0.5, BLOCK=16)


def test_a_value_that_does_not_fit_gets_the_python_ways_error(monkeypatch):
    out = np.zeros(32, np.float32)
    _warm(out, 32)
    errors = []
    for keyer in (fill_kernel._binder_parts[0]["_tl_keyof"], None):  # the native way, then the Python way alone
        monkeypatch.setitem(fill_kernel._binder_parts[0], "_tl_keyof", keyer)
        with pytest.raises(OverflowError) as e:
            fill_kernel[(2,)](out, 32, 1e300, BLOCK=16)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "float too large" in errors[0]
    monkeypatch.undo()
    fill_kernel[(2,)](out, 32, 2.0, BLOCK=16)
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.float32) + 2)


def test_a_grid_that_outlasts_its_slice_is_finished_by_the_launcher(monkeypatch):
    out = np.zeros(64 * 16, np.float32)
    for _ in range(3):
        fill_kernel[(64,)](out, out.size, 0.5, BLOCK=16)
    launcher = _native_launcher(fill_kernel, (out, out.size, 0.5), (16,))
    resumed = []
    resume = CL.Launcher.resume
    monkeypatch.setattr(CL.Launcher, "resume", lambda self, g, args, start: (resumed.append(start),
                                                                               resume(self, g, args, start)))
    slice_ = launcher.desc[F.SLICE]
    launcher.desc[F.SLICE] = 1  # one clock tick: the first claim outlasts it
    launcher.inline_max, launcher.desc[F.TICK] = 2**40, 0
    try:
        fill_kernel[(64,)](out, out.size, 3.0, BLOCK=16)
    finally:
        launcher.desc[F.SLICE] = slice_
    np.testing.assert_array_equal(out, np.arange(out.size, dtype=np.float32) + 3)
    assert resumed and 0 < resumed[0] < 64


def test_a_held_scratch_area_sends_the_launch_the_python_way():
    a = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    for _ in range(3):
        square[(1,)](a, c, N=16)
    launcher = _native_launcher(square, (a, c), (16,))
    assert launcher.shares_state and launcher.desc[F.SHARED] == 1
    launcher.desc[F.BUSY] = 1  # as if another thread's launch held it
    try:
        c[:] = 0
        square[(1,)](a, c, N=16)
        np.testing.assert_allclose(c, a @ a, rtol=1e-4, atol=1e-4)
    finally:
        launcher.desc[F.BUSY] = 0


def test_without_native_functions_the_python_way_launches(monkeypatch):
    @tilec.jit
    def plain_fill(out_ptr, n, v, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.zeros([BLOCK], tl.float32) + v, mask=offs < n)

    monkeypatch.setattr(F, "_native", [None])
    out = np.zeros(40, np.float32)
    for i in range(3):
        plain_fill[(3,)](out, 40, float(i), BLOCK=16)
        np.testing.assert_array_equal(out, np.full(40, i, np.float32))
    assert not any(type(k) is tuple and k[0] is NATIVE_KEY for k in plain_fill._fast_cache)


def test_after_native_hands_the_rest_to_the_launcher():
    calls = []

    class Launcher:
        def __call__(self, grid, values):
            calls.append(("call", grid, values))

        def resume(self, grid, values, start):
            calls.append(("resume", grid, values, start))

    hit = (None, Launcher(), "kernel")
    assert E.after_native(hit, E.ASK, (2, 1, 1), [1]) and E.after_native(hit, 4, (9, 1, 1), [2])
    assert not E.after_native(hit, E.REFUSED, (2, 1, 1), [3])
    assert calls == [("call", (2, 1, 1), [1]), ("resume", (9, 1, 1), [2], 3)]
