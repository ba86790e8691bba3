"""Atomics across the grid's worker threads: every program hits the same few addresses."""
import numpy as np
import pytest

from tilec.ir.parser import parse_module

from .helpers import compile_cpu

B = 32


def _rmw(kind, t):
    return parse_module(f"""module {{
  func @k(%c: ptr<{t}>, %v: ptr<{t}>, %old: ptr<{t}>) {{kernel = true}} {{
    %pid = program_id {{axis = 0}} : i32
    %i = arange {{start = 0, end = {B}}} : tile<{B}xi32>
    %eight = constant {{value = 8}} : i32
    %e = splat %eight : tile<{B}xi32>
    %slot = rem %i, %e : tile<{B}xi32>
    %cs = splat %c : tile<{B}xptr<{t}>>
    %cp = addptr %cs, %slot : tile<{B}xptr<{t}>>
    %bw = constant {{value = {B}}} : i32
    %base = mul %pid, %bw : i32
    %bs = splat %base : tile<{B}xi32>
    %g = add %bs, %i : tile<{B}xi32>
    %vs = splat %v : tile<{B}xptr<{t}>>
    %vp = addptr %vs, %g : tile<{B}xptr<{t}>>
    %val = load %vp : tile<{B}x{t}>
    %r = atomic_rmw %cp, %val {{kind = "{kind}"}} : tile<{B}x{t}>
    %os = splat %old : tile<{B}xptr<{t}>>
    %op = addptr %os, %g : tile<{B}xptr<{t}>>
    store %op, %r
    return
  }}
}}""")


@pytest.mark.parametrize("kind,t,np_t", [("add", "i32", np.int32), ("add", "f32", np.float32),
                                         ("max", "i32", np.int32), ("min", "u32", np.uint32),
                                         ("xor", "i64", np.int64), ("max", "f32", np.float32)])
def test_atomic_rmw_under_contention(kind, t, np_t):
    run, _, _ = compile_cpu(_rmw(kind, t))
    progs = 2000
    rng = np.random.default_rng(0)
    if np_t == np.float32:
        v = rng.integers(-50, 50, progs * B).astype(np_t)  # integral floats: sums are exact in any order
    else:
        v = rng.integers(1, 1000, progs * B).astype(np_t)
    c = np.zeros(8, np_t)
    old = np.zeros(progs * B, np_t)
    run((progs, 1, 1), [c, v, old])
    fold = {"add": np.add, "max": np.maximum, "min": np.minimum, "xor": np.bitwise_xor}[kind]
    init = np.zeros(8, np_t)
    want = fold.reduce(np.concatenate([init[None], v.reshape(-1, 8)]), axis=0)
    np.testing.assert_array_equal(c, want)
    if kind == "add":  # each old value is a distinct prefix: they are all different per slot
        for s in range(8):
            assert len(np.unique(old[s::8])) == progs * B // 8 or np_t == np.float32


def test_atomic_cas_spinlock_counter():
    """Programs take a lock with cas, do a non-atomic read-modify-write, release with xchg."""
    m = parse_module("""module {
  func @k(%lock: ptr<i32>, %count: ptr<i32>) {kernel = true} {
    %zero = constant {value = 0} : i32
    %one = constant {value = 1} : i32
    %t = constant {value = true} : i1
    %done = while %t : i1 {
    ^bb(%go: i1):
      condition %go, %go
    } {
    ^bb(%g: i1):
      %prev = atomic_cas %lock, %zero, %one : i32
      %failed = cmp %prev, %zero {predicate = "ne"} : i1
      yield %failed
    }
    %c = load %count : i32
    %c1 = add %c, %one : i32
    store %count, %c1
    %x = atomic_rmw %lock, %zero {kind = "xchg"} : i32
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    lock, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    run((3000, 1, 1), [lock, count])
    assert count[0] == 3000 and lock[0] == 0


def test_masked_atomic_scalar_per_program():
    m = parse_module("""module {
  func @k(%c: ptr<i64>, %n: i32) {kernel = true} {
    %pid = program_id {axis = 0} : i32
    %p = cast %pid : i64
    %lt = cmp %pid, %n {predicate = "lt"} : i1
    %r = atomic_rmw %c, %p, %lt {kind = "add"} : i64
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    c = np.zeros(1, np.int64)
    run((1000, 1, 1), [c, 600])
    assert c[0] == sum(range(600))
