"""Error quality across the language: every misuse is a CompilationError at the kernel's own line (file:line:col
and a caret under the offending expression), in compiled and interpreted runs alike, with a message that says
what was expected."""
import inspect

import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch


def marked_line(kernel) -> int:
    """The line of ``kernel`` carrying the ``# <-`` marker."""
    lines, start = inspect.getsourcelines(kernel.fn)
    hits = [start + i for i, text in enumerate(lines) if "# <-" in text]
    assert len(hits) == 1
    return hits[0]


def expect_error(kernel, mode, match, *args, **constexprs):
    with pytest.raises(tilec.CompilationError) as e:
        launch(kernel, (1,), mode, *args, **constexprs)
    err = e.value
    assert err.file == __file__, err
    assert err.line == marked_line(kernel), err
    assert err.col >= 1 and "^" in str(err), err
    assert err.source_line is not None and "# <-" in err.source_line
    assert any(m.lower() in str(err).lower() for m in ([match] if isinstance(match, str) else match)), str(err)
    return err


F = np.zeros(256, np.float32)
I = np.zeros(256, np.int32)


# -- wrong dtypes ------------------------------------------------------------------------------------------------
@tilec.jit
def exp_of_int(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.exp(x))  # <-


@tilec.jit
def xor_sum_of_float(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X, tl.xor_sum(x, 0))  # <-


@tilec.jit
def bitwise_on_float(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = x & 1  # <-
    tl.store(X + tl.arange(0, BLOCK), y)


@tilec.jit
def invert_float(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), ~x)  # <-


@tilec.jit
def atomic_and_float(X, BLOCK: tl.constexpr):
    tl.atomic_and(X + tl.arange(0, BLOCK), 1.0)  # <-


@tilec.jit
def float_mask(X, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), 1.0, mask=tl.arange(0, BLOCK) * 1.0)  # <-


@tilec.jit
def histogram_of_float(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, 4), tl.histogram(x, 4))  # <-


@tilec.jit
def gather_float_index(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.gather(x, x, 0))  # <-


@tilec.jit
def join_mixed(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    j = tl.join(x, x.to(tl.int32))  # <-


@pytest.mark.parametrize("kernel,arg,match", [
    (exp_of_int, I, "exp expects fp32 or fp64"),
    (xor_sum_of_float, F, "xor_sum needs integers"),
    (bitwise_on_float, F, ["bitwise", "integer", "float"]),
    (invert_float, F, "~ needs an integer"),
    (atomic_and_float, F, "atomic_and does not support"),
    (float_mask, F, "mask must be a boolean"),
    (histogram_of_float, F, "histogram needs a 1-d integer"),
    (gather_float_index, F, "gather index must be an integer"),
    (join_mixed, F, "join needs two tensors of one dtype"),
], ids=lambda v: getattr(v, "__name__", None) if callable(getattr(v, "fn", None)) else None)
def test_wrong_dtypes(mode, kernel, arg, match):
    expect_error(kernel, mode, match, arg, BLOCK=16)


# -- dot shapes --------------------------------------------------------------------------------------------------
@tilec.jit
def dot_kernel(X, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, K2: tl.constexpr):
    a = tl.load(X + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(X + tl.arange(0, K2)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot(a, b)  # <-


@tilec.jit
def dot_1d(X, BLOCK: tl.constexpr):
    a = tl.load(X + tl.arange(0, BLOCK))
    c = tl.dot(a, a)  # <-


@pytest.mark.parametrize("shape,match", [((16, 16, 32, 16), "inner dimensions 32 and 16 differ"),
                                         ((8, 16, 16, 16), "every dimension >= 16")])
def test_dot_bad_shapes(mode, shape, match):
    m, n, k, k2 = shape
    if mode == "interpret" and "16" in match:
        pytest.skip("the interpreter takes dots of any size")
    expect_error(dot_kernel, mode, match, np.zeros(1024, np.float32), M=m, N=n, K=k, K2=k2)


def test_dot_of_vectors(mode):
    expect_error(dot_1d, mode, "2-d", F, BLOCK=16)


# -- compile-time values -----------------------------------------------------------------------------------------
@tilec.jit
def arange_runtime(X, n):
    tl.store(X + tl.arange(0, n), 1.0)  # <-


@tilec.jit
def full_runtime_shape(X, n):
    z = tl.zeros((n,), tl.float32)  # <-


@tilec.jit
def static_range_runtime(X, n):
    for i in tl.static_range(n):  # <-
        tl.store(X + i, 1.0)


@tilec.jit
def reshape_runtime(X, n, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.reshape(x, (n, 2))  # <-


@tilec.jit
def too_big(X, BLOCK: tl.constexpr):
    z = tl.zeros((BLOCK, BLOCK), tl.float32)  # <-


def test_tile_too_big(mode):
    expect_error(too_big, mode, "numel (4194304) exceeds triton maximum tensor numel (1048576)", F, BLOCK=2048)


@tilec.jit
def topk_runtime_k(X, n, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.topk(x, n)  # <-


@tilec.jit
def program_id_runtime(X, n):
    tl.store(X, tl.program_id(n) * 1.0)  # <-


@pytest.mark.parametrize("kernel,args,match", [
    (program_id_runtime, (F, 2), "axis must be 0, 1, or 2"),
    (arange_runtime, (F, 16), "compile-time"),
    (full_runtime_shape, (F, 16), "compile-time"),
    (static_range_runtime, (F, 16), "compile-time"),
    (reshape_runtime, (F, 8), "compile-time"),
    (topk_runtime_k, (F, 4), "compile-time"),
], ids=["program_id", "arange", "full", "static_range", "reshape", "topk"])
def test_constexpr_required(mode, kernel, args, match):
    kw = {"BLOCK": 16} if "BLOCK" in [p.name for p in kernel.params] else {}
    expect_error(kernel, mode, match, *args, **kw)


# -- axes --------------------------------------------------------------------------------------------------------
@tilec.jit
def sum_missing_axis(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.store(X, tl.sum(x, axis=2))  # <-


@tilec.jit
def max_missing_axis(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X, tl.max(x, axis=-2))  # <-


@tilec.jit
def argmin_missing_axis(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X, tl.argmin(x, axis=1))  # <-


@tilec.jit
def cumsum_missing_axis(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.cumsum(x, axis=3))  # <-


@tilec.jit
def split_wrong_shape(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    a, b = tl.split(x)  # <-


@tilec.jit
def sort_missing_dim(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.sort(x, dim=1)  # <-


@pytest.mark.parametrize("kernel,match", [
    (sum_missing_axis, "axis 2 out of range"), (max_missing_axis, "axis -2 out of range"),
    (argmin_missing_axis, "out of range"), (cumsum_missing_axis, "axis 3 out of range"),
    (split_wrong_shape, "last dimension is 2"), (sort_missing_dim, "out of range"),
], ids=["sum", "max", "argmin", "cumsum", "split", "sort"])
def test_missing_axis(mode, kernel, match):
    expect_error(kernel, mode, match, F, BLOCK=16)


@tilec.jit
def inline_asm(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)  # <-
    tl.store(X + tl.arange(0, 16), y)


def test_inline_asm_is_refused_off_the_gpu(mode):
    """The CPU backend and the interpreter refuse GPU assembly at its line; a GPU target compiles it."""
    if mode == "cuda":
        pytest.skip("CUDA runs inline PTX (tests/gpu/test_inline_asm_run.py)")
    where = "on the CPU backend" if mode == "cpu" else "in the interpreter"
    err = expect_error(inline_asm, mode, "inline GPU assembly has no meaning on the host", np.zeros(16, np.int32))
    assert where in str(err)


@tilec.jit
def inline_asm_bad_dtype(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype="int32", is_pure=True, pack=1)  # <-
    tl.store(X + tl.arange(0, 16), y)


@tilec.jit
def inline_asm_too_few_inputs(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r", [x, x], dtype=tl.int32, is_pure=True,  # <-
                                  pack=1)
    tl.store(X + tl.arange(0, 16), y)


@tilec.jit
def inline_asm_packed_count(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=2)  # <-
    tl.store(X + tl.arange(0, 16), y)


@tilec.jit
def inline_asm_pack_not_dividing(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=32)  # <-
    tl.store(X + tl.arange(0, 16), y)


@tilec.jit
def inline_asm_bad_string(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "r,=r", [x], dtype=tl.int32, is_pure=True, pack=1)  # <-
    tl.store(X + tl.arange(0, 16), y)


@tilec.jit
def inline_asm_runtime_purity(X):
    x = tl.load(X + tl.arange(0, 16))
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=x, pack=1)  # <-
    tl.store(X + tl.arange(0, 16), y)


@pytest.mark.parametrize("kernel,match", [
    (inline_asm_bad_dtype, "dtype must be a tl dtype"),
    (inline_asm_too_few_inputs, "name 1 inputs, but 2 argument(s) take 2"),
    (inline_asm_packed_count, "name 1 outputs, but 1 result(s) (pack=2) take 2"),
    (inline_asm_pack_not_dividing, "pack=32 does not divide the 16 elements"),
    (inline_asm_bad_string, "output constraint '=r' after an input"),
    (inline_asm_runtime_purity, "is_pure must be a compile-time bool"),
], ids=["dtype", "inputs", "packed-outputs", "pack-divides", "order", "purity"])
def test_inline_asm_misuse_is_located(mode, kernel, match):
    expect_error(kernel, mode, match, np.zeros(16, np.int32))
