import math

import pytest
from hypothesis import HealthCheck, given, settings

from tilec.ir import IRError
from tilec.ir.parser import IRParseError, parse_module, parse_op, parse_type, register_layout_parser
from tilec.ir.printer import print_ir
from tilec.ir.types import PointerType, TileType, f16, f32, i32
from tilec.ir.verifier import verify

from .irgen import modules

KERNEL = """\
module {
  func @add(%x: ptr<f32>, %y: ptr<f32, 3>, %n: i32) {kernel = true, arg_divisibility = [16, 16, 1]} {
    %pid = program_id {axis = 0} : i32 loc("k.py":3:10)
    %offs = arange {start = 0, end = 8} : tile<8xi32>
    %0 = splat %x : tile<8xptr<f32>>
    %1 = addptr %0, %offs : tile<8xptr<f32>>
    %2 = splat %n : tile<8xi32>
    %m = cmp %offs, %2 {predicate = "lt"} : tile<8xi1>
    %v = load %1, %m : tile<8xf32>
    %s = reduce %v {axis = 0} : f32 {
    ^bb(%a: f32, %b: f32):
      %c = add %a, %b : f32
      yield %c
    } loc("k.py":5:1)
    %h = hint %offs {divisibility = [8]} : tile<8xi32>
    %c0 = constant {value = -0.0} : f32
    %c1 = constant {value = nan} : f32
    %c2 = constant {value = -inf} : f32
    %c3 = constant {value = 1e+16} : f32
    store %1, %v, %m
    return
  } loc("k.py":1:1)
}
"""


def test_round_trip_text_with_locations():
    m = parse_module(KERNEL)
    verify(m)
    assert print_ir(m, True) == KERNEL
    f = m.lookup("add")
    assert f.attrs["arg_divisibility"] == (16, 16, 1) and f.attrs["kernel"] is True
    assert f.args[1].type == PointerType(f32, 3)
    consts = [o.attrs["value"] for o in f.body.ops if o.name == "constant"]
    assert math.copysign(1, consts[0]) == -1 and math.isnan(consts[1]) and consts[2] == -math.inf
    hint = next(o for o in f.body.ops if o.name == "hint")
    assert hint.attrs["divisibility"] == (8,) and hint.attrs["contiguity"] == ()


def test_defaults_filled_and_names_kept():
    m = parse_module(KERNEL)
    load = next(o for o in m.walk() if o.name == "load")
    assert load.attrs == {"cache": "", "eviction": "", "volatile": False}
    assert load.result.name_hint == "v" and load.operands[0].name_hint is None


def test_without_locations_and_bare_function():
    text = print_ir(parse_module(KERNEL), False)
    assert "loc(" not in text
    assert print_ir(parse_module(text)) == text
    f = parse_op("func @g(%a: i32) -> (i32) {\n  return %a\n}\n")
    assert f.sym_name == "g" and f.function_type.results == (i32,)
    assert parse_module("func @g() {\n  return\n}\n").lookup("g") is not None


def test_types():
    assert parse_type("tile<4x8xf16>") == TileType((4, 8), f16)
    assert parse_type("tile<4xptr<f32, 3>>") == TileType((4,), PointerType(f32, 3))
    assert str(parse_type("(i32, f32) -> (f16)")) == "(i32, f32) -> (f16)"


def test_layout_hook():
    class Lay:
        def __init__(self, body):
            self.body = body

        def __str__(self):
            return f"#test<{self.body}>"

        def __eq__(self, o):
            return isinstance(o, Lay) and o.body == self.body

        def __hash__(self):
            return hash(self.body)

    register_layout_parser("test", Lay)
    t = parse_type("tile<4x4xf32, #test<a = [1, 2], b = <3>>>")
    assert t.layout == Lay("a = [1, 2], b = <3>") and str(t) == "tile<4x4xf32, #test<a = [1, 2], b = <3>>>"
    with pytest.raises(IRParseError, match="unknown layout '#nope'"):
        parse_type("tile<4xf32, #nope<1>>")


def test_operand_less_op_does_not_swallow_next_line():
    m = parse_module("func @f(%p: ptr<f32>) {\n  barrier\n  %v = load %p : f32\n  return\n}\n")
    assert [o.name for o in m.lookup("f").body.ops] == ["barrier", "load", "return"]


@pytest.mark.parametrize("text, msg", [
    ("module {\n  func @f() {\n    %a = frobnicate : i32\n  }\n}", "3:10: unknown op 'frobnicate'"),
    ("module {\n  func @f() {\n    %a = add %b, %b : i32\n  }\n}", "3:14: use of undefined value '%b'"),
    ("module {\n  func @f() {\n    %a = constant {value = 1} : tile<4xq32>\n  }\n}", "unknown type 'q32'"),
    ("module {\n  func @f() {\n    %a = constant {value 1} : i32\n  }\n}", "expected '=' after attribute name"),
    ("module {\n  func @f() {\n    %a = constant {value = 1}\n  }\n}", "1 result name(s) but 0 result type"),
    ("module {\n  func @f() {\n    return\n", "expected '}' closing a region, got end of input"),
    ("module {\n  func @f() {\n    %a = constant {value = @} : i32\n  }\n}", "expected an attribute value"),
    ("module {\n  func @f(%a: i32) {\n    %a = constant {value = 1} : i32\n  }\n}", "redefinition of value '%a'"),
    ("module {\n  func @f() {\n    %a = constant {value = 1} : ptr<f32\n  }\n}", "expected '>' closing a pointer"),
    ("module {\n  func @f() {\n    %a = for : i32\n  }\n}", "'for' expects 1 region(s), got 0"),
    ("module {\n  func @f() {\n    return\n  }\n} extra", "expected end of input, got 'extra'"),
])
def test_errors_name_line_col_and_expectation(text, msg):
    with pytest.raises(IRParseError) as e:
        parse_module(text, "t.tir")
    assert msg in str(e.value)
    assert str(e.value).startswith("t.tir:") and "^" in str(e.value)
    assert isinstance(e.value, IRError)


def test_value_from_sibling_region_is_not_visible():
    text = """module {
  func @f(%c: i1) {
    if %c {
      %a = constant {value = 1} : i32
      yield
    } {
      %b = add %a, %a : i32
      yield
    }
    return
  }
}"""
    with pytest.raises(IRParseError, match="7:16: use of undefined value '%a'"):
        parse_module(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(modules())
def test_random_modules_round_trip(m):
    verify(m)
    for locs in (False, True):
        text = print_ir(m, locs)
        parsed = parse_module(text)
        verify(parsed)
        assert print_ir(parsed, locs) == text


def test_gir_layouts_round_trip_and_evaluate():
    import numpy as np

    from tilec.ir.evaluator import evaluate_function
    blocked = "#blocked<spt = [1, 1], tpw = [1, 32], wpc = [4, 1], order = [1, 0]>"
    other = "#blocked<spt = [1, 4], tpw = [4, 8], wpc = [4, 1], order = [1, 0]>"
    text = (f"module {{\n  func @f(%x: tile<16x32xf32, {blocked}>) -> (tile<16x32xf32, {other}>) {{\n"
            f"    %y = convert_layout %x : tile<16x32xf32, {other}>\n"
            "    return %y\n  }\n}\n")
    m = parse_module(text)
    assert print_ir(m) == text
    x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    np.testing.assert_array_equal(evaluate_function(m.lookup("f"), [x])[0], x)
