"""Loops with carried values, while, if with results, static_range, nested @jit calls."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from helpers import build, launch
from tilec.ir.printer import print_ir

rng = np.random.default_rng(7)


@tilec.jit
def row_sums(X, Out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    total = 0.0
    count = 0
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x
        total += tl.sum(x, axis=0)
        count += 1
    tl.store(Out + 2 * row, tl.sum(acc, axis=0))
    tl.store(Out + 2 * row + 1, total + count * 0)


def test_for_carried_values():
    x = rng.standard_normal((3, 70)).astype(np.float32)
    out = np.zeros(6, np.float32)
    module = launch(row_sums, (3,), x, out, 70, BLOCK=16)
    np.testing.assert_allclose(out[0::2], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[1::2], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    text = print_ir(module)
    assert text.count(" = for ") == 1 and "tile<16xf32>" in text


@tilec.jit
def for_negative_step(Out, n):
    acc = 0
    for i in tl.range(n, 0, -3, num_stages=2):
        acc += i
    tl.store(Out, acc)


def test_for_negative_step_and_num_stages():
    out = np.zeros(1, np.int32)
    module = launch(for_negative_step, 1, out, 20)
    assert out[0] == sum(range(20, 0, -3))
    assert "num_stages = 2" in print_ir(module)


@tilec.jit
def collatz(Out, start):
    x = start
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    tl.store(Out, steps)


@pytest.mark.parametrize("start", [27, 6, 97])
def test_while_and_if_with_results(start):
    out = np.zeros(1, np.int32)
    launch(collatz, 1, out, start)
    n, steps = start, 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    assert out[0] == steps


@tilec.jit
def branchy(X, Out, threshold, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    s = tl.sum(x, axis=0)
    if s > threshold:
        y = x * 2.0
        tag = 1
    elif s < -threshold:
        y = x - 1.0
        tag = 2
    else:
        y = x
        tag = 3
    tl.store(Out + offs, y + tag)


def test_if_elif_else_results():
    x = rng.standard_normal(4 * 8).astype(np.float32)
    x[:8] += 3
    x[8:16] -= 3
    out = np.zeros_like(x)
    launch(branchy, (4,), x, out, 4.0, BLOCK=8)
    for p in range(4):
        seg = x[p * 8:(p + 1) * 8]
        s = seg.sum()
        ref = seg * 2 + 1 if s > 4 else (seg - 1 + 2 if s < -4 else seg + 3)
        np.testing.assert_allclose(out[p * 8:(p + 1) * 8], ref, rtol=1e-6)


@tilec.jit
def constexpr_if(X, Out, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    if MODE == "double":
        x = x * 2
    elif MODE == "square":
        x = x * x
    else:
        tl.static_assert(MODE == "id", "unknown mode")
    tl.store(Out + offs, x)


@pytest.mark.parametrize("mode", ["double", "square", "id"])
def test_constexpr_if_folds(mode):
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros_like(x)
    module = launch(constexpr_if, 1, x, out, MODE=mode, BLOCK=16)
    ref = {"double": x * 2, "square": x * x, "id": x}[mode]
    np.testing.assert_allclose(out, ref)
    assert " if " not in print_ir(module)


@tilec.jit
def unrolled(X, Out, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.static_range(N):
        acc += tl.load(X + i * BLOCK + offs) * (i + 1)
    for w in (2, 3):
        acc = acc * w
    tl.store(Out + offs, acc)


def test_static_range_unrolls():
    x = rng.standard_normal((3, 8)).astype(np.float32)
    out = np.zeros(8, np.float32)
    module = launch(unrolled, 1, x, out, N=3, BLOCK=8)
    np.testing.assert_allclose(out, (x * np.array([[1], [2], [3]])).sum(axis=0) * 6, rtol=1e-5)
    text = print_ir(module)
    assert " for " not in text and text.count("load") == 3


@tilec.jit
def stats(x, SCALE: tl.constexpr):
    s = tl.sum(x, axis=0) * SCALE
    m = tl.max(x, axis=0)
    return s, m


@tilec.jit
def clip(x, lo, hi):
    return tl.minimum(tl.maximum(x, lo), hi)


@tilec.jit(noinline=True)
def twice(x):
    return x * 2


@tilec.jit
def caller(X, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    s, m = stats(x, 2)
    s2, _ = stats(x, SCALE=2)
    s3, _ = stats(x, 3)
    y = clip(x, -0.5, 0.5)
    tl.store(Out + offs, twice(y))
    tl.store(Out + BLOCK, s + s2 + s3)
    tl.store(Out + BLOCK + 1, m)


def test_nested_jit_calls_with_tuple_returns():
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(18, np.float32)
    module = launch(caller, 1, x, out, BLOCK=16)
    np.testing.assert_allclose(out[:16], np.clip(x, -0.5, 0.5) * 2, rtol=1e-6)
    np.testing.assert_allclose(out[16], x.sum() * 7, rtol=1e-5)
    np.testing.assert_allclose(out[17], x.max())
    names = [f.sym_name for f in module.funcs]
    assert names[0] == "caller" and len(names) == 5  # stats specialised for SCALE=2 and 3, clip, twice
    twice_f = next(f for f in module.funcs if f.sym_name.startswith("twice"))
    assert twice_f.attrs["noinline"] is True
    assert print_ir(module).count("call ") == 5


@tilec.jit
def generic_reduce_combine(a, b):
    return a + b


@tilec.jit
def custom_reduce(X, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
    tl.store(Out + offs, tl.reduce(x, 1, generic_reduce_combine))
    tl.store(Out + BLOCK + offs, tl.max(x, axis=0))
    tl.store(Out + 2 * BLOCK + offs, tl.sum(x, axis=1, keep_dims=True).reshape(BLOCK))


def test_reductions():
    x = rng.standard_normal((8, 8)).astype(np.float32)
    out = np.zeros(24, np.float32)
    launch(custom_reduce, 1, x, out, BLOCK=8)
    np.testing.assert_allclose(out[:8], x.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(out[8:16], x.max(axis=0))
    np.testing.assert_allclose(out[16:], x.sum(axis=1), rtol=1e-5)


def test_equal_to_1_and_divisibility_specialisation():
    x = np.zeros(32, np.float32)
    module, _ = build(add_one_strided, x, 1, 32, BLOCK=32)
    text = print_ir(module)
    func = module.funcs[0]
    assert func.attrs["arg_divisibility"] == (16, 1, 16)
    assert not func.args[1].uses and "constant {value = 1}" in text  # the body uses a constant 1
    module, _ = build(add_one_strided, x, 3, 32, BLOCK=32)
    assert module.funcs[0].attrs["arg_divisibility"] == (16, 1, 16)
    assert module.funcs[0].args[1].uses
    module, _ = build(add_one_strided, x, 3, 33, BLOCK=32)
    assert module.funcs[0].attrs["arg_divisibility"] == (16, 1, 1)
    out = np.arange(40, dtype=np.float32)
    launch(add_one_strided, 1, out, 1, 37, BLOCK=64)
    np.testing.assert_array_equal(out, np.arange(40) + (np.arange(40) < 37))


@tilec.jit
def add_one_strided(X, stride, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs * stride, tl.load(X + offs * stride, mask=offs < n) + 1, mask=offs < n)


@tilec.jit
def python_scalar_loop_init(X, Out, n, BLOCK: tl.constexpr):
    total = 0.0  # a compile-time float enters the loop as f32, the type of what is added to it
    best = -float("inf")
    for i in range(n):
        x = tl.load(X + i * BLOCK + tl.arange(0, BLOCK))
        total += tl.sum(x, axis=0)
        best = tl.maximum(best, tl.max(x, axis=0))
    tl.store(Out, total)
    tl.store(Out + 1, best)


def test_python_scalar_loop_inits():
    x = rng.standard_normal((5, 8)).astype(np.float32)
    out = np.zeros(2, np.float32)
    launch(python_scalar_loop_init, 1, x, out, 5, BLOCK=8)
    # the sum of 40 normals may cancel to near zero: float32 rounding is judged against the terms' size
    np.testing.assert_allclose(out, [x.sum(dtype=np.float64), x.max()], rtol=1e-5, atol=1e-5)


@tilec.jit
def nested_loops(Out, n, m):
    acc = 0
    for i in range(n):
        row = 0
        for j in range(i, m):
            if (j % 3 == 0) and not (j == 6):
                row += j
            else:
                row -= 1
        acc += row * (1 if i % 2 == 0 else -1)
    k = 0
    while k < 0:
        k += 1
    tl.store(Out, acc + k)


def test_nested_loops_if_and_boolean_ops():
    out = np.zeros(1, np.int32)
    launch(nested_loops, 1, out, 7, 11)
    ref = 0
    for i in range(7):
        row = 0
        for j in range(i, 11):
            row += j if (j % 3 == 0 and j != 6) else -1
        ref += row * (1 if i % 2 == 0 else -1)
    assert out[0] == ref


@tilec.jit
def expressions_kernel(X, Out, lo, hi, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    inside = lo < x < hi
    y = tl.where(inside, x, 0.0)
    z = x if BLOCK > 4 else -x
    w = abs(-x) + (x ** 2.0) - x * x
    tl.store(Out + offs, y)
    tl.store(Out + BLOCK + offs, z + w - abs(x))
    tl.store(Out + 2 * BLOCK + offs, x.T if False else tl.sum(x[:, None] * x[None, :], axis=1))


def test_expressions():
    x = rng.standard_normal(8).astype(np.float32)
    out = np.zeros(24, np.float32)
    launch(expressions_kernel, 1, x, out, -0.5, 0.5, BLOCK=8)
    np.testing.assert_allclose(out[:8], np.where((x > -0.5) & (x < 0.5), x, 0))
    np.testing.assert_allclose(out[8:16], x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[16:], x * x.sum(), rtol=1e-5, atol=1e-6)


@tilec.jit
def defined_in_loop_only(Out, n):
    for i in range(n):
        tmp = i * 2
    tl.store(Out, tmp)


def test_names_defined_in_a_loop_are_not_visible_after_it():
    with pytest.raises(tilec.CompilationError, match="'tmp' is not defined"):
        build(defined_in_loop_only, np.zeros(1, np.int32), 3)


@tilec.jit
def scale(x, factor):
    return x * factor


@tilec.jit
def weak_scalar_through_call(X, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = scale(tl.load(X + offs), 3)
    tl.static_assert(y.dtype == tl.float16)
    tl.store(Out + offs, y)


def test_python_scalars_passed_to_jit_functions_stay_weak():
    x = rng.standard_normal(16).astype(np.float16)
    out = np.zeros(16, np.float16)
    launch(weak_scalar_through_call, 1, x, out, BLOCK=16)
    np.testing.assert_allclose(out, x * 3, rtol=1e-3)


@tilec.jit
def tuples_through_control_flow(Out, n):
    pair = (1, 2.0)
    state = (tl.zeros([4], tl.int32), 0)
    for i in range(n):
        pair = (pair[0] + i, pair[1] * 2)
        vec, count = state
        state = (vec + i, count + 1)
    if n > 3:
        pair = (pair[0], pair[1] + 0.5)
    tl.store(Out, pair[0])
    tl.store(Out + 1, pair[1].to(tl.int32))
    tl.store(Out + 2 + tl.arange(0, 4), state[0] + state[1])


def test_tuples_are_carried_through_loops_and_ifs():
    out = np.zeros(6, np.int32)
    launch(tuples_through_control_flow, 1, out, 5)
    assert out[0] == 1 + sum(range(5)) and out[1] == int(2.0 * 2 ** 5 + 0.5)
    np.testing.assert_array_equal(out[2:], sum(range(5)) + 5)


@tilec.jit
def side_effect_if(Out, n):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(Out, n)
    elif pid == 1:
        pass
    else:
        tl.store(Out + pid, -1)


def test_if_without_results():
    out = np.zeros(4, np.int32)
    module = launch(side_effect_if, (4,), out, 9)
    np.testing.assert_array_equal(out, [9, 0, -1, -1])
    assert " if " in print_ir(module)
