from passes_helpers import check


def test_licm_hoists_invariant_chains_out_of_nested_loops():
    check("licm", """
        module {
          func @f(%p: ptr<f32>, %x: f32, %n: i32, %m: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            for %c0, %n, %c1 {
            ^bb(%i: i32):
              for %c0, %m, %c1 {
              ^bb(%j: i32):
                %a = mul %x, %x : f32
                %b = add %a, %x : f32
                %k = mul %i, %m : i32
                %o = add %k, %j : i32
                %q = addptr %p, %o : ptr<f32>
                %l = load %p : f32
                %v = add %l, %b : f32
                store %q, %v
                yield
              }
              yield
            }
            return
          }
        }""", """
        module {
          func @f(%p: ptr<f32>, %x: f32, %n: i32, %m: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %a = mul %x, %x : f32
            %b = add %a, %x : f32
            for %c0, %n, %c1 {
            ^bb(%i: i32):
              %k = mul %i, %m : i32
              for %c0, %m, %c1 {
              ^bb(%j: i32):
                %o = add %k, %j : i32
                %q = addptr %p, %o : ptr<f32>
                %l = load %p : f32
                %v = add %l, %b : f32
                store %q, %v
                yield
              }
              yield
            }
            return
          }
        }""")


def test_licm_does_not_speculate_division_by_a_variable_or_side_effects():
    check("licm", """
        module {
          func @f(%p: ptr<i32>, %x: i32, %d: i32, %n: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %c4 = constant {value = 4} : i32
            %r = while %c0 : i32 {
            ^bb(%i: i32):
              %lim = add %n, %c1 : i32
              %go = cmp %i, %lim {predicate = "lt"} : i1
              condition %go, %i
            } {
            ^bb(%j: i32):
              %q = div %x, %d : i32
              %q4 = div %x, %c4 : i32
              %s = add %q, %q4 : i32
              %o = atomic_rmw %p, %s {kind = "add"} : i32
              %l = load %p : i32
              %j1 = add %j, %l : i32
              yield %j1
            }
            return
          }
        }""", """
        module {
          func @f(%p: ptr<i32>, %x: i32, %d: i32, %n: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %c4 = constant {value = 4} : i32
            %lim = add %n, %c1 : i32
            %q4 = div %x, %c4 : i32
            %r = while %c0 : i32 {
            ^bb(%i: i32):
              %go = cmp %i, %lim {predicate = "lt"} : i1
              condition %go, %i
            } {
            ^bb(%j: i32):
              %q = div %x, %d : i32
              %s = add %q, %q4 : i32
              %o = atomic_rmw %p, %s {kind = "add"} : i32
              %l = load %p : i32
              %j1 = add %j, %l : i32
              yield %j1
            }
            return
          }
        }""")


def test_licm_hoists_pure_inner_loops_whole():
    check("licm", """
        module {
          func @f(%p: ptr<i32>, %x: i32, %n: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            for %c0, %n, %c1 {
            ^bb(%i: i32):
              %t = for %c0, %n, %c1, %x : i32 {
              ^bb(%j: i32, %a: i32):
                %a1 = add %a, %j : i32
                yield %a1
              }
              %q = addptr %p, %i : ptr<i32>
              store %q, %t
              yield
            }
            return
          }
        }""", """
        module {
          func @f(%p: ptr<i32>, %x: i32, %n: i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %t = for %c0, %n, %c1, %x : i32 {
            ^bb(%j: i32, %a: i32):
              %a1 = add %a, %j : i32
              yield %a1
            }
            for %c0, %n, %c1 {
            ^bb(%i: i32):
              %q = addptr %p, %i : ptr<i32>
              store %q, %t
              yield
            }
            return
          }
        }""")
