"""Random, verifiable tir modules for property tests (hypothesis), built with the Builder."""
from __future__ import annotations

import math

from hypothesis import strategies as st

from tilec.ir import ops
from tilec.ir.builder import Builder
from tilec.ir.core import Block, Location, Region
from tilec.ir.ops import FuncOp, ModuleOp
from tilec.ir.types import PointerType, TileType, f16, f32, i1, i32, i64, u8

SCALARS = [i32, f32, i1, i64, f16, u8]
NAMES = [None, None, None, "x", "x", "x_1", "acc", "a.b", "1st", "offs", "k"]
FILES = ["k.py", "dir with space/k.py", "a:b.py"]
FLOATS = [0.5, -0.0, 0.0, 1e30, -2.5e-8, float("inf"), float("-inf"), float("nan"), 3.0, 1e16]


class _Gen:
    def __init__(self, draw, max_ops):
        self.draw = draw
        self.budget = max_ops

    def pick(self, seq):
        return seq[self.draw(st.integers(0, len(seq) - 1))]

    def flag(self):
        return self.draw(st.booleans())

    def loc(self, b: Builder):
        b.loc = Location(self.pick(FILES), self.draw(st.integers(1, 999)), self.draw(st.integers(1, 80))) \
            if self.flag() else None

    def const(self, b, t):
        e = t.element
        if e.kind == "float":
            v = self.pick(FLOATS)
        elif e.kind == "bool":
            v = self.flag()
        else:
            v = self.draw(st.integers(-100, 100 if e.kind == "int" else 200))
            v = abs(v) if e.kind == "uint" else v
        return b.constant(v, t, name=self.pick(NAMES))

    def value(self, b, pool, t):
        cands = [v for v in pool if v.type == t]
        if cands and self.draw(st.integers(0, 3)):
            return self.pick(cands)
        v = self.const(b, t)
        pool.append(v)
        return v

    def type(self):
        e = self.pick(SCALARS)
        return TileType((self.draw(st.integers(1, 5)),) * self.draw(st.integers(1, 2)), e) if self.flag() else e

    def emit_ops(self, b: Builder, pool: list, depth: int):
        while self.budget > 0 and self.draw(st.integers(0, 5)):
            self.budget -= 1
            self.loc(b)
            kind = self.draw(st.integers(0, 12))
            t = self.type()
            name = self.pick(NAMES)
            if kind <= 2:
                cls = self.pick([ops.AddOp, ops.SubOp, ops.MulOp, ops.MaxOp, ops.MinOp])
                attrs = {"propagate_nan": True} if cls in (ops.MaxOp, ops.MinOp) and self.flag() else {}
                pool.append(b.op(cls, self.value(b, pool, t), self.value(b, pool, t), name=name, **attrs))
            elif kind == 3:
                x = self.value(b, pool, t)
                pool.append(b.op(ops.CmpOp, x, self.value(b, pool, t), name=name,
                                 predicate=self.pick(ops.CmpOp.PREDICATES)))
            elif kind == 4:
                x = self.value(b, pool, t)
                if t.is_float:
                    pool.append(b.op(ops.UNARY_OPS[self.pick(["exp", "sqrt", "neg", "floor"])], x, name=name))
                else:
                    pool.append(b.op(ops.CastOp, x, result_type=t.with_element(f32), name=name))
            elif kind == 5 and t.is_tile:
                pool.append(b.op(ops.SplatOp, self.value(b, pool, t.element), result_type=t, name=name))
            elif kind == 6 and depth < 3:
                self.for_(b, pool, depth, t)
            elif kind == 7 and depth < 3:
                self.if_(b, pool, depth, t)
            elif kind == 8 and depth < 3:
                self.while_(b, pool, depth)
            elif kind == 9:
                x = self.value(b, pool, t)
                b.create(ops.PrintOp, [x], [], {"prefix": self.pick(["", "v=", 'q"\\\n\t\u00e9 {}'])})
            elif kind == 10 and t.is_tile:
                self.reduce_or_scan(b, pool, depth, t)
            elif kind == 11:
                x = self.value(b, pool, t)
                attrs = {"divisibility": tuple(self.pick([1, 16]) for _ in t.shape)}
                h = b.create(ops.HintOp, [x], [t], attrs, name=name)
                h.attrs["extra"] = self.pick([(), (1.5, -0.0, "s", (2, f32)), t, float("nan"), -7])
                pool.append(h.result)
            elif kind == 12:
                p = self.pick([v for v in pool if v.type.is_ptr and not v.type.is_tile] or [None])
                if p is not None:
                    v = b.op(ops.LoadOp, p, name=name)
                    b.create(ops.StoreOp, [p, v], [], {"cache": self.pick(["", ".cg"])})

    def reduce_or_scan(self, b, pool, depth, t):
        x = self.value(b, pool, t)
        axis = self.draw(st.integers(0, len(t.shape) - 1))
        blk = Block([t.element, t.element], [self.pick(NAMES), self.pick(NAMES)])
        if self.flag():
            op = b.create(ops.ReduceOp, [x], attrs={"axis": axis}, regions=[Region([blk])])
        else:
            op = b.create(ops.ScanOp, [x], attrs={"axis": axis, "reverse": self.flag()}, regions=[Region([blk])])
        self.region(b, blk, pool, depth, [t.element])
        pool.extend(op.results)

    def region(self, b, block, pool, depth, yields, term=ops.YieldOp, extra=()):
        inner = list(pool) + list(block.args)
        with b.at_end(block):
            self.emit_ops(b, inner, depth + 1)
            vals = list(extra) + [self.value(b, inner, t) for t in yields]
            b.create(term, vals, [])

    def for_(self, b, pool, depth, t):
        it = self.value(b, pool, t)
        lb, ub, st_ = (self.const(b, i32) for _ in range(3))
        f = b.for_(lb, ub, st_, [it], iv_name=self.pick(NAMES), arg_names=[self.pick(NAMES)])
        if self.flag():
            f.attrs["num_stages"] = 3
        self.region(b, f.body, pool, depth, [t])
        pool.extend(f.results)

    def if_(self, b, pool, depth, t):
        c = self.value(b, pool, i1)
        res = [t] if self.flag() else []
        op = b.if_(c, res)
        self.region(b, op.regions[0].block, pool, depth, res)
        if res or self.flag():
            self.region(b, op.regions[1].block, pool, depth, res)
        pool.extend(op.results)

    def while_(self, b, pool, depth):
        init = self.value(b, pool, i32)
        w = b.while_([init], [i32, f32])
        before, after = w.regions[0].block, w.regions[1].block
        inner = pool + list(before.args)
        with b.at_end(before):
            self.emit_ops(b, inner, depth + 1)
            c = self.value(b, inner, i1)
            b.create(ops.ConditionOp, [c, before.args[0], self.value(b, inner, f32)], [])
        self.region(b, after, pool, depth, [i32])
        pool.extend(w.results)


@st.composite
def modules(draw, max_ops=25):
    """A module with one or two functions of random ops, names, locations and attributes."""
    g = _Gen(draw, max_ops)
    m = ModuleOp.create()
    for k in range(draw(st.integers(1, 2))):
        params = [g.type() for _ in range(draw(st.integers(0, 3)))] + [PointerType(f32, g.pick([1, 3]))]
        results = [g.type() for _ in range(draw(st.integers(0, 2)))]
        attrs = {"kernel": True} if g.flag() else {}
        if g.flag():
            attrs["arg_divisibility"] = tuple(g.pick([1, 16]) for _ in params)
        f = FuncOp.create(f"f{k}", params, results, arg_names=[g.pick(NAMES) for _ in params], **attrs)
        if g.flag():
            f.loc = Location(g.pick(FILES), 1, 1)
        m.body.append(f)
        b = Builder(f.body)
        pool = list(f.args)
        g.emit_ops(b, pool, 0)
        g.loc(b)
        b.create(ops.ReturnOp, [g.value(b, pool, t) for t in results], [])
    return m


def float_eq(a, b):
    return a == b and math.copysign(1, a) == math.copysign(1, b) or (a != a and b != b)


__all__ = ["modules", "Block", "Region"]
