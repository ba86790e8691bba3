"""Every class of user error is a CompilationError naming file:line:col, with the source line and a caret."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from helpers import build
from tilec import CompilationError

THIS = __file__
SOURCE = open(THIS).read().splitlines()
NOT_ALLOWED_GLOBAL = [1, 2, 3]


def plain_python_helper(x):
    return x


def where(line_fragment: str, caret_at: str):
    """(line, col) of ``caret_at`` on the unique line containing ``line_fragment``."""
    hits = [i for i, s in enumerate(SOURCE) if line_fragment in s and "check(" not in s and "where(" not in s]
    assert len(hits) == 1, (line_fragment, hits)
    i = hits[0]
    return i + 1, SOURCE[i].index(caret_at) + 1


def check(exc: CompilationError, line_fragment, caret_at, message):
    line, col = where(line_fragment, caret_at)
    assert exc.file == THIS
    assert (exc.line, exc.col) == (line, col), str(exc)
    assert message in exc.message, exc.message
    text = str(exc).splitlines()
    assert text[0].startswith(f"{THIS}:{line}:{col}: ")
    assert text[1].strip() == SOURCE[line - 1].strip()
    assert text[2].index("^") - text[1].index(SOURCE[line - 1].strip()) == col - 1 - (
        len(SOURCE[line - 1]) - len(SOURCE[line - 1].lstrip()))


def compile_error(kernel, *args, **constexprs) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        build(kernel, *args, **constexprs)
    return info.value


X = np.zeros(64, np.float32)


@tilec.jit
def k_unsupported_syntax(X):
    for i in range(10):
        break  # E:unsupported


def test_unsupported_syntax():
    check(compile_error(k_unsupported_syntax, X), "break  # E:unsupported", "break", "unsupported syntax")


@tilec.jit
def k_unknown_tl_name(X):
    y = tl.arangee(0, 16)  # E:unknown-tl


def test_unknown_tl_name():
    check(compile_error(k_unknown_tl_name, X), "# E:unknown-tl", "tl.arangee", "has no attribute 'arangee'")


@tilec.jit
def k_type_mismatch(X):
    x = tl.load(X + tl.arange(0, 16))
    y = x // 2.0  # E:type


def test_type_mismatch():
    check(compile_error(k_type_mismatch, X), "# E:type", "x // 2.0", "// needs integer operands")


@tilec.jit
def k_pointer_float_offset(X):
    y = X + 1.5  # E:ptr


def test_pointer_plus_float():
    check(compile_error(k_pointer_float_offset, X), "# E:ptr", "X + 1.5", "floating-point offset")


@tilec.jit
def k_shape_mismatch(X):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    c = a + b  # E:shape


def test_shape_mismatch():
    check(compile_error(k_shape_mismatch, X), "# E:shape", "a + b", "cannot broadcast shapes [16] and [32]")


@tilec.jit
def k_arange_not_pow2(X, N: tl.constexpr):
    offs = tl.arange(0, N)  # E:pow2


def test_arange_power_of_two():
    check(compile_error(k_arange_not_pow2, X, N=24), "# E:pow2", "tl.arange", "power of 2, got 24")


@tilec.jit
def k_undefined_name(X):
    tl.store(X, undefined_thing)  # E:undefined  # noqa: F821


def test_undefined_name():
    check(compile_error(k_undefined_name, X), "# E:undefined", "undefined_thing", "'undefined_thing' is not defined")


@tilec.jit
def k_loop_type_change(X, n):
    acc = tl.zeros([16], dtype=tl.float32)
    for i in range(n):  # E:loop-type
        acc = acc.to(tl.float16)


def test_loop_carried_type_change():
    check(compile_error(k_loop_type_change, X, 4), "# E:loop-type", "for",
          "Loop-carried variable acc has initial type <[16], fp32> but is re-assigned to <[16], fp16> in loop!")


@tilec.jit
def k_loop_int_becomes_float(X, n):
    acc = 0
    for i in range(n):  # E:int-to-float
        acc += tl.load(X)
    tl.store(X, acc)


def test_a_loop_carried_int_that_becomes_float():
    """Triton materialises ``acc = 0`` as an int32 before the loop: adding a float in it changes its type."""
    check(compile_error(k_loop_int_becomes_float, X, 4), "# E:int-to-float", "for",
          "Loop-carried variable acc has initial type int32 but is re-assigned to fp32 in loop! Please make sure "
          "that the type stays consistent.")


@tilec.jit
def k_if_type_mismatch(X, n):
    if n > 0:  # E:if-type
        v = tl.zeros([16], dtype=tl.float32)
    else:
        v = tl.zeros([16], dtype=tl.int32)


def test_if_branch_type_mismatch():
    check(compile_error(k_if_type_mismatch, X, 4), "# E:if-type", "if", "Mismatched type for v (variable 'v'): type")


@tilec.jit
def k_bad_global(X):
    y = NOT_ALLOWED_GLOBAL  # E:global


def test_bad_global():
    check(compile_error(k_bad_global, X), "# E:global", "NOT_ALLOWED_GLOBAL", "cannot use global 'NOT_ALLOWED_GLOBAL'")


@tilec.jit
def k_call_python(X):
    y = plain_python_helper(1)  # E:call


def test_calling_plain_python():
    check(compile_error(k_call_python, X), "# E:call", "plain_python_helper(1)", "cannot call plain_python_helper")


@tilec.jit
def k_runtime_if_tensor_cond(X):
    x = tl.load(X + tl.arange(0, 16))
    if x > 0:  # E:tensor-if
        x = x + 1


def test_runtime_if_needs_scalar():
    check(compile_error(k_runtime_if_tensor_cond, X), "# E:tensor-if", "if", "needs a scalar condition")


@tilec.jit
def k_static_assert(X, N: tl.constexpr):
    tl.static_assert(N % 16 == 0, "N must be a multiple of 16")  # E:static


def test_static_assert():
    check(compile_error(k_static_assert, X, N=20), "# E:static", "tl.static_assert", "N must be a multiple of 16")


@tilec.jit
def k_return_in_loop_helper(x, n):
    for i in range(n):
        return x  # E:return
    return x


@tilec.jit
def k_return_in_loop(X, n):
    tl.store(X, k_return_in_loop_helper(1.0, n))


def test_return_in_runtime_control_flow():
    e = compile_error(k_return_in_loop, X, 3)
    check(e, "# E:return", "return", "a return with a value inside a loop is not supported")
    line, col = where("tl.store(X, k_return_in_loop_helper(1.0, n))", "k_return_in_loop_helper")
    assert f"(in k_return_in_loop_helper, called from {THIS}:{line}:{col})" in e.message


@tilec.jit
def k_dot_shapes(X):
    a = tl.zeros([16, 32], tl.float32)
    b = tl.zeros([16, 16], tl.float32)
    c = tl.dot(a, b)  # E:dot


def test_dot_shape_mismatch():
    check(compile_error(k_dot_shapes, X), "# E:dot", "tl.dot", "dot shape mismatch")


@tilec.jit
def k_mask_type(X):
    offs = tl.arange(0, 16)
    x = tl.load(X + offs, mask=offs)  # E:mask


def test_mask_must_be_bool():
    check(compile_error(k_mask_type, X), "# E:mask", "tl.load", "mask must be a boolean")


@tilec.jit
def k_args(X, n, BLOCK: tl.constexpr):
    pass


def test_launch_argument_errors():
    with pytest.raises(TypeError, match="k_args.*missing a value for parameter 'n'"):
        k_args[(1,)](X, BLOCK=16)
    with pytest.raises(TypeError, match="k_args.*unexpected keyword argument 'bogus'"):
        k_args[(1,)](X, 1, BLOCK=16, bogus=3)
    with pytest.raises(TypeError, match=r"k_args.*takes 3 arguments but 4"):
        k_args[(1,)](X, 1, 2, 3)
    with pytest.raises(TypeError, match="k_args.*parameter 'X'.*unsupported argument type"):
        k_args[(1,)]("not an array", 1, BLOCK=16)
    with pytest.raises(ValueError, match="k_args.*grid must have 1 to 3"):
        k_args[(1, 1, 1, 1)](X, 1, BLOCK=16)
    with pytest.raises(RuntimeError, match=r"launch it as k_args\[grid\]"):
        k_args(X, 1, 16)


@tilec.jit
def k_static_in_loop(X, n):
    ty = tl.float32
    for i in range(n):  # E:dtype-loop
        ty = tl.float16


def test_compile_time_value_reassigned_in_loop():
    check(compile_error(k_static_in_loop, X, 3), "# E:dtype-loop", "for",
          "variable 'ty' is tl.float32 before the loop but tl.float16 after an iteration")


def test_constexpr_needs_compile_time_value():
    with pytest.raises(TypeError, match="k_args: constexpr parameter 'BLOCK' needs a compile-time value"):
        k_args[(1,)](X, 1, BLOCK=np.zeros(3))


def test_bad_signature_type():
    with pytest.raises(CompilationError, match="parameter 'X': unknown type 'fp31'"):
        tilec.ASTSource(k_args, "*fp31,i32", {"BLOCK": 16}).make_ir({})
