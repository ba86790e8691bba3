"""The interpreter types values exactly as compiled code does, so a kernel computes the same in both (cases the
differential fuzzer found, reduced)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl


def _both(kernel, grid, make_args, **cx):
    """The arrays ``make_args()`` gives after a launch in the interpreter and after one on the CPU."""
    out = []
    for interpret in (True, False):
        args = make_args()
        tilec.jit(kernel.fn, interpret=interpret)[grid](*args, **cx)
        out.append([a for a in args if isinstance(a, np.ndarray)])
    return out


@tilec.jit
def loop_var_promotes(out_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.full((B,), 100, tl.int8)
    for i in range(n):
        x = (x + i).to(tl.int8)          # int8 + int32 loop variable: int32, then wrapped back
    acc = tl.zeros((B,), tl.float32)
    for j in tl.range(0, n):
        acc = tl.maximum(acc, j / 0.0)   # the loop variable is a tensor: x / 0.0 is inf, not ZeroDivisionError
    tl.store(out_ptr + offs, x.to(tl.float32) + acc)


def test_range_loop_variable_is_an_int32_tensor():
    interp, cpu = _both(loop_var_promotes, (1,), lambda: [np.zeros(4, np.float32), 3], B=4)
    np.testing.assert_array_equal(interp[0], cpu[0])
    assert np.isinf(cpu[0]).all()


@tilec.jit
def loop_var_64_bit(out_ptr, n):
    acc = tl.zeros((2,), tl.int64)
    for i in range(n, n + 2):
        acc = acc + (i << 20)            # an int64 bound makes the loop variable int64: no wrap at 32 bits
    tl.store(out_ptr + tl.arange(0, 2), acc)


def test_range_loop_variable_takes_a_64_bit_bound():
    interp, cpu = _both(loop_var_64_bit, (1,), lambda: [np.zeros(2, np.int64), 2**33])
    np.testing.assert_array_equal(interp[0], cpu[0])


@tilec.jit
def static_loop_stays_python(out_ptr, B: tl.constexpr):
    x = tl.full((B,), 1, tl.int8)
    for i in tl.static_range(3):
        x = x + i                        # a compile-time int adopts int8
    tl.static_assert(x.dtype == tl.int8)
    tl.store(out_ptr + tl.arange(0, B), x)


def test_static_range_variable_is_a_python_int():
    interp, cpu = _both(static_loop_stays_python, (1,), lambda: [np.zeros(4, np.int8)], B=4)
    np.testing.assert_array_equal(interp[0], np.full(4, 4, np.int8))
    np.testing.assert_array_equal(cpu[0], interp[0])


@tilec.jit
def add_scalar_arg(out_ptr, s, B: tl.constexpr):
    v = tl.full((B,), 1, tl.int16) + s   # s == 1 is compiled as the literal 1: int16 stays int16
    tl.store(out_ptr + tl.arange(0, B), v.to(tl.float32, bitcast=v.dtype.primitive_bitwidth == 32))


@pytest.mark.parametrize("s", [1, 2])
def test_int_argument_equal_to_one_is_a_literal_in_both(s):
    interp, cpu = _both(add_scalar_arg, (1,), lambda: [np.zeros(4, np.float32), s], B=4)
    np.testing.assert_array_equal(interp[0], cpu[0])
    # s == 2 is an int32 tensor: the sum is int32 and bitcast; s == 1 keeps int16, converted by value
    assert (interp[0] == 2.0).all() if s == 1 else (interp[0].view(np.int32) == 3).all()


@tilec.jit
def tf32_dot(a_ptr, out_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, a))


def test_default_dot_input_precision_reaches_the_interpreter():
    """An option that changes results (tf32 rounds the inputs; ieee does not) means the same in both."""
    a = (1 + np.random.default_rng(0).random((16, 16)) * 2 ** -12).astype(np.float32)
    for precision in ("ieee", "tf32"):
        interp, cpu = [], []
        for interpret, out in ((True, interp), (False, cpu)):
            o = np.zeros((16, 16), np.float32)
            tilec.jit(tf32_dot.fn, interpret=interpret)[(1,)](a, o, default_dot_input_precision=precision)
            out.append(o)
        exact = (a.astype(np.float64) @ a.astype(np.float64)).astype(np.float32)
        if precision == "ieee":
            np.testing.assert_allclose(interp[0], exact, rtol=1e-6)
            np.testing.assert_allclose(cpu[0], exact, rtol=1e-6)
        else:  # the interpreter rounds to tf32 as tensor cores do; the CPU may keep f32 (both are tf32-accurate)
            np.testing.assert_allclose(interp[0], cpu[0], rtol=2e-3)
            assert not np.allclose(interp[0], exact, rtol=1e-6)


@tilec.jit
def writes_ones(out_ptr):
    breakpoint()  # stops the interpreter; compiled code ignores it
    tl.store(out_ptr + tl.arange(0, 4), tl.full((4,), 1.0, tl.float32))


def test_warmup_runs_nothing_in_either_mode(monkeypatch):
    out = np.zeros(4, np.float32)
    assert tilec.jit(writes_ones.fn, interpret=True).warmup(out, grid=(1,)) is None
    assert tilec.jit(writes_ones.fn, interpret=False).warmup(out, grid=(1,)) is not None
    assert not out.any()
    tilec.jit(writes_ones.fn, interpret=False)[(1,)](out)  # breakpoint() compiles (to nothing)
    assert (out == 1).all()


_EXEC_SOURCE = '''
@tilec.jit(interpret=True)
def made_by_exec(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 3 + 1 if B > 1 else x, mask=mask)
'''


def test_interpreter_runs_a_kernel_without_readable_source():
    """A kernel built by ``exec`` from a string has no source to check: the interpreter runs it as Python does."""
    ns: dict = {}
    exec(_EXEC_SOURCE, {"tilec": tilec, "tl": tl}, ns)
    x = np.random.default_rng(0).standard_normal(13).astype(np.float32)
    out = np.zeros(16, np.float32)
    ns["made_by_exec"][(1,)](x, out, 13, B=16)
    np.testing.assert_allclose(out[:13], x * 3 + 1, rtol=1e-6)
    assert (out[13:] == 0).all()
