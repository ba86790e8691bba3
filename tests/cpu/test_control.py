"""Structured control flow on CPU: for (scalar and tile carried values, negative and runtime steps, swaps),
if with tile and scalar results, while loops; against numpy/Python references."""
import numpy as np
import pytest

from tilec.ir.parser import parse_module

from .helpers import compile_cpu

rng = np.random.default_rng(5)
B = 64


def _run(text, args, grid=(1, 1, 1)):
    run, _, _ = compile_cpu(parse_module(text))
    run(grid, args)


HEAD = f"""    %offs = arange {{start = 0, end = {B}}} : tile<{B}xi32>
    %ns = splat %n : tile<{B}xi32>
    %m = cmp %offs, %ns {{predicate = "lt"}} : tile<{B}xi1>
    %xs = splat %x : tile<{B}xptr<f32>>
    %xp = addptr %xs, %offs : tile<{B}xptr<f32>>
    %os = splat %o : tile<{B}xptr<f32>>
    %op = addptr %os, %offs : tile<{B}xptr<f32>>
"""


def test_for_tile_and_scalar_carried():
    # acc = 0; s = 0; for i in range(lo, hi, step): acc = acc * 0.5 + x * i; s += i ; o = acc + s
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %n: i32, %lo: i32, %hi: i32, %st: i32) {{kernel = true}} {{
{HEAD}    %v = load %xp, %m : tile<{B}xf32>
    %z = constant {{value = 0.0}} : f32
    %zt = splat %z : tile<{B}xf32>
    %zi = constant {{value = 0}} : i32
    %half = constant {{value = 0.5}} : f32
    %ht = splat %half : tile<{B}xf32>
    %acc, %s = for %lo, %hi, %st, %zt, %zi : tile<{B}xf32>, i32 {{
    ^bb(%i: i32, %a: tile<{B}xf32>, %si: i32):
      %fi = cast %i : f32
      %ft = splat %fi : tile<{B}xf32>
      %t1 = mul %a, %ht : tile<{B}xf32>
      %t2 = mul %v, %ft : tile<{B}xf32>
      %na = add %t1, %t2 : tile<{B}xf32>
      %ns2 = add %si, %i : i32
      yield %na, %ns2
    }}
    %fs = cast %s : f32
    %fst = splat %fs : tile<{B}xf32>
    %res = add %acc, %fst : tile<{B}xf32>
    store %op, %res, %m
    return
  }}
}}"""
    n = 50
    x = rng.standard_normal(n).astype(np.float32)
    for lo, hi, st in [(0, 10, 1), (3, 20, 4), (10, -3, -3), (5, 5, 1)]:
        o = np.zeros(n, np.float32)
        _run(text, [x, o, n, lo, hi, st])
        acc, s = np.zeros(n), 0
        for i in range(lo, hi, st):
            acc = acc * 0.5 + x.astype(np.float64) * i
            s += i
        np.testing.assert_allclose(o, acc + s, rtol=1e-5, atol=1e-5)


def test_for_swapping_tiles():
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %n: i32, %iters: i32) {{kernel = true}} {{
{HEAD}    %v = load %xp, %m : tile<{B}xf32>
    %one = constant {{value = 1.0}} : f32
    %w = splat %one : tile<{B}xf32>
    %c0 = constant {{value = 0}} : i32
    %c1 = constant {{value = 1}} : i32
    %a, %b = for %c0, %iters, %c1, %v, %w : tile<{B}xf32>, tile<{B}xf32> {{
    ^bb(%i: i32, %p: tile<{B}xf32>, %q: tile<{B}xf32>):
      %q2 = add %q, %p : tile<{B}xf32>
      yield %q2, %p
    }}
    store %op, %a, %m
    return
  }}
}}"""
    n = 40
    x = rng.standard_normal(n).astype(np.float32)
    for iters in (0, 1, 2, 5):
        o = np.zeros(n, np.float32)
        _run(text, [x, o, n, iters])
        p, q = x.astype(np.float64), np.ones(n)
        for _ in range(iters):
            p, q = q + p, p
        np.testing.assert_allclose(o, p, rtol=1e-5)


def test_if_with_tile_and_scalar_results():
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %n: i32, %flag: i32) {{kernel = true}} {{
{HEAD}    %v = load %xp, %m : tile<{B}xf32>
    %z = constant {{value = 0}} : i32
    %c = cmp %flag, %z {{predicate = "gt"}} : i1
    %t, %s = if %c : tile<{B}xf32>, f32 {{
      %e = exp %v : tile<{B}xf32>
      %two = constant {{value = 2.0}} : f32
      yield %e, %two
    }} {{
      %ng = neg %v : tile<{B}xf32>
      %three = constant {{value = 3.0}} : f32
      yield %ng, %three
    }}
    %st = splat %s : tile<{B}xf32>
    %r = mul %t, %st : tile<{B}xf32>
    store %op, %r, %m
    return
  }}
}}"""
    n = 33
    x = rng.standard_normal(n).astype(np.float32)
    for flag, ref in [(1, 2 * np.exp(x.astype(np.float64))), (0, -3 * x.astype(np.float64))]:
        o = np.zeros(n, np.float32)
        _run(text, [x, o, n, flag])
        np.testing.assert_allclose(o, ref, rtol=1e-6)


def test_if_without_else_storing():
    text = """module {
  func @k(%o: ptr<i32>, %v: i32) {kernel = true} {
    %z = constant {value = 10} : i32
    %c = cmp %v, %z {predicate = "lt"} : i1
    if %c {
      store %o, %v
      yield
    } {
    }
    return
  }
}"""
    for v, want in [(3, 3), (12, -1)]:
        o = np.full(1, -1, np.int32)
        _run(text, [o, v])
        assert o[0] == want


@pytest.mark.parametrize("start", [1, 6, 27, 97])
def test_while_collatz(start):
    text = """module {
  func @k(%o: ptr<i32>, %start: i32) {kernel = true} {
    %zero = constant {value = 0} : i32
    %n, %steps = while %start, %zero : i32, i32 {
    ^bb(%a: i32, %s: i32):
      %one = constant {value = 1} : i32
      %c = cmp %a, %one {predicate = "ne"} : i1
      condition %c, %a, %s
    } {
    ^bb(%b: i32, %t: i32):
      %two = constant {value = 2} : i32
      %r = rem %b, %two : i32
      %zz = constant {value = 0} : i32
      %even = cmp %r, %zz {predicate = "eq"} : i1
      %h = div %b, %two : i32
      %three = constant {value = 3} : i32
      %b3 = mul %b, %three : i32
      %one2 = constant {value = 1} : i32
      %b31 = add %b3, %one2 : i32
      %nb = select %even, %h, %b31 : i32
      %nt = add %t, %one2 : i32
      yield %nb, %nt
    }
    store %o, %steps
    return
  }
}"""
    o = np.zeros(1, np.int32)
    _run(text, [o, start])
    k, s = start, 0
    while k != 1:
        k = k // 2 if k % 2 == 0 else 3 * k + 1
        s += 1
    assert o[0] == s


def test_load_after_store_sees_new_value():
    """A lazily fused load must not be moved past a store to the same memory."""
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %n: i32) {{kernel = true}} {{
{HEAD}    %v = load %xp, %m : tile<{B}xf32>
    %two = constant {{value = 2.0}} : f32
    %tt = splat %two : tile<{B}xf32>
    store %xp, %tt, %m
    %w = add %v, %tt : tile<{B}xf32>
    store %op, %w, %m
    return
  }}
}}"""
    n = 50
    x = rng.standard_normal(n).astype(np.float32)
    x0 = x.copy()
    o = np.zeros(n, np.float32)
    _run(text, [x, o, n])
    np.testing.assert_allclose(o, x0 + 2)
    assert (x == 2).all()


def test_for_pointer_tile_advanced_by_uniform_step():
    """``ptrs += step`` in a loop: carried as a scalar offset, loads stay contiguous vector loads."""
    text = f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %n: i32, %iters: i32, %stride: i32) {{kernel = true}} {{
{HEAD}    %z = constant {{value = 0.0}} : f32
    %zt = splat %z : tile<{B}xf32>
    %c0 = constant {{value = 0}} : i32
    %c1 = constant {{value = 1}} : i32
    %acc, %p = for %c0, %iters, %c1, %zt, %xp : tile<{B}xf32>, tile<{B}xptr<f32>> {{
    ^bb(%i: i32, %a: tile<{B}xf32>, %pp: tile<{B}xptr<f32>>):
      %v = load %pp, %m, %zt : tile<{B}xf32>
      %na = add %a, %v : tile<{B}xf32>
      %st = splat %stride : tile<{B}xi32>
      %np = addptr %pp, %st : tile<{B}xptr<f32>>
      yield %na, %np
    }}
    %last = load %p, %m, %zt : tile<{B}xf32>
    %r = add %acc, %last : tile<{B}xf32>
    store %op, %r, %m
    return
  }}
}}"""
    n, iters, stride = 50, 7, 61
    x = rng.standard_normal(stride * (iters + 1)).astype(np.float32)
    o = np.zeros(n, np.float32)
    run, asm, _ = compile_cpu(parse_module(text))
    run((1, 1, 1), [x, o, n, iters, stride])
    ref = sum(x[k * stride:k * stride + n].astype(np.float64) for k in range(iters + 1))
    np.testing.assert_allclose(o, ref, rtol=1e-5)
    assert "gather" not in asm["llir"]


def test_calls_expanded_per_site_keep_dominance_and_memory_order():
    """A function called inside a branch and again after it, and a lazily loaded tile returned from a call and
    used after a store that overwrites its source."""
    m = parse_module("""module {
  func @f(%p: ptr<i32>, %c: i1) -> (i32) {
    %v = load %p, %c : i32
    %s = constant {value = 7} : i32
    %w = and %v, %s : i32
    return %w
  }
  func @g(%p: ptr<i32>) -> (tile<4xi32>) {
    %i = arange {start = 0, end = 4} : tile<4xi32>
    %s = splat %p : tile<4xptr<i32>>
    %q = addptr %s, %i : tile<4xptr<i32>>
    %v = load %q : tile<4xi32>
    return %v
  }
  func @k(%p: ptr<i32>, %o: ptr<i32>, %flag: i32) {kernel = true} {
    %z = constant {value = 0} : i32
    %c = cmp %flag, %z {predicate = "gt"} : i1
    %t = constant {value = true} : i1
    if %c {
      %a = call %p, %c {callee = "f"} : i32
      store %o, %a
      yield
    } {
    }
    %b = call %p, %t {callee = "f"} : i32
    %one = constant {value = 1} : i32
    %o1 = addptr %o, %one : ptr<i32>
    store %o1, %b
    %tile = call %p {callee = "g"} : tile<4xi32>
    %i = arange {start = 0, end = 4} : tile<4xi32>
    %s = splat %p : tile<4xptr<i32>>
    %q = addptr %s, %i : tile<4xptr<i32>>
    %zt = splat %z : tile<4xi32>
    store %q, %zt
    %four = constant {value = 4} : i32
    %o4 = addptr %o, %four : ptr<i32>
    %so = splat %o4 : tile<4xptr<i32>>
    %qo = addptr %so, %i : tile<4xptr<i32>>
    store %qo, %tile
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    p = np.array([13, 2, 3, 4], np.int32)
    o = np.zeros(8, np.int32)
    run((1, 1, 1), [p, o, 1])
    np.testing.assert_array_equal(o, [5, 5, 0, 0, 13, 2, 3, 4])
    np.testing.assert_array_equal(p, 0)
