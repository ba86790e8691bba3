"""Elementwise lowering choices visible in the PTX: masks computed once per run of equal elements, and float
multiply-add fusion following ``enable_fp_fusion``."""
import numpy as np

import tilec
import tilec.language as tl
from gpu_helpers import compile_jit


@tilec.jit
def centered(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.where(offs < n, x - m, 0.0), mask=offs < n)


@tilec.jit
def axpy(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + z, mask=mask)


def _ptx(kernel, args, options=None, **cx):
    return compile_jit(kernel, args, 90, options=options, **cx).asm["ptx"]


def test_mask_is_computed_once_per_vector_when_the_bound_is_divisible_by_16():
    x = np.zeros(4096, np.float16)
    aligned = _ptx(centered, [x, x, 4096, 0.5], options={"num_warps": 4}, BLOCK=2048)
    ragged = _ptx(centered, [x, x, 4001, 0.5], options={"num_warps": 4}, BLOCK=2048)
    # 2048 elements over 128 threads: 16 per thread, two 8-element vectors of f16
    assert aligned.count("setp.lt.s32") <= 2 < ragged.count("setp.lt.s32")
    assert aligned.count("selp.f32") + aligned.count("selp.b16") == ragged.count("selp.f32") + \
        ragged.count("selp.b16")


def test_multiply_add_fuses_unless_fp_fusion_is_off():
    x = np.zeros(1024, np.float32)
    fused = _ptx(axpy, [x, x, x, x, 1024], BLOCK=512)
    plain = _ptx(axpy, [x, x, x, x, 1024], options={"enable_fp_fusion": False}, BLOCK=512)
    assert "fma.rn.f32" in fused and "mul.rn.f32" not in fused
    assert "fma.rn.f32" not in plain and "mul.rn.f32" in plain and "add.rn.f32" in plain
