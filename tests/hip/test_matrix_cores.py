"""Dots on AMD matrix cores, cross-compiled: the instruction each architecture and input type must use (v_mfma_*
on gfx908/gfx90a/gfx942/gfx950, v_wmma_* on gfx11 wave32) in the assembly of a linked, structurally valid code
object; the FMA path where no instruction applies; the instruction table against what LLVM accepts (each
candidate compiled in a child process, since an intrinsic the processor lacks aborts LLVM); and the errors a dot
in matrix layouts gets on the wrong processor instead of an abort."""
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tc_kernels as T
from hip_helpers import compile_case
from hsaco_check import validate_hsaco
from tilec.errors import BackendError
from tilec.targets.hip import matrix_instructions as mi
from tilec.targets.hip.arch import parse_arch
from tilec.targets.options import Options


def _mm(arch, dtype, ws=None, BM=64, BN=64, BK=32, prec="ieee", nw=4, **options):
    sig = ",".join([f"*{dtype}:16", f"*{dtype}:16", "*fp32:16", "*fp32:16", "i32:16", "i32:16", "i32:16",
                    "i32:16", "i32:1", "i32:16", "i32:1", "i32:16", "i32:1"])
    src = tilec.ASTSource(T.matmul_kernel, sig, constexprs=dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=4,
                                                                PREC=prec, EPILOGUE=False))
    return tilec.compile(src, tilec.Target("hip", arch, ws), dict(num_warps=nw, **options))


def _int8(arch, ws=None, BM=64, BN=64, BK=64):
    sig = ",".join(["*i8:16", "*i8:16", "*i32:16", "i32:16", "i32:16", "i32:16", "i32:16", "i32:1", "i32:16",
                    "i32:1"])
    src = tilec.ASTSource(T.int8_matmul_kernel, sig, constexprs=dict(BM=BM, BN=BN, BK=BK))
    return tilec.compile(src, tilec.Target("hip", arch, ws), {"num_warps": 4})


def _instructions(k):
    return sorted(set(re.findall(r"\bv_(?:mfma|wmma)_\w+", k.asm["amdgcn"])))


def _valid(k, arch, ws):
    validate_hsaco(k.asm["hsaco"], k.name, arch, ws)
    return _instructions(k)


EXPECTED = [
    ("gfx942", "fp16", "ieee", ["v_mfma_f32_32x32x8_f16"]),
    ("gfx942", "bf16", "ieee", ["v_mfma_f32_32x32x8_bf16"]),
    ("gfx942", "fp32", "ieee", ["v_mfma_f32_32x32x2_f32"]),
    ("gfx942", "fp32", "tf32", ["v_mfma_f32_32x32x4_xf32"]),
    ("gfx90a", "fp16", "ieee", ["v_mfma_f32_32x32x8f16"]),
    ("gfx90a", "bf16", "ieee", ["v_mfma_f32_32x32x8bf16_1k"]),
    ("gfx90a", "fp32", "tf32", ["v_mfma_f32_32x32x2f32"]),  # no xf32 before gfx942: exact f32 instead
    ("gfx950", "fp16", "ieee", ["v_mfma_f32_32x32x8_f16"]),
    ("gfx950", "fp32", "tf32", ["v_mfma_f32_32x32x2_f32"]),
    ("gfx908", "fp16", "ieee", ["v_mfma_f32_32x32x8f16"]),
    ("gfx908", "bf16", "ieee", []),  # gfx908's bf16 instructions are not the .1k ones: FMA
    ("gfx1100", "fp16", "ieee", ["v_wmma_f32_16x16x16_f16"]),
    ("gfx1100", "bf16", "ieee", ["v_wmma_f32_16x16x16_bf16"]),
    ("gfx1151", "fp16", "ieee", ["v_wmma_f32_16x16x16_f16"]),
    ("gfx1100", "fp32", "tf32", []),  # WMMA has no f32 inputs
    ("gfx1030", "fp16", "ieee", []),  # RDNA2: no matrix cores
    ("gfx1200", "fp16", "ieee", []),  # gfx12 WMMA has other layouts: not implemented, FMA
]


@pytest.mark.parametrize("arch,dtype,prec,want", EXPECTED)
def test_matmul_instruction_per_architecture(arch, dtype, prec, want):
    k = _mm(arch, dtype, prec=prec)
    ws = parse_arch(arch).warp_size
    assert _valid(k, arch, ws) == want
    if not want:
        asm = k.asm["amdgcn"]
        assert "mfma" not in k.asm["gir"] and "wmma" not in k.asm["gir"]
        assert re.search(r"v_(pk_)?fmac?_|v_dot2", asm), "the FMA path computes the dot"
    else:
        assert k.metadata["num_vgprs"] > 0 and k.metadata["spill_stores"] == 0


@pytest.mark.parametrize("arch,want", [("gfx942", "v_mfma_i32_32x32x16_i8"), ("gfx90a", "v_mfma_i32_32x32x8i8"),
                                       ("gfx950", "v_mfma_i32_32x32x16_i8"), ("gfx1100", "v_wmma_i32_16x16x16_iu8")])
def test_int8_dots(arch, want):
    assert _valid(_int8(arch), arch, parse_arch(arch).warp_size) == [want]


def test_16x16_tiles_for_small_or_forced_shapes():
    assert _instructions(_mm("gfx942", "fp16", BM=16, BN=64)) == ["v_mfma_f32_16x16x16_f16"]
    assert _instructions(_mm("gfx942", "fp16", matrix_instr_nonkdim=16)) == ["v_mfma_f32_16x16x16_f16"]
    assert _instructions(_mm("gfx942", "bf16", BM=16, BN=16)) == ["v_mfma_f32_16x16x16_bf16"]
    assert _instructions(_int8("gfx942", BM=16, BN=16)) == ["v_mfma_i32_16x16x32_i8"]
    with pytest.raises(BackendError, match="matrix_instr_nonkdim"):
        _mm("gfx942", "fp16", matrix_instr_nonkdim=8)


def test_wave64_on_gfx11_keeps_fma():
    assert _instructions(_mm("gfx1100", "fp16", ws=64)) == []
    assert _instructions(_int8("gfx1100", ws=64)) == []


def test_gpu_cases_matmuls_use_matrix_cores():
    """The suite's matmuls (tf32 by default, ieee, f16) on both target families."""
    for name, arch, ws, want in (("matmul", "gfx942", 64, "v_mfma_f32_32x32x4_xf32"),
                                 ("matmul_ieee", "gfx942", 64, "v_mfma_f32_32x32x2_f32"),
                                 ("matmul_f16", "gfx942", 64, "v_mfma_f32_32x32x8_f16"),
                                 ("matmul_f16", "gfx1100", 32, "v_wmma_f32_16x16x16_f16")):
        k = compile_case(name, arch, ws)
        assert _valid(k, arch, ws) == [want]


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_attention_chains_two_dots(arch):
    q = np.zeros((2, 3, 256, 64), np.float16)
    sig = ("*fp16:16", "*fp16:16", "*fp16:16", "*fp16:16", "fp32", "i32:16", "i32:16", "i32:16")
    src = tilec.ASTSource(T.attn_fwd_kernel, ",".join(sig), constexprs=dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64,
                                                                           CAUSAL=True))
    del q
    k = tilec.compile(src, tilec.Target("hip", arch), {"num_warps": 4})
    ws = parse_arch(arch).warp_size
    found = _valid(k, arch, ws)
    assert found and all(x.startswith("v_mfma" if ws == 64 else "v_wmma") for x in found)
    assert "exp" in k.asm["llir"]


def test_wrong_processor_for_a_matrix_layout_is_an_error():
    """gir whose dot was given MFMA layouts, lowered for a processor without MFMA: a tilec error, no abort."""
    from tilec.gpu.lowering import lower_module_text
    from tilec.ir.parser import parse_module
    from tilec.targets.hip.target import HipTarget
    k = _mm("gfx942", "fp16")
    gir = k.asm["gir"]
    assert "#mfma<" in gir
    for arch in ("gfx1100", "gfx1030"):
        with pytest.raises(BackendError, match="no mfma instruction"):
            lower_module_text(parse_module(gir), Options(), HipTarget(arch))
    with pytest.raises(BackendError, match="no mfma instruction for xf32"):
        k = _mm("gfx942", "fp32", prec="tf32")
        lower_module_text(parse_module(k.asm["gir"]), Options(), HipTarget("gfx950"))


# -- the instruction table against LLVM ----------------------------------------------------------------------------
_PROBE = textwrap.dedent('''
    import sys
    import llvmlite.binding as llvm
    llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()
    arch, ir = sys.argv[1], sys.stdin.read()
    m = llvm.parse_assembly(ir); m.verify()
    tm = llvm.Target.from_triple("amdgcn-amd-amdhsa").create_target_machine(cpu=arch, opt=2)
    print(tm.emit_assembly(m))
''')


def _types(instr):
    lanes_k = instr.k_width
    scalar = {"f16": "half", "bf16": "i16", "f32": "float", "xf32": "float"}.get(instr.inputs)
    if scalar is None:  # 8-bit integers, packed
        op = f"<{lanes_k // 4} x i32>" if instr.family == "wmma" else ("i32" if lanes_k == 4 else "i64")
    else:
        op = scalar if lanes_k == 1 else f"<{lanes_k} x {scalar}>"
    acc = f"<{instr.acc_regs} x {'float' if instr.acc == 'f32' else 'i32'}>"
    return op, acc


def _probe_module(instrs):
    lines = ['target triple = "amdgcn-amd-amdhsa"']
    for n, instr in enumerate(instrs):
        op, acc = _types(instr)
        if instr.family == "mfma":
            params, call = f"{op}, {op}, {acc}, i32, i32, i32", f"{op} %a, {op} %b, {acc} %c, i32 0, i32 0, i32 0"
        elif instr.inputs == "iu8":
            params, call = f"i1, {op}, i1, {op}, {acc}, i1", f"i1 1, {op} %a, i1 1, {op} %b, {acc} %c, i1 0"
        else:
            params, call = f"{op}, {op}, {acc}", f"{op} %a, {op} %b, {acc} %c"
        lines += [f"declare {acc} @{instr.intrinsic}({params})",
                  f"define amdgpu_kernel void @k{n}(ptr addrspace(1) %p) {{",
                  f"  %a = load {op}, ptr addrspace(1) %p", f"  %b = load {op}, ptr addrspace(1) %p",
                  f"  %c = load {acc}, ptr addrspace(1) %p", f"  %r = call {acc} @{instr.intrinsic}({call})",
                  f"  store {acc} %r, ptr addrspace(1) %p", "  ret void", "}"]
    return "\n".join(lines)


def _compile_in_child(arch, instrs):
    return subprocess.run([sys.executable, "-c", _PROBE, arch], input=_probe_module(instrs), capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("arch", ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100"])
def test_every_listed_instruction_compiles(arch):
    instrs = mi.available(parse_arch(arch))
    assert instrs
    r = _compile_in_child(arch, instrs)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("v_mfma") + r.stdout.count("v_wmma") >= len(instrs)


@pytest.mark.parametrize("arch,intrinsic", [("gfx950", "f32.32x32x4.xf32"), ("gfx942", "i32.32x32x8i8"),
                                            ("gfx908", "f32.32x32x8bf16.1k"), ("gfx1100", "f32.32x32x8f16"),
                                            ("gfx1200", "wmma.f32.16x16x16.f16")])
def test_unlisted_instructions_would_abort_llvm(arch, intrinsic):
    """What the table guards against: the child process dies inside LLVM."""
    instr = next(i for i in mi.INSTRUCTIONS if i.intrinsic.endswith(intrinsic))
    assert instr not in mi.available(parse_arch(arch))
    r = _compile_in_child(arch, [instr])
    assert r.returncode != 0 and "LLVM ERROR" in r.stderr


def test_every_known_architecture_is_known_to_llvm():
    """An unknown processor name compiles silently for a generic one (LLVM only warns): every name tilec
    accepts must be one LLVM knows."""
    from tilec.targets.hip.arch import KNOWN
    code = ("import llvmlite.binding as llvm, sys\nllvm.initialize_all_targets()\n"
            "t = llvm.Target.from_triple('amdgcn-amd-amdhsa')\n"
            "for a in sys.argv[1:]:\n    t.create_target_machine(cpu=a)\n")
    r = subprocess.run([sys.executable, "-c", code, *KNOWN], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "not a recognized processor" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-c", code, "gfx940"], capture_output=True, text=True, timeout=120)
    assert "not a recognized processor" in r.stderr  # the check can fail


@pytest.mark.skipif(shutil.which("llvm-objdump") is None, reason="needs llvm-objdump (Debian's llvm package)")
def test_linked_code_object_disassembles_to_the_same_matrix_instructions(tmp_path):
    """An independent disassembler reads tilec's linked code object: the MFMA instructions in its text section
    are those of the assembly LLVM printed (gfx90a: old llvm-objdump releases know it)."""
    k = compile_case("matmul_f16", "gfx90a", 64)
    path = tmp_path / "k.hsaco"
    path.write_bytes(k.asm["hsaco"])
    r = subprocess.run(["llvm-objdump", "-d", str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1000:]
    found = re.findall(r"\bv_mfma_\w+", r.stdout)
    assert found and found == re.findall(r"\bv_mfma_\w+", k.asm["amdgcn"])


def test_tilec_opt_shows_the_matrix_core_choice(tmp_path, capsys):
    from tilec.tools.opt import main
    path = tmp_path / "mm.tir"
    path.write_text(compile_case("matmul_f16").asm["tir"])
    assert main(["--target", "hip:gfx942", str(path)]) == 0
    assert "#mfma<" in capsys.readouterr().out
    assert main(["--target", "hip:gfx1100", str(path)]) == 0
    assert "#wmma<" in capsys.readouterr().out
    # a lone accelerate-dot cannot reach the target's choice: FMA, never NVIDIA layouts on an AMD target
    assert main(["--target", "hip:gfx942", "-p", "inline-all,convert-to-gir,accelerate-dot", str(path)]) == 0
    out = capsys.readouterr().out
    assert "#mma" not in out and "#mfma" not in out
