"""The semantic layer on its own, through a recording builder: it only ever talks to the builder protocol
(``constant``/``create``/``reduce``), which is what lets an interpreter drive it with numpy later."""
import pytest

import tilec.language as tl
from tilec.language.core import block_type, tensor
from tilec.language.semantic import Semantic


class Recorder:
    def __init__(self):
        self.ops = []

    def constant(self, value, ty):
        self.ops.append(("constant", value, str(ty)))
        return len(self.ops)

    def create(self, opname, operands, ty, **attrs):
        self.ops.append((opname, str(ty), attrs))
        return len(self.ops)

    def reduce(self, srcs, axis, result_types, combine):
        outs = combine([f"acc{i}" for i in range(len(srcs))], [f"x{i}" for i in range(len(srcs))])
        self.ops.append(("reduce", axis, [str(t) for t in result_types], len(outs)))
        return [len(self.ops)] * len(srcs)


def sem():
    return Semantic(Recorder())


def t(dt, *shape):
    return tensor(0, block_type(dt, shape) if shape else dt)


def test_broadcasting_inserts_expand_and_broadcast():
    s = sem()
    r = s.add(t(tl.float32, 4, 1), t(tl.float32, 8))
    assert r.shape == (4, 8)
    names = [op[0] for op in s.b.ops]
    assert names == ["broadcast", "expand_dims", "broadcast", "add"]
    with pytest.raises(ValueError, match="cannot broadcast shapes"):
        s.add(t(tl.float32, 4), t(tl.float32, 8))


def test_scalar_splat_and_weak_constant():
    s = sem()
    r = s.mul(t(tl.float16, 16), 2)
    assert r.dtype is tl.float16
    assert s.b.ops[0] == ("constant", 2.0, "fp16")
    assert s.b.ops[1][0] == "splat" and s.b.ops[-1][0] == "mul"


def test_getitem_and_trans():
    s = sem()
    x = t(tl.int32, 8)
    assert s.getitem(x, (slice(None), None)).shape == (8, 1)
    assert s.getitem(x, (None, slice(None))).shape == (1, 8)
    assert s.trans(t(tl.float32, 4, 8), None).shape == (8, 4)
    with pytest.raises(TypeError, match="only None and ':'"):
        s.getitem(x, 3)


def test_arange_checks():
    s = sem()
    assert s.arange(4, 12).shape == (8,)
    for args, msg in (((0, 12), "power of 2"), ((5, 5), "greater than"), ((0, 2**32), "fit in int32")):
        with pytest.raises(ValueError, match=msg):
            s.arange(*args)


def test_dot_rules():
    s = sem()
    r = s.dot(t(tl.float16, 32, 16), t(tl.float16, 16, 64))
    assert r.type == block_type(tl.float32, (32, 64))
    assert s.b.ops[-1][2]["input_precision"] == "ieee"  # only fp32 inputs use tf32
    r = s.dot(t(tl.float32, 16, 16), t(tl.float32, 16, 16))
    assert s.b.ops[-1][2]["input_precision"] == "tf32"
    assert s.dot(t(tl.int8, 16, 16), t(tl.int8, 16, 16)).dtype is tl.int32
    assert s.dot(t(tl.float16, 16, 16), t(tl.float16, 16, 16), out_dtype=tl.float16).dtype is tl.float16
    with pytest.raises(ValueError, match=">= 16"):
        s.dot(t(tl.float32, 8, 16), t(tl.float32, 16, 16))
    with pytest.raises(TypeError, match="share one dtype"):
        s.dot(t(tl.float32, 16, 16), t(tl.float16, 16, 16))
    with pytest.raises(TypeError, match="acc has dtype"):
        s.dot(t(tl.float16, 16, 16), t(tl.float16, 16, 16), acc=t(tl.float16, 16, 16))


def test_load_store_checks():
    s = sem()
    p = t(tl.pointer_type(tl.float32), 16)
    with pytest.raises(ValueError, match="needs a `mask`"):
        s.load(p, None, 0.0)
    with pytest.raises(ValueError, match="cache_modifier"):
        s.load(p, cache_modifier=".zz")
    with pytest.raises(TypeError, match="needs a pointer"):
        s.load(t(tl.float32, 16))
    out = s.load(p, t(tl.int1, 16), 0.0, cache_modifier=".cg", eviction_policy="evict_last", volatile=True)
    assert out.type == block_type(tl.float32, (16,))
    assert s.b.ops[-1] == ("load", "<[16], fp32>", {"cache": ".cg", "eviction": "evict_last", "volatile": True})
    s.store(p, 1.0, t(tl.int1, 16))
    assert s.b.ops[-1][0] == "store"


def test_bool_memory_goes_through_bytes():
    s = sem()
    r = s.load(t(tl.pointer_type(tl.int1), 8))
    assert r.dtype is tl.int1
    names = [op[0] for op in s.b.ops]
    assert names[:2] == ["cast", "load"] and s.b.ops[1][1] == "<[8], int8>" and names[-1] == "cmp"


def test_reductions_use_the_generic_reduce():
    s = sem()
    r = s.sum(t(tl.int8, 4, 8), axis=1, keep_dims=True)
    assert r.shape == (4, 1) and r.dtype is tl.int32
    assert ("reduce", 1, ["<[4], int32>"], 1) in s.b.ops
    assert s.max(t(tl.float32, 8)).type is tl.float32


def test_weak_integer_scalars_adopt_unsigned_types():
    s = sem()
    assert s.floordiv(t(tl.uint32, 16), 2).dtype is tl.uint32
    assert s.add(t(tl.uint8, 16), 1).dtype is tl.uint8
    assert s.add(t(tl.int8, 16), True).dtype is tl.int8
    assert s.mul(t(tl.int16, 16), 2.0).dtype is tl.float32
    with pytest.raises(ValueError, match="out of range for tl.int8"):
        s.add(t(tl.int8, 16), 300)
    with pytest.raises(ValueError, match="negative scalar"):
        s.add(t(tl.uint16, 16), -1)
    from tilec.language.semantic import scalar_type_of
    assert [scalar_type_of(v) for v in (1, 2**31, 2**32, 2**63, True, 1.0)] == [
        tl.int32, tl.uint32, tl.int64, tl.uint64, tl.int1, tl.float32]
