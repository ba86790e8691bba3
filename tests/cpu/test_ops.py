"""Every elementwise op family on the CPU backend against the reference evaluator (the IR's meaning) and,
for floats, float64 numpy; tiles of 100 live elements in a 128-wide masked tile, vector and scalar code."""
import numpy as np
import pytest

from tilec.ir.evaluator import run_kernel
from tilec.ir.parser import parse_module
from tilec.ir.types import scalar

from .helpers import compile_cpu

rng = np.random.default_rng(7)
N, BLOCK = 100, 128
INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "f32", "f64"]


def _kernel(nin, body, in_t, out_t, block=BLOCK):
    """``o[i] = body(a[i], b[i], ...)`` for i < n: ``body`` is IR text on %a0.. giving %r."""
    params = ", ".join(f"%x{i}: ptr<{in_t}>" for i in range(nin))
    loads = "\n".join(
        f"    %s{i} = splat %x{i} : tile<{block}xptr<{in_t}>>\n"
        f"    %p{i} = addptr %s{i}, %offs : tile<{block}xptr<{in_t}>>\n"
        f"    %a{i} = load %p{i}, %m : tile<{block}x{in_t}>" for i in range(nin))
    return f"""module {{
  func @k({params}, %o: ptr<{out_t}>, %n: i32) {{kernel = true}} {{
    %offs = arange {{start = 0, end = {block}}} : tile<{block}xi32>
    %ns = splat %n : tile<{block}xi32>
    %m = cmp %offs, %ns {{predicate = "lt"}} : tile<{block}xi1>
{loads}
{body}
    %so = splat %o : tile<{block}xptr<{out_t}>>
    %po = addptr %so, %offs : tile<{block}xptr<{out_t}>>
    store %po, %r, %m
    return
  }}
}}"""


def _data(t, n=N, small=False):
    e = scalar(t)
    if e.kind == "float":
        return (rng.standard_normal(n) * (2 if small else 10)).astype(e.numpy)
    info = np.iinfo(e.numpy)
    lo, hi = (max(info.min, -20), min(info.max, 20)) if small else (info.min, info.max)
    return rng.integers(lo, hi, n, dtype=e.numpy, endpoint=True)


def _both(text, ins, out_dtype):
    m = parse_module(text)
    run, _, _ = compile_cpu(m)
    got = np.zeros(N, out_dtype)
    run((1, 1, 1), [*ins, got, N])
    ref = np.zeros(N, out_dtype)
    run_kernel(parse_module(text), "k", [*(x.copy() for x in ins), ref, N], 1)
    return got, ref


BIN_INT = ["add", "sub", "mul", "div", "rem", "and", "or", "xor", "max", "min", "umulhi"]


@pytest.mark.parametrize("t", INTS)
@pytest.mark.parametrize("op", BIN_INT)
def test_binary_int(op, t):
    a, b = _data(t), _data(t)
    b[::7] = 0  # division by zero is defined (0)
    if t[0] == "i":
        a[3], b[3] = np.iinfo(a.dtype).min, -1  # wraps, never traps
    text = _kernel(2, f"    %r = {op} %a0, %a1 : tile<{BLOCK}x{t}>", t, t)
    got, ref = _both(text, [a, b], a.dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("t", ["i8", "i32", "u32", "i64", "u64"])
@pytest.mark.parametrize("op", ["shl", "shr"])
def test_shifts_including_overwide(op, t):
    a = _data(t)
    bits = scalar(t).bits
    b = rng.integers(0, bits + 3, N).astype(a.dtype)
    text = _kernel(2, f"    %r = {op} %a0, %a1 : tile<{BLOCK}x{t}>", t, t)
    got, ref = _both(text, [a, b], a.dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "rem", "max", "min", "fdiv"])
def test_binary_float_exact(op, t):
    a, b = _data(t), _data(t)
    a[5], b[6] = np.nan, np.nan
    text = _kernel(2, f"    %r = {op} %a0, %a1 : tile<{BLOCK}x{t}>", t, t)
    got, ref = _both(text, [a, b], a.dtype)
    np.testing.assert_array_equal(got, ref)  # NaN positions compare equal too


def test_max_propagate_nan():
    a, b = _data("f32"), _data("f32")
    a[::5] = np.nan
    text = _kernel(2, f"    %r = max %a0, %a1 {{propagate_nan = true}} : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [a, b], np.float32)
    np.testing.assert_array_equal(got, np.maximum(a, b))
    text = _kernel(2, f"    %r = min %a0, %a1 : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [a, b], np.float32)
    np.testing.assert_array_equal(got, np.fmin(a, b))


UNARY_F = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
           "rsqrt": lambda x: 1 / np.sqrt(x),
           "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
           "log1p": np.log1p, "expm1": np.expm1, "trunc": np.trunc, "abs": np.abs, "neg": np.negative,
           "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "sqrt_rn": np.sqrt,
           "round": lambda x: np.trunc(x + np.copysign(0.5, x)),
           "erf": np.vectorize(__import__("math").erf)}
POSITIVE = {"log", "log2", "sqrt", "rsqrt", "log1p", "sqrt_rn"}


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", sorted(UNARY_F))
def test_unary_float_vs_float64(op, t):
    x = _data(t, small=True)
    if op in POSITIVE:
        x = np.abs(x) + 0.01
    if op == "round":
        x[:4] = [0.5, -0.5, 1.5, -2.5]
    text = _kernel(1, f"    %r = {op} %a0 : tile<{BLOCK}x{t}>", t, t)
    got, _ = _both(text, [x], x.dtype)
    ref = UNARY_F[op](x.astype(np.float64))
    tol = 4e-7 if t == "f32" else 1e-14
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_exp_special_values():
    x = np.array([0, 1, -1, 88.7, 89, -87, -100, -104, -200, np.inf, -np.inf, np.nan] * 9, np.float32)[:N]
    text = _kernel(1, f"    %r = exp %a0 : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [x], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, np.exp(x.astype(np.float64)).astype(np.float32), rtol=4e-7, atol=0)


@pytest.mark.parametrize("t", ["i8", "i32", "u16", "i64"])
@pytest.mark.parametrize("op", ["neg", "not", "abs", "popc", "clz"])
def test_unary_int(op, t):
    x = _data(t)
    text = _kernel(1, f"    %r = {op} %a0 : tile<{BLOCK}x{t}>", t, t)
    got, ref = _both(text, [x], x.dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("src,dst", [("f32", "i32"), ("f32", "u8"), ("f32", "f16"), ("f64", "f32"), ("i32", "f32"),
                                     ("u32", "f64"), ("i8", "i64"), ("u8", "i32"), ("i64", "i16"), ("f16", "f64"),
                                     ("f32", "i1"), ("i32", "i1"), ("f16", "i32")])
def test_cast(src, dst):
    x = _data(src)
    if scalar(src).kind == "float":
        with np.errstate(over="ignore"):
            x[:6] = [np.nan, np.inf, -np.inf, 3.7e9, -3.7e9, 0.0]
    out_np = np.bool_ if dst == "i1" else scalar(dst).numpy
    body = f"    %c = cast %a0 : tile<{BLOCK}x{dst}>"
    body += (f"\n    %r = cast %c : tile<{BLOCK}xi8>" if dst == "i1"
             else f"\n    %r = hint %c : tile<{BLOCK}x{dst}>")
    text = _kernel(1, body, src, "i8" if dst == "i1" else dst)
    got, ref = _both(text, [x], np.int8 if dst == "i1" else out_np)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
@pytest.mark.parametrize("dst", ["f16", "bf16"])
def test_narrowing_float_rounding(dst, rounding):
    x = _data("f32")
    x[:3] = [1e6, -1e6, 65519.0]
    body = (f"    %c = cast %a0 {{rounding = \"{rounding}\"}} : tile<{BLOCK}x{dst}>\n"
            f"    %r = cast %c : tile<{BLOCK}xf32>")
    text = _kernel(1, body, "f32", "f32")
    got, ref = _both(text, [x], np.float32)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("t", ["f32", "i32", "u32"])
@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_cmp_select(pred, t):
    a, b = _data(t, small=True), _data(t, small=True)
    if t == "f32":
        a[::9] = np.nan
    body = (f"    %c = cmp %a0, %a1 {{predicate = \"{pred}\"}} : tile<{BLOCK}xi1>\n"
            f"    %r = select %c, %a0, %a1 : tile<{BLOCK}x{t}>")
    text = _kernel(2, body, t, t)
    got, ref = _both(text, [a, b], a.dtype)
    np.testing.assert_array_equal(got, ref)


def test_fma_and_pow_atan2():
    a, b, c = (_data("f32", small=True) for _ in range(3))
    text = _kernel(3, f"    %r = fma %a0, %a1, %a2 : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [a, b, c], np.float32)
    np.testing.assert_allclose(got, a.astype(np.float64) * b + c, rtol=1e-6, atol=1e-6)
    pa = np.abs(a) + 0.1
    text = _kernel(2, f"    %r = pow %a0, %a1 : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [pa, b], np.float32)
    np.testing.assert_allclose(got, np.power(pa.astype(np.float64), b), rtol=1e-6)
    text = _kernel(2, f"    %r = atan2 %a0, %a1 : tile<{BLOCK}xf32>", "f32", "f32")
    got, _ = _both(text, [a, b], np.float32)
    np.testing.assert_allclose(got, np.arctan2(a.astype(np.float64), b), rtol=1e-6, atol=1e-7)


def test_bf16_arithmetic_rounds_once():
    a = (rng.standard_normal(N).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    b = (rng.standard_normal(N).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    text = _kernel(2, f"    %r = mul %a0, %a1 : tile<{BLOCK}xbf16>", "bf16", "bf16")
    m = parse_module(text)
    run, _, _ = compile_cpu(m)
    got = np.zeros(N, np.uint16)
    run((1, 1, 1), [a, b, got, N])
    f = lambda u: (u.astype(np.uint32) << 16).view(np.float32)  # noqa: E731
    prod = (f(a).astype(np.float64) * f(b)).astype(np.float32).view(np.uint32)
    ref = ((prod + 0x7FFF + ((prod >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("start,n", [(0, 1000), (40, 50), (3, 7)])
def test_wrapped_offsets_runtime_contiguity(start, n):
    """``(start + arange) % n`` pointers: consecutive lanes take vector loads/stores, wrapped ones gather."""
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %start: i32, %n: i32) {{kernel = true}} {{
    %i = arange {{start = 0, end = 64}} : tile<64xi32>
    %s = splat %start : tile<64xi32>
    %a = add %s, %i : tile<64xi32>
    %ns = splat %n : tile<64xi32>
    %w = rem %a, %ns : tile<64xi32>
    %xs = splat %x : tile<64xptr<f32>>
    %xp = addptr %xs, %w : tile<64xptr<f32>>
    %v = load %xp : tile<64xf32>
    %os = splat %o : tile<64xptr<f32>>
    %op = addptr %os, %w : tile<64xptr<f32>>
    %one = constant {{value = 1.0}} : f32
    %ot = splat %one : tile<64xf32>
    %r = add %v, %ot : tile<64xf32>
    store %op, %r
    return
  }}
}}"""
    run, asm, _ = compile_cpu(parse_module(text))
    x = rng.standard_normal(n).astype(np.float32)
    o = np.zeros(n, np.float32)
    run((1, 1, 1), [x, o, start, n])
    idx = (start + np.arange(64)) % n
    ref = np.zeros(n, np.float32)
    ref[idx] = x[idx] + 1
    np.testing.assert_array_equal(o, ref)
    llir = asm["llir"]
    assert ("masked.load" in llir or "load <16 x float>" in llir) and "masked.gather" in llir
