"""A pointer argument the kernel stores or atomically updates through must be writable memory: read-only
arrays, read-only memmaps and stride-0 broadcast views are refused with a TypeError naming the parameter, before
anything runs; read-only inputs are fine."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.ir.parser import parse_module
from tilec.passes.pointer_origins import written_params


@tilec.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


@tilec.jit
def count(flags_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(hist_ptr + tl.load(flags_ptr + offs, mask=m), 1, mask=m)


@tilec.jit
def strided_rows(src_ptr, dst_ptr, rows, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = dst_ptr + offs          # a pointer carried by the loop, written through
    q = src_ptr + offs
    for _ in range(rows):
        tl.store(p, tl.load(q, mask=offs < n) + 1.0, mask=offs < n)
        p += n
        q += n


def _readonly(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_read_only_inputs_are_accepted():
    x = _readonly(np.random.default_rng(0).standard_normal(37).astype(np.float32))
    y = np.zeros(37, np.float32)
    scale[(3,)](x, y, 37, BLOCK=16)
    np.testing.assert_allclose(y, 2 * x)


@pytest.mark.parametrize("make", ["readonly", "broadcast", "memmap"])
def test_written_read_only_memory_is_refused(make, tmp_path):
    x = np.random.default_rng(1).standard_normal(37).astype(np.float32)
    if make == "readonly":
        y = _readonly(np.zeros(37, np.float32))
    elif make == "broadcast":
        y = np.broadcast_to(np.zeros(1, np.float32), (37,))
    else:
        np.zeros(37, np.float32).tofile(tmp_path / "y.bin")
        y = np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="r", shape=(37,))
    before = np.array(y)
    for _ in range(2):  # the second launch takes the cached path: refused just the same
        with pytest.raises(TypeError, match="scale: parameter 'y_ptr' is written by the kernel, but its argument"):
            scale[(3,)](x, y, 37, BLOCK=16)
    np.testing.assert_array_equal(np.array(y), before)
    scale[(3,)](x, np.zeros(37, np.float32), 37, BLOCK=16)  # the same variant still launches with writable memory


@pytest.mark.parametrize("grid", [(1,), (3,)])
def test_read_only_memory_is_refused_after_writable_memory_of_the_same_kind(grid, tmp_path):
    """The launch cache keys writability for every kind of array: a read-only array or memmap after launches with
    writable ones of the same dtype and alignment is still refused, never written through."""
    x = np.ones(37, np.float32)
    block = 64 if grid == (1,) else 16
    np.zeros(37, np.float32).tofile(tmp_path / "y.bin")
    writable = [np.zeros(37, np.float32), np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="r+", shape=(37,))]
    read_only = [_readonly(np.zeros(37, np.float32)),
                 np.memmap(tmp_path / "y.bin", dtype=np.float32, mode="r", shape=(37,))]
    for w, r in zip(writable, read_only):
        for _ in range(3):
            scale[grid](x, w, 37, BLOCK=block)
        for _ in range(2):
            with pytest.raises(TypeError, match="scale: parameter 'y_ptr' is written by the kernel"):
                scale[grid](x, r, 37, BLOCK=block)
        np.testing.assert_array_equal(w, 2 * x)


def test_atomics_target_must_be_writable():
    flags = _readonly(np.random.default_rng(2).integers(0, 5, 100).astype(np.int32))
    hist = np.zeros(5, np.int32)
    count[(4,)](flags, hist, 100, BLOCK=32)
    np.testing.assert_array_equal(hist, np.bincount(flags, minlength=5))
    with pytest.raises(TypeError, match="parameter 'hist_ptr'"):
        count[(4,)](flags, _readonly(hist), 100, BLOCK=32)


def test_loop_carried_pointers_are_traced():
    src = np.random.default_rng(3).standard_normal((4, 21)).astype(np.float32)
    dst = np.zeros_like(src)
    strided_rows[(1,)](_readonly(src), dst, 4, 21, BLOCK=32)
    np.testing.assert_allclose(dst, src + 1.0)
    with pytest.raises(TypeError, match="parameter 'dst_ptr'"):
        strided_rows[(1,)](src, _readonly(dst), 4, 21, BLOCK=32)


def test_written_params_analysis():
    m = parse_module("""module {
  func @k(%a: ptr<f32>, %b: ptr<f32>, %c: ptr<f32>, %flag: i1) {kernel = true} {
    %v = load %a : f32
    %p = select %flag, %b, %c : ptr<f32>
    store %p, %v
    return
  }
}""")
    assert written_params(m.funcs[0]) == [1, 2]
