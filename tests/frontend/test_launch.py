"""End to end through ``kernel[grid](...)``: specialisation, the in-memory cache, grids, ASTSource signatures."""
import sys

import numpy as np
import pytest

import tilec
import tilec.language as tl

rng = np.random.default_rng(99)


@tilec.jit
def saxpy(X, Y, Out, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Out + offs, a * x + y, mask=mask)


def test_launch_end_to_end_and_cache():
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    saxpy[(tilec.cdiv(n, 128),)](x, y, out, 2.5, n, BLOCK=128)
    np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)
    before = len(saxpy.cache)
    out2 = np.zeros_like(x)
    saxpy[lambda meta: (tilec.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out2, 2.5, n, BLOCK=128)
    assert len(saxpy.cache) == before  # same specialisation: no recompilation
    np.testing.assert_array_equal(out, out2)
    saxpy[(tilec.cdiv(n, 64),)](x, y, out2, 2.5, n, BLOCK=64)
    assert len(saxpy.cache) == before + 1
    np.testing.assert_array_equal(out, out2)


def test_kwargs_and_numpy_scalars():
    n = 77
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    saxpy[(1,)](Out=out, X=x, Y=y, a=np.float32(-1.0), n=np.int64(n), BLOCK=128, num_warps=2)
    np.testing.assert_allclose(out, -x + y, rtol=1e-6)


def test_do_not_specialize():
    @tilec.jit(do_not_specialize=["n"])
    def fill(Out, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Out + offs, offs * 0 + n, mask=offs < n)

    out = np.zeros(64, np.int32)
    fill[(1,)](out, 16, BLOCK=64)
    fill[(1,)](out, 1, BLOCK=64)
    fill[(1,)](out, 17, BLOCK=64)
    assert len(fill.cache) == 1
    assert out[0] == 17 and out[16] == 17 and out[17] == 0


def test_cache_key_covers_callees():
    @tilec.jit
    def leaf(x):
        return x + 1

    @tilec.jit
    def top(X):
        tl.store(X, leaf(tl.load(X)))

    assert leaf in top.callees()
    key = top.cache_key
    assert isinstance(key, str) and len(key) == 64 and key != leaf.cache_key


def test_ast_source_signatures():
    src = tilec.ASTSource(saxpy, "*fp32,*fp32,*fp32:16,fp32,i32", {"BLOCK": 64})
    module = src.make_ir({})
    f = module.funcs[0]
    assert [str(a.type) for a in f.args] == ["ptr<f32>"] * 3 + ["f32", "i32"]
    assert f.attrs["arg_divisibility"] == (1, 1, 16, 1, 1)
    sig = {"X": "*fp16", "Y": "*fp16", "Out": "*fp16", "a": "fp32", "n": "i64", "BLOCK": "constexpr"}
    module = tilec.ASTSource(saxpy, sig, {"BLOCK": 32}, attrs={"n": {"divisibility": 16}}).make_ir({})
    f = module.funcs[0]
    assert str(f.args[4].type) == "i64" and f.attrs["arg_divisibility"][4] == 16
    with pytest.raises(tilec.CompilationError, match="4 entries but the kernel has 5"):
        tilec.ASTSource(saxpy, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64}).make_ir({})


def test_compile_api():
    k = tilec.compile(tilec.ASTSource(saxpy, "*fp32,*fp32,*fp32,fp32,i32", {"BLOCK": 64}), tilec.Target("cpu"))
    assert "tir" in k.asm and "func @saxpy" in k.asm["tir"]
    x = rng.standard_normal(100).astype(np.float32)
    out = np.zeros_like(x)
    k.run((2,), [x, x, out, 3.0, 100])
    np.testing.assert_allclose(out, 4 * x, rtol=1e-6)


def test_import_is_cheap():
    import subprocess
    code = "import sys, tilec, tilec.language; print('llvmlite' in sys.modules, 'torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "False"]


@tilec.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax_end_to_end(dtype):
    x = rng.standard_normal((33, 100)).astype(dtype)
    out = np.zeros(x.shape, np.float32)
    softmax_kernel[(33,)](out, x, 100, 100, 100, BLOCK=128)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_matmul_end_to_end():
    from test_kernels import matmul_kernel
    M, N, K = 70, 45, 50
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[(tilec.cdiv(M, 32), tilec.cdiv(N, 32))](a, b, c, M, N, K, K, 1, N, 1, N, 1,
                                                          BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_control_flow_end_to_end():
    from test_control_flow import collatz, row_sums, stats, clip
    out = np.zeros(1, np.int32)
    collatz[(1,)](out, 27)
    assert out[0] == 111
    x = rng.standard_normal((3, 70)).astype(np.float32)
    out = np.zeros(6, np.float32)
    row_sums[(3,)](x, out, 70, BLOCK=16)
    np.testing.assert_allclose(out[0::2], x.sum(axis=1), rtol=1e-5, atol=1e-5)

    @tilec.jit
    def inlined_calls(X, Out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + offs)
        s, m = stats(x, 2)
        tl.store(Out + offs, clip(x, -0.5, 0.5))
        tl.store(Out + BLOCK, s)
        tl.store(Out + BLOCK + 1, m)

    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(18, np.float32)
    inlined_calls[(1,)](x, out, BLOCK=16)
    np.testing.assert_allclose(out[:16], np.clip(x, -0.5, 0.5), rtol=1e-6)
    np.testing.assert_allclose(out[16:], [x.sum() * 2, x.max()], rtol=1e-5)


class Wrapped:
    """A foreign array exposing only ``__array_interface__``."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


@tilec.jit
def masked_copy(Src, Dst, Keep, big, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    keep = tl.load(Keep + offs, mask=inb, other=False)
    v = tl.load(Src + offs, mask=inb & keep, other=0)
    tl.store(Dst + offs, v + (big - big), mask=inb)
    tl.store(Keep + offs, ~keep, mask=inb)


def test_argument_kinds():
    n = 50
    src = rng.integers(0, 1000, n).astype(np.int64)
    dst = np.full(n, -7, np.int64)
    keep = rng.random(n) < 0.5
    before = keep.copy()
    masked_copy[(2,)](Wrapped(src), dst, keep, 2**40, n, BLOCK=32)
    np.testing.assert_array_equal(dst, np.where(before, src, 0))
    np.testing.assert_array_equal(keep, ~before)
    sig = masked_copy.specialize(masked_copy._bind((src, dst, keep, 2**40, n), {"BLOCK": 32}))[2].signature
    assert sig == {"Src": "*i64", "Dst": "*i64", "Keep": "*i1", "big": "i64", "n": "i32", "BLOCK": "constexpr"}


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    x = torch.randn(100)
    y = torch.randn(100)
    out = torch.empty(100)
    saxpy[(1,)](x, y, out, 2.0, 100, BLOCK=128)
    assert torch.allclose(out, 2 * x + y)


SCALE_GLOBAL = 3


def test_cache_key_covers_global_constants():
    @tilec.jit
    def uses_global(X):
        tl.store(X, tl.load(X) * SCALE_GLOBAL)

    k1 = uses_global.cache_key
    uses_global._cache_key = None
    globals()["SCALE_GLOBAL"] = 4
    try:
        assert uses_global.cache_key != k1
    finally:
        globals()["SCALE_GLOBAL"] = 3


@tilec.jit
def optional_bias(X, Bias, Out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    if Bias is not None:
        x += tl.load(Bias + offs, mask=mask)
    tl.store(Out + offs, x, mask=mask)


def test_none_arguments_specialise_like_constexprs():
    x, b = rng.standard_normal(40).astype(np.float32), rng.standard_normal(40).astype(np.float32)
    out = np.zeros_like(x)
    optional_bias[(1,)](x, None, out, 40, BLOCK=64)
    np.testing.assert_array_equal(out, x)
    optional_bias[(1,)](x, b, out, 40, BLOCK=64)
    np.testing.assert_allclose(out, x + b)
    assert len(optional_bias.cache) == 2


def test_torch_bfloat16():
    torch = pytest.importorskip("torch")
    from test_kernels import add_kernel
    x, y = torch.randn(300, dtype=torch.bfloat16), torch.randn(300, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    add_kernel[(2,)](x, y, out, 300, BLOCK=256)
    assert torch.equal(out, x + y)


def test_numpy_scalar_constexpr():
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros_like(x)
    saxpy[(1,)](x, x, out, 1.0, 64, BLOCK=np.int64(64))
    np.testing.assert_allclose(out, 2 * x)


@tilec.jit
def _stages_param(x_ptr, n, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + num_stages, mask=offs < n)


def test_parameter_named_like_a_launch_option_takes_the_value():
    """A constexpr named ``num_stages`` gets the keyword (Triton binds it to the kernel's parameter)."""
    x = np.zeros(5, np.float32)
    _stages_param[(1,)](x, 5, BLOCK=8, num_stages=3)
    np.testing.assert_array_equal(x, 3)
    _stages_param[(1,)](x, 5, BLOCK=8, num_stages=2, extern_libs={"libdevice": "/unused.bc"})
    np.testing.assert_array_equal(x, 5)  # extern_libs is accepted and ignored: the math library is built in
