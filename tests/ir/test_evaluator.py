"""Memory, reductions, scans, dot, control flow, calls, atomics, fold and kernel launches on the evaluator."""
import numpy as np
import pytest

from tilec.ir.evaluator import EvaluationError, KernelAssertionError, Memory, fold, run_kernel
from tilec.ir.types import f32

from .evalhelp import module, run

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # the evaluator itself never warns

COPY = """
module {
  func @copy(%x: ptr<%T>, %y: ptr<%T>, %n: i32) {kernel = true} {
    %pid = program_id {axis = 0} : i32
    %bs = constant {value = 8} : i32
    %start = mul %pid, %bs : i32
    %r = arange {start = 0, end = 8} : tile<8xi32>
    %s = splat %start : tile<8xi32>
    %offs = add %s, %r : tile<8xi32>
    %nn = splat %n : tile<8xi32>
    %m = cmp %offs, %nn {predicate = "lt"} : tile<8xi1>
    %xb = splat %x : tile<8xptr<%T>>
    %xp = addptr %xb, %offs : tile<8xptr<%T>>
    %other = constant {value = -1} : tile<8x%T>
    %v = load %xp, %m, %other : tile<8x%T>
    %w = add %v, %v : tile<8x%T>
    %yb = splat %y : tile<8xptr<%T>>
    %yp = addptr %yb, %offs : tile<8xptr<%T>>
    store %yp, %w, %m
    return
  }
}
"""


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("i16", np.int16), ("f64", np.float64),
                                      ("u8", np.uint8), ("f16", np.float16)])
def test_masked_copy_kernel(t, dtype):
    m = module(COPY.replace("%T", t))
    x = (np.arange(1, 20) * 3).astype(dtype)
    y = np.full(21, 7, dtype)  # two elements past n must stay untouched
    run_kernel(m, "copy", [x, y, 19], (3,))
    np.testing.assert_array_equal(y[:19], (x * 2).astype(dtype))
    assert (y[19:] == 7).all()


def test_bf16_in_memory_as_uint16():
    m = module(COPY.replace("%T", "bf16"))
    x = np.array([1.5, -2.25, 3.0], np.float32)
    xb = (x.view(np.uint32) >> 16).astype(np.uint16)
    yb = np.zeros(3, np.uint16)
    run_kernel(m, "copy", [xb, yb, 3], 1)
    np.testing.assert_array_equal((yb.astype(np.uint32) << 16).view(np.float32), x * 2)


def test_load_other_for_masked_lanes():
    text = """func @f(%p: ptr<f32>, %m: tile<4xi1>, %o: tile<4xf32>) -> (tile<4xf32>) {
  %r = arange {start = 0, end = 4} : tile<4xi32>
  %b = splat %p : tile<4xptr<f32>>
  %q = addptr %b, %r : tile<4xptr<f32>>
  %v = load %q, %m, %o : tile<4xf32>
  return %v
}"""
    x = np.array([1, 2, 3], np.float32)  # lane 3 would be out of bounds; masked, it is never touched
    got = run(text, x, np.array([1, 0, 1, 0], bool), np.array([9, 8, 7, 6], np.float32))[0]
    np.testing.assert_array_equal(got, [1, 8, 3, 6])


def test_out_of_bounds_names_the_op():
    m = module(COPY.replace("%T", "f32").replace('predicate = "lt"', 'predicate = "le"')
               .replace("%v = load %xp, %m, %other : tile<8xf32>",
                        '%v = load %xp, %m, %other : tile<8xf32> loc("k.py":12:9)'))
    with pytest.raises(EvaluationError, match=r"k.py:12:9: 'load' op at program \(0, 0, 0\).*outside every array"):
        run_kernel(m, "copy", [np.ones(5, np.float32), np.ones(5, np.float32), 5], 1)


REDUCE = """func @f(%x: tile<5x7xf32>, %i: tile<5x7xi32>) -> (%RT, %RI) {
  %v, %k = reduce %x, %i {axis = %A} : %RT, %RI {
  ^bb(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %gt = cmp %a, %b {predicate = "gt"} : i1
    %eq = cmp %a, %b {predicate = "eq"} : i1
    %lt = cmp %ai, %bi {predicate = "lt"} : i1
    %tie = and %eq, %lt : i1
    %keep = or %gt, %tie : i1
    %m = select %keep, %a, %b : f32
    %mi = select %keep, %ai, %bi : i32
    yield %m, %mi
  }
  return %v, %k
}"""


@pytest.mark.parametrize("axis", [0, 1])
def test_two_operand_argmax_reduce(axis):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (5, 7)).astype(np.float32)  # many ties: the smaller index must win
    idx = np.broadcast_to(np.arange(x.shape[axis]).reshape((-1, 1) if axis == 0 else (1, -1)), x.shape)
    rt = "tile<7xf32>" if axis == 0 else "tile<5xf32>"
    text = REDUCE.replace("%RT", rt).replace("%RI", rt.replace("f32", "i32")).replace("%A", str(axis))
    v, k = run(text, x, idx.astype(np.int32))
    np.testing.assert_array_equal(v, x.max(axis))
    np.testing.assert_array_equal(k, x.argmax(axis))


def test_reduce_to_scalar_and_first_element_order():
    text = """func @f(%x: tile<11xi32>) -> (i32, i32) {
  %s = reduce %x {axis = 0} : i32 {
  ^bb(%a: i32, %b: i32):
    %c = add %a, %b : i32
    yield %c
  }
  %first = reduce %x {axis = 0} : i32 {
  ^bb(%a: i32, %b: i32):
    yield %a
  }
  return %s, %first
}"""
    x = np.random.default_rng(1).integers(-50, 50, 11).astype(np.int32)
    s, first = run(text, x)
    assert s == x.sum() and first == x[0] and isinstance(s, np.int32)


SCAN = """func @f(%x: tile<6x13xf64>) -> (tile<6x13xf64>, tile<6x13xf64>) {
  %s = scan %x {axis = %A%R} : tile<6x13xf64> {
  ^bb(%a: f64, %b: f64):
    %c = add %a, %b : f64
    yield %c
  }
  %f = scan %x {axis = %A%R} : tile<6x13xf64> {
  ^bb(%a: f64, %b: f64):
    yield %a
  }
  return %s, %f
}"""


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan(axis, reverse):
    x = np.random.default_rng(2).standard_normal((6, 13))
    text = SCAN.replace("%A", str(axis)).replace("%R", ", reverse = true" if reverse else "")
    s, first = run(text, x)
    xf = np.flip(x, axis) if reverse else x
    ref = np.cumsum(xf, axis)
    ref_first = np.broadcast_to(np.take(xf, [0], axis), x.shape)
    if reverse:
        ref, ref_first = np.flip(ref, axis), np.flip(ref_first, axis)
    np.testing.assert_allclose(s, ref, rtol=1e-12)
    np.testing.assert_array_equal(first, ref_first)


@pytest.mark.parametrize("a_t, acc_t", [("f32", "f32"), ("f16", "f32"), ("bf16", "f32"), ("i8", "i32"),
                                        ("f64", "f64")])
def test_dot(a_t, acc_t):
    rng = np.random.default_rng(3)
    if a_t == "i8":
        a, b = rng.integers(-128, 128, (5, 7)).astype(np.int8), rng.integers(-128, 128, (7, 3)).astype(np.int8)
        c = rng.integers(-1000, 1000, (5, 3)).astype(np.int32)
        ref = a.astype(np.int64) @ b.astype(np.int64) + c
    else:
        a, b, c = rng.standard_normal((5, 7)), rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
        if a_t == "bf16":
            a, b = (np.round(v * 64) / 64 for v in (a, b))  # exactly representable
        a, b = a.astype(np.float16 if a_t == "f16" else np.float64), b.astype(np.float16 if a_t == "f16" else
                                                                             np.float64)
        ref = a.astype(np.float64) @ b.astype(np.float64) + c.astype(np.float32 if acc_t == "f32" else np.float64)
    text = f"""func @f(%a: tile<5x7x{a_t}>, %b: tile<7x3x{a_t}>, %c: tile<5x3x{acc_t}>) -> (tile<5x3x{acc_t}>) {{
  %d = dot %a, %b, %c : tile<5x3x{acc_t}>
  return %d
}}"""
    got = run(text, a, b, c)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_batched_dot_and_tf32():
    rng = np.random.default_rng(4)
    a, b, c = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 5, 4)), np.zeros((2, 3, 4))
    text = """func @f(%a: tile<2x3x5xf32>, %b: tile<2x5x4xf32>, %c: tile<2x3x4xf32>) -> (tile<2x3x4xf32>, tile<2x3x4xf32>) {
  %d = dot %a, %b, %c : tile<2x3x4xf32>
  %e = dot %a, %b, %c {input_precision = "tf32"} : tile<2x3x4xf32>
  return %d, %e
}"""
    d, e = run(text, a, b, c)
    ref = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(d, ref, rtol=1e-6)
    np.testing.assert_allclose(e, ref, rtol=3e-3)
    assert not np.array_equal(d, e)


def test_for_if_while_and_call():
    text = """module {
  func @main(%n: i32) -> (i32, i32, f32) {
    %c0 = constant {value = 0} : i32
    %c1 = constant {value = 1} : i32
    %m3 = constant {value = -3} : i32
    %s = for %n, %c0, %m3, %c0 : i32 {
    ^bb(%i: i32, %acc: i32):
      %two = constant {value = 2} : i32
      %r = rem %i, %two : i32
      %odd = cmp %r, %c0 {predicate = "ne"} : i1
      %next = if %odd : i32 {
        %a = add %acc, %i : i32
        yield %a
      } {
        yield %acc
      }
      yield %next
    }
    %steps, %last = while %c0, %n : i32, i32 {
    ^bb(%k: i32, %v: i32):
      %go = cmp %v, %c1 {predicate = "ne"} : i1
      condition %go, %k, %v
    } {
    ^bb(%k2: i32, %v2: i32):
      %k3 = add %k2, %c1 : i32
      %v3 = call %v2 {callee = "collatz"} : i32
      yield %k3, %v3
    }
    %f = constant {value = 2.5} : f32
    return %s, %steps, %f
  }
  func @collatz(%v: i32) -> (i32) {
    %c1 = constant {value = 1} : i32
    %c2 = constant {value = 2} : i32
    %c3 = constant {value = 3} : i32
    %r = rem %v, %c2 : i32
    %even = cmp %r, %c1 {predicate = "ne"} : i1
    %h = div %v, %c2 : i32
    %t = mul %v, %c3 : i32
    %t1 = add %t, %c1 : i32
    %out = select %even, %h, %t1 : i32
    return %out
  }
}"""

    def collatz_steps(v):
        k = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            k += 1
        return k

    s, steps, f = run(text, 27, name="main")
    assert s == sum(i for i in range(27, 0, -3) if i % 2) and steps == collatz_steps(27) and f == np.float32(2.5)


def test_assert_and_print(capsys):
    text = """func @f(%x: tile<3xi32>) {
  %z = constant {value = 0} : tile<3xi32>
  %ok = cmp %x, %z {predicate = "gt"} : tile<3xi1>
  print %x {prefix = "x="}
  assert %ok {message = "x must be positive"} loc("k.py":4:5)
  return
}"""
    run(text, np.array([1, 2, 3], np.int32))
    assert "x=[1 2 3]" in capsys.readouterr().out
    with pytest.raises(KernelAssertionError, match=r"k.py:4:5.*index \(1,\): x must be positive"):
        run(text, np.array([1, -2, 3], np.int32))


def test_atomics_apply_lane_by_lane():
    text = """func @f(%p: ptr<i32>, %idx: tile<9xi32>, %v: tile<9xi32>, %m: tile<9xi1>) -> (tile<9xi32>, tile<9xi32>) {
  %b = splat %p : tile<9xptr<i32>>
  %q = addptr %b, %idx : tile<9xptr<i32>>
  %old = atomic_rmw %q, %v, %m {kind = "add"} : tile<9xi32>
  %mx = atomic_rmw %q, %v, %m {kind = "max"} : tile<9xi32>
  return %old, %mx
}"""
    hist = np.array([10, 20, 30], np.int32)
    idx = np.array([0, 1, 0, 2, 0, 1, 2, 2, 0], np.int32)
    v = np.arange(1, 10, dtype=np.int32)
    mask = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0], bool)
    ref = hist.copy()
    olds = []
    for i, k in enumerate(idx):
        olds.append(ref[k] if mask[i] else 0)
        if mask[i]:
            ref[k] += v[i]
    old, _ = run(text, hist, idx, v, mask)
    np.testing.assert_array_equal(old[mask], np.array(olds)[mask])
    np.testing.assert_array_equal(hist, ref)  # every value is below the sums, so max changes nothing


def test_atomic_cas():
    text = """func @f(%p: ptr<f32>, %c: f32, %v: f32) -> (f32, f32) {
  %a = atomic_cas %p, %c, %v : f32
  %b = atomic_cas %p, %c, %v : f32
  return %a, %b
}"""
    x = np.array([1.5], np.float32)
    a, b = run(text, x, 1.5, 4.0)
    assert (a, b, x[0]) == (1.5, 4.0, 4.0)


def test_memory_resolves_between_arrays():
    mem = Memory()
    xs = [np.arange(n, dtype=np.float32) for n in (3, 5, 7)]
    addrs = [mem.register(x) for x in xs]
    probe = np.array([addrs[2] + 8, addrs[0], addrs[1] + 16], np.uint64)
    np.testing.assert_array_equal(mem.read(probe, f32), [2, 0, 4])
    mem.write(probe[:1], np.array([9.0], np.float32), f32)
    assert xs[2][2] == 9
    a, addr = mem.alloc((2, 3), np.int32)
    assert mem.register(a) == addr


def test_fold():
    m = module("""func @f(%a: i32, %b: i32, %t: tile<4xf32>) -> (i32, i32, tile<4xf32>, i32) {
  %s = add %a, %b : i32
  %d = div %a, %b : i32
  %e = exp %t : tile<4xf32>
  %p = program_id {axis = 0} : i32
  return %s, %d, %e, %p
}""")
    s, d, e, p = m.funcs[0].body.ops[:4]
    assert fold(s, [2 ** 31 - 1, 1]) == [-2 ** 31]
    assert fold(d, [7, 0]) is None and fold(d, [-7, 2]) == [-3]
    out = fold(e, [np.float32(1.0)])[0]
    assert out.shape == (4,) and out.dtype == np.float32 and np.allclose(out, np.e)
    assert fold(p, []) is None


def test_bad_arguments_are_named():
    text = "func @f(%p: ptr<f32>, %n: i32) {\n  return\n}\n"
    with pytest.raises(EvaluationError, match=r"argument #0 \(ptr<f32>\): a pointer parameter needs an array"):
        run(text, 1.5, 3)
    with pytest.raises(EvaluationError, match=r"argument #1 \(i32\): expected a scalar"):
        run(text, np.zeros(3, np.float32), np.arange(3))
    with pytest.raises(EvaluationError, match="takes 2 arguments, got 1"):
        run(text, np.zeros(3, np.float32))
