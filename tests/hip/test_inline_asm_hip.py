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


@tilec.jit
def typo(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    y = tl.inline_asm_elementwise("v_lshlrevv_b32 $0, 3, $1", "=v,v", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Y + offs, y)


def _fake_mc(tmp_path, body):
    """An ``llvm-mc`` stand-in (a shell script): LLVM 19 by its --version, ``body`` otherwise."""
    p = tmp_path / "llvm-mc"
    p.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "LLVM version 19.1.7"; exit 0; fi\n'
                 'for a in "$@"; do src="$a"; done\n' + body)
    p.chmod(0o755)
    return str(p)


def test_an_assembler_error_in_inline_asm_comes_first_where_the_call_is(tmp_path, monkeypatch):
    """An assembler that knows the processor but rejects a line of the user's assembly: its own message (the
    error, the offending line and its caret) heads a CompilationError located at the inline_asm call."""
    mc = _fake_mc(tmp_path, 'n=$(grep -n "v_lshlrevv" "$src" | head -n 1 | cut -d: -f1)\n'
                            'echo "$src:$n:2: error: invalid instruction" >&2\n'
                            'echo "        v_lshlrevv_b32 v1, 3, v1" >&2\necho "        ^" >&2\nexit 1\n')
    monkeypatch.setattr(assembler, "candidates", lambda: [mc])
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    with pytest.raises(tilec.CompilationError) as e:
        compile_jit(typo, [np.zeros(256, np.int32)] * 2, BLOCK=256)
    text = str(e.value)
    first = text.splitlines()[0]
    assert re.search(r"test_inline_asm_hip.py:\d+:\d+: error: invalid instruction$", first), first
    assert "v_lshlrevv_b32 v1, 3, v1" in text.splitlines()[1]
    assert "llvm-mc (LLVM 19.1.7) assembles it for gfx942" in text
    assert "y = tl.inline_asm_elementwise(" in text  # the kernel's own line, with its caret


def test_an_assembler_that_does_not_know_the_processor_is_passed_over(tmp_path, monkeypatch):
    mc = _fake_mc(tmp_path, "echo \"'gfx942' is not a recognized processor for this target (ignoring processor)\" "
                            ">&2\necho \"$src:5:3: error: invalid instruction\" >&2\nexit 1\n")
    monkeypatch.setattr(assembler, "candidates", lambda: [mc])
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    with pytest.raises(BackendError, match=r"needs an AMDGPU assembler that knows gfx942.*LLVM 17 or newer"):
        compile_jit(shl3, CASES["shl3"][1], BLOCK=256)


def test_gfx11_assembles_as_fake16():
    """gfx11 code is compiled with 16-bit values in whole VGPRs (``-real-true16``, as Triton and ROCm 6 do) and
    the assembler is told the same."""
    from tilec.targets.hip.arch import parse_arch
    assert parse_arch("gfx1100").codegen_features == "-real-true16"
    assert parse_arch("gfx1151", 64).codegen_features == "+wavefrontsize64,-real-true16"
    assert parse_arch("gfx942:sramecc+").codegen_features == "+sramecc"
    assert parse_arch("gfx1201").codegen_features == ""
