"""``tl.inline_asm_elementwise`` on CUDA: the assembly lands in the PTX once per ``pack`` registers, with the
operands its constraints name, for sm_80 and sm_90, and ptxas accepts it; what the target cannot give a register
is a located error, never an LLVM abort."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit
from inline_asm_kernels import CASES


def compiled(name, arch, **options):
    kernel, args, constexprs, *_ = CASES[name]()
    return compile_jit(kernel, args, arch, options, **constexprs)


def count(ptx, pattern):
    return len(re.findall(pattern, ptx))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_and_assembles(name, arch):
    k = compiled(name, arch)
    assert ("cubin" in k.asm) == HAVE_PTXAS
    assert "asm" in k.asm["llir"]


@pytest.mark.parametrize("arch", ARCHS)
def test_one_call_per_register(arch):
    # 256 elements over 128 threads: two registers per thread, one shl each
    ptx = compiled("shl3", arch).asm["ptx"]
    assert count(ptx, r"shl\.b32\s+%r\d+, %r\d+, 3;") == 2


@pytest.mark.parametrize("arch", ARCHS)
def test_packed_bytes_share_a_register(arch):
    # 512 bytes over 128 threads: 4 per thread, one packed call
    ptx = compiled("packed_i8", arch).asm["ptx"]
    assert count(ptx, r"and\.b32\s+%r\d+, %r\d+, 0x1F1F1F1F;") == 1
    # 64 bytes over 128 threads: one per thread, still one call (padded)
    ptx = compiled("packed_i8_short", arch).asm["ptx"]
    assert count(ptx, r"and\.b32\s+%r\d+, %r\d+, 0x1F1F1F1F;") == 1
    ptx = compiled("packed_i8_to_f32", arch).asm["ptx"]
    assert count(ptx, r"cvt\.rn\.f32\.u8") == 4


@pytest.mark.parametrize("arch", ARCHS)
def test_f16_pairs_and_halves(arch):
    assert count(compiled("half2_fma", arch).asm["ptx"], r"fma\.rn\.f16x2") == 2
    assert count(compiled("f16_scalar_regs", arch).asm["ptx"], r"neg\.f16\s+%rs\d+, %rs\d+;") == 2


def test_two_results_and_broadcast_scalar():
    k = compiled("sum_and_diff", 90)
    assert count(k.asm["ptx"], r"add\.f32") == 2 and count(k.asm["ptx"], r"sub\.f32") == 2
    assert count(k.asm["ptx"], r"mul\.rn\.f32") == 2


def test_purity_decides_what_may_be_merged():
    k = compiled("lane_clock", 90)
    assert count(k.asm["ptx"], r"%laneid") == 2
    assert "inline_asm_sideeffect" in k.asm["tir"]
    assert "asm sideeffect" in k.asm["llir"]


@tilec.jit
def twice_pure(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    a = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    b = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    unused = tl.inline_asm_elementwise("shl.b32 $0, $1, 5;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Y + offs, a + b)


def test_pure_asm_is_merged_and_removed():
    x = np.zeros(128, np.int32)
    k = compile_jit(twice_pure, [x, x], 90, BLOCK=128)
    assert k.asm["tir"].count("inline_asm ") == 1
    assert count(k.asm["ptx"], r"shl\.b32\s+%r\d+, %r\d+, 5;") == 0


def test_assembly_text_is_escaped():
    @tilec.jit
    def quoted(X, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + offs)
        y = tl.inline_asm_elementwise('// a "quoted" comment \\ with a backslash\n\tmov.b32 $0, $1;', "=r,r", [x],
                                      dtype=tl.int32, is_pure=True, pack=1)
        tl.store(X + offs, y)
    ptx = compile_jit(quoted, [np.zeros(128, np.int32)], 80, BLOCK=128).asm["ptx"]
    assert '// a "quoted" comment \\ with a backslash' in ptx


# -- what only the target knows: which registers exist ---------------------------------------------------------
@tilec.jit
def bad_register(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=q,r", [x], dtype=tl.int32, is_pure=True, pack=1)  # <-
    tl.store(X + offs, y)


@tilec.jit
def f32_in_16_bits(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,h", [x], dtype=tl.float32, is_pure=True, pack=1)  # <-
    tl.store(X + offs, y)


@tilec.jit
def i64_in_f(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("mov.b64 $0, $1;", "=l,f", [x], dtype=tl.int64, is_pure=True, pack=1)  # <-
    tl.store(X + offs, y)


@pytest.mark.parametrize("kernel,dtype,match", [
    (bad_register, np.int32, "constraint 'q' of output 0"),
    (f32_in_16_bits, np.float32, "constraint 'h' of input 0 cannot hold f32 (32 bits)"),
    (i64_in_f, np.int64, "constraint 'f' of input 0 cannot hold i64"),
])
def test_registers_the_target_lacks_are_located_errors(kernel, dtype, match):
    import inspect
    with pytest.raises(tilec.CompilationError) as e:
        compile_jit(kernel, [np.zeros(128, dtype)], 90, BLOCK=128)
    err = e.value
    lines, start = inspect.getsourcelines(kernel.fn)
    assert err.line == start + next(i for i, t in enumerate(lines) if "# <-" in t)
    assert match in str(err) and "r (32-bit register)" in str(err) and "^" in str(err)
