"""Compile-time and debugging builtins: static_assert/static_print, device_print output, device_assert only in
debug builds (debug=True, debug= at launch, TILEC_DEBUG=1) naming file:line and the failing program, hints and
debug_barrier accepted."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch


@tilec.jit
def assert_kernel(X, BLOCK: tl.constexpr):
    v = tl.load(X + tl.arange(0, BLOCK))
    tl.device_assert(v > 0, "values must be positive")


@tilec.jit(debug=True)
def debug_assert_kernel(X, BLOCK: tl.constexpr):
    v = tl.load(X + tl.arange(0, BLOCK) + tl.program_id(0) * BLOCK)
    tl.device_assert(v > 0, "values must be positive")


ASSERT_LINE = debug_assert_kernel.fn.__code__.co_firstlineno + 3


def test_device_assert_is_off_by_default(mode, monkeypatch):
    monkeypatch.delenv("TILEC_DEBUG", raising=False)
    launch(assert_kernel, (1,), mode, np.array([1.0, -1.0], np.float32), BLOCK=2)


def test_device_assert_in_debug_builds(mode):
    x = np.array([1.0, 2.0, 3.0, -1.0], np.float32)
    with pytest.raises(AssertionError) as e:
        launch(debug_assert_kernel, (2,), mode, x, BLOCK=2)
    msg = str(e.value)
    assert "values must be positive" in msg
    assert f"test_debug.py:{ASSERT_LINE}" in msg
    assert "(1, 0, 0)" in msg  # the failing program
    launch(debug_assert_kernel, (1,), mode, x, BLOCK=2)  # program 0 is fine


def test_debug_at_launch_and_environment(mode, monkeypatch):
    x = np.array([1.0, -1.0], np.float32)
    with pytest.raises(AssertionError):
        launch(assert_kernel, (1,), mode, x, BLOCK=2, debug=True)
    monkeypatch.setenv("TILEC_DEBUG", "1")
    fresh = tilec.jit(assert_kernel.fn)  # the decorator reads nothing; launches read TILEC_DEBUG
    with pytest.raises(AssertionError):
        launch(fresh, (1,), mode, x, BLOCK=2)


@tilec.jit
def print_kernel(X, BLOCK: tl.constexpr):
    tl.static_print("BLOCK =", BLOCK)
    tl.static_assert(BLOCK == 4, "BLOCK must be 4")
    v = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("v", v)
    tl.device_print("hex", v.to(tl.int32, bitcast=True), hex=True)
    tl.debug_barrier()
    w = tl.multiple_of(tl.max_contiguous(tl.max_constancy(tl.arange(0, BLOCK) * 4, 1), 1), 4)
    tl.assume(BLOCK > 0)
    tl.store(X + tl.arange(0, BLOCK), v + w)


def test_prints(mode, capfd):
    x = np.array([1.0, 2.0, 3.0, 4.5], np.float32)
    launch(print_kernel, (1,), mode, x, BLOCK=4)
    out = capfd.readouterr().out
    assert "BLOCK = 4" in out
    assert "4.5" in out and "v" in out
    assert "0x40900000" in out.lower()  # 4.5 in hex
    np.testing.assert_array_equal(x, [1.0, 6.0, 11.0, 16.5])


def test_static_assert_failure(mode):
    with pytest.raises(tilec.CompilationError, match="BLOCK must be 4"):
        launch(print_kernel, (1,), mode, np.zeros(8, np.float32), BLOCK=8)
