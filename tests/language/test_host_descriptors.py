"""Tensor descriptors made on the host (``tilec.TensorDescriptor``) and tuples as kernel arguments: their leaves are
runtime parameters, their structure specialises; checked against numpy on non-power-of-two shapes, compiled on the
CPU and in the interpreter."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import random_array, rng

MODES = ["cpu", "interpret"]


def _jit(fn, mode):
    return tilec.jit(fn, interpret=mode == "interpret")


def copy_scaled(src, dst, scale, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    x = src.load([pm * BM, pn * BN])
    tl.static_assert(src.block_shape == [BM, BN])
    dst.store([pm * BM, pn * BN], (x * scale + src.shape[1]).to(dst.dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_descriptor_arguments_move_blocks_with_bounds(mode, dtype):
    m, n, bm, bn = 37, 53, 16, 16
    x = random_array(rng(1), (m, 64), dtype)[:, :n]  # a strided view: rows of 64
    z = np.zeros((m, 64), dtype)
    src = tilec.TensorDescriptor(x, [m, n], [64, 1], [bm, bn])
    dst = tilec.TensorDescriptor.from_tensor(z[:, :n], [bm, bn])
    _jit(copy_scaled, mode)[(tilec.cdiv(m, bm), tilec.cdiv(n, bn))](src, dst, 3, bm, bn)
    t = np.dtype(dtype).type
    np.testing.assert_allclose(z[:, :n], x * t(3) + t(n), rtol=2e-3 if dtype == "float16" else 1e-7)
    assert (z[:, n:] == 0).all()  # stores past the descriptor's shape are dropped


@pytest.mark.parametrize("mode", MODES)
def test_a_new_shape_reuses_the_variant_and_a_new_block_shape_does_not(mode):
    k = _jit(copy_scaled, mode)
    for m, n, bm, bn in [(20, 48, 8, 16), (33, 80, 8, 16), (33, 80, 16, 32)]:
        x = random_array(rng(m), (m, n), "float32")
        z = np.zeros((m, n), np.float32)
        k[(tilec.cdiv(m, bm), tilec.cdiv(n, bn))](tilec.TensorDescriptor.from_tensor(x, [bm, bn]),
                                                 tilec.TensorDescriptor.from_tensor(z, [bm, bn]), 2, bm, bn)
        np.testing.assert_allclose(z, x * 2 + n, rtol=1e-6)
    if mode == "cpu":
        assert len(k.cache) == 2


def nan_padding(src, out, BM: tl.constexpr, BN: tl.constexpr):
    x = src.load([0, 0])
    o = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out + o, x)


@pytest.mark.parametrize("mode", MODES)
def test_descriptor_padding_nan(mode):
    x = random_array(rng(2), (3, 5), "float32")
    x = np.pad(x, ((0, 0), (0, 3)))[:, :5]  # rows of 8 floats: 32-byte strides
    out = np.zeros((4, 8), np.float32)
    d = tilec.TensorDescriptor(x, [3, 5], [8, 1], [4, 8], padding="nan")
    _jit(nan_padding, mode)[(1,)](d, out, 4, 8)
    np.testing.assert_array_equal(out[:3, :5], x)
    assert np.isnan(out[3]).all() and np.isnan(out[:, 5:]).all()


def tuple_argument(pair, out, N: tl.constexpr):
    ptr, (offset, scale), kind = pair
    o = tl.arange(0, N)
    x = tl.load(ptr + o)
    tl.store(out + o, (x + offset) * scale if kind == "affine" else x)


@pytest.mark.parametrize("mode", MODES)
def test_tuple_arguments_hold_arrays_numbers_and_constants(mode):
    x = random_array(rng(3), 16, "float32")
    out = np.zeros(16, np.float32)
    _jit(tuple_argument, mode)[(1,)]((x, (1.5, 3), "affine"), out, 16)
    np.testing.assert_allclose(out, (x + np.float32(1.5)) * 3, rtol=1e-6)


def test_descriptor_rules_are_checked_on_the_host():
    a = np.zeros((8, 6), np.float32)
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        tilec.TensorDescriptor.from_tensor(a, [8, 8])
    b = np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match="contiguous"):
        tilec.TensorDescriptor.from_tensor(b.T, [8, 8])
    with pytest.raises(ValueError, match="rank mismatch"):
        tilec.TensorDescriptor(b, [8, 8], [8, 1], [8])
    with pytest.raises(ValueError, match="powers of two"):
        tilec.TensorDescriptor(b, [8, 8], [8, 1], [8, 6])
    with pytest.raises(ValueError, match="padding 'nan'"):
        tilec.TensorDescriptor(np.zeros((8, 8), np.int32), [8, 8], [8, 1], [8, 8], padding="nan")
    with pytest.raises(ValueError, match="padding must be"):
        tilec.TensorDescriptor(b, [8, 8], [8, 1], [8, 8], padding="inf")
    with pytest.raises(TypeError, match="must be an array or tensor, got list"):
        tilec.TensorDescriptor([[0.0] * 8] * 8, [8, 8], [8, 1], [8, 8])
    raw = np.zeros(8 * 8 + 1, np.float32)
    with pytest.raises(ValueError, match="16-byte aligned"):
        tilec.TensorDescriptor.from_tensor(raw[1:].reshape(8, 8), [8, 8])


def test_descriptor_rules_hold_for_torch_tensors_and_other_arrays():
    """The checks read the base's address and element size however it is given: torch tensors (element size
    from the tensor, not 1), numpy arrays and any array-interface object."""
    torch = pytest.importorskip("torch")
    t = torch.zeros((8, 12), dtype=torch.float16)  # rows of 24 bytes: not a multiple of 16
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        tilec.TensorDescriptor.from_tensor(t, [8, 8])
    with pytest.raises(ValueError, match="16-byte aligned"):
        tilec.TensorDescriptor.from_tensor(torch.zeros(8 * 8 + 1)[1:].view(8, 8), [8, 8])
    d = tilec.TensorDescriptor.from_tensor(torch.zeros((8, 16), dtype=torch.float16), [8, 16])
    assert (d.shape, d.strides, d.block_shape) == ([8, 16], [16, 1], [8, 16])

    class Wrapped:  # only the array interface: the general way
        def __init__(self, a):
            self.__array_interface__ = a.__array_interface__
            self.shape, self.strides, self.itemsize = a.shape, a.strides, a.itemsize
    w = Wrapped(np.zeros((8, 6), np.float32))
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        tilec.TensorDescriptor.from_tensor(w, [8, 8])


def narrow_block(src, BM: tl.constexpr):
    src.load([0, 0])


@pytest.mark.parametrize("mode", MODES)
def test_descriptor_argument_blocks_follow_the_16_byte_row_rule(mode):
    d = tilec.TensorDescriptor.from_tensor(np.zeros((8, 8), np.float32), [8, 2])
    with pytest.raises(tilec.CompilationError, match="at least 16 bytes"):
        _jit(narrow_block, mode)[(1,)](d, 8)


def test_set_allocator_takes_a_callable_or_none():
    from tilec.targets.allocator import get_allocator
    alloc = lambda size, alignment, stream: np.empty(size, np.int8)  # noqa: E731
    tilec.set_allocator(alloc)
    assert get_allocator() is alloc
    tilec.set_allocator(None)
    assert get_allocator() is None
    with pytest.raises(TypeError, match="callable"):
        tilec.set_allocator(3)


@tilec.jit
def _as_descriptor(desc_or_ptr, n, BN: tl.constexpr):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape=[n], strides=[1], block_shape=[BN])


def double_either(src, dst, n, BN: tl.constexpr):
    src = _as_descriptor(src, n, BN)
    dst = _as_descriptor(dst, n, BN)
    pid = tl.program_id(0)
    dst.store([pid * BN], src.load([pid * BN]) * 2)


@pytest.mark.parametrize("mode", MODES)
def test_isinstance_tensor_descriptor_picks_descriptor_or_pointer(mode):
    """isinstance(x, tl.tensor_descriptor) is answered at compile time: Triton's attention tutorial takes host
    descriptors or pointers through one helper. Each way is its own specialisation."""
    n, bn = 45, 16
    x = random_array(rng(3), (n,), "float32")
    for as_desc in (True, False):
        z = np.zeros(n, np.float32)
        args = (tilec.TensorDescriptor.from_tensor(x, [bn]), tilec.TensorDescriptor.from_tensor(z, [bn])) \
            if as_desc else (x, z)
        _jit(double_either, mode)[(tilec.cdiv(n, bn),)](*args, n, bn)
        np.testing.assert_allclose(z, 2 * x, rtol=1e-6)


def test_repeated_launches_with_descriptors_and_tuples_take_the_binders_cache():
    """The binder keys descriptor and tuple arguments (structure and leaf keys) and spreads their leaves into the
    cached launch entry: later launches skip the general path, and each still reads its own arrays and sizes; a
    new block shape, a shape of another divisibility or a read-only destination gets a key of its own."""
    k = tilec.jit(copy_scaled)
    calls = []
    general = k._variant
    k._variant = lambda *a, **kw: calls.append(1) or general(*a, **kw)
    def launch(m, n, bm, bn, scale, z=None):
        x = random_array(rng(m * n + bm), (m, n), "float32")
        z = np.zeros((m, n), np.float32) if z is None else z
        k[(tilec.cdiv(m, bm), tilec.cdiv(n, bn))](tilec.TensorDescriptor.from_tensor(x, [bm, bn]),
                                                 tilec.TensorDescriptor.from_tensor(z, [bm, bn]), scale, bm, bn)
        np.testing.assert_allclose(z, x * scale + n, rtol=1e-6)
    launch(32, 48, 16, 16, 2)   # compiles (the first compile of a kernel learns its globals: no key kept)
    launch(32, 48, 16, 16, 2)
    assert len(calls) == 2
    for m, scale in [(32, 3), (48, 5), (64, -1)]:  # same key: new arrays, sizes and scales through the cache
        launch(m, 48, 16, 16, scale)
    assert len(calls) == 2
    launch(32, 52, 16, 16, 2)   # n = 52: not a multiple of 16, another specialisation
    launch(32, 48, 16, 32, 2)   # another block shape
    assert len(calls) == 4 and len(k.cache) == 3
    launch(32, 52, 16, 16, 7)
    launch(16, 48, 16, 32, 3)
    assert len(calls) == 4
    ro = np.zeros((32, 48), np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        launch(32, 48, 16, 16, 2, z=ro)


def tuple_scale(pair, out, n, B: tl.constexpr):
    x_ptr, s = pair
    o = tl.arange(0, B)
    tl.store(out + o, tl.load(x_ptr + o, mask=o < n) * s, mask=o < n)


def test_repeated_launches_with_tuples_take_the_binders_cache():
    k = tilec.jit(tuple_scale)
    calls = []
    general = k._variant
    k._variant = lambda *a, **kw: calls.append(1) or general(*a, **kw)
    for i, n in enumerate([10, 30, 17]):
        x = random_array(rng(n), (n,), "float32")
        out = np.zeros(n, np.float32)
        k[(1,)]((x, 1.5 + i), out, n, B=32)
        np.testing.assert_allclose(out, x * np.float32(1.5 + i), rtol=1e-6)
    assert len(calls) == 2  # the first two launches; the third through the binder's cache
