"""tilec-opt: pass lists over tir compiled from Python source, output that parses back, --target, printing and
verifying between passes, the pass listing, and a one-line error with exit status 2 for every kind of bad input."""
import io
import os
import subprocess
import sys
import tomllib

import pytest

import tilec
import tilec.language as tl
from tilec.ir.core import IRError
from tilec.ir.ops import ConstantOp
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.passes import Pass
from tilec.passes.manager import PASS_REGISTRY, load_all_passes
from tilec.tools.opt import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@tilec.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@tilec.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))


def compiled(kernel, signature, target=None, **constexprs):
    return tilec.compile(tilec.ASTSource(kernel, signature=signature, constexprs=constexprs),
                         target=target or tilec.Target("cuda", 90, 32))


@pytest.fixture(scope="module")
def scale():
    return compiled(scale_kernel, "*fp32,*fp32,i32", BLOCK=256)


@pytest.fixture(scope="module")
def dot():
    return compiled(dot_kernel, "*fp16,*fp16,*fp32", BLOCK=32)


@pytest.fixture
def opt(tmp_path, capsys, monkeypatch):
    """Run tilec-opt in-process on ``text`` (a file, or stdin with ``stdin=True``): (status, stdout, stderr)."""
    monkeypatch.delenv("TILEC_DEBUG", raising=False)

    def run(text, *args, stdin=False):
        if stdin:
            monkeypatch.setattr(sys, "stdin", io.StringIO(text))
            rc = main([*args])
        else:
            f = tmp_path / "in.tir"
            f.write_text(text)
            rc = main([str(f), *args])
        out = capsys.readouterr()
        return rc, out.out, out.err
    return run


def round_trips(text: str):
    assert print_ir(parse_module(text)).rstrip("\n") == text.rstrip("\n")
    return parse_module(text)


def one_line_error(rc, out, err, *fragments):
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tilec-opt: error: ") and "Traceback" not in err, err
    for f in fragments:
        assert f in err, err


def kernel_attrs(text):
    return next(f for f in parse_module(text).funcs if f.attrs.get("kernel")).attrs


# -- running passes -----------------------------------------------------------------------------------------
def test_pass_list_over_a_compiled_kernel(opt, scale):
    rc, out, err = opt(scale.asm["tir"], "-p", "convert-to-gir{num-warps=8},coalesce{num-warps=8}")
    assert rc == 0 and err == ""
    round_trips(out)
    assert "#blocked" in out and "wpc = [8]" in out and "wpc = [4]" not in out
    assert kernel_attrs(out)["num_warps"] == 8


def test_global_options_reach_every_pass_that_takes_them(opt, scale):
    rc, out, _ = opt(scale.asm["tir"], "-p", "convert-to-gir,coalesce", "--num-warps", "2")
    assert rc == 0 and "wpc = [2]" in out and "wpc = [4]" not in out
    # gir says which warp count its layouts are for: passes over it default to that count
    rc, again, _ = opt(out, "-p", "coalesce,remove-layout-conversions")
    assert rc == 0 and "wpc = [2]" in again and "wpc = [4]" not in again


def test_target_without_passes_reproduces_the_compilers_gir(opt, scale):
    rc, out, _ = opt(scale.asm["tir"], "--target", "cuda:90")
    assert rc == 0
    assert out.strip() == scale.asm["gir"].strip()
    assert "shared = " in out  # the whole GPU pass list ran, allocate-shared included


def test_output_of_every_gpu_pass_parses_back(opt, dot):
    from tilec.gpu.pipeline import GPU_PASSES
    passes = ",".join(GPU_PASSES)
    text = dot.asm["tir"]
    for p in passes.split(","):
        rc, text, err = opt(text, "--target", "cuda:90", "--verify-each", "-p", p)
        assert rc == 0, err
        round_trips(text)
    assert text.strip() == dot.asm["gir"].strip()


def test_target_sets_the_arch_accelerate_dot_sees(opt, dot):
    pipeline = "convert-to-gir,coalesce,accelerate-dot"
    rc, sm90, _ = opt(dot.asm["tir"], "--target", "cuda:90", "-p", pipeline)
    assert rc == 0 and "#mma" in sm90
    rc, sm75, _ = opt(dot.asm["tir"], "--target", "cuda:sm_75", "-p", pipeline)
    assert rc == 0 and "#mma" not in sm75  # no matrix units before sm_80
    rc, explicit, _ = opt(dot.asm["tir"], "--target", "cuda:75", "--arch", "80", "-p", pipeline)
    assert rc == 0 and "#mma" in explicit  # an explicit flag wins over the target


def test_cpu_target_adds_no_passes(opt, scale):
    rc, out, _ = opt(scale.asm["tir"], "--target", "cpu")
    assert rc == 0 and "#blocked" not in out
    round_trips(out)


def test_stdin_and_output_file(opt, scale, tmp_path):
    dest = tmp_path / "out.gir"
    rc, out, _ = opt(scale.asm["tir"], "-", "-p", "convert-to-gir", "-o", str(dest), stdin=True)
    assert rc == 0 and out == ""
    round_trips(dest.read_text())
    rc, out, _ = opt(scale.asm["tir"], "-p", "", stdin=True)  # no passes: parse and print
    assert rc == 0 and out.strip() == scale.asm["tir"].strip()


def test_print_between_passes(opt, scale):
    rc, out, err = opt(scale.asm["tir"], "--print-between-passes", "-p", "cse,convert-to-gir,coalesce")
    assert rc == 0
    headers = [line for line in err.splitlines() if line.startswith("// -----// IR after")]
    assert [h.split()[4] for h in headers] == ["cse", "convert-to-gir", "coalesce"]
    assert all("on scale_kernel" in h for h in headers)
    last = err[err.rindex("//----- //\n") + len("//----- //\n"):]
    assert last.strip() == out.strip()  # what follows the last header is the result
    round_trips(out)


def test_timings(opt, scale):
    rc, _, err = opt(scale.asm["tir"], "--timings", "-p", "cse,dce")
    assert rc == 0 and err.splitlines()[0].startswith("cse") and "total" in err


class Breaker(Pass):
    """Leaves a use of a value defined nowhere in the function: invalid IR that only verification notices."""
    name = "tools-test-breaker"

    def run(self, module):
        f = next(f for f in module.funcs if f.attrs.get("kernel"))
        store = next(op for op in f.walk() if op.name == "store")
        store.set_operand(1, ConstantOp([], [store.operands[1].type], {"value": 1.0}).result)


class Raiser(Pass):
    name = "tools-test-raiser"

    def run(self, module):
        raise ValueError("boom\nsecond line")


def test_verify_each_catches_the_pass_that_broke_the_ir(opt, scale):
    rc, out, err = opt(scale.asm["tir"], "-p", "cse,tools-test-breaker,dce")
    assert rc == 0  # unverified, the broken IR goes through
    rc, out, err = opt(scale.asm["tir"], "--verify-each", "-p", "cse,tools-test-breaker,dce")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "invalid IR after 'tools-test-breaker'" in err and "Traceback" not in err


def test_a_failing_pass_is_one_line_with_status_1(opt, scale, monkeypatch, tmp_path):
    rc, out, err = opt(scale.asm["tir"], "-p", "tools-test-raiser")
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "pass 'tools-test-raiser' failed on kernel 'scale_kernel': ValueError: boom" in err
    monkeypatch.setenv("TILEC_DEBUG", "1")  # the traceback, for whoever debugs the pass
    with pytest.raises(IRError, match="tools-test-raiser"):
        main([str(tmp_path / "in.tir"), "-p", "tools-test-raiser"])


def test_list_passes(opt):
    rc, out, _ = opt("", "--list-passes")
    assert rc == 0
    load_all_passes()
    for name in PASS_REGISTRY:
        assert f"  {name} " in out
    gir = out[out.index("  convert-to-gir "):].splitlines()
    assert gir[1].split() == ["num-warps=4", "(int)"] and gir[2].split() == ["warp-size=32", "(int)"]


# -- bad input: one line, status 2 ----------------------------------------------------------------------------
@pytest.mark.parametrize("args, fragments", [
    (["-p", "coalese"], ["unknown pass 'coalese'", "did you mean 'coalesce'"]),
    (["-p", "coalesce{num-warp=8}"], ["pass 'coalesce': unknown option 'num-warp'", "did you mean 'num-warps'"]),
    (["-p", "coalesce{num-warps=many}"], ["option 'num-warps' takes int, got 'many'"]),
    (["-p", "coalesce{num-warps=8"], ["is never closed"]),
    (["--target", "nvidia"], ["bad --target 'nvidia'", "unknown backend 'nvidia'"]),
    (["--target", "cuda:ninety"], ["bad --target 'cuda:ninety'"]),
    (["--target", "cuda", "--num-warps", "3"], ["num_warps must be a power of 2"]),
])
def test_bad_pipeline_or_target(opt, scale, args, fragments):
    one_line_error(*opt(scale.asm["tir"], *args), *fragments)


def test_unparsable_ir_names_file_line_and_column(opt, tmp_path):
    rc, out, err = opt("module {\n  func @k(%a: i32) {kernel = true} {\n    %x = add %a, %b : i32\n    return\n"
                       "  }\n}\n")
    one_line_error(rc, out, err, f"{tmp_path / 'in.tir'}:3:18: use of undefined value '%b'")
    one_line_error(*opt("module {\n  func @k( }\n"), "in.tir:2:12: expected")
    one_line_error(*opt("not ir at all", stdin=True), "<stdin>:1:")


def test_ir_that_does_not_verify(opt):
    text = "module {\n  func @k(%a: i32) {kernel = true} {\n    %x = add %a : i32\n    return\n  }\n}\n"
    one_line_error(*opt(text), "the input is not valid IR", "'add' op expects 2 operand(s), got 1")


def test_unreadable_file(capsys, tmp_path):
    assert main([str(tmp_path / "missing.tir")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err and "No such file" in err


# -- entry points ----------------------------------------------------------------------------------------------
def test_python_dash_m_and_the_console_script(scale, tmp_path):
    f = tmp_path / "k.tir"
    f.write_text(scale.asm["tir"])
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TILEC_DEBUG", None)
    ok = subprocess.run([sys.executable, "-m", "tilec.opt", str(f), "-p", "convert-to-gir"], capture_output=True,
                        text=True, env=env, timeout=120)
    assert ok.returncode == 0 and "#blocked" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "tilec.opt", str(f), "-p", "nope"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        scripts = tomllib.load(fh)["project"]["scripts"]
    module, _, func = scripts["tilec-opt"].partition(":")
    assert getattr(__import__(module, fromlist=[func]), func) is main


def test_python_dash_m_tilec_passes_is_the_same_driver(scale, tmp_path, capsys):
    from tilec.passes.__main__ import main as passes_main
    f = tmp_path / "k.tir"
    f.write_text(scale.asm["tir"])
    assert passes_main([str(f), "-p", "convert-to-gir{num-warps=8}", "--verify"]) == 0
    assert "wpc = [8]" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # --target needs the backends, which only tilec-opt knows
        passes_main([str(f), "--target", "cuda:90"])
