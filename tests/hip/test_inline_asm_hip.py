"""``tl.inline_asm_elementwise`` on AMD (gfx942, wave64): GCN assembly in vector registers, packed operands, the
code object made through an ``llvm-mc`` that knows the processor (``tilec/targets/hip/assembler.py``) and
validated where one is installed; without one, a clear error instead of an LLVM abort."""
import re
import subprocess

import numpy as np
import pytest

import tilec
import tilec.language as tl
from hip_helpers import compile_jit
from hsaco_check import validate_hsaco
from tilec.errors import BackendError
from tilec.targets.hip import assembler


@tilec.jit
def shl3(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("v_lshlrev_b32 $0, 3, $1", "=v,v", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Y + offs, y)


@tilec.jit
def packed_f16(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("v_pk_add_f16 $0, $1, $1", "=v,v", [x], dtype=tl.float16, is_pure=True, pack=2)
    tl.store(Y + offs, y)


@tilec.jit
def min_max(X, Y, Lo, Hi, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.load(Y + offs)
    lo, hi = tl.inline_asm_elementwise("v_min_f32 $0, $2, $3\n v_max_f32 $1, $2, $3", "=&v,=&v,v,v", [x, y],
                                       dtype=(tl.float32, tl.float32), is_pure=True, pack=1)
    tl.store(Lo + offs, lo)
    tl.store(Hi + offs, hi)


@tilec.jit
def sgpr_constraint(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("s_mov_b32 $0, $1", "=s,s", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(X + offs, y)


CASES = {
    "shl3": (shl3, [np.zeros(256, np.int32)] * 2, [r"v_lshlrev_b32 v\d+, 3, v\d+"]),
    "packed_f16": (packed_f16, [np.zeros(512, np.float16)] * 2, [r"v_pk_add_f16 v\d+, v\d+, v\d+"]),
    "min_max": (min_max, [np.zeros(256, np.float32)] * 4, [r"v_min_f32 v\d+", r"v_max_f32 v\d+"]),
}


def _mc_version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return 0
    m = re.search(r"LLVM version (\d+)", out)
    return int(m.group(1)) if m else 0


HAVE_ASSEMBLER = any(_mc_version(p) >= 17 for p in assembler.candidates())


class Captured(Exception):
    pass


@pytest.mark.parametrize("name", sorted(CASES))
def test_assembly_reaches_the_code(name, monkeypatch):
    """The assembly text handed to the assembler holds the instructions, once per ``pack`` registers: 256
    lanes (4 wave64 warps) with one register each (two 16-bit elements packed into one for ``packed_f16``)."""
    kernel, args, patterns = CASES[name]

    def capture(text, arch):
        raise Captured(text)
    monkeypatch.setattr(assembler, "assemble", capture)
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")  # not a code object from the cache
    with pytest.raises(Captured) as e:
        compile_jit(kernel, args, BLOCK=args[0].size)
    text = str(e.value)
    assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx942' in text
    for p in patterns:
        assert len(re.findall(p, text)) == 1, (p, text)


@pytest.mark.skipif(not HAVE_ASSEMBLER, reason="no llvm-mc (LLVM 17 or newer) that knows gfx942")
@pytest.mark.parametrize("name", sorted(CASES))
def test_code_object_is_valid(name):
    kernel, args, _ = CASES[name]
    k = compile_jit(kernel, args, BLOCK=args[0].size)
    entry = validate_hsaco(k.asm["hsaco"], k.name, "gfx942", 64)
    assert k.metadata["num_vgprs"] == entry[".vgpr_count"] > 0


def test_without_an_assembler_the_error_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(assembler, "candidates", lambda: [])
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    with pytest.raises(BackendError, match="needs an AMDGPU assembler that knows gfx942.*TILEC_LLVM_MC"):
        compile_jit(shl3, CASES["shl3"][1], BLOCK=256)


def test_kernels_without_inline_asm_keep_llvms_own_objects():
    assert not assembler.has_inline_asm('define void @k() {\n  call void @llvm.amdgcn.s.barrier()\n  ret void\n}')
    assert assembler.has_inline_asm('%1 = call i32 asm "v_mov_b32 $0, $1", "=v,v"(i32 %0)')
    assert assembler.has_inline_asm('call void asm sideeffect "s_nop 0", ""()')


def test_bare_metadata_names_are_tagged_as_strings():
    text = "      - .name:           Y\n    .name:           k\n    .symbol:         k.kd\n    .size: 8\n"
    assert assembler.tag_names(text) == ("      - .name:           !str Y\n    .name:           !str k\n"
                                         "    .symbol:         !str k.kd\n    .size: 8\n")


def test_scalar_registers_are_refused_for_lane_values():
    with pytest.raises(tilec.CompilationError, match=r"constraint 's' of output 0 .* v \(vector register"):
        compile_jit(sgpr_constraint, [np.zeros(256, np.int32)], BLOCK=256)
