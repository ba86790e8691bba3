"""Random fuzz kernels: elementwise chains over mixed dtypes, casts (bf16, fp8), reductions, scans, small dots,
loops with carried values, ``if`` on scalars, atomics and stores with non-power-of-two masks.

Each candidate expression is typed with the same rules :func:`infer` applies, so only valid pieces are kept, and
every statement is re-checked in place (loops to their fixed point) before the next one is written. A seed always
gives the same kernel.
"""
from __future__ import annotations

import random

from .dtypes import FP8, INTS, Invalid, STORABLE, bits, is_float, is_int, is_signed
from .infer import PROLOGUE, _Checker, infer
from .program import C, F, R, S, Assign, Atomic, For, If, Kernel, Lit, Op, Store, Ty, Var
from .rules import ATOMIC_ADD_TYPES, DOT_TYPES, TRANSCENDENTAL
from .infer import prologue_env

#: every feature the generator can use; ``generate(features=...)`` takes a subset
FEATURES = frozenset({"bf16", "fp8", "f64", "dot", "reduce", "scan", "math", "loops", "ifs", "atomics",
                      "bitcast", "int64"})

INPUT_DTYPES = [("float32", 30), ("float16", 12), ("float64", 6), ("int32", 14), ("int8", 6), ("int16", 5),
                ("int64", 6), ("uint8", 6), ("uint16", 4), ("uint32", 6), ("uint64", 5)]


def _is_int(t: Ty) -> bool:
    return is_int(t.dtype)


def _exact(t: Ty) -> bool:
    """The value is computed exactly (no rounding error to track), so comparisons of it are stable."""
    return t.err == 0


class _Gen:
    def __init__(self, rng: random.Random, k: Kernel, features):
        self.r, self.k, self.features = rng, k, features
        self.count = 0
        self.outs = 0
        self.loop_vars = 0
        self.depth = 0  # statement nesting

    # -- helpers ---------------------------------------------------------------------------------------------
    def name(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    def out_param(self):
        self.outs += 1
        return f"out{self.outs - 1}"

    def typeof(self, e, env) -> Ty:
        return _Checker(self.k).expr(e, env)

    def chance(self, p):
        return self.r.random() < p

    def float_types(self):
        out = ["float32", "float16"]
        if "f64" in self.features:
            out.append("float64")
        if "bf16" in self.features:
            out.append("bfloat16")
        if "fp8" in self.features:
            out += list(FP8)
        return out

    def int_types(self):
        return [t for t in INTS if "int64" in self.features or bits(t) < 64]

    def vars(self, env, pred=None, assignable=False):
        out = []
        for n, t in env.items():
            if assignable and (n in PROLOGUE or t.weak):
                continue
            if pred is None or pred(t):
                out.append(n)
        return out

    # -- expressions -----------------------------------------------------------------------------------------
    def leaf(self, env, pred=None):
        names = self.vars(env, pred)
        if not names:
            return None
        # favour values defined recently: longer dependency chains
        names.sort(key=lambda n: (n in PROLOGUE, 0))
        user = [n for n in names if n not in PROLOGUE]
        if user and self.chance(0.8):
            return Var(self.r.choice(user[-6:] if self.chance(0.6) else user))
        return Var(self.r.choice(names))

    def literal(self, kind):
        if kind == "float":
            return Lit(self.r.choice([0.5, 1.0, 2.0, 3.0, 0.25, 1.5, 0.0, 4.0]))
        if kind == "bool":
            return Lit(self.r.choice([True, False]))
        return Lit(self.r.choice([1, 2, 3, 5, 7, 0, 100, 12]))

    def operand(self, env, depth, pred=None, lit=None):
        """A variable, a nested expression or (when ``lit`` names a kind) a literal."""
        if lit and self.chance(0.2):
            return self.literal(lit)
        if depth > 0 and self.chance(0.35):
            e = self.expr(env, depth - 1)
            if e is not None and (pred is None or pred(self.typeof(e, env))):
                return e
        v = self.leaf(env, pred)
        return v if v is not None else self.literal(lit or "int")

    def expr(self, env, depth=2, tries=30):
        """A random valid expression over ``env``, or None."""
        for _ in range(tries):
            try:
                e = self._expr(env, depth)
                if e is None:
                    continue
                self.typeof(e, env)
                return e
            except Invalid:
                continue
        return None

    def _expr(self, env, depth):
        """One random expression of a kind drawn by weight from those the kernel's features allow (None when the
        drawn kind finds nothing to apply to)."""
        choices = self._expr_kinds()
        kind = self.r.choices([c for c, _ in choices], [w for _, w in choices])[0]
        return getattr(self, "_expr_" + kind)(env, depth)

    def _expr_kinds(self):
        """(kind, weight) of every expression kind the kernel's features and shape allow."""
        k = self.k
        choices = [("arith", 30), ("div", 6), ("intdiv", 6), ("bitwise", 6), ("shift", 5), ("cmp", 5),
                   ("unary", 6), ("minmax", 5), ("where", 6), ("cast", 12), ("full", 2), ("umulhi", 1), ("fma", 1)]
        if "math" in self.features:
            choices.append(("math", 6))
        if "reduce" in self.features:
            choices.append(("reduce", 7))
        if "scan" in self.features:
            choices.append(("scan", 3))
        if "bitcast" in self.features:
            choices.append(("bitcast", 2))
        if k.inputs:
            choices.append(("load", 3))
        if k.rank == 2:
            choices.append(("bcast", 2))
            if k.B0 == k.B1 and k.B0 >= 16:
                choices.append(("trans", 2))
                if "dot" in self.features:
                    choices.append(("dot", 8))
        return choices

    def _operands(self, env, depth):
        """``o(pred, lit)``: :meth:`operand` over ``env`` at ``depth``."""
        return lambda pred=None, lit=None: self.operand(env, depth, pred, lit)

    def _expr_arith(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        return Op(r.choice(["add", "sub", "mul"]), [o(), o(lit=r.choice(["int", "float"]))])

    def _expr_div(self, env, depth):
        o = self._operands(env, depth)
        return Op("truediv", [o(), o(lit="float")])

    def _expr_intdiv(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        a = o(_is_int)
        at = self.typeof(a, env)
        if not is_int(at.dtype):
            return None
        same = lambda t: is_int(t.dtype) and is_signed(t.dtype) == is_signed(at.dtype)  # noqa: E731
        b = Lit(r.randint(1, 9)) if self.chance(0.4) else Op("posdiv", [o(same)])
        if self.chance(0.15) and is_float(at.dtype) is False:
            return Op("mod", [a, b])
        return Op(r.choice(["floordiv", "mod"]), [a, b])

    def _expr_bitwise(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        if self.chance(0.3):
            isb = lambda t: t.dtype == "int1"  # noqa: E731
            return Op(r.choice(["and", "or", "xor"]), [o(isb), o(isb)])
        return Op(r.choice(["and", "or", "xor"]), [o(_is_int), o(_is_int, lit="int")])

    def _expr_shift(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        a = o(_is_int)
        at = self.typeof(a, env)
        if not is_int(at.dtype):
            return None
        if self.chance(0.5):
            return Op(r.choice(["shl", "shr"]), [a, Lit(r.randrange(bits(at.dtype)))])
        b = o(_is_int)
        bt = self.typeof(b, env)
        if not is_int(bt.dtype):
            return None
        m = max(bits(at.dtype), bits(bt.dtype)) - 1
        return Op(r.choice(["shl", "shr"]), [a, Op("shamt", [b], {"m": m})])

    def _expr_cmp(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        a = o(lambda t: _exact(t) and t.dtype != "int1")
        at = self.typeof(a, env)
        lit = "float" if is_float(at.dtype) else "int"
        same_kind = lambda t: _exact(t) and is_float(t.dtype) == is_float(at.dtype)  # noqa: E731
        return Op(r.choice(["lt", "le", "gt", "ge", "eq", "ne"]), [a, o(same_kind, lit=lit)])

    def _expr_unary(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        name = r.choice(["neg", "abs", "invert"])
        return Op(name, [o(_is_int if name == "invert" else None)])

    def _expr_math(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        name = r.choice(list(TRANSCENDENTAL) + ["sqrt", "floor", "ceil", "sqrt"])
        a = o()
        if self.typeof(a, env).dtype not in ("float32", "float64"):
            a = Op("cast", [a], {"dtype": "float32"})
        if name in ("log", "sqrt", "rsqrt", "log2") and self.chance(0.6):
            a = Op("abs", [a])
        return Op(name, [a])

    def _expr_minmax(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        return Op(r.choice(["maximum", "minimum"]), [o(), o(lit=r.choice(["int", "float"]))])

    def _expr_where(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        c = o(lambda t: t.dtype == "int1" and _exact(t))
        if self.typeof(c, env).dtype != "int1":
            c = self.compare_of(env, depth)
            if c is None:
                return None
        return Op("where", [c, o(), o(lit=r.choice(["int", "float"]))])

    def _expr_cast(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        a = o()
        at = self.typeof(a, env)
        if at.weak:
            return None
        pool = self.float_types() + self.int_types() + ["int1"]
        return Op("cast", [a], {"dtype": r.choice([t for t in pool if t != at.dtype])})

    def _expr_bitcast(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        a = o(lambda t: _exact(t) and t.dtype != "int1")
        at = self.typeof(a, env)
        pool = [t for t in self.float_types() + self.int_types() if bits(t) == bits(at.dtype) and t != at.dtype]
        if not pool:
            return None
        return Op("bitcast", [a], {"dtype": r.choice(pool)})

    def _expr_full(self, env, depth):
        r, k = self.r, self.k
        dt = r.choice(self.float_types() + self.int_types())
        shape = r.choice([F, F, R, C] if k.rank == 2 else [F])
        v = self.literal("float" if is_float(dt) else "int").value
        return Op("full", [], {"dtype": dt, "value": v, "shape": shape})

    def _expr_umulhi(self, env, depth):
        o = self._operands(env, depth)
        a = o(lambda t: t.dtype in ("int32", "uint32"))
        at = self.typeof(a, env)
        return Op("umulhi", [a, o(lambda t: t.dtype == at.dtype)])

    def _expr_fma(self, env, depth):
        o = self._operands(env, depth)
        a = o(lambda t: t.dtype == "float32")
        return Op("fma", [a, o(lambda t: t.dtype == "float32"), o(lambda t: t.dtype == "float32")])

    def _expr_reduce(self, env, depth):
        r, k, o = self.r, self.k, self._operands(env, depth)
        a = o(lambda t: t.shape != S)
        at = self.typeof(a, env)
        axis = None if self.chance(0.2) else (r.choice([0, 1]) if k.rank == 2 and at.shape == F else 0)
        if at.dtype in FP8:
            a = Op("cast", [a], {"dtype": "float32"})
        return Op(r.choice(["sum", "sum", "max", "min"]), [a], {"axis": axis})

    def _expr_scan(self, env, depth):
        r, k, o = self.r, self.k, self._operands(env, depth)
        a = o(lambda t: t.shape != S)
        at = self.typeof(a, env)
        axis = r.choice([0, 1]) if k.rank == 2 and at.shape == F else 0
        if at.dtype in FP8:
            a = Op("cast", [a], {"dtype": "float32"})
        return Op("cumsum", [a], {"axis": axis, "reverse": self.chance(0.3)})

    def _expr_load(self, env, depth):
        r, k = self.r, self.k
        p = r.choice(sorted(k.inputs))
        other = r.choice([0.0, 1.0, -2.5]) if is_float(k.inputs[p]) else r.choice([0, 1, 3])
        args = []
        if self.chance(0.6):
            c = self.compare_of(env, 0)
            if c is not None:
                args.append(c)
        return Op("load", args, {"param": p, "other": other, "flip": self.chance(0.5)})

    def _expr_bcast(self, env, depth):
        o = self._operands(env, depth)
        a = o(lambda t: t.shape in (R, C, S) and not t.weak)
        return Op("bcast", [a], {"shape": F})

    def _expr_trans(self, env, depth):
        o = self._operands(env, depth)
        return Op("trans", [o(lambda t: t.shape == F)])

    def _expr_dot(self, env, depth):
        r, o = self.r, self._operands(env, depth)
        dt = r.choice([t for t in DOT_TYPES if t in self.float_types() + ["int8"]])
        full = lambda t: t.shape == F  # noqa: E731
        ab = []
        for _ in range(2):
            x = o(full)
            if self.typeof(x, env).dtype != dt:
                x = Op("cast", [x], {"dtype": dt})
            ab.append(x)
        attrs = {"precision": "ieee"} if dt == "float32" and self.chance(0.7) else {}
        out = {"int8": "int32", "float64": "float64"}.get(dt, "float32")
        if self.chance(0.3):
            acc = self.leaf(env, lambda t: t.dtype == out and t.shape == F)
            if acc is not None:
                ab.append(acc)
        return Op("dot", ab, attrs)

    def compare_of(self, env, depth, shape=None):
        for _ in range(10):
            a = self.operand(env, depth, lambda t: t.err == 0 and t.dtype != "int1" and
                             (shape is None or t.shape == shape))
            at = self.typeof(a, env)
            lit = "float" if is_float(at.dtype) else "int"
            e = Op(self.r.choice(["lt", "le", "gt", "ge", "eq", "ne"]), [a, self.literal(lit)])
            try:
                if self.typeof(e, env).shape == (shape or self.typeof(e, env).shape):
                    return e
            except Invalid:
                continue
        return None

    def fit(self, e, env, target: Ty):
        """``e`` converted to ``target``'s dtype and shape (None when it cannot be)."""
        t = self.typeof(e, env)
        if t.weak:
            return None
        if t.dtype != target.dtype:
            e = Op("cast", [e], {"dtype": target.dtype})
        if t.shape != target.shape:
            e = Op("bcast", [e], {"shape": target.shape})
        try:
            t2 = self.typeof(e, env)
        except Invalid:
            return None
        return e if (t2.dtype, t2.shape) == (target.dtype, target.shape) else None

    def storable(self, e, env):
        t = self.typeof(e, env)
        if t.weak:
            return None
        if t.dtype == "int1":
            return Op("cast", [e], {"dtype": "int8"})
        if t.dtype not in STORABLE:
            return Op("cast", [e], {"dtype": "float32"})
        return e

    # -- statements ------------------------------------------------------------------------------------------
    def stmt(self, env, carried=()):
        """One random statement valid in ``env``; updates ``env`` with what it defines."""
        r = self.r
        choices = [("assign", 55), ("store", 10)]
        if carried:
            choices.append(("reassign", 40))
        elif self.depth == 0:
            choices.append(("reassign", 3))
        if "atomics" in self.features:
            choices += [("atomic_add", 4), ("atomic_shared", 3)]
        if self.depth < 2:
            if "loops" in self.features:
                choices.append(("for", 8))
                if "dot" in self.features and self.k.rank == 2 and self.k.B0 == self.k.B1 >= 16:
                    choices.append(("dotloop", 6))
            if "ifs" in self.features:
                choices.append(("if", 7))
        kind = r.choices([c for c, _ in choices], [w for _, w in choices])[0]
        if kind == "assign":
            e = self.expr(env)
            if e is None:
                return None
            name = self.name()
            return Assign(name, e)
        if kind == "reassign":
            names = list(carried) or self.vars(env, assignable=True)
            if not names:
                return None
            name = r.choice(names)
            e = self.expr(env)
            if e is None:
                return None
            if self.chance(0.5):  # keep the old value in play: acc = acc op e
                e = Op(r.choice(["add", "mul", "maximum", "sub"]), [Var(name), e])
            e = self.fit(e, env, env[name]) if not self._throws(e, env) else None
            return Assign(name, e) if e is not None else None
        if kind == "store":
            e = self.expr(env, depth=1) if self.chance(0.3) else self.leaf(env, lambda t: not t.weak)
            if e is None:
                return None
            e = self.storable(e, env)
            if e is None:
                return None
            cond = None
            if self.chance(0.2):
                cond = self.compare_of(env, 0, shape=self.typeof(e, env).shape)
            return Store(self.out_param(), e, cond)
        if kind == "atomic_add":
            e = self.leaf(env, lambda t: not t.weak) if self.chance(0.6) else self.expr(env, depth=1)
            if e is None:
                return None
            t = self.typeof(e, env)
            if t.dtype not in ATOMIC_ADD_TYPES:
                e = Op("cast", [e], {"dtype": r.choice(["float32", "int32"]) if t.err == 0 else "float32"})
            return Assign(self.name(), Op("atomic_add", [e], {"param": self.out_param()}))
        if kind == "atomic_shared":
            e = self.leaf(env, lambda t: t.err == 0 and not t.weak)
            if e is None:
                return None
            t = self.typeof(e, env)
            pool = [d for d in ("int32", "int64", "uint32", "uint64") if "int64" in self.features or bits(d) < 64]
            if t.dtype not in pool:
                e = Op("cast", [e], {"dtype": r.choice(pool)})
            return Atomic(self.out_param(), r.choice(["add", "max", "min", "and", "or", "xor"]), e)
        if kind == "for":
            return self.loop(env)
        if kind == "dotloop":
            return self.dot_loop(env)
        if kind == "if":
            return self.branch(env)
        raise AssertionError(kind)

    def _throws(self, e, env):
        try:
            self.typeof(e, env)
            return False
        except Invalid:
            return True

    def block(self, env, n, carried=()):
        """``n`` statements in a child scope of ``env``; each carried name is reassigned at least once."""
        self.depth += 1
        inner = dict(env)
        body = []
        todo = list(carried)
        for i in range(n * 3):
            if len(body) >= n and not todo:
                break
            s = self.stmt(inner, tuple(todo) or carried)
            if s is None or not self._apply(s, inner):
                continue
            body.append(s)
            if isinstance(s, Assign) and s.name in todo:
                todo.remove(s.name)
        self.depth -= 1
        return body if not todo else None

    def _apply(self, s, env) -> bool:
        """Check statement ``s`` in ``env`` (updating it); False when it is not valid there."""
        trial = dict(env)
        ch = _Checker(self.k)
        try:
            ch.stmt(s, trial)
        except Invalid:
            return False
        env.clear()
        env.update(trial)
        return True

    def loop(self, env):
        r = self.r
        names = self.vars(env, assignable=True)
        if not names:
            return None
        carried = tuple(r.sample(names, min(len(names), r.choice([1, 1, 2]))))
        self.loop_vars += 1
        var = f"i{self.loop_vars}"
        kind = r.choice(["range", "range", "tl.range", "static_range"])
        trip = r.randint(0, 3) if kind == "static_range" or self.chance(0.5) else "s0"
        inner = dict(env)
        inner[var] = Ty("int32", S, 0.0, kind == "static_range")
        body = self.block(inner, r.randint(1, 3), carried)
        if body is None:
            return None
        return For(var, kind, trip, body)

    def dot_loop(self, env):
        """A matmul-shaped loop: ``acc = tl.dot(a, b, acc)`` over operands that change with the iteration."""
        r = self.r
        names = [n for n in self.vars(env, lambda t: t.shape == F and t.dtype in ("float32", "int32"),
                                      assignable=True)]
        if not names:
            return None
        acc = r.choice(names)
        at = env[acc]
        dt = "int8" if at.dtype == "int32" else r.choice([t for t in ("float16", "bfloat16", "float32")
                                                         if t in self.float_types()])
        self.loop_vars += 1
        var = f"i{self.loop_vars}"
        inner = dict(env)
        inner[var] = Ty("int32", S)
        ops = []
        for _ in range(2):
            x = self.leaf(inner, lambda t: t.shape == F and not t.weak)
            if x is None:
                return None
            if self.chance(0.6):
                x = Op(r.choice(["add", "mul"]), [x, Var(var)])
            ops.append(Op("cast", [x], {"dtype": dt}))
        if self.chance(0.3):
            ops[1] = Op("trans", [ops[1]])
        attrs = {"precision": "ieee"} if dt == "float32" else {}
        body = [Assign(acc, Op("dot", ops + [Var(acc)], attrs))]
        trip = r.choice([1, 2, 3, "s0"])
        return For(var, r.choice(["range", "tl.range"]), trip, body)

    def branch(self, env):
        r = self.r
        cond = self.scalar_condition(env)
        if cond is None:
            return None
        names = self.vars(env, assignable=True)
        carried = tuple(r.sample(names, min(len(names), r.choice([0, 1, 1, 2]))))
        then = self.block(env, r.randint(1, 2), carried)
        orelse = self.block(env, r.randint(0, 2), carried if self.chance(0.5) else ())
        if then is None or orelse is None:
            return None
        return If(cond, then, orelse)

    def scalar_condition(self, env):
        r = self.r
        pick = r.random()
        if pick < 0.3:
            return Op("eq", [Op("mod", [Var("pid"), Lit(2)]), Lit(r.randint(0, 1))])
        if pick < 0.5:
            return Op(r.choice(["gt", "lt", "ge"]), [Var("s0"), Lit(r.randint(0, 4))])
        loop_vars = [n for n, t in env.items() if n.startswith("i") and n[1:].isdigit() and not t.weak]
        if loop_vars and pick < 0.7:
            return Op(r.choice(["gt", "eq"]), [Var(r.choice(loop_vars)), Lit(r.randint(0, 2))])
        return self.compare_of(env, 1, shape=S)

    # -- the kernel ------------------------------------------------------------------------------------------
    def kernel(self, n_stmts):
        r, k = self.r, self.k
        env = {}
        env = prologue_env(k)
        body = k.body
        for i in range(r.randint(1, 3)):
            dt = r.choices([d for d, _ in INPUT_DTYPES], [w for _, w in INPUT_DTYPES])[0]
            if dt == "float64" and "f64" not in self.features or bits(dt) == 64 and is_int(dt) and \
                    "int64" not in self.features:
                dt = "float32"
            p = f"in{i}"
            k.inputs[p] = dt
            other = r.choice([0.0, 1.0, 0.5]) if is_float(dt) else r.choice([0, 1])
            s = Assign(f"x{i}", Op("load", [], {"param": p, "other": other}))
            self._apply(s, env)
            body.append(s)
        for _ in range(n_stmts * 3):
            if len(body) - len(k.inputs) >= n_stmts:
                break
            s = self.stmt(env)
            if s is not None and self._apply(s, env):
                body.append(s)
        # finish with stores of the latest values
        user = [n for n in env if n not in PROLOGUE and not env[n].weak]
        for name in user[-r.randint(1, 3):]:
            e = self.storable(Var(name), env)
            if e is not None:
                s = Store(self.out_param(), e)
                if self._apply(s, env):
                    body.append(s)
        return k


def random_kernel_shape(r: random.Random, seed: int, features) -> Kernel:
    rank = 1 if r.random() < 0.4 else 2
    if rank == 1:
        b0, b1 = r.choice([2, 4, 8, 16, 32, 64, 128]), 1
    elif "dot" in features and r.random() < 0.3:
        b0 = b1 = r.choice([16, 16, 32])
    else:
        b0 = r.choice([2, 4, 8, 16])
        b1 = r.choice([2, 4, 8, 16, 32])
    g = r.choice([1, 1, 2, 3])
    n0 = r.randint((g - 1) * b0 + 1, g * b0)
    n1 = 1 if rank == 1 else (b1 if r.random() < 0.3 else 1 if r.random() < 0.15 else r.randint(1, b1))
    f0 = r.choice([0.5, -1.25, 2.0, 0.75, -3.0, 1.0])
    return Kernel(seed=seed, rank=rank, B0=b0, B1=b1, G=g, n0=n0, n1=n1, s0=r.randint(0, 4), f0=f0, inputs={},
                  body=[], data_seed=r.randrange(1 << 30))


def generate(seed: int, features=FEATURES, size: int | None = None) -> Kernel:
    """The fuzz kernel of ``seed``: valid (checked by :func:`infer`) and the same on every call."""
    features = frozenset(features)
    for attempt in range(100):
        r = random.Random(seed * 7919 + attempt)
        k = random_kernel_shape(r, seed, features)
        g = _Gen(r, k, features)
        g.kernel(size if size is not None else r.randint(3, 12))
        try:
            infer(k)
            return k
        except Invalid:
            continue
    raise RuntimeError(f"no valid kernel for seed {seed}")
