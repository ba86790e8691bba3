"""Kernels with inline PTX in the shapes Triton's own uses of ``tl.inline_asm_elementwise`` take, each with its
numpy reference: compiled to PTX (and assembled) by test_inline_asm_ptx.py, run on a device by
test_inline_asm_run.py."""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def shl3(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Y + offs, y, mask=offs < n)


@tilec.jit
def packed_i8(X, Y, n, BLOCK: tl.constexpr):
    """Four bytes per register: one ``and.b32`` per four elements."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F;", "=r,r", [x], dtype=tl.uint8, is_pure=True,
                                  pack=4)
    tl.store(Y + offs, y, mask=offs < n)


@tilec.jit
def packed_i8_to_f32(X, Y, BLOCK: tl.constexpr):
    """Four bytes in, four f32 out per run (Triton's packed-conversion example): 4 outputs, one input."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise(
        """
        {
        .reg .b8 a<4>;
        mov.b32 {a0, a1, a2, a3}, $4;
        cvt.rn.f32.u8 $0, a0;
        cvt.rn.f32.u8 $1, a1;
        cvt.rn.f32.u8 $2, a2;
        cvt.rn.f32.u8 $3, a3;
        }
        """, "=r,=r,=r,=r,r", [x], dtype=tl.float32, is_pure=True, pack=4)
    tl.store(Y + offs, y)


@tilec.jit
def sum_and_diff(X, Y, S, D, BLOCK: tl.constexpr):
    """Two results from one run, and a scalar argument broadcast against a tile."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    s, d = tl.inline_asm_elementwise(
        """
        {
        add.f32 $0, $2, $3;
        sub.f32 $1, $2, $3;
        }
        """, "=f,=f,f,f", [x, y], dtype=(tl.float32, tl.float32), is_pure=True, pack=1)
    t = tl.inline_asm_elementwise("mul.rn.f32 $0, $1, $2;", "=f,f,f", [s, 2.0], dtype=tl.float32, is_pure=True,
                                  pack=1)
    tl.store(S + offs, t)
    tl.store(D + offs, d)


@tilec.jit
def half2_fma(X, Y, BLOCK: tl.constexpr):
    """Two f16 per register: ``fma.rn.f16x2`` on packed pairs."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    z = tl.inline_asm_elementwise("fma.rn.f16x2 $0, $1, $2, $1;", "=r,r,r", [x, y], dtype=tl.float16,
                                  is_pure=True, pack=2)
    tl.store(X + offs, z)


@tilec.jit
def f16_scalar_regs(X, Y, BLOCK: tl.constexpr):
    """One f16 per 16-bit register (``h``)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("neg.f16 $0, $1;", "=h,h", [x], dtype=tl.float16, is_pure=True, pack=1)
    tl.store(Y + offs, y)


@tilec.jit
def lane_clock(Y, BLOCK: tl.constexpr):
    """Side effects and no arguments: a scalar result, kept although two reads look alike."""
    a = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    b = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.zeros([BLOCK], tl.int32) + a - b)


def _rng():
    return np.random.default_rng(0)


def make_shl3():
    x = _rng().integers(-2**20, 2**20, 1000).astype(np.int32)
    return shl3, [x, np.zeros_like(x), x.size], {"BLOCK": 256}, (4,), (1,), (x << 3,)


def make_packed_i8():
    x = _rng().integers(0, 256, 1000).astype(np.uint8)
    return packed_i8, [x, np.zeros_like(x), x.size], {"BLOCK": 512}, (2,), (1,), (x & 0x1F,)


def make_packed_i8_short():
    """Fewer bytes per thread than ``pack``: each run is padded, its extra results dropped."""
    x = _rng().integers(0, 256, 1000).astype(np.uint8)
    return packed_i8, [x, np.zeros_like(x), x.size], {"BLOCK": 64}, (16,), (1,), (x & 0x1F,)


def make_packed_i8_to_f32():
    x = _rng().integers(0, 256, 512).astype(np.uint8)
    return packed_i8_to_f32, [x, np.zeros(512, np.float32)], {"BLOCK": 512}, (1,), (1,), (x.astype(np.float32),)


def make_sum_and_diff():
    r = _rng()
    x, y = r.standard_normal(256).astype(np.float32), r.standard_normal(256).astype(np.float32)
    s, d = np.zeros_like(x), np.zeros_like(x)
    return sum_and_diff, [x, y, s, d], {"BLOCK": 256}, (1,), (2, 3), ((x + y) * 2, x - y)


def make_half2_fma():
    r = _rng()
    x, y = r.standard_normal(512).astype(np.float16), r.standard_normal(512).astype(np.float16)
    ref = (x.astype(np.float64) * y.astype(np.float64) + x.astype(np.float64)).astype(np.float16)  # one rounding
    return half2_fma, [x, y], {"BLOCK": 512}, (1,), (0,), (ref,)


def make_f16_scalar_regs():
    x = _rng().standard_normal(256).astype(np.float16)
    return f16_scalar_regs, [x, np.zeros_like(x)], {"BLOCK": 256}, (1,), (1,), (-x,)


def make_lane_clock():
    return lane_clock, [np.ones(128, np.int32)], {"BLOCK": 128}, (1,), (0,), (np.zeros(128, np.int32),)


#: name -> maker: (kernel, args, constexprs, grid, indices of the outputs among args, their numpy references)
CASES = {"shl3": make_shl3, "packed_i8": make_packed_i8, "packed_i8_short": make_packed_i8_short,
         "packed_i8_to_f32": make_packed_i8_to_f32,
         "sum_and_diff": make_sum_and_diff, "half2_fma": make_half2_fma, "f16_scalar_regs": make_f16_scalar_regs,
         "lane_clock": make_lane_clock}
