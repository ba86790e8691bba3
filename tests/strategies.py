"""Hypothesis strategies for random, well-typed tir programs (for property tests of passes and backends).

``programs()`` draws a module of 1-3 functions; the last one (``@main``) is the entry, earlier ones may be called
by later ones (never recursively). Bodies mix scalars and tiles of a few element types: elementwise arithmetic
with constants (0, 1, -1 and friends are deliberately common, so identities fire), comparisons, selects, casts,
splat / expand_dims / broadcast / reshape / trans, gathers (any index: the op wraps it, here on axes of 2 or 3),
reductions and scans, nested ``for`` (constant or data-dependent trip counts, including zero and negative steps)
and ``if`` with results, and calls. Undefined behaviour is avoided by construction: integer divisors are forced
into [1, 8], shift amounts into [0, 7].

Every function also takes two pointers (to ``i32`` and ``f32`` buffers of 8 elements) that masked loads, stores
and atomics address in bounds, and bodies may hold counted ``while`` loops.

``arguments(func)`` draws argument values for a function (arrays for the buffers); ``run_main`` evaluates
``@main`` on copies and returns its results plus the buffers' final contents; ``same_results`` compares such
outputs exactly (bit patterns for floats, NaNs equal).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tilec.ir import Builder, FuncOp, ModuleOp
from tilec.ir.core import Block, Region
from tilec.ir.evaluator import evaluate_function
from tilec.ir.ops import (BINARY_OPS, UNARY_OPS, AddPtrOp, ArangeOp, AtomicRMWOp, BroadcastOp, CallOp, CastOp,
                          CmpOp, ConditionOp, ExpandDimsOp, GatherOp, LoadOp, ReduceOp, ReshapeOp, ReturnOp, ScanOp,
                          SelectOp, SplatOp, StoreOp, TransOp, YieldOp)
from tilec.ir.types import PointerType, TileType, f32, f64, i1, i8, i32, u32

ELEMS = (i32, u32, f32)
CAST_ELEMS = (i8, i32, u32, f32, f64)
SHAPES = ((), (3,), (2, 3))
INT_BINARY = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "max", "min")
FLOAT_BINARY = ("add", "sub", "mul", "div", "max", "min")
BOOL_BINARY = ("and", "or", "xor")
INT_UNARY = ("neg", "abs", "not")
FLOAT_UNARY = ("neg", "abs", "floor", "sqrt")
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")

INT_CONSTS = (0, 1, -1, 2, 3, 7, -8, 100)
UINT_CONSTS = (0, 1, 2, 3, 7, 255, 4294967295)
FLOAT_CONSTS = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.25, -7.5)
KINDS = ("const", "binary", "binary", "binary", "unary", "cmp", "select", "cast", "shape", "gather", "reduce",
         "for", "if", "call", "load", "store", "while")
# every function takes these first: small buffers that loads, stores and atomics address with offsets in [0, 8)
POINTERS = (PointerType(i32), PointerType(f32))
BUFFER_SIZE = 8


def tile(shape, elem):
    return TileType(shape, elem) if shape else elem


class _FuncGen:
    def __init__(self, draw, callees, max_ops, max_depth):
        self.draw = draw
        self.callees = callees
        self.max_ops = max_ops
        self.max_depth = max_depth
        self.b = Builder()
        self.scopes: list[dict] = []

    # -- value pool ----------------------------------------------------------------------------------------
    def add(self, v):
        self.scopes[-1].setdefault(v.type, []).append(v)

    def visible(self, t):
        return [v for s in self.scopes for v in s.get(t, [])]

    def value(self, t):
        """A visible value of type ``t``; a fresh constant (or splat, or comparison) when none is chosen."""
        vs = self.visible(t)
        if vs and (t.is_ptr or self.draw(st.integers(0, 4)) > 0):
            return self.draw(st.sampled_from(vs))
        return self.fresh(t)

    def const(self, t):
        e = t.element
        pool = FLOAT_CONSTS if e.is_float else UINT_CONSTS if e.kind == "uint" else (
            (False, True) if e.is_bool else INT_CONSTS)
        v = self.draw(st.sampled_from(pool))
        return self.b.constant(v, t)

    def fresh(self, t):
        if t.element == i1:
            s = self.value(tile(t.shape, self.draw(st.sampled_from(ELEMS))))
            r = self.b.op(CmpOp, s, self.value(s.type), predicate=self.draw(st.sampled_from(PREDICATES)))
        elif t.is_tile and self.draw(st.booleans()):
            r = self.b.op(SplatOp, self.value(t.element), result_type=t)
        else:
            r = self.const(t)
        self.add(r)
        return r

    def any_type(self, elems=ELEMS):
        return tile(self.draw(st.sampled_from(SHAPES)), self.draw(st.sampled_from(elems)))

    # -- ops -----------------------------------------------------------------------------------------------
    def ops(self, depth):
        n = self.draw(st.integers(1, self.max_ops if depth == 0 else max(2, self.max_ops // 2)))
        for _ in range(n):
            kind = self.draw(st.sampled_from(KINDS))
            if kind in ("for", "if") and depth >= self.max_depth:
                kind = "binary"
            if kind == "call" and not self.callees:
                kind = "unary"
            getattr(self, "gen_" + kind)(depth)

    def gen_const(self, depth):
        self.add(self.const(self.any_type(ELEMS + (i1,))))

    def _binary(self, name, a, c):
        return self.b.op(BINARY_OPS[name], a, c)

    def gen_binary(self, depth):
        t = self.any_type(ELEMS + (i1,))
        e = t.element
        name = self.draw(st.sampled_from(BOOL_BINARY if e.is_bool else FLOAT_BINARY if e.is_float
                                         else INT_BINARY))
        a, c = self.value(t), self.value(t)
        if e.is_int and not e.is_bool and name in ("div", "rem"):  # divisor in [1, 8]
            c = self._binary("add", self._binary("and", c, self.b.constant(7, t)), self.b.constant(1, t))
        elif name in ("shl", "shr"):  # amount in [0, 7]
            c = self._binary("and", c, self.b.constant(7, t))
        self.add(self._binary(name, a, c))

    def gen_unary(self, depth):
        t = self.any_type()
        name = self.draw(st.sampled_from(FLOAT_UNARY if t.is_float else INT_UNARY))
        self.add(self.b.op(UNARY_OPS[name], self.value(t)))

    def gen_cmp(self, depth):
        t = self.any_type()
        self.add(self.b.op(CmpOp, self.value(t), self.value(t), predicate=self.draw(st.sampled_from(PREDICATES))))

    def gen_select(self, depth):
        t = self.any_type()
        self.add(self.b.op(SelectOp, self.value(t.with_element(i1)), self.value(t), self.value(t)))

    def gen_cast(self, depth):
        shape = self.draw(st.sampled_from(SHAPES))
        src = self.value(tile(shape, self.draw(st.sampled_from(CAST_ELEMS))))
        dst = tile(shape, self.draw(st.sampled_from(CAST_ELEMS)))
        self.add(self.b.op(CastOp, src, result_type=dst))

    def gen_shape(self, depth):
        e = self.draw(st.sampled_from(ELEMS))
        how = self.draw(st.sampled_from(("splat", "row", "col", "perm")))
        if how == "splat":
            self.add(self.b.op(SplatOp, self.value(e), result_type=tile(self.draw(st.sampled_from(SHAPES[1:])), e)))
        elif how == "row":  # (3,) -> (1, 3) -> (2, 3)
            x = self.b.op(ExpandDimsOp, self.value(tile((3,), e)), axis=0)
            self.add(self.b.op(BroadcastOp, x, result_type=tile((2, 3), e)))
        elif how == "perm":  # (2, 3) -> reshape (3, 2) -> trans (2, 3)
            x = self.b.op(ReshapeOp, self.value(tile((2, 3), e)), result_type=tile((3, 2), e))
            self.add(self.b.op(TransOp, x, order=(1, 0)))
        else:  # scalar -> (1,) -> (1, 1) -> (2, 3) via splat + expand_dims + broadcast
            x = self.b.op(SplatOp, self.value(e), result_type=tile((1,), e))
            x = self.b.op(ExpandDimsOp, x, axis=1)
            self.add(self.b.op(BroadcastOp, x, result_type=tile((2, 3), e)))

    def gen_gather(self, depth):
        e = self.draw(st.sampled_from(ELEMS))
        shape = self.draw(st.sampled_from(SHAPES[1:]))
        axis = self.draw(st.integers(0, len(shape) - 1))
        ishape = list(shape)
        ishape[axis] = self.draw(st.integers(1, 3))
        index = self.value(tile(tuple(ishape), self.draw(st.sampled_from((i32, u32)))))
        self.add(self.b.op(GatherOp, self.value(tile(shape, e)), index, axis=axis))

    def gen_reduce(self, depth):
        e = self.draw(st.sampled_from(ELEMS))
        src = self.value(tile(self.draw(st.sampled_from(((3,), (2, 3)))), e))
        combine = self.draw(st.sampled_from(("max", "min") if e.is_float else ("add", "max", "min", "xor")))
        body = Block([e, e])
        with self.b.at_end(body):
            self.b.yield_(self._binary(combine, body.args[0], body.args[1]))
        if self.draw(st.booleans()):
            op = self.b.create(ReduceOp, [src], None, {"axis": 0}, [Region([body])])
        else:
            op = self.b.create(ScanOp, [src], None, {"axis": 0, "reverse": self.draw(st.booleans())},
                               [Region([body])])
        self.add(op.result)

    def _region(self, block_args, yield_types, depth):
        self.scopes.append({})
        for a in block_args:
            self.add(a)
        self.ops(depth + 1)
        vals = [self.value(t) for t in yield_types]
        self.b.create(YieldOp, vals, [])
        self.scopes.pop()

    def gen_for(self, depth):
        c = lambda v: self.b.constant(v, i32)  # noqa: E731
        lb, ub, step = self.draw(st.sampled_from([(0, 3, 1), (0, 0, 1), (1, 4, 2), (3, 0, -1), (0, 1, 1),
                                                  (2, 2, 1), (0, None, 1)]))
        ub_v = self._binary("and", self.value(i32), c(3)) if ub is None else c(ub)
        types = [self.any_type() for _ in range(self.draw(st.integers(0, 2)))]
        inits = [self.value(t) for t in types]
        op = self.b.for_(c(lb), ub_v, c(step), inits)
        with self.b.at_end(op.body):
            self._region(op.body.args, types, depth)
        for r in op.results:
            self.add(r)

    def gen_if(self, depth):
        cond = self.value(i1)
        types = [self.any_type() for _ in range(self.draw(st.integers(0, 2)))]
        op = self.b.if_(cond, types)
        for r in op.regions:
            with self.b.at_end(r.block):
                self._region([], types, depth)
        for r in op.results:
            self.add(r)

    def gen_call(self, depth):
        f = self.draw(st.sampled_from(self.callees))
        ft = f.function_type
        op = self.b.create(CallOp, [self.value(t) for t in ft.inputs], list(ft.results),
                           {"callee": f.sym_name})
        for r in op.results:
            self.add(r)

    def _pointers(self, elem, shape):
        """Pointers into the ``elem`` buffer at offsets in [0, 8), of the given shape."""
        p = self.value(PointerType(elem))
        offs = self._binary("and", self.value(tile(shape, i32)), self.b.constant(BUFFER_SIZE - 1, tile(shape, i32)))
        if shape and self.draw(st.booleans()):  # the usual tl.arange form: base + arange (+ scalar) in bounds
            n = shape[-1]
            offs = self.b.op(ArangeOp, start=0, end=n)
            if len(shape) == 2:
                offs = self.b.op(BroadcastOp, self.b.op(ExpandDimsOp, offs, axis=0), result_type=tile(shape, i32))
        if shape:
            p = self.b.op(SplatOp, p, result_type=tile(shape, p.type))
        return self.b.op(AddPtrOp, p, offs)

    def _mask(self, shape):
        return self.value(tile(shape, i1)) if self.draw(st.booleans()) else None

    def gen_load(self, depth):
        elem = self.draw(st.sampled_from((i32, f32)))
        shape = self.draw(st.sampled_from(SHAPES))
        ptrs = self._pointers(elem, shape)
        mask = self._mask(shape)
        operands = [ptrs] + ([mask, self.value(tile(shape, elem))] if mask is not None else [])
        self.add(self.b.op(LoadOp, *operands))

    def gen_store(self, depth):
        elem = self.draw(st.sampled_from((i32, f32)))
        shape = self.draw(st.sampled_from(SHAPES))
        ptrs = self._pointers(elem, shape)
        val = self.value(tile(shape, elem))
        mask = self._mask(shape)
        if elem == i32 and self.draw(st.booleans()):
            kind = self.draw(st.sampled_from(("add", "max", "xchg")))
            ops = [ptrs, val] + ([mask] if mask is not None else [])
            self.add(self.b.create(AtomicRMWOp, ops, None, {"kind": kind}).result)
            return
        self.b.create(StoreOp, [ptrs, val] + ([mask] if mask is not None else []), [])

    def gen_while(self, depth):
        """``i = 0; while i < limit: ...; i += 1`` with extra carried values."""
        if depth >= self.max_depth:
            return self.gen_binary(depth)
        types = [i32] + [self.any_type() for _ in range(self.draw(st.integers(0, 2)))]
        inits = [self.b.constant(0, i32)] + [self.value(t) for t in types[1:]]
        limit = self.draw(st.integers(0, 3))
        op = self.b.while_(inits, types)
        before, after = op.regions[0].block, op.regions[1].block
        with self.b.at_end(before):
            self.scopes.append({})
            for a in before.args:
                self.add(a)
            if self.draw(st.booleans()):
                self.ops(depth + 1)
            go = self.b.op(CmpOp, before.args[0], self.b.constant(limit, i32), predicate="lt")
            fwd = [before.args[0]] + [self.value(t) for t in types[1:]]
            self.b.create(ConditionOp, [go] + fwd, [])
            self.scopes.pop()
        with self.b.at_end(after):
            self.scopes.append({})
            for a in after.args[1:]:
                self.add(a)
            self.ops(depth + 1)
            nxt = self._binary("add", after.args[0], self.b.constant(1, i32))
            self.b.create(YieldOp, [nxt] + [self.value(t) for t in types[1:]], [])
            self.scopes.pop()
        for r in op.results[1:]:
            self.add(r)

    # -- functions -----------------------------------------------------------------------------------------
    def function(self, name):
        args = list(POINTERS) + [self.any_type() for _ in range(self.draw(st.integers(1, 4)))]
        results = [self.any_type(ELEMS + (i1,)) for _ in range(self.draw(st.integers(1, 3)))]
        f = FuncOp.create(name, args, results, arg_names=[f"a{i}" for i in range(len(args))])
        self.b.set_insertion_point_to_end(f.body)
        self.scopes = [{}]
        for a in f.args:
            self.add(a)
        self.ops(0)
        self.b.create(ReturnOp, [self.value(t) for t in results], [])
        return f


@st.composite
def programs(draw, max_funcs=3, max_ops=10, max_depth=2):
    """A module whose last function, ``@main``, is the entry point."""
    n = draw(st.integers(1, max_funcs))
    m = ModuleOp.create()
    funcs = []
    for i in range(n):
        name = "main" if i == n - 1 else f"f{i}"
        f = _FuncGen(draw, list(funcs), max_ops, max_depth).function(name)
        m.body.append(f)
        funcs.append(f)
    return m


def _scalar(draw, e):
    if e.is_float:
        return draw(st.one_of(st.sampled_from(FLOAT_CONSTS), st.floats(-1e3, 1e3, width=32)))
    if e.kind == "uint":
        return draw(st.one_of(st.sampled_from(UINT_CONSTS), st.integers(0, 2 ** e.bits - 1)))
    lo, hi = -(2 ** (e.bits - 1)), 2 ** (e.bits - 1) - 1
    return draw(st.one_of(st.sampled_from(INT_CONSTS), st.integers(lo, hi)))


@st.composite
def arguments(draw, func):
    """Argument values for ``func``: numpy scalars and arrays of the parameter types."""
    out = []
    for t in func.function_type.inputs:
        e = t.element
        if isinstance(t, PointerType):
            vals = [_scalar(draw, t.pointee) for _ in range(BUFFER_SIZE)]
            out.append(np.array(vals, dtype=t.pointee.numpy))
        elif t.is_tile:
            vals = [_scalar(draw, e) for _ in range(int(np.prod(t.shape)))]
            out.append(np.array(vals, dtype=e.numpy).reshape(t.shape))
        else:
            out.append(np.array(_scalar(draw, e), dtype=e.numpy)[()])
    return out


def same_results(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.kind == "f":
            if not (np.array_equal(x, y, equal_nan=True) and np.array_equal(np.signbit(x), np.signbit(y))):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def run_main(module, args):
    """Evaluate ``@main`` on copies of ``args``; returns (results, the buffers' final contents)."""
    args = [np.array(a) if isinstance(a, np.ndarray) and a.ndim else a for a in args]
    results = evaluate_function(module.lookup("main"), args)
    return list(results) + [a for a in args if isinstance(a, np.ndarray) and a.ndim]
