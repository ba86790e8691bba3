"""One pass pipeline per compile (tir passes then the backend's), and the debugging variables around it:
continuous dump numbering, one dump folder per specialisation, TILEC_PRINT_BEFORE/AFTER, TILEC_BREAK_BEFORE,
import errors of pass modules, and an unmatched TILEC_DUMP_IR filter."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

import tilec
import tilec.language as tl
from tilec.gpu.pipeline import GPU_PASSES
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.passes import PassManager, manager, tir_pipeline


@tilec.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@tilec.jit
def another_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)


def _cuda_compile(block=128):
    src = tilec.ASTSource(scale_kernel, signature="*fp32,*fp32,i32", constexprs={"BLOCK": block})
    return tilec.compile(src, target=tilec.Target("cuda", 90, 32))


@pytest.fixture
def env(monkeypatch):
    for v in ("TILEC_DUMP_IR", "TILEC_DUMP_DIR", "TILEC_PRINT_BEFORE", "TILEC_PRINT_AFTER", "TILEC_BREAK_BEFORE",
              "TILEC_DEBUG"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    return monkeypatch


def test_one_numbering_across_tir_and_gpu_passes(env, tmp_path):
    env.setenv("TILEC_DUMP_DIR", str(tmp_path))
    k = _cuda_compile()
    [variant] = os.listdir(tmp_path / "scale_kernel")
    files = sorted(f for f in os.listdir(tmp_path / "scale_kernel" / variant) if f[:2].isdigit())
    names = [f.split("-", 1)[1].rsplit(".", 1)[0] for f in files]
    expected = ["input"] + [p.name for p in tir_pipeline()] + list(GPU_PASSES)
    assert names == expected
    assert [int(f[:2]) for f in files] == list(range(len(expected)))  # one numbering, no collisions
    # the last dump is the gir the backend lowered, and parses back
    last = (tmp_path / "scale_kernel" / variant / files[-1]).read_text()
    header, body = last.split("\n", 1)
    assert header == f"// IR after {files[-1][3:-4]} (" + header.split("(", 1)[1] and f"scale_kernel [{variant}]" in header
    assert body.strip() == k.asm["gir"].strip() and parse_module(last) is not None
    # the backend's stages follow the passes in the same folder
    stages = {f.split(".", 1)[1] for f in os.listdir(tmp_path / "scale_kernel" / variant) if not f[:2].isdigit()}
    assert {"tir", "gir", "llir", "ptx"} <= stages
    assert k.asm["tir"] != k.asm["gir"] and "#blocked" in k.asm["gir"]


def test_one_folder_per_specialisation(env, tmp_path):
    env.setenv("TILEC_DUMP_DIR", str(tmp_path))
    _cuda_compile(128)
    _cuda_compile(256)
    assert len(os.listdir(tmp_path / "scale_kernel")) == 2


def test_print_before_and_after_named_passes(env, capsys):
    env.setenv("TILEC_PRINT_BEFORE", "coalesce")
    env.setenv("TILEC_PRINT_AFTER", "cse@scale_kernel,insert-barriers@another_kernel")
    _cuda_compile()
    err = capsys.readouterr().err
    assert err.count("IR before coalesce on scale_kernel") == 1
    runs = [p.name for p in tir_pipeline()].count("cse") + list(GPU_PASSES).count("cse")
    assert runs > 2 and err.count("IR after cse (") == runs  # every run of cse, tir and GPU pipelines
    assert "insert-barriers" not in err             # filtered to another kernel
    assert "IR after canonicalize" not in err


def test_break_before_stops_before_the_pass_with_the_module(env):
    seen = []

    def hook(*a, **k):
        frame = sys._getframe(1)
        seen.append((frame.f_locals["pass_"].name, "#blocked" in print_ir(frame.f_locals["module"]),
                     frame.f_locals["self"].kernel_name))
    env.setattr(sys, "breakpointhook", hook)
    env.setenv("PYTHONBREAKPOINT", "")
    env.setenv("TILEC_BREAK_BEFORE", "coalesce@scale_kernel,licm@another_kernel")
    _cuda_compile()
    # stopped once, before coalesce: convert-to-gir has run (layouts present), coalesce not yet
    assert seen == [("coalesce", True, "scale_kernel")]


def test_dump_headers_name_the_kernel(env, capsys):
    env.setenv("TILEC_DUMP_IR", "scale_kernel")
    _cuda_compile()
    err = capsys.readouterr().err
    assert "IR after allocate-shared (" in err and "on scale_kernel [" in err


def test_a_broken_pass_module_raises_its_own_error(monkeypatch, tmp_path):
    pkg = tmp_path / "brokenpasses"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("import not_a_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(manager.PASS_PACKAGES, "brokenpasses", "broken passes")  # as register_pass_package
    with pytest.raises(ImportError, match="brokenpasses.bad failed to import: ModuleNotFoundError") as ei:
        manager.get_pass("no-such-pass")
    assert isinstance(ei.value.__cause__, ModuleNotFoundError)


def test_unknown_pass_lists_known_ones():
    with pytest.raises(KeyError, match="unknown pass 'nope'.*coalesce"):
        manager.get_pass("nope")


def test_unmatched_dump_filter_is_reported_at_exit(tmp_path):
    """A kernel that exists but never compiled is reported when the process ends."""
    script = textwrap.dedent("""
        import tilec, tilec.language as tl
        from tilec.ir.parser import parse_module
        from tilec.passes import PassManager

        @tilec.jit
        def kk(x):
            pass

        m = parse_module('module {\\n  func @k() {kernel = true} {\\n    return\\n  }\\n}\\n')
        PassManager("k").run(m, ["cse"])
    """)
    env = dict(os.environ, TILEC_DUMP_IR="kk,k")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "TILEC_DUMP_IR named kk, but no compiled kernel had that name (dumped: k)" in r.stderr


def test_command_line_runs_gpu_passes(tmp_path, capsys):
    from tilec.passes.__main__ import main
    f = tmp_path / "k.tir"
    f.write_text(_cuda_compile().asm["tir"])
    assert main([str(f), "-p", "convert-to-gir,coalesce", "--num-warps", "8"]) == 0
    out = capsys.readouterr().out
    assert "#blocked" in out and "wpc = [4]" not in out and "wpc = [8]" in out


# -- debug variables never silently do nothing --------------------------------------------------------------------
@pytest.mark.parametrize("var, value, message", [
    ("TILEC_BREAK_BEFORE", "csee", "there is no pass named 'csee' (did you mean 'cse'?); the passes are"),
    ("TILEC_PRINT_AFTER", "cse@scale_kernal", "there is no kernel named 'scale_kernal' (did you mean 'scale_kernel'?)"),
    ("TILEC_PRINT_BEFORE", "coalesce#0", "'#' must be followed by a run number counted from 1"),
    ("TILEC_DUMP_IR", "scale_kernell", "there is no kernel named 'scale_kernell' (did you mean 'scale_kernel'?)"),
])
def test_names_that_do_not_exist_are_errors(env, var, value, message):
    env.setenv(var, value)
    with pytest.raises(tilec.errors.ConfigurationError, match=re.escape(message)) as e:
        _cuda_compile()
    assert f"{var}={value!r}" in str(e.value)
    if "pass named" in message:  # every pass is listed, the GPU passes included
        assert "coalesce" in str(e.value) and "software-pipeline" in str(e.value)


def test_a_launch_reports_the_error_without_internal_frames(env, tmp_path):
    script = textwrap.dedent("""
        import numpy as np, tilec, tilec.language as tl

        @tilec.jit
        def k(x_ptr):
            tl.store(x_ptr, tl.load(x_ptr) + 1.0)

        k[(1,)](np.zeros(1, np.float32))
    """)
    (tmp_path / "k.py").write_text(script)
    env = dict(os.environ, TILEC_PRINT_AFTER="csee")
    r = subprocess.run([sys.executable, str(tmp_path / "k.py")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1
    assert "ConfigurationError: TILEC_PRINT_AFTER='csee': there is no pass named 'csee' (did you mean 'cse'?)" \
        in r.stderr
    assert "tilec/" not in r.stderr.replace("tilec.errors", "")  # no frame of tilec's own files


def test_a_break_names_its_run_and_can_pick_one(env, capsys):
    seen = []

    def hook(*a, **k):
        frame = sys._getframe(1)
        seen.append((frame.f_locals["pass_"].name, repr(frame.f_locals["module"])))
    env.setattr(sys, "breakpointhook", hook)
    env.setenv("PYTHONBREAKPOINT", "")
    env.setenv("TILEC_BREAK_BEFORE", "cse")
    _cuda_compile()
    err = capsys.readouterr().err
    # cse runs twice in the tir pipeline, twice in the cleanups after expand-descriptors, once after the GPU rewrites
    assert [n for n, _ in seen] == ["cse"] * 5
    assert "stopping before pass 'cse' on kernel 'scale_kernel' (its run #1: TILEC_BREAK_BEFORE=cse#1" in err
    assert "(its run #2: TILEC_BREAK_BEFORE=cse#2 stops at this run only)" in err
    # the IR object shows its text (``p module`` in pdb), the second stop after the first cse ran
    assert seen[0][1].startswith("module {") and "func @scale_kernel" in seen[0][1]
    assert parse_module(seen[1][1]) is not None
    seen.clear()
    env.setenv("TILEC_BREAK_BEFORE", "cse#2@scale_kernel")
    _cuda_compile()
    assert [n for n, _ in seen] == ["cse"]
    assert "its run #2" in capsys.readouterr().err


def test_print_after_one_run(env, capsys):
    env.setenv("TILEC_PRINT_AFTER", "cse#2")
    _cuda_compile()
    assert capsys.readouterr().err.count("IR after cse (") == 1


def test_debug_variables_compile_past_a_warm_cache(tmp_path):
    """With the kernel in the on-disk cache, a debug variable still acts: the compile happens, said once."""
    script = textwrap.dedent("""
        import numpy as np, tilec, tilec.language as tl

        @tilec.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

        k[(1,)](np.zeros(10, np.float32), 10, BLOCK=16)
        k[(1,)](np.zeros(10, np.float32), 10, BLOCK=32)
    """)
    (tmp_path / "k.py").write_text(script)
    base = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    for v in ("TILEC_ALWAYS_COMPILE", "TILEC_PRINT_AFTER", "TILEC_DUMP_IR", "TILEC_DUMP_DIR"):
        base.pop(v, None)
    run = [sys.executable, str(tmp_path / "k.py")]
    warm = subprocess.run(run, env=base, capture_output=True, text=True, timeout=120)
    assert warm.returncode == 0, warm.stderr
    assert os.listdir(tmp_path / "cache")
    r = subprocess.run(run, env=dict(base, TILEC_PRINT_AFTER="dce"), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # dce: once in the tir pipeline and once in the cleanups after expand-descriptors, for each of the two variants
    assert r.stderr.count("IR after dce (") == 4
    assert r.stderr.count("TILEC_PRINT_AFTER is set: kernels compile afresh") == 1


def test_the_module_at_a_break_prints_as_its_ir():
    m = parse_module("module {\n  func @k() {kernel = true} {\n    return\n  }\n}\n")
    assert repr(m) == str(m) == print_ir(m) and repr(m.funcs[0]).startswith("func @k")
