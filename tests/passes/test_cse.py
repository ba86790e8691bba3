from passes_helpers import check


def test_cse_commutative_and_scoped():
    check("cse", """
        module {
          func @f(%x: i32, %y: i32, %c: i1) -> (i32, i32, i32, i32) {
            %a = add %x, %y : i32
            %b = add %y, %x : i32
            %s = sub %x, %y : i32
            %t = sub %y, %x : i32
            %r = if %c : i32 {
              %a2 = add %x, %y : i32
              %m = mul %a2, %s : i32
              yield %m
            } {
              %m2 = mul %a, %s : i32
              yield %m2
            }
            %m3 = mul %a, %s : i32
            return %b, %t, %r, %m3
          }
        }""", """
        module {
          func @f(%x: i32, %y: i32, %c: i1) -> (i32, i32, i32, i32) {
            %a = add %x, %y : i32
            %s = sub %x, %y : i32
            %t = sub %y, %x : i32
            %r = if %c : i32 {
              %m = mul %a, %s : i32
              yield %m
            } {
              %m2 = mul %a, %s : i32
              yield %m2
            }
            %m3 = mul %a, %s : i32
            return %a, %t, %r, %m3
          }
        }""")


def test_cse_distinguishes_attributes_types_and_signed_zero():
    check("cse", """
        module {
          func @f(%x: f32) -> (f32, f32, f32, f32, i1, i1, tile<2xf32>, tile<3xf32>) {
            %z = constant {value = 0.0} : f32
            %nz = constant {value = -0.0} : f32
            %z2 = constant {value = 0.0} : f32
            %a = cmp %x, %z {predicate = "lt"} : i1
            %b = cmp %x, %z2 {predicate = "gt"} : i1
            %s = splat %x : tile<2xf32>
            %t = splat %x : tile<3xf32>
            %u = splat %x : tile<2xf32>
            return %z, %nz, %z2, %x, %a, %b, %u, %t
          }
        }""", """
        module {
          func @f(%x: f32) -> (f32, f32, f32, f32, i1, i1, tile<2xf32>, tile<3xf32>) {
            %z = constant {value = 0.0} : f32
            %nz = constant {value = -0.0} : f32
            %a = cmp %x, %z {predicate = "lt"} : i1
            %b = cmp %x, %z {predicate = "gt"} : i1
            %s = splat %x : tile<2xf32>
            %t = splat %x : tile<3xf32>
            return %z, %nz, %z, %x, %a, %b, %s, %t
          }
        }""")


def test_cse_never_merges_memory_ops():
    text = """
        module {
          func @f(%p: ptr<f32>, %v: f32) -> (f32, f32, f32) {
            %a = load %p : f32
            store %p, %v
            %b = load %p : f32
            %c = atomic_rmw %p, %v {kind = "add"} : f32
            %d = atomic_rmw %p, %v {kind = "add"} : f32
            %e = add %a, %b : f32
            return %e, %c, %d
          }
        }"""
    check("cse", text, text)


def test_cse_inside_loops_sees_outer_values():
    check("cse", """
        module {
          func @f(%x: i32, %n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %k = mul %x, %x : i32
            %r = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%i: i32, %acc: i32):
              %one = constant {value = 1} : i32
              %k2 = mul %x, %x : i32
              %s = add %acc, %k2 : i32
              %s2 = add %s, %one : i32
              yield %s2
            }
            return %r
          }
        }""", """
        module {
          func @f(%x: i32, %n: i32) -> (i32) {
            %c0 = constant {value = 0} : i32
            %c1 = constant {value = 1} : i32
            %k = mul %x, %x : i32
            %r = for %c0, %n, %c1, %c0 : i32 {
            ^bb(%i: i32, %acc: i32):
              %s = add %acc, %k : i32
              %s2 = add %s, %c1 : i32
              yield %s2
            }
            return %r
          }
        }""")
