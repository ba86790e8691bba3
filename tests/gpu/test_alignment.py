"""Every shared and global access is aligned to its width.

The fault these guard against: a reduction with indices over uint8 values (``tl.max(x, 0, return_indices=True)``
over 64 bytes, 2 warps) staged the warps' partial values and then their i32 indices right after them in shared
memory, at byte offset 2: ``st.shared.b32 [base+2]`` is a misaligned address on the GPU, and the fault poisons the
whole CUDA context. Each operand of a multi-operand reduction or scan now gets its own aligned array (its scratch
plan, ``gpu/scratch.py``). The PTX checks run without a GPU (``tests/ptx_alignment.py`` proves each
access's alignment from the PTX itself); the launches (``gpu``) run the same kernels and compare with numpy.
"""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, compile_jit, device_arch, to_device
from ptx_alignment import check_kernel, misaligned
from tilec.gpu.scratch import plan_of

SIZES = (64, 100, 128, 1024)  # 100: a masked, non-power-of-two tile
VALUE_TYPES = ("uint8", "int8", "int16", "float16", "int32", "float32", "int64", "float64")


@tilec.jit
def max_with_index(X, Z, I, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=0)
    z, i = tl.max(x, axis=0, return_indices=True)
    tl.store(Z, z)
    tl.store(I, i)


@tilec.jit
def argmin_rows(X, I, M, N: tl.constexpr, ROWS: tl.constexpr):
    r = tl.arange(0, ROWS)
    c = tl.arange(0, N)
    x = tl.load(X + r[:, None] * N + c[None, :], mask=(r[:, None] < M))
    i = tl.argmin(x, axis=0)
    tl.store(I + c, i)


@tilec.jit
def running_max_with_index(X, Z, I, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    z, i = tl.associative_scan((x, o), 0, _max_and_index)
    tl.store(Z + o, z)
    tl.store(I + o, i)


@tilec.jit
def _max_and_index(a, ia, b, ib):
    take_b = b > a
    return tl.where(take_b, b, a), tl.where(take_b, ib, ia)


def _block(n):
    return 1 << (n - 1).bit_length()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("num_warps", [2, 4, 8])
@pytest.mark.parametrize("dtype", VALUE_TYPES)
def test_reduction_with_indices_stages_aligned_partials(dtype, num_warps, arch):
    x = np.zeros(64, dtype)
    k = compile_jit(max_with_index, [x, x[:1], np.zeros(1, np.int32), 64], arch,
                    {"num_warps": num_warps}, BLOCK=64)
    assert check_kernel(k) == []
    if x.itemsize < 4:  # the indices' array starts past the values' on a 4-byte boundary
        assert re.search(r"st\.shared\.b32\s+\[%r\w+\+[048]\]|st\.shared\.b32\s+\[%r\w+\]", k.asm["ptx"])


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ("uint8", "int16", "float16"))
def test_argmin_along_rows_and_scan_with_indices_are_aligned(dtype, arch):
    x = np.zeros((8, 64), dtype)
    k = compile_jit(argmin_rows, [x, np.zeros(64, np.int32), 8], arch, {"num_warps": 8}, N=64, ROWS=8)
    assert check_kernel(k) == []
    x1 = np.zeros(256, dtype)
    k = compile_jit(running_max_with_index, [x1, x1, np.zeros(256, np.int32)], arch, BLOCK=256)
    assert check_kernel(k) == []


def _arrays(count, sizes):
    plan = plan_of("a reduction of", [(f"operand{k}", eb, (count,)) for k, eb in enumerate(sizes)])
    return [a.offset for a in plan.arrays], plan.bytes


def test_operand_arrays_align_each_operand():
    assert _arrays(2, [1, 4]) == ([0, 4], 12)  # u8 values, then i32 indices from byte 4 (was 2)
    assert _arrays(3, [2, 8, 1]) == ([0, 8, 32], 35)
    offs, total = _arrays(5, [1, 2, 4, 8])
    assert all(o % s == 0 for o, s in zip(offs, [1, 2, 4, 8])) and total == offs[-1] + 40


def test_checker_rejects_an_unjustified_access():
    """The analysis itself: the old fault's PTX shape is caught, its fixed shape and a loop-carried, scaled
    address are accepted."""
    bad = """
.extern .shared .align 16 .b8 global_smem[];
	mul.wide.u32 	%rd8, %r2, 4;
	mov.b64 	%rd6, global_smem;
	add.s64 	%rd9, %rd6, %rd8;
	st.shared.b32 	[%rd9+2], %r27;
	ld.shared.v4.b32 	{%r1, %r2, %r3, %r4}, [global_smem+8];
"""
    found = misaligned(bad)
    assert [(a.needs, a.known) for a in found] == [(4, 2), (16, 8)]
    good = """
.extern .shared .align 16 .b8 global_smem[];
	mov.b64 	%rd6, global_smem;
	mul.wide.u32 	%rd5, %r2, 2;
	add.s64 	%rd7, %rd6, %rd5;
	add.s64 	%rd8, %rd7, %rd5;
	st.shared.b32 	[%rd8+4], %r23;
	mov.u64 	%rd1, %rd6;
$L__BB0_1:
	ld.shared.v2.b32 	{%r1, %r2}, [%rd1];
	add.s64 	%rd1, %rd1, 8;
	@%p1 bra 	$L__BB0_1;
"""
    assert misaligned(good) == []


@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
def test_reduction_with_indices_runs(dtype, n):
    """test_core's test_reduce1d[*-max-with-indices-uint8-64] family, on the device."""
    rng = np.random.default_rng(n)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    x = (rng.integers(info.min, info.max, n, endpoint=True) if info else rng.standard_normal(n)).astype(dtype)
    x = np.maximum(x, 0) if info is None or info.min < 0 else x  # masked-off lanes load 0: never the maximum
    z, i = np.zeros(1, dtype), np.zeros(1, np.int32)
    dev = to_device([x, z, i])
    max_with_index[(1,)](*dev, n, BLOCK=_block(n), target=tilec.Target("cuda", device_arch(), 32))
    assert dev[1].numpy()[0] == x.max()
    assert x[dev[2].numpy()[0]] == x.max()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ("uint8", "int16", "float16"))
def test_argmin_rows_and_scan_with_indices_run(dtype):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 100, (8, 64)).astype(dtype)
    dev = to_device([x, np.zeros(64, np.int32)])
    tgt = tilec.Target("cuda", device_arch(), 32)
    argmin_rows[(1,)](dev[0], dev[1], 8, N=64, ROWS=8, num_warps=8, target=tgt)
    np.testing.assert_array_equal(x[dev[1].numpy(), np.arange(64)], x.min(axis=0))
    x1 = rng.integers(0, 100, 256).astype(dtype)
    dev = to_device([x1, np.zeros_like(x1), np.zeros(256, np.int32)])
    running_max_with_index[(1,)](*dev, BLOCK=256, target=tgt)
    np.testing.assert_array_equal(dev[1].numpy(), np.maximum.accumulate(x1))
    np.testing.assert_array_equal(x1[dev[2].numpy()], np.maximum.accumulate(x1))


def test_global_vector_groups_start_aligned():
    """A vector of 4 registers whose next register basis moves by 5 elements would start mid-run: the width
    drops until every group starts at a multiple of itself (here, single accesses)."""
    from tilec.gpu.layouts import LinearLayout
    from tilec.gpu.passes.axis_info import AxisInfo, vector_width
    facts = AxisInfo((16,), (64,), (1,))
    aligned = LinearLayout((16,), ((1,), (2,), (4,)), ((8,),), ())
    skewed = LinearLayout((16,), ((1,), (2,), (5,)), ((8,),), ())
    assert vector_width(aligned, facts, None, 4) == 4
    assert vector_width(skewed, facts, None, 4) == 1
