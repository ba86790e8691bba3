import pytest

from tilec.ir import ops
from tilec.ir.builder import Builder
from tilec.ir.core import Block, Location, Region
from tilec.ir.ops import FuncOp, ModuleOp
from tilec.ir.parser import parse_module
from tilec.ir.types import i1, i32
from tilec.ir.verifier import VerifyError, verify


def check(body: str, msg: str, sig="%c: i1, %x: i32, %y: f32", extra=""):
    text = f"module {{\n  func @f({sig}) {{\n{body}\n  }}\n{extra}}}\n"
    m = parse_module(text)
    with pytest.raises(VerifyError, match=msg):
        verify(m)


def ok(body: str, sig="%c: i1, %x: i32, %y: f32", extra=""):
    verify(parse_module(f"module {{\n  func @f({sig}) {{\n{body}\n  }}\n{extra}}}\n"))


def test_valid_control_flow():
    ok("""    %r = if %c : i32 {
      yield %x
    } {
      yield %x
    }
    if %c {
      yield
    } {
    }
    %w = while %x : i32 {
    ^bb(%a: i32):
      condition %c, %a
    } {
    ^bb(%b: i32):
      yield %b
    }
    return""")


def test_use_before_definition():
    m = ModuleOp.create([FuncOp.create("f", [i32])])
    f = m.lookup("f")
    b = Builder(f.body)
    one = ops.ConstantOp([], [i32], {"value": 1})
    b.op(ops.AddOp, f.args[0], one.result)
    b.insert(one)
    b.create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match="'add' op operand #1 .* not visible"):
        verify(m)


def test_value_escaping_a_region():
    m = ModuleOp.create([FuncOp.create("f", [i1, i32])])
    f = m.lookup("f")
    b = Builder(f.body)
    c, x = f.args
    op = b.if_(c)
    with b.at_end(op.regions[0].block):
        inner = b.op(ops.AddOp, x, x)
        b.yield_()
    with b.at_end(op.regions[1].block):
        b.yield_()
    b.op(ops.AddOp, inner, x)
    b.create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match="'add' op operand #0"):
        verify(m)


def test_isolated_function_sees_nothing_outside():
    m = ModuleOp.create([FuncOp.create("f", [i32]), FuncOp.create("g", [])])
    x = m.lookup("f").args[0]
    b = Builder(m.lookup("g").body)
    b.op(ops.AddOp, x, x)
    b.create(ops.ReturnOp, [], [])
    Builder(m.lookup("f").body).create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match="not visible"):
        verify(m)


def test_for_body_yield_types():
    check("""    %z = constant {value = 0} : i32
    %r = for %z, %x, %x, %y : f32 {
    ^bb(%i: i32, %a: f32):
      yield %i
    }
    return""", r"'for' op body 'yield' carries \(i32\), expected \(f32\)")


def test_if_yield_types_and_missing_else():
    check("""    %r = if %c : i32 {
      yield %y
    } {
      yield %x
    }
    return""", r"then region 'yield' carries \(f32\), expected \(i32\)")
    check("""    %r = if %c : i32 {
      yield %x
    } {
    }
    return""", "else region must end in 'yield'")


def test_while_condition_and_after_region():
    check("""    %w = while %x : f32 {
    ^bb(%a: i32):
      condition %c, %a
    } {
    ^bb(%b: f32):
      yield %x
    }
    return""", "'condition' forwards")
    check("""    %w = while %x : i32 {
    ^bb(%a: i32):
      condition %c, %a
    } {
    ^bb(%b: i32):
      yield %y
    }
    return""", r"after region 'yield' carries \(f32\), expected \(i32\)")
    check("""    %w = while %x : i32 {
    ^bb(%a: i32):
      condition %a, %a
    } {
    ^bb(%b: i32):
      yield %b
    }
    return""", "scalar i1")


def test_reduce_region_yields_scalars():
    check("""    %t = splat %y : tile<4xf32>
    %r = reduce %t {axis = 0} : f32 {
    ^bb(%a: f32, %b: f32):
      yield %c
    }
    return""", r"combine region 'yield' carries \(i1\), expected \(f32\)")
    check("""    %t = splat %y : tile<4xf32>
    %r = reduce %t {axis = 0} : f32 {
    ^bb(%a: i32, %b: f32):
      yield %a
    }
    return""", "combine region arguments")


def test_return_must_match_signature():
    check("    return %x", r"function @f 'return' carries \(i32\), expected \(\)")
    check("    %a = add %x, %x : i32", "must end in 'return'")


def test_terminator_placement():
    check("    return\n    %a = add %x, %x : i32", "terminator but is not last")
    check("    yield", "'yield' op cannot terminate a region of 'func'")


def test_call_checks():
    callee = "  func @g(%a: i32) -> (i32) {\n    return %a\n  }\n"
    ok("    %r = call %x {callee = \"g\"} : i32\n    return", extra=callee)
    check("    %r = call %x {callee = \"h\"} : i32\n    return", "undefined function @h", extra=callee)
    check("    %r = call %y {callee = \"g\"} : i32\n    return", r"passes \(f32\) to @g", extra=callee)
    check("    %r = call %x {callee = \"g\"} : f32\n    return", r"expects \(f32\) from @g", extra=callee)


def test_attributes_presence_and_types():
    check("    %a = cmp %x, %x : i1\n    return", "requires attribute 'predicate'")
    check("    %a = cmp %x, %x {predicate = 3} : i1\n    return", "attribute 'predicate' must be str")
    check("    %a = program_id {axis = true} : i32\n    return", "attribute 'axis' must be int")


def test_op_verify_hook_gets_location():
    m = parse_module('module {\n  func @f(%x: i32, %y: f32) {\n    %a = add %x, %y : i32 loc("k.py":7:3)\n'
                     '    return\n  }\n}\n')
    with pytest.raises(VerifyError, match=r"k.py:7:3: 'add' op operands/results must have one type"):
        verify(m)


def test_operand_count_and_region_shape():
    m = ModuleOp.create([FuncOp.create("f", [i32])])
    f = m.lookup("f")
    b = Builder(f.body)
    b.insert(ops.AddOp([f.args[0]], [i32]))
    b.create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match="expects 2 operand"):
        verify(m)
    m = ModuleOp.create([FuncOp.create("f", [i1])])
    f = m.lookup("f")
    b = Builder(f.body)
    b.insert(ops.IfOp([f.args[0]], [], regions=[Region([Block(), Block()]), Region([Block()])]))
    b.create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match="exactly one block"):
        verify(m)


def test_duplicate_function_names_and_loc_in_message():
    f1, f2 = FuncOp.create("f", []), FuncOp.create("f", [], loc=Location("a.py", 2, 1))
    for f in (f1, f2):
        Builder(f.body).create(ops.ReturnOp, [], [])
    with pytest.raises(VerifyError, match=r"a.py:2:1: 'func' op redefinition of function @f"):
        verify(ModuleOp.create([f1, f2]))


def test_nested_op_verified_alone():
    m = parse_module("""module {
  func @f(%c: i1, %x: i32) {
    %r = if %c : i32 {
      %a = add %x, %x : i32
      yield %a
    } {
      yield %x
    }
    return
  }
}""")
    verify(m.lookup("f").body.ops[0])
    verify(m.lookup("f").body.ops[0].regions[0].block.ops[0])




def test_arg_divisibility_shape():
    with pytest.raises(VerifyError, match="1 entries for 2 parameters"):
        verify(parse_module("func @f(%a: i32, %b: i32) {arg_divisibility = [16]} {\n  return\n}\n"))
    with pytest.raises(VerifyError, match="powers of two, got 12"):
        verify(parse_module("func @f(%a: i32) {arg_divisibility = [12]} {\n  return\n}\n"))
