"""End-to-end kernels on the CPU backend against float64 numpy references, at sizes where masks matter."""
import numpy as np
import pytest

from tilec.ir import types as T

from . import kernels as K
from .helpers import compile_cpu

rng = np.random.default_rng(1)


def test_vector_add_non_power_of_two():
    run, _, _ = compile_cpu(K.vector_add(1024))
    n = 98_432 + 7
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n + 16, -1.0, np.float32)
    run(((n + 1023) // 1024, 1, 1), [x, y, out, n])
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == -1).all()  # masked-off lanes untouched


def test_vector_add_f16_raw_addresses():
    run, _, _ = compile_cpu(K.vector_add(256, T.f16))
    n = 1000
    x, y = rng.random(n).astype(np.float16), rng.random(n).astype(np.float16)
    out = np.zeros(n, np.float16)
    run((4, 1, 1), [x.ctypes.data, y.ctypes.data, out.ctypes.data, n])
    np.testing.assert_array_equal(out, (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16))


def _softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize("rows,cols,block", [(37, 1000, 1024), (5, 3, 4), (64, 129, 256)])
def test_softmax_rows(rows, cols, block):
    run, _, _ = compile_cpu(K.softmax(block))
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 4
    out = np.zeros_like(x)
    run((rows, 1, 1), [x, out, cols, cols])
    np.testing.assert_allclose(out, _softmax(x), rtol=2e-6, atol=1e-7)


def test_layer_norm():
    run, _, _ = compile_cpu(K.layer_norm(1024))
    rows, cols = 23, 1000
    x = rng.standard_normal((rows, cols)).astype(np.float32) + 3
    w, b = rng.random(cols).astype(np.float32), rng.random(cols).astype(np.float32)
    out = np.zeros_like(x)
    run((rows, 1, 1), [x, out, w, b, cols, cols])
    xd = x.astype(np.float64)
    mu = xd.mean(1, keepdims=True)
    ref = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bm,bn,bk", [(32, 32, 16), (64, 64, 32), (16, 48, 8)])
def test_matmul_fp32_odd_sizes(bm, bn, bk):
    run, _, _ = compile_cpu(K.matmul(bm, bn, bk))
    M, N, KK = 101, 77, 45
    a = rng.standard_normal((M, KK)).astype(np.float32)
    b = rng.standard_normal((KK, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    run(((M + bm - 1) // bm, (N + bn - 1) // bn, 1), [a, b, c, M, N, KK])
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype,np_in", [(T.f16, np.float16), (T.bf16, None)])
def test_matmul_half_inputs_fp32_accumulate(dtype, np_in):
    run, _, _ = compile_cpu(K.matmul(32, 32, 16, dtype))
    M, N, KK = 67, 50, 39
    a32 = rng.standard_normal((M, KK)).astype(np.float32)
    b32 = rng.standard_normal((KK, N)).astype(np.float32)
    if np_in is None:  # bf16: keep the top 16 bits
        ab = (a32.view(np.uint32) >> 16).astype(np.uint16)
        bb = (b32.view(np.uint32) >> 16).astype(np.uint16)
        a_ref = (ab.astype(np.uint32) << 16).view(np.float32)
        b_ref = (bb.astype(np.uint32) << 16).view(np.float32)
    else:
        ab, bb = a32.astype(np_in), b32.astype(np_in)
        a_ref, b_ref = ab.astype(np.float32), bb.astype(np.float32)
    c = np.zeros((M, N), np.float32)
    run(((M + 31) // 32, (N + 31) // 32, 1), [ab, bb, c, M, N, KK])
    np.testing.assert_allclose(c, a_ref.astype(np.float64) @ b_ref, rtol=1e-4, atol=1e-4)


def test_grid_3d_program_ids():
    from tilec.ir.parser import parse_module
    m = parse_module("""module {
  func @k(%o: ptr<i32>) {kernel = true} {
    %x = program_id {axis = 0} : i32
    %y = program_id {axis = 1} : i32
    %z = program_id {axis = 2} : i32
    %nx = num_programs {axis = 0} : i32
    %ny = num_programs {axis = 1} : i32
    %a = mul %z, %ny : i32
    %b = add %a, %y : i32
    %c = mul %b, %nx : i32
    %i = add %c, %x : i32
    %p = addptr %o, %i : ptr<i32>
    %h = constant {value = 1000} : i32
    %v = mul %z, %h : i32
    %w = add %v, %x : i32
    store %p, %w
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    out = np.zeros(5 * 3 * 4, np.int32)
    run((5, 3, 4), [out])
    z, y, x = np.meshgrid(range(4), range(3), range(5), indexing="ij")
    np.testing.assert_array_equal(out, (z * 1000 + x).ravel())


def test_bf16_values_are_held_as_codes():
    """bf16 values stay 16-bit integer codes in the CPU's LLVM IR: on hosts without native bf16, LLVM promotes
    ``bfloat`` phis/selects/masked loads through ``__truncsfbf2``, which the in-process JIT cannot resolve."""
    _, asm, _ = compile_cpu(K.matmul(32, 32, 16, T.bf16))
    assert "bfloat" not in asm["llir"]
    assert "__truncsfbf2" not in asm["asm"] and "__extendbfsf2" not in asm["asm"]


def _epilogue_kernel():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def dot_epilogue(X, Y, Z, BLOCK: tl.constexpr, ROWS: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
        y = tl.load(Y + offs[:, None] * BLOCK + offs[None, :])
        z = tl.dot(x, y, input_precision="ieee")
        if ROWS:
            z += tl.load(Z + offs)[None, :]
        else:
            z += tl.load(Z + offs)[:, None]
        tl.store(Z + offs[:, None] * BLOCK + offs[None, :], z)
    return dot_epilogue


@pytest.mark.parametrize("rows", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_store_reads_the_memory_it_overwrites(rows, dtype):
    """A tile's loads happen before its stores: a value read from Z (broadcast) and stored to Z is not fused
    into the store's loop, which would read rows the store already wrote."""
    k = _epilogue_kernel()
    r = np.random.default_rng(5)
    x, y = (r.standard_normal((16, 16)).astype(dtype) for _ in range(2))
    z = r.standard_normal((16, 16)).astype(np.float32)
    v = z.reshape(-1)[:16].astype(np.float64)
    want = x.astype(np.float64) @ y.astype(np.float64) + (v[None, :] if rows else v[:, None])
    k[(1,)](x, y, z, BLOCK=16, ROWS=rows)
    np.testing.assert_allclose(z, want, rtol=1e-4, atol=1e-4 if dtype == np.float32 else 1e-2)


def test_in_place_update_through_one_pointer_stays_fused():
    import tilec
    import tilec.language as tl

    @tilec.jit
    def bump(x_ptr, n, BLOCK: tl.constexpr):
        p = x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = tl.arange(0, BLOCK) + tl.program_id(0) * BLOCK < n
        tl.store(p, tl.load(p, mask=m) * 2 + 1, mask=m)
    x = np.random.default_rng(6).standard_normal(1000).astype(np.float32)
    want = x * 2 + 1
    k = bump[(8,)](x, 1000, BLOCK=128)
    np.testing.assert_allclose(x, want, rtol=1e-6)
    assert "reads memory its store overwrites" not in k.asm["plan"]
