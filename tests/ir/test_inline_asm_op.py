"""The ``inline_asm`` ops: textual round trip (assembly with quotes, escapes and newlines), what the verifier
checks (one shape, pack dividing it, constraints naming every packed operand), and what purity decides."""
import pytest

from tilec.ir import ops as O
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.ir.verifier import VerifyError, verify
from tilec.passes import PassManager, tir_pipeline

MODULE = """\
module {
  func @k(%x: ptr<i8>, %y: ptr<f32>) {kernel = true} {
    %offs = arange {start = 0, end = 64} : tile<64xi32>
    %px = splat %x : tile<64xptr<i8>>
    %p = addptr %px, %offs : tile<64xptr<i8>>
    %v = load %p : tile<64xi8>
    %a, %b = %OP% %v {asm = "{\\n  mov.b32 $0, $2; // \\"q\\" \\\\\\n}", constraints = "=r,=r,r", pack = 4} : tile<64xi8>, tile<64xi8>
    %c = add %a, %b : tile<64xi8>
    store %p, %c
    return
  }
}
"""


@pytest.mark.parametrize("name", ["inline_asm", "inline_asm_sideeffect"])
def test_round_trip(name):
    text = MODULE.replace("%OP%", name)
    m = parse_module(text)
    verify(m)
    assert print_ir(m) == text
    op = next(o for o in m.walk() if isinstance(o, O.InlineAsmOp))
    assert op.attrs["asm"] == '{\n  mov.b32 $0, $2; // "q" \\\n}'
    assert len(op.results) == 2 and op.attrs["pack"] == 4
    assert op.is_pure == (name == "inline_asm") and op.writes_memory == (name != "inline_asm")


def _bad(op_text, msg, arg="%v"):
    text = MODULE.replace('%a, %b = %OP% %v {asm = "{\\n  mov.b32 $0, $2; // \\"q\\" \\\\\\n}", '
                          'constraints = "=r,=r,r", pack = 4} : tile<64xi8>, tile<64xi8>', op_text)
    with pytest.raises(VerifyError, match=msg):
        verify(parse_module(text))


def test_verifier():
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,=r,r", pack = 3} : tile<64xi8>, tile<64xi8>',
         "pack=3 does not divide the 64 elements")
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,r", pack = 4} : tile<64xi8>, tile<64xi8>',
         "name 1 outputs, but 2 result")
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,=r,r,r", pack = 4} : tile<64xi8>, tile<64xi8>',
         "name 2 inputs, but 1 argument")
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,=r,r", pack = 4} : tile<32xi8>, tile<64xi8>',
         "share one shape")
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,=r,~{memory},r", pack = 4} : tile<64xi8>, '
         'tile<64xi8>', "after a clobber")
    _bad('%a, %b = inline_asm %v {asm = "", constraints = "=r,=r,7", pack = 4} : tile<64xi8>, tile<64xi8>',
         "ties to output 7")


def _kernel(op_name):
    return f"""\
module {{
  func @k(%y: ptr<i32>) {{kernel = true}} {{
    %a = {op_name} {{asm = "mov.u32 $0, %laneid;", constraints = "=r", pack = 1}} : i32
    %b = {op_name} {{asm = "mov.u32 $0, %laneid;", constraints = "=r", pack = 1}} : i32
    %u = {op_name} {{asm = "mov.u32 $0, %clock;", constraints = "=r", pack = 1}} : i32
    %c = add %a, %b : i32
    store %y, %c
    return
  }}
}}
"""


@pytest.mark.parametrize("name,left", [("inline_asm", 1), ("inline_asm_sideeffect", 3)])
def test_purity_decides_merging_and_removal(name, left):
    m = parse_module(_kernel(name))
    PassManager("k").run(m, tir_pipeline())
    assert print_ir(m).count(name + " ") == left
