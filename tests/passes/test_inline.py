import pytest

from passes_helpers import check, norm, run_passes
from tilec.ir.core import IRError


def test_inline_nested_calls_and_symbol_dce():
    check("inline", """
        module {
          func @sq(%a: f32) -> (f32) {
            %m = mul %a, %a : f32
            return %m
          }
          func @sumsq(%a: f32, %b: f32) -> (f32, f32) {
            %x = call %a {callee = "sq"} : f32
            %y = call %b {callee = "sq"} : f32
            %s = add %x, %y : f32
            return %s, %x
          }
          func @unused(%a: f32) -> (f32) {
            return %a
          }
          func @k(%p: ptr<f32>, %v: f32) {kernel = true} {
            %r, %q = call %v, %v {callee = "sumsq"} : f32, f32
            store %p, %r
            return
          }
        }""", """
        module {
          func @k(%p: ptr<f32>, %v: f32) {kernel = true} {
            %m = mul %v, %v : f32
            %m_1 = mul %v, %v : f32
            %s = add %m, %m_1 : f32
            store %p, %s
            return
          }
        }""")


def test_inline_into_loop_body():
    check("inline", """
        module {
          func @inc(%a: i32, %b: i32) -> (i32) {
            %s = add %a, %b : i32
            return %s
          }
          func @k(%n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %r = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%i: i32, %acc: i32):
              %t = call %acc, %i {callee = "inc"} : i32
              yield %t
            }
            return %r
          }
        }""", """
        module {
          func @k(%n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %r = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%i: i32, %acc: i32):
              %s = add %acc, %i : i32
              yield %s
            }
            return %r
          }
        }""")


def test_noinline_functions_keep_their_calls():
    text = """
        module {
          func @g(%a: i32) -> (i32) {noinline = true} {
            return %a
          }
          func @k(%a: i32) {kernel = true} {
            %r = call %a {callee = "g"} : i32
            return
          }
        }"""
    assert run_passes(text, "inline") == norm(text)


def test_recursion_is_a_clear_error():
    with pytest.raises(IRError, match=r"recursive calls cannot be inlined: @a -> @b -> @a"):
        run_passes("""
            module {
              func @a(%x: i32) -> (i32) {
                %r = call %x {callee = "b"} : i32
                return %r
              }
              func @b(%x: i32) -> (i32) {
                %r = call %x {callee = "a"} : i32
                return %r
              }
              func @k(%x: i32) {kernel = true} {
                %r = call %x {callee = "a"} : i32
                return
              }
            }""", "inline")


NOINLINE = """
    module {
      func @twice(%a: f32) -> (f32) {noinline = true} {
        %m = add %a, %a : f32
        return %m
      }
      func @k(%p: ptr<f32>, %v: f32) {kernel = true} {
        %r = call %v {callee = "twice"} : f32
        store %p, %r
        return
      }
    }"""


def test_inline_keeps_noinline_calls_and_inline_all_does_not():
    check("inline", NOINLINE, NOINLINE)
    check("inline-all", NOINLINE, """
        module {
          func @k(%p: ptr<f32>, %v: f32) {kernel = true} {
            %m = add %v, %v : f32
            store %p, %m
            return
          }
        }""")
