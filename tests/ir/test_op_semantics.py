"""Op knowledge lives on the op classes: effect and trait flags, canonicalisation patterns attached to ops,
and the per-backend lowering tables keyed by op class."""
import os
import re

import pytest

from tilec.ir import ops as O
from tilec.ir.core import OP_REGISTRY

NEG = OP_REGISTRY["neg"]
from tilec.ir.dispatch import OpTable
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.passes import Canonicalize
from tilec.passes.canonicalize import algebraic_identity, attach, collect_patterns
from tilec.passes.rewrite import pattern


@pytest.mark.parametrize("name", sorted(OP_REGISTRY))
def test_every_op_has_a_definite_effect_classification(name):
    cls = OP_REGISTRY[name]
    kinds = [cls.traits.__contains__("pure"), cls.reads_memory or cls.writes_memory, cls.is_control,
             cls.is_terminator, "isolated" in cls.traits, cls is O.CallOp]
    assert sum(map(bool, kinds)) == 1, (name, cls.traits)


def test_memory_effects_of_the_memory_ops():
    assert O.LoadOp.reads_memory and not O.LoadOp.writes_memory
    assert O.StoreOp.writes_memory and not O.StoreOp.reads_memory
    for c in (O.AtomicRMWOp, O.AtomicCASOp):
        assert c.reads_memory and c.writes_memory
    assert not any(c.reads_memory or c.writes_memory for c in OP_REGISTRY.values() if "pure" in c.traits)


def test_trait_flags():
    assert O.ForOp.is_loop and O.WhileOp.is_loop and not O.IfOp.is_loop
    assert O.ForOp.is_control and O.IfOp.is_control and O.WhileOp.is_control
    assert O.AddOp.is_commutative and not O.SubOp.is_commutative
    assert O.YieldOp.is_terminator and O.ReturnOp.is_terminator and O.ConditionOp.is_terminator
    assert O.CastOp.is_elementwise and not O.ReduceOp.is_elementwise


def test_canonicalization_patterns_live_on_the_ops():
    assert algebraic_identity in O.AddOp.canonicalization_patterns
    assert algebraic_identity in O.MulOp.canonicalization_patterns
    assert all(p in collect_patterns() for c in OP_REGISTRY.values()
               for p in c.__dict__.get("canonicalization_patterns", ()))


def test_a_pattern_attached_to_an_op_class_is_applied(monkeypatch):
    @pattern(NEG)
    def neg_neg(op, rw):
        inner = op.src.owner if hasattr(op.src, "op") else None
        if isinstance(inner, NEG):
            rw.replace_op(op, [inner.src])
            return True
        return False
    monkeypatch.setattr(NEG, "canonicalization_patterns", ())
    attach(neg_neg)
    m = parse_module("""module {
  func @k(%p: ptr<f32>, %x: f32) {kernel = true} {
    %a = neg %x : f32
    %b = neg %a : f32
    store %p, %b
    return
  }
}""")
    Canonicalize().run(m)
    text = print_ir(m)
    assert "store %p, %x" in text


def test_op_table_follows_the_class_hierarchy():
    t = OpTable("test")
    t.register(O.BinaryOp)(lambda L, op: "binary")
    t.register(O.AddOp)(lambda L, op: "add")
    add = O.AddOp.__new__(O.AddOp)
    sub = O.SubOp.__new__(O.SubOp)
    assert t.lookup(add)(None, add) == "add" and t.lookup(sub)(None, sub) == "binary"
    assert t.lookup(O.LoadOp.__new__(O.LoadOp)) is None
    with pytest.raises(ValueError, match="two test entries for AddOp"):
        t.register(O.AddOp)(lambda L, op: None)


def test_no_name_string_dispatch_in_passes_and_lowerings():
    """Passes and lowerings ask the op (class, flags), not its name."""
    root = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "tilec")
    names = "|".join(sorted(OP_REGISTRY))
    pat = re.compile(rf'\.name (==|!=) "({names})"|\.name (in|not in) [(\[{{]"({names})"|"op_" ?\+')
    hits = []
    for sub in ("passes", "gpu", os.path.join("targets", "cpu"), os.path.join("targets", "cuda")):
        for d, _, files in os.walk(os.path.join(root, sub)):
            for f in files:
                if f.endswith(".py"):
                    for i, line in enumerate(open(os.path.join(d, f)), 1):
                        if pat.search(line):
                            hits.append(f"{f}:{i}: {line.strip()}")
    assert hits == []
