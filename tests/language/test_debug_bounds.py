"""Debug builds (``debug=True``, at the decorator or the launch, or ``TILEC_DEBUG=1``) check every load, store and
atomic against the array its pointer came from, in every mode: an access outside it raises BoundsError naming the
kernel line, the program, the offset and the array's size; the bad lanes never touch memory, so the process (and on
CUDA the context) stays usable. Without debug nothing is checked and nothing is added to the kernel."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import BoundsError
from langhelp import launch

R = np.random.default_rng(12)


def _line(fn, marker):
    """Line number of the source line of ``fn`` containing ``marker``."""
    import inspect
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, text in enumerate(lines) if marker in text)


@tilec.jit(debug=True)
def copy_unmasked(x_ptr, out_ptr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)  # LOAD
    tl.store(out_ptr + offs, x * 2)  # STORE


@tilec.jit(debug=True)
def copy_masked(x_ptr, out_ptr, n, m, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.0)
    tl.store(out_ptr + offs, x + 1, mask=offs < m)  # MSTORE


def _failure(e):
    m = re.search(r"in program \((\d+), (\d+), (\d+)\).*: offset (-?\d+) of '(\w+)', an array of (\d+) element",
                  str(e))
    assert m, str(e)
    return tuple(int(v) for v in m.group(1, 2, 3)), int(m.group(4)), m.group(5), int(m.group(6))


def test_load_past_the_end(mode):
    n = int(R.integers(20, 60))  # not a multiple of the block
    x = R.standard_normal(n).astype(np.float32)
    out = np.zeros(n + 16, np.float32)
    grid = (n + 15) // 16
    with pytest.raises(BoundsError) as e:
        launch(copy_unmasked, (grid,), mode, x, out, B=16)
    msg = str(e.value)
    assert f"test_debug_bounds.py:{_line(copy_unmasked, '# LOAD')}:" in msg
    assert "x = tl.load(x_ptr + offs)" in msg and "^" in msg  # the source line and a caret
    assert "out-of-bounds load" in msg
    assert _failure(e.value) == ((grid - 1, 0, 0), n, "x_ptr", n)
    # the process is usable: the same kernel runs when the grid fits
    m = n // 16 * 16
    out2 = np.zeros(m, np.float32)
    launch(copy_unmasked, (m // 16,), mode, x[:m].copy(), out2, B=16)
    np.testing.assert_array_equal(out2, x[:m] * 2)


def test_store_past_the_end_writes_nothing_outside(mode):
    n = int(R.integers(20, 45))
    buf = np.full(64, 7.0, np.float32)
    x = R.standard_normal(48).astype(np.float32)
    with pytest.raises(BoundsError) as e:
        launch(copy_unmasked, (3,), mode, x, buf[:n], B=16)
    assert f"test_debug_bounds.py:{_line(copy_unmasked, '# STORE')}:" in str(e.value)
    assert "out-of-bounds store" in str(e.value)
    # programs 1 and 2 both fail; whichever records first is reported, with its own first offending offset
    pid, off, name, size = _failure(e.value)
    assert pid[0] in (1, 2) and off == max(n, 16 * pid[0]) and (name, size) == ("out_ptr", n)
    if mode != "interpret":  # compiled: the grid ran to its end, in-bounds lanes stored
        np.testing.assert_array_equal(buf[:n], x[:n] * 2)
    np.testing.assert_array_equal(buf[n:], 7.0)  # the bad lanes never wrote


def test_mask_is_checked_not_just_addresses(mode):
    n = int(R.integers(17, 31))
    x = R.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    launch(copy_masked, (2,), mode, x, out, n, n, B=16)  # masked: fine, same results as without debug
    np.testing.assert_array_equal(out, x + 1)
    with pytest.raises(BoundsError) as e:  # a mask that lets one lane too many through
        launch(copy_masked, (2,), mode, x, out, n, n + 1, B=16)
    assert f"test_debug_bounds.py:{_line(copy_masked, '# MSTORE')}:" in str(e.value)
    assert _failure(e.value) == ((1, 0, 0), n, "out_ptr", n)


@tilec.jit
def shifted(x_ptr, out_ptr, n, shift, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs + shift, mask=m, other=0.0), mask=m)


def test_negative_offset_and_launch_option(mode):
    n = 13
    x = R.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    with pytest.raises(BoundsError) as e:
        launch(shifted, (1,), mode, x, out, n, -3, B=16, debug=True)
    assert _failure(e.value) == ((0, 0, 0), -3, "x_ptr", n)


def test_reading_into_a_neighbouring_argument(mode):
    """Two arguments that are views of one buffer: without debug a read past the first lands in the second (valid
    memory, no error in any mode); with debug it is refused, because the check is against the pointer's own
    array."""
    n = 11
    buf = R.standard_normal(2 * n).astype(np.float32)
    orig = buf.copy()
    a, b = buf[:n], buf[n:]
    if mode != "cuda":  # on a GPU each view is copied on its own: nothing lies past the first
        launch(shifted, (1,), mode, a, b, n, 4, B=16)
        np.testing.assert_array_equal(b, orig[4:4 + n])
    buf[:] = orig
    with pytest.raises(BoundsError) as e:
        launch(shifted, (1,), mode, a, b, n, 4, B=16, debug=True)
    assert _failure(e.value) == ((0, 0, 0), n, "x_ptr", n)


@tilec.jit(debug=True)
def rows_2d(x_ptr, out_ptr, n0, n1, stride, B0: tl.constexpr, B1: tl.constexpr):
    r = tl.program_id(0) * B0 + tl.arange(0, B0)
    c = tl.arange(0, B1)
    m = (r[:, None] < n0) & (c[None, :] < n1)
    x = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=m, other=0.0)
    acc = tl.cumsum(x, axis=1)
    tl.store(out_ptr + r[:, None] * n1 + c[None, :], acc, mask=m)
    tl.atomic_add(out_ptr + r * n1, tl.sum(x, axis=1), mask=r < n0)


def test_2d_masked_strided_views_no_false_positive(mode):
    """Correct kernels give the same results in debug builds: 2-D masks, a reversed strided view, atomics."""
    n0, n1 = int(R.integers(5, 13)), int(R.integers(3, 7))
    base = R.integers(-8, 8, (n0, 2 * n1)).astype(np.float32)
    x = base[::-1, :n1]  # negative row stride: the view's memory lies before its data pointer too
    out = np.zeros((n0, n1), np.float32)
    if mode == "cuda":
        x = np.ascontiguousarray(x)
    stride = x.strides[0] // 4
    launch(rows_2d, ((n0 + 3) // 4,), mode, x, out, n0, n1, stride, B0=4, B1=8)
    want = np.cumsum(x, axis=1)
    want[:, 0] += x.sum(axis=1)
    np.testing.assert_array_equal(out, want)


@tilec.jit(debug=True)
def atomics(x_ptr, cnt_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.atomic_add(cnt_ptr + offs, 1, mask=offs < n)  # ADD
    tl.atomic_cas(x_ptr + offs, 0, 5)  # CAS


def test_atomics_out_of_bounds(mode):
    n = int(R.integers(17, 31))
    buf = np.zeros(48, np.int32)
    cnt = np.zeros(n + 5, np.int32)
    with pytest.raises(BoundsError) as e:
        launch(atomics, (2,), mode, buf[:n], cnt[:n - 2], n, B=16)
    assert "out-of-bounds atomic" in str(e.value)
    pid, off, name, size = _failure(e.value)
    assert off == max(n - 2, 16 * pid[0]) and (name, size) == ("cnt_ptr", n - 2)
    np.testing.assert_array_equal(cnt[n - 2:], 0)
    np.testing.assert_array_equal(buf[n:], 0)  # the compare-and-swap of bad lanes went to a scratch word
    if mode != "interpret":
        np.testing.assert_array_equal(buf[:n], 5)
        np.testing.assert_array_equal(cnt[:n - 2], 1)


@tilec.jit
def plain(x_ptr, out_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_off_by_default_and_environment(monkeypatch):
    monkeypatch.delenv("TILEC_DEBUG", raising=False)
    x = R.standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    k = plain.warmup(x, out, B=16)
    assert "debug_checks" not in k.metadata and len(k.metadata["param_kinds"]) == 2
    monkeypatch.setenv("TILEC_DEBUG", "1")
    fresh = tilec.jit(plain.fn)
    with pytest.raises(BoundsError):
        fresh[(1,)](x[:9], out, B=16)
    k = fresh.warmup(x, out, B=16)
    assert k.metadata["param_kinds"] == ["ptr", "ptr", "ptr", "i64", "i64", "i64", "i64"]


def test_many_failures_are_counted():
    x = R.standard_normal(40).astype(np.float32)
    out = np.zeros(40, np.float32)
    with pytest.raises(BoundsError) as e:
        copy_unmasked[(5,)](x, out, B=16)  # programs 2, 3, 4 fail at the load and at the store
    assert "(1 of 6 failures)" in str(e.value)
