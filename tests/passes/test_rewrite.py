import pytest

from passes_helpers import norm
from tilec.ir.core import IRError
from tilec.ir.ops import AddOp, UNARY_OPS
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.ir.verifier import verify
from tilec.passes import RewritePattern, apply_patterns_greedily, pattern


class SubToAddNeg(RewritePattern):
    """A lowering-style pattern: ``a - b`` -> ``a + (-b)``."""
    roots = ("sub",)

    def match_and_rewrite(self, op, rewriter):
        neg = rewriter.op_value(UNARY_OPS["neg"], op.rhs)
        rewriter.replace_op(op, [rewriter.op_value(AddOp, op.lhs, neg)])
        return True


@pattern("neg")
def double_negation(op, rw):
    inner = getattr(op.src, "op", None)
    if inner is None or inner.name != "neg":
        return False
    rw.replace_op(op, [inner.src])
    return True


def test_patterns_reach_a_fixed_point_and_erase_dead_producers():
    m = parse_module(norm("""
        module {
          func @f(%x: i32, %y: i32) -> (i32) {
            %n = neg %y : i32
            %a = sub %x, %n : i32
            %b = sub %a, %y : i32
            return %b
          }
        }"""))
    assert apply_patterns_greedily(m, [SubToAddNeg(), double_negation])
    verify(m)
    assert print_ir(m) == norm("""
        module {
          func @f(%x: i32, %y: i32) -> (i32) {
            %0 = add %x, %y : i32
            %1 = neg %y : i32
            %2 = add %0, %1 : i32
            return %2
          }
        }""")
    assert not apply_patterns_greedily(m, [SubToAddNeg(), double_negation])


def test_non_converging_patterns_are_reported():
    @pattern("add")
    def swap(op, rw):
        op.set_operands([op.rhs, op.lhs])
        rw.modified(op)
        return True

    m = parse_module(norm("""
        module {
          func @f(%x: i32, %y: i32) -> (i32) {
            %a = add %x, %y : i32
            return %a
          }
        }"""))
    with pytest.raises(IRError, match="did not converge.*swap"):
        apply_patterns_greedily(m, [swap])


def test_rewriter_inlines_blocks_and_notifies_moved_ops():
    @pattern("if")
    def take_then(op, rw):
        vals = rw.inline_block_before(op.regions[0].block, op)
        rw.replace_op(op, vals)
        return True

    m = parse_module(norm("""
        module {
          func @f(%c: i1, %x: i32) -> (i32) {
            %r = if %c : i32 {
              %n = neg %x : i32
              %nn = neg %n : i32
              yield %nn
            } {
              yield %x
            }
            return %r
          }
        }"""))
    apply_patterns_greedily(m, [take_then, double_negation])
    verify(m)
    assert print_ir(m) == norm("""
        module {
          func @f(%c: i1, %x: i32) -> (i32) {
            return %x
          }
        }""")
