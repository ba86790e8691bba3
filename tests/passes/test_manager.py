import os

import pytest

from passes_helpers import norm
from tilec.ir.core import IRError
from tilec.ir.ops import ConstantOp
from tilec.ir.parser import parse_module
from tilec.passes import PASS_REGISTRY, Pass, PassFailure, PassManager, get_pass, parse_pipeline, tir_pipeline

TEXT = """
module {
  func @k(%p: ptr<i32>, %x: i32) {kernel = true} {
    %c0 = constant {value = 0} : i32
    %a = add %x, %c0 : i32
    %b = add %x, %c0 : i32
    %s = add %a, %b : i32
    store %p, %s
    return
  }
}
"""


class Breaker(Pass):
    """Leaves a use of a value from outside its function: invalid IR."""
    name = "test-breaker"

    def run(self, module):
        f = module.funcs[0]
        stray = ConstantOp([], [f.args[1].type], {"value": 1})
        store = f.body.ops[-2]
        store.set_operand(1, stray.result)


class Raiser(Pass):
    name = "test-raiser"

    def run(self, module):
        raise ValueError("boom")


def test_registry_and_pipeline_from_strings():
    assert {"inline", "canonicalize", "cse", "dce", "licm"} <= set(PASS_REGISTRY)
    assert get_pass("cse").name == "cse"
    assert [p.name for p in parse_pipeline("inline, cse,dce")] == ["inline", "cse", "dce"]
    assert [p.name for p in tir_pipeline()][0] == "inline"
    with pytest.raises(KeyError, match="unknown pass 'nope'"):
        get_pass("nope")


def test_timings_and_result(monkeypatch):
    monkeypatch.delenv("TILEC_DUMP_IR", raising=False)
    monkeypatch.delenv("TILEC_DUMP_DIR", raising=False)
    m = parse_module(TEXT)
    pm = PassManager("k", verify=True)
    pm.run(m, tir_pipeline())
    assert [n for n, _ in pm.timings] == [p.name for p in tir_pipeline()]
    assert all(t >= 0 for _, t in pm.timings)
    assert "total" in pm.report()
    from tilec.ir.printer import print_ir
    assert print_ir(m) == norm("""
        module {
          func @k(%p: ptr<i32>, %x: i32) {kernel = true} {
            %s = add %x, %x : i32
            store %p, %s
            return
          }
        }""")


def test_dump_ir_to_stderr_with_headers(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_DUMP_IR", "1")
    monkeypatch.delenv("TILEC_DUMP_DIR", raising=False)
    PassManager("k").run(parse_module(TEXT), ["canonicalize", "licm"])
    err = capsys.readouterr().err
    assert "// -----// IR before the pipeline on k //----- //" in err
    assert "// -----// IR after canonicalize (" in err
    assert "IR after licm (" in err and "(no change)" in err.split("IR after licm")[1].split("\n")[0]
    assert err.count("module {") == 3


def test_dump_ir_only_for_named_kernels(monkeypatch, capsys):
    from tilec.passes import manager
    monkeypatch.delenv("TILEC_DUMP_DIR", raising=False)
    monkeypatch.setattr(manager, "KERNEL_NAMES", {"other", "k2"})  # kernels this process defines (as @jit does)
    monkeypatch.setenv("TILEC_DUMP_IR", "other,k2")
    PassManager("k").run(parse_module(TEXT), ["cse"])
    assert capsys.readouterr().err == ""
    PassManager("k2").run(parse_module(TEXT), ["cse"])
    assert "IR after cse" in capsys.readouterr().err


def test_dump_dir_numbered_files(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEC_DUMP_IR", raising=False)
    monkeypatch.setenv("TILEC_DUMP_DIR", str(tmp_path))
    PassManager("k").run(parse_module(TEXT), ["inline", "canonicalize", "cse"])
    files = sorted(os.listdir(tmp_path / "k"))
    assert files == ["00-input.tir", "01-inline.tir", "02-canonicalize.tir", "03-cse.tir"]
    assert parse_module((tmp_path / "k" / "03-cse.tir").read_text()) is not None


def test_verification_between_passes_names_the_culprit(monkeypatch):
    monkeypatch.delenv("TILEC_DEBUG", raising=False)
    PassManager("k").run(parse_module(TEXT), [Breaker()])  # unchecked without verify
    with pytest.raises(PassFailure, match="invalid IR after 'test-breaker' in kernel 'k'"):
        PassManager("k", verify=True).run(parse_module(TEXT), [Breaker()])
    monkeypatch.setenv("TILEC_DEBUG", "1")
    with pytest.raises(PassFailure, match="test-breaker"):
        PassManager("k").run(parse_module(TEXT), [Breaker()])


def test_pass_exception_names_the_pass_and_dumps(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_DUMP_IR", "1")
    monkeypatch.delenv("TILEC_DUMP_DIR", raising=False)
    with pytest.raises(PassFailure, match=r"pass 'test-raiser' failed on kernel 'k': ValueError: boom") as ei:
        PassManager("k").run(parse_module(TEXT), ["cse", Raiser()])
    assert isinstance(ei.value, IRError) and isinstance(ei.value.__cause__, ValueError)
    assert "IR after failing test-raiser" in capsys.readouterr().err


def test_command_line_runs_a_pipeline_from_a_string(tmp_path, capsys):
    from tilec.passes.__main__ import main
    f = tmp_path / "k.tir"
    f.write_text(TEXT)
    assert main([str(f), "-p", "canonicalize,cse,dce", "--verify", "--timings"]) == 0
    out = capsys.readouterr()
    assert "%s = add %x, %x : i32" in out.out and "store %p, %s" in out.out
    assert "canonicalize" in out.err and "total" in out.err
