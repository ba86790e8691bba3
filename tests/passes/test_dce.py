from passes_helpers import check


def test_dce_removes_unused_pure_ops_and_loads_keeps_effects():
    check("dce", """
        module {
          func @f(%p: ptr<f32>, %x: f32) -> (f32) {
            %a = mul %x, %x : f32
            %b = add %a, %x : f32
            %l = load %p : f32
            %v = load %p {volatile = true} : f32
            %o = atomic_rmw %p, %x {kind = "add"} : f32
            store %p, %x
            %s = sqrt %x : f32
            return %s
          }
        }""", """
        module {
          func @f(%p: ptr<f32>, %x: f32) -> (f32) {
            %v = load %p {volatile = true} : f32
            %o = atomic_rmw %p, %x {kind = "add"} : f32
            store %p, %x
            %s = sqrt %x : f32
            return %s
          }
        }""")


def test_dce_drops_dead_loop_carried_values_even_when_self_feeding():
    check("dce", """
        module {
          func @f(%p: ptr<i32>, %n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %r, %dead, %dead2 = for %c0, %n, %c1, %c0, %c1, %c0 : i32, i32, i32 {
            ^bb(%i: i32, %acc: i32, %d: i32, %e: i32):
              %s = add %acc, %i : i32
              %d2 = mul %d, %d : i32
              %e2 = add %e, %d : i32
              store %p, %s
              yield %s, %d2, %e2
            }
            %u = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%j: i32, %x: i32):
              %y = add %x, %j : i32
              yield %y
            }
            return %c0
          }
        }""", """
        module {
          func @f(%p: ptr<i32>, %n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %r = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%i: i32, %acc: i32):
              %s = add %acc, %i : i32
              store %p, %s
              yield %s
            }
            return %c0
          }
        }""")


def test_dce_prunes_if_results_and_removes_empty_ifs():
    check("dce", """
        module {
          func @f(%c: i1, %x: i32, %p: ptr<i32>) -> (i32) {
            %a, %b = if %c : i32, i32 {
              %m = mul %x, %x : i32
              yield %m, %x
            } {
              store %p, %x
              yield %x, %x
            }
            if %c {
              %q = add %x, %x : i32
              yield
            } {
            }
            return %b
          }
        }""", """
        module {
          func @f(%c: i1, %x: i32, %p: ptr<i32>) -> (i32) {
            %b = if %c : i32 {
              yield %x
            } {
              store %p, %x
              yield %x
            }
            return %b
          }
        }""")


def test_dce_keeps_while_loops_with_live_results_whole():
    text = """
        module {
          func @f(%n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %r, %s = while %c0, %c0 : i32, i32 {
            ^bb(%i: i32, %t: i32):
              %go = cmp %i, %n {predicate = "lt"} : i1
              condition %go, %i, %t
            } {
            ^bb(%j: i32, %u: i32):
              %j1 = add %j, %c1 : i32
              %u1 = add %u, %j : i32
              yield %j1, %u1
            }
            return %r
          }
        }"""
    check("dce", text, text)
