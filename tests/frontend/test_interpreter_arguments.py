"""The interpreter takes what the compiled path takes: torch tensors of every dtype and stride (stores land in the
caller's tensor), numpy views, ``reinterpret`` wrappers; and a kernel's source can be replaced
(``_unsafe_update_src``). Without torch the torch cases skip."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.language.reinterpret import reinterpret


@tilec.jit(interpret=True)
def scale_strided(X, Y, n, sx, sy, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(X + o * sx, mask=m)
    tl.store(Y + o * sy, v * 2, mask=m)


TORCH_DTYPES = ["bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                "float8_e5m2", "float8_e4m3fn"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_tensors_of_every_dtype_and_stride(dtype):
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(3)
    src = (torch.randn(60, generator=g) * 3).to(dt)
    x = src[::3]                   # a strided view
    y_base = torch.zeros(80, dtype=dt)
    y = y_base[1::4]               # a strided view with an offset
    n = x.numel()
    scale_strided[(1,)](x, y, n, x.stride(0), y.stride(0), BLOCK=32)
    want = (x.double() * 2).to(dt) if dtype != "bool" else x
    assert torch.equal(y.double(), want.double())
    untouched = torch.ones(80, dtype=torch.bool)
    untouched[1::4] = False
    assert (y_base[untouched].double() == 0).all()


def test_numpy_views_and_reinterpret():
    r = np.random.default_rng(4)
    x = r.standard_normal((6, 5)).astype(np.float32).T[1]   # a non-contiguous row of a transposed array
    y = np.zeros((6, 2), np.float32)[:, 1]
    scale_strided[(1,)](x, y, 6, x.strides[0] // 4, y.strides[0] // 4, BLOCK=8)
    np.testing.assert_array_equal(y, x * 2)
    halves = r.standard_normal(16).astype(np.float16)
    codes, out = halves.view(np.int16), np.zeros(16, np.int16)
    scale_strided[(1,)](reinterpret(codes, tl.float16), reinterpret(out, tl.float16), 16, 1, 1, BLOCK=16)
    np.testing.assert_array_equal(out.view(np.float16), halves * 2)


@tilec.jit
def template(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Y + o, OPERATION)


@pytest.mark.parametrize("interpret", [False, True])
def test_unsafe_update_src(interpret):
    k = tilec.jit(template.fn, interpret=interpret)
    k._unsafe_update_src(k.src.replace("OPERATION", "tl.load(X + o) * 3.0 + 1.0"))
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    k[(1,)](x, y, BLOCK=16)
    np.testing.assert_array_equal(y, x * 3 + 1)
    k._unsafe_update_src(k.src.replace("* 3.0 + 1.0", "- 5.0"))
    k[(1,)](x, y, BLOCK=16)
    np.testing.assert_array_equal(y, x - 5)
