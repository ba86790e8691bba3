"""A lazy load created inside a structured region whose value is only yielded must not be materialised after
the region (where it does not dominate) when a later op writes memory."""
import numpy as np

from tilec.ir.evaluator import run_kernel
from tilec.ir.parser import parse_module

from .helpers import compile_cpu

KERNEL = """
module {
  func @k(%p: ptr<i32>, %out: ptr<i32>, %n: i32) {kernel = true} {
    %c0 = constant {value = 0} : i32
    %c1 = constant {value = 1} : i32
    %c5 = constant {value = 5} : i32
    for %c0, %n, %c1 {
    ^bb(%i: i32):
      %t = cmp %i, %c1 {predicate = "lt"} : i1
      %r = if %t : tile<4xi32> {
        %old = atomic_rmw %p, %c5 {kind = "add"} : i32
        %s = splat %old : tile<4xi32>
        %ps = splat %p : tile<4xptr<i32>>
        %q = addptr %ps, %s : tile<4xptr<i32>>
        %x = load %q : tile<4xi32>
        yield %x
      } {
        %z = constant {value = 0} : tile<4xi32>
        yield %z
      }
      yield
    }
    store %out, %c5
    return
  }
}
"""


def test_value_yielded_from_if_is_not_materialised_after_it():
    run, _, _ = compile_cpu(parse_module(KERNEL))
    p = np.zeros(64, np.int32)
    out = np.zeros(1, np.int32)
    run((1, 1, 1), [p, out, 3])
    p_ref, out_ref = np.zeros(64, np.int32), np.zeros(1, np.int32)
    run_kernel(parse_module(KERNEL), "k", [p_ref, out_ref, 3], (1, 1, 1))
    np.testing.assert_array_equal(p, p_ref)
    np.testing.assert_array_equal(out, out_ref)
    assert p[0] == 5 and out[0] == 5
