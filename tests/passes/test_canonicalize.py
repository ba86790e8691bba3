import pytest

from passes_helpers import check, run_passes


def test_integer_identities_and_constant_on_the_right():
    check("canonicalize", """
        module {
          func @f(%x: i32, %y: u8) -> (i32, i32, i32, i32, u8, u8, i32, i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %m1 = constant {value = -1} : i32
            %ff = constant {value = 255} : u8
            %u0 = constant {value = 0} : u8
            %a = add %c0, %x : i32
            %b = mul %a, %c1 : i32
            %c = sub %b, %c0 : i32
            %d = div %c, %c1 : i32
            %e = and %y, %ff : u8
            %f = or %u0, %e : u8
            %g = xor %x, %c0 : i32
            %h = shl %g, %c0 : i32
            %i = shr %h, %c0 : i32
            %j = mul %x, %c0 : i32
            %k = and %m1, %x : i32
            %l = mul %c1, %x : i32
            return %a, %d, %i, %j, %e, %f, %k, %l
          }
        }""", """
        module {
          func @f(%x: i32, %y: u8) -> (i32, i32, i32, i32, u8, u8, i32, i32) {
            %c0 = constant {value = 0} : i32
            return %x, %x, %x, %c0, %y, %y, %x, %x
          }
        }""")


def test_float_identities_respect_signed_zero():
    check("canonicalize", """
        module {
          func @f(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
            %z = constant {value = 0.0} : f32
            %nz = constant {value = -0.0} : f32
            %one = constant {value = 1.0} : f32
            %a = add %x, %z : f32
            %b = add %x, %nz : f32
            %c = sub %x, %z : f32
            %d = mul %x, %one : f32
            %e = div %x, %one : f32
            %g = mul %x, %z : f32
            return %a, %b, %c, %d, %e, %g
          }
        }""", """
        module {
          func @f(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
            %z = constant {value = 0.0} : f32
            %a = add %x, %z : f32
            %g = mul %x, %z : f32
            return %a, %x, %x, %x, %x, %g
          }
        }""")


def test_same_operands():
    check("canonicalize,cse", """
        module {
          func @f(%x: i32, %y: f32) -> (i32, i32, i32, f32, i1, i1, f32) {
            %a = and %x, %x : i32
            %b = sub %x, %x : i32
            %c = xor %x, %x : i32
            %d = max %y, %y : f32
            %e = cmp %x, %x {predicate = "le"} : i1
            %g = cmp %x, %x {predicate = "ne"} : i1
            %h = sub %y, %y : f32
            return %a, %b, %c, %d, %e, %g, %h
          }
        }""", """
        module {
          func @f(%x: i32, %y: f32) -> (i32, i32, i32, f32, i1, i1, f32) {
            %0 = constant {value = 0} : i32
            %1 = constant {value = true} : i1
            %2 = constant {value = false} : i1
            %h = sub %y, %y : f32
            return %x, %0, %0, %y, %1, %2, %h
          }
        }""")


def test_select():
    check("canonicalize", """
        module {
          func @f(%c: i1, %x: f32, %y: f32) -> (f32, f32, f32) {
            %t = constant {value = true} : i1
            %a = select %t, %x, %y : f32
            %b = select %c, %y, %y : f32
            %d = select %c, %x, %y : f32
            return %a, %b, %d
          }
        }""", """
        module {
          func @f(%c: i1, %x: f32, %y: f32) -> (f32, f32, f32) {
            %d = select %c, %x, %y : f32
            return %x, %y, %d
          }
        }""")


def test_casts():
    check("canonicalize", """
        module {
          func @f(%x: i8, %y: f16, %z: i32) -> (i8, i16, f64, f32, i32, i8) {
            %a = cast %x : i8
            %b = cast %x : i32
            %c = cast %b : i16
            %d = cast %y : f32
            %e = cast %d : f64
            %g = cast %z : f32
            %h = cast %g : f32
            %k = cast %g : i32
            %l = cast %b : i8
            return %a, %c, %e, %h, %k, %l
          }
        }""", """
        module {
          func @f(%x: i8, %y: f16, %z: i32) -> (i8, i16, f64, f32, i32, i8) {
            %0 = cast %x : i16
            %1 = cast %y : f64
            %g = cast %z : f32
            %k = cast %g : i32
            return %x, %0, %1, %g, %k, %x
          }
        }""")


def test_shape_ops_of_uniform_values():
    check("canonicalize", """
        module {
          func @f(%s: f32, %t: tile<1x5xf32>) -> (tile<3x5xf32>, tile<3x5xf32>, tile<1x5xf32>, tile<5x1xf32>, tile<15xi32>) {
            %one = constant {value = 1.0} : f32
            %a = splat %s : tile<3x1xf32>
            %b = broadcast %a : tile<3x5xf32>
            %c = splat %one : tile<3x5xf32>
            %d = broadcast %t : tile<1x5xf32>
            %e = splat %s : tile<5xf32>
            %g = expand_dims %e {axis = 1} : tile<5x1xf32>
            %k = constant {value = 7} : tile<3x5xi32>
            %l = reshape %k : tile<15xi32>
            return %b, %c, %d, %g, %l
          }
        }""", """
        module {
          func @f(%s: f32, %t: tile<1x5xf32>) -> (tile<3x5xf32>, tile<3x5xf32>, tile<1x5xf32>, tile<5x1xf32>, tile<15xi32>) {
            %0 = splat %s : tile<3x5xf32>
            %1 = constant {value = 1.0} : tile<3x5xf32>
            %2 = splat %s : tile<5x1xf32>
            %3 = constant {value = 7} : tile<15xi32>
            return %0, %1, %t, %2, %3
          }
        }""")


def test_gathers_of_uniform_values():
    """Every index reads the same value: a constant source folds (the op's own ``fold``), a splat stays a splat
    of the index's shape; any other source is kept."""
    check("canonicalize", """
        module {
          func @f(%s: f32, %i: tile<4x2xi32>, %t: tile<4x8xf32>) -> (tile<4x2xf32>, tile<4x2xf32>, tile<4x2xf32>) {
            %c = constant {value = 2.5} : tile<4x8xf32>
            %a = gather %c, %i {axis = 1} : tile<4x2xf32>
            %p = splat %s : tile<4x8xf32>
            %b = gather %p, %i {axis = 1} : tile<4x2xf32>
            %d = gather %t, %i {axis = 1} : tile<4x2xf32>
            return %a, %b, %d
          }
        }""", """
        module {
          func @f(%s: f32, %i: tile<4x2xi32>, %t: tile<4x8xf32>) -> (tile<4x2xf32>, tile<4x2xf32>, tile<4x2xf32>) {
            %0 = constant {value = 2.5} : tile<4x2xf32>
            %1 = splat %s : tile<4x2xf32>
            %d = gather %t, %i {axis = 1} : tile<4x2xf32>
            return %0, %1, %d
          }
        }""")


def test_broadcast_of_broadcast_and_addptr_zero():
    check("canonicalize", """
        module {
          func @f(%t: tile<1x1xf32>, %p: tile<4xptr<f32>>) -> (tile<4x6xf32>, tile<4xptr<f32>>) {
            %a = broadcast %t : tile<4x1xf32>
            %b = broadcast %a : tile<4x6xf32>
            %z = constant {value = 0} : tile<4xi32>
            %q = addptr %p, %z : tile<4xptr<f32>>
            return %b, %q
          }
        }""", """
        module {
          func @f(%t: tile<1x1xf32>, %p: tile<4xptr<f32>>) -> (tile<4x6xf32>, tile<4xptr<f32>>) {
            %0 = broadcast %t : tile<4x6xf32>
            return %0, %p
          }
        }""")


def test_if_with_constant_condition_inlines_the_taken_region():
    check("canonicalize", """
        module {
          func @f(%x: i32, %p: ptr<i32>) -> (i32) {
            %t = constant {value = true} : i1
            %r = if %t : i32 {
              %a = mul %x, %x : i32
              store %p, %a
              yield %a
            } {
              yield %x
            }
            %f = constant {value = false} : i1
            if %f {
              store %p, %x
              yield
            } {
              yield
            }
            return %r
          }
        }""", """
        module {
          func @f(%x: i32, %p: ptr<i32>) -> (i32) {
            %a = mul %x, %x : i32
            store %p, %a
            return %a
          }
        }""")


def test_for_trip_counts_and_invariant_iter_args():
    check("canonicalize", """
        module {
          func @f(%x: i32, %n: i32) -> (i32, i32, i32, i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %c5 = constant {value = 5} : i32
            %r0 = for %c5, %c0, %c1, %x : i32 {
            ^bb(%i: i32, %acc: i32):
              %s = add %acc, %i : i32
              yield %s
            }
            %r1 = for %c5, %c0, %c1, %x : i32 {
            ^bb(%i_1: i32, %acc_1: i32):
              %s_1 = add %acc_1, %i_1 : i32
              yield %s_1
            }
            %r2, %r3 = for %c0, %n, %c1, %x, %x : i32, i32 {
            ^bb(%i_2: i32, %a: i32, %b: i32):
              %s_2 = add %a, %b : i32
              yield %s_2, %b
            }
            %m1 = constant {value = -1} : i32
            %r4 = for %c5, %c0, %m1, %c0 : i32 {
            ^bb(%i_3: i32, %acc_3: i32):
              %s_3 = add %acc_3, %i_3 : i32
              yield %s_3
            }
            return %r0, %r2, %r3, %r4
          }
        }""", """
        module {
          func @f(%x: i32, %n: i32) -> (i32, i32, i32, i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %c5 = constant {value = 5} : i32
            %r2 = for %c0, %n, %c1, %x : i32 {
            ^bb(%i_2: i32, %a: i32):
              %s_2 = add %a, %x : i32
              yield %s_2
            }
            %m1 = constant {value = -1} : i32
            %r4 = for %c5, %c0, %m1, %c0 : i32 {
            ^bb(%i_3: i32, %acc_3: i32):
              %s_3 = add %acc_3, %i_3 : i32
              yield %s_3
            }
            return %x, %r2, %x, %r4
          }
        }""")


def test_single_trip_loop_is_inlined():
    check("canonicalize", """
        module {
          func @f(%x: i32, %p: ptr<i32>) -> (i32) {
            %c3 = constant {value = 3} : i32
            %c4 = constant {value = 4} : i32
            %c9 = constant {value = 9} : i32
            %r = for %c3, %c4, %c9, %x : i32 {
            ^bb(%i: i32, %acc: i32):
              %s = add %acc, %i : i32
              store %p, %s
              yield %s
            }
            return %r
          }
        }""", """
        module {
          func @f(%x: i32, %p: ptr<i32>) -> (i32) {
            %c3 = constant {value = 3} : i32
            %s = add %x, %c3 : i32
            store %p, %s
            return %s
          }
        }""")


def test_empty_control_flow_is_removed():
    check("canonicalize", """
        module {
          func @f(%c: i1, %n: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            if %c {
              yield
            } {
              yield
            }
            for %c0, %n, %c1 {
            ^bb(%i: i32):
              %d = add %i, %i : i32
              yield
            }
            return
          }
        }""", """
        module {
          func @f(%c: i1, %n: i32) {
            return
          }
        }""")


def test_constant_folding_through_the_evaluator():
    pytest.importorskip("tilec.ir.evaluator")
    check("canonicalize", """
        module {
          func @f() -> (i32, i8, f32, tile<4xi32>, i1, u8) {
            %a = constant {value = 7} : i32
            %b = constant {value = -2} : i32
            %c = div %a, %b : i32
            %d = constant {value = 127} : i8
            %e = constant {value = 1} : i8
            %g = add %d, %e : i8
            %h = constant {value = 2.0} : f32
            %k = sqrt %h : f32
            %s = splat %a : tile<4xi32>
            %t = splat %b : tile<4xi32>
            %u = rem %s, %t : tile<4xi32>
            %v = cmp %a, %b {predicate = "gt"} : i1
            %w = constant {value = 250} : u8
            %x = constant {value = 10} : u8
            %y = add %w, %x : u8
            return %c, %g, %k, %u, %v, %y
          }
        }""", """
        module {
          func @f() -> (i32, i8, f32, tile<4xi32>, i1, u8) {
            %0 = constant {value = -3} : i32
            %1 = constant {value = -128} : i8
            %2 = constant {value = 1.4142135381698608} : f32
            %3 = constant {value = 1} : tile<4xi32>
            %4 = constant {value = true} : i1
            %5 = constant {value = 4} : u8
            return %0, %1, %2, %3, %4, %5
          }
        }""")


def test_no_folding_of_division_by_zero_or_nonuniform_tiles():
    pytest.importorskip("tilec.ir.evaluator")
    out = run_passes("""
        module {
          func @f() -> (i32, tile<4xi32>) {
            %a = constant {value = 7} : i32
            %z = constant {value = 0} : i32
            %c = div %a, %z : i32
            %r = arange {start = 0, end = 4} : tile<4xi32>
            %s = splat %a : tile<4xi32>
            %t = add %r, %s : tile<4xi32>
            return %c, %t
          }
        }""", "canonicalize")
    assert "div" in out and "arange" in out and "add" in out


def test_if_results_yielded_alike_by_both_branches_are_forwarded():
    check("canonicalize", """
        module {
          func @f(%c: i1, %x: i32, %y: i32, %p: ptr<i32>) -> (i32, i32) {
            %a, %b = if %c : i32, i32 {
              store %p, %y
              %m = mul %x, %y : i32
              yield %x, %m
            } {
              yield %x, %y
            }
            return %a, %b
          }
        }""", """
        module {
          func @f(%c: i1, %x: i32, %y: i32, %p: ptr<i32>) -> (i32, i32) {
            %b = if %c : i32 {
              store %p, %y
              %m = mul %x, %y : i32
              yield %m
            } {
              yield %y
            }
            return %x, %b
          }
        }""")
