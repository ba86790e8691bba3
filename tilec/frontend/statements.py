"""Statements: assignments, compile-time folded control flow, and structured runtime control flow.

Runtime ``if``/``for``/``while`` become region ops. Variables assigned in a region and live before it become
results (``if``) or carried values (``for``/``while``); a variable first defined inside a region is not visible
after it. Compile-time values (Python ints/floats) stay Python values until control flow forces them into the IR.
"""
from __future__ import annotations

import ast

from .. import language as tl
from ..ir.core import Block, Region
from ..ir import ops as irops
from ..language.core import tensor
from .scope import is_scalar_const, is_tensor


def assigned_names(stmts) -> list[str]:
    """Names a list of statements may (re)bind, in first-assignment order."""
    seen = {}
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                seen.setdefault(node.id, None)
    return list(seen)


class _Return(Exception):
    pass


class StmtGen:
    def __init__(self, g):
        self.g = g
        self._dispatch = {
            ast.Expr: self.expr, ast.Assign: self.assign, ast.AugAssign: self.augassign,
            ast.AnnAssign: self.annassign, ast.If: self.if_, ast.For: self.for_, ast.While: self.while_,
            ast.Return: self.return_, ast.Pass: lambda n: None, ast.Assert: self.assert_,
        }

    def visit(self, node):
        fn = self._dispatch.get(type(node))
        if fn is None:
            what = {ast.Break: "break", ast.Continue: "continue", ast.With: "with", ast.Try: "try",
                    ast.Raise: "raise", ast.FunctionDef: "nested function definitions", ast.Lambda: "lambda",
                    ast.Import: "import", ast.ImportFrom: "import", ast.Global: "global",
                    ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.ClassDef: "class definitions"}.get(
                        type(node), type(node).__name__)
            raise self.g.src.error(node, f"unsupported syntax in a kernel: {what}")
        return self.g.located(node, fn)

    def block(self, stmts):
        for s in stmts:
            if self.g.returned:
                raise self.g.src.error(s, "code after return is not supported")
            self.visit(s)

    # -- simple statements ---------------------------------------------------------------------------------
    def expr(self, node):
        self.g.expr.visit(node.value)

    def assign(self, node):
        value = self.g.expr.visit(node.value)
        for t in node.targets:
            self.bind(t, value)

    def annassign(self, node):
        if node.value is None:
            return
        value = self.g.expr.visit(node.value)
        ann = self.g.expr.visit(node.annotation)
        if ann is tl.constexpr and is_tensor(value):
            raise TypeError(f"'{ast.unparse(node.target)}' is annotated tl.constexpr but its value is a runtime "
                            "tensor")
        self.bind(node.target, value)

    def augassign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.g.src.error(node.target, "augmented assignment only to plain names is supported")
        cur = self.g.scope.lookup(node.target.id)
        value = self.g.expr.apply_binop(type(node.op), cur, self.g.expr.visit(node.value))
        self.bind(node.target, value)

    def bind(self, target, value):
        if isinstance(target, ast.Name):
            if is_tensor(value):
                h = value.handle
                if getattr(h, "name_hint", "x") is None:
                    h.name_hint = target.id
            self.g.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if is_tensor(value):
                raise self.g.src.error(target, "cannot unpack a tensor")
            vals = list(value)
            if len(vals) != len(target.elts):
                raise self.g.src.error(target, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self.bind(t, v)
        else:
            raise self.g.src.error(target, f"unsupported assignment target: {type(target).__name__} (only names "
                                           "and tuples of names can be assigned)")

    def return_(self, node):
        if self.g.depth:
            raise self.g.src.error(node, "return inside runtime control flow is not supported")
        self.g.ret_value = None if node.value is None else self.g.expr.visit(node.value)
        self.g.returned = True

    def assert_(self, node):
        cond = self.g.expr.visit(node.test)
        msg = "" if node.msg is None else self.g.expr.visit(node.msg)
        if is_tensor(cond):
            self.g.sem.device_assert(cond, str(msg) or ast.unparse(node.test))
        elif not cond:
            raise AssertionError(f"assertion failed{': ' + str(msg) if msg else ''}")

    # -- helpers for region results --------------------------------------------------------------------------
    def materialize(self, v, ty=None) -> tensor:
        """A compile-time scalar as a tensor (``ty``: adopt that type, like a weak Python scalar)."""
        if is_tensor(v):
            return v
        if not is_scalar_const(v):
            raise TypeError(f"a {type(v).__name__} value cannot flow through runtime control flow")
        if ty is not None and not ty.is_block():
            return self.g.sem.to_tensor(v, ty) if not (isinstance(v, float) and ty.is_int()) else \
                self.g.sem.cast(self.g.sem.to_tensor(v), ty)
        t = self.g.sem.to_tensor(v)
        if ty is not None:
            t = self.g.sem.broadcast_to(self.g.sem.cast(t, ty.scalar), ty.shape)
        return t

    def in_block(self, block: Block, fn):
        with self.g.ir.at_end(block):
            return fn()

    def child(self, stmts, block: Block, scope):
        """Generate ``stmts`` into ``block`` under ``scope``; returns the final scope."""
        saved = self.g.scope
        self.g.scope = scope
        self.g.depth += 1
        try:
            with self.g.ir.at_end(block):
                self.block(stmts)
        finally:
            self.g.depth -= 1
            self.g.scope = saved
        return scope

    # -- if ----------------------------------------------------------------------------------------------------
    def if_(self, node):
        cond = self.g.expr.visit(node.test)
        if not is_tensor(cond):
            self.block(node.body if cond else node.orelse)
            return
        if cond.shape:
            raise TypeError(f"a runtime `if` needs a scalar condition, got a tensor of shape {list(cond.shape)}; "
                            "use tl.where for elementwise choices")
        cond = self.g.sem.cast(cond, tl.int1)
        before = self.g.scope
        then_b, else_b = Block(), Block()
        s_then = self.child(node.body, then_b, before.copy())
        s_else = self.child(node.orelse, else_b, before.copy())
        names, then_vals, else_vals = [], [], []
        for name in assigned_names(node.body + node.orelse):
            if name not in s_then.vars or name not in s_else.vars:
                continue  # first defined in one branch only: not visible after the if
            a, b = s_then.vars[name], s_else.vars[name]
            if a is b:
                continue
            if not is_tensor(a) and not is_tensor(b) and type(a) is type(b) and a == b:
                before.vars[name] = a
                continue
            tb = b.type if is_tensor(b) else None
            try:
                a = self.in_block(then_b, lambda: self.materialize(a, tb))
                b = self.in_block(else_b, lambda: self.materialize(b, a.type))
            except TypeError as e:
                raise TypeError(f"variable '{name}' differs between the branches of a runtime if: {e}") from None
            if a.type != b.type:
                raise TypeError(f"variable '{name}' has type {a.type} in the then-branch but {b.type} in the "
                                "else-branch; both branches must agree")
            names.append(name)
            then_vals.append(a)
            else_vals.append(b)
        with self.g.ir.at_end(then_b):
            self.g.ir.yield_(*[v.handle for v in then_vals])
        with self.g.ir.at_end(else_b):
            self.g.ir.yield_(*[v.handle for v in else_vals])
        op = self.g.ir.create(irops.IfOp, [cond.handle], [v.handle.type for v in then_vals],
                              regions=[Region([then_b]), Region([else_b])])
        for name, r, v in zip(names, op.results, then_vals):
            r.name_hint = name
            before.vars[name] = tensor(r, v.type)

    # -- loops -------------------------------------------------------------------------------------------------
    def carried(self, stmts, extra=()):
        """Live-in names the body may reassign: the loop's carried values."""
        scope = self.g.scope
        out = []
        for n in assigned_names(stmts):
            if n in extra or n not in scope.vars:
                continue
            v = scope.vars[n]
            if is_tensor(v) or is_scalar_const(v):
                out.append(n)
        return out

    def _loop(self, names, emit):
        """Run ``emit(inits)`` (which builds the loop and returns the final body values, or raises
        _TypeChange); when a compile-time init settles on another type in the body, retry with that type."""
        scope = self.g.scope
        forced = {}
        for attempt in range(3):
            inits = [self.materialize(scope.vars[n], forced.get(n)) for n in names]
            try:
                return emit(inits)
            except _TypeChange as tc:
                if not is_scalar_const(scope.vars[tc.name]) or tc.name in forced or attempt == 2:
                    raise TypeError(f"variable '{tc.name}' has type {tc.before} before the loop but {tc.after} "
                                    "after an iteration; loop-carried variables must keep their type") from None
                forced[tc.name] = tc.after

    def _check_uncarried(self, stmts, names, before, after):
        """A compile-time value (tuple, dtype, ...) reassigned in a runtime loop cannot become loop-carried."""
        for n in assigned_names(stmts):
            if n in names or n not in before.vars:
                continue
            a, b = before.vars[n], after.vars.get(n)
            if a is not b and not (type(a) is type(b) and not is_tensor(a) and a == b):
                raise TypeError(f"variable '{n}' holds a compile-time {type(a).__name__} and is reassigned inside "
                                "a runtime loop; only tensors and numbers can change across iterations")

    def _finish_body(self, names, inits, scope_after):
        outs = []
        for n, init in zip(names, inits):
            v = scope_after.vars[n]
            if not is_tensor(v):
                v = self.materialize(v, init.type)
            if v.type != init.type:
                raise _TypeChange(n, init.type, v.type)
            outs.append(v)
        return outs

    def for_(self, node):
        it = node.iter
        if node.orelse:
            raise self.g.src.error(node, "for ... else is not supported")
        rng = self.g.expr.visit(it)
        if isinstance(rng, (tl.static_range, tuple, list)):
            return self.unrolled(node, rng)
        if not isinstance(rng, tl.range):
            raise self.g.src.error(it, "a kernel `for` loop must iterate over range(...), tl.range(...), "
                                       "tl.static_range(...) or a compile-time tuple")
        if not isinstance(node.target, ast.Name):
            raise self.g.src.error(node.target, "the loop variable must be a plain name")
        lb, ub, step = rng.start, rng.end, rng.step
        num_stages = getattr(rng, "num_stages", None)
        bounds = [self.g.sem.to_tensor(v) for v in (lb, ub, step)]
        for b in bounds:
            if b.shape or not b.dtype.is_int():
                raise TypeError(f"range bounds must be integer scalars, got {b.type}")
        ity = tl.int64 if any(b.dtype.int_bitwidth == 64 for b in bounds) else tl.int32
        if any(b.dtype.is_int_unsigned() for b in bounds) and ity == tl.int64:
            ity = tl.int64
        bounds = [self.g.sem.cast(b, ity) for b in bounds]
        if not is_tensor(step) and step == 0:
            raise ValueError("range step must not be zero")
        var = node.target.id
        names = self.carried(node.body, extra=(var,))
        before = self.g.scope

        def emit(inits):
            body = Block([self.g.tb.to_ir(ity)] + [v.handle.type for v in inits], [var] + names)
            s = before.copy()
            s.vars[var] = tensor(body.args[0], ity)
            for n, a, v in zip(names, body.args[1:], inits):
                s.vars[n] = tensor(a, v.type)
            try:
                self.child(node.body, body, s)
                self._check_uncarried(node.body, names + [var], before, s)
                with self.g.ir.at_end(body):
                    outs = self._finish_body(names, inits, s)
            except _TypeChange:
                _discard(body)
                raise
            with self.g.ir.at_end(body):
                self.g.ir.yield_(*[v.handle for v in outs])
            attrs = {} if num_stages is None else {"num_stages": int(num_stages)}
            op = self.g.ir.create(irops.ForOp, [b.handle for b in bounds] + [v.handle for v in inits],
                                  [v.handle.type for v in inits], attrs, regions=[Region([body])])
            return op, inits

        op, inits = self._loop(names, emit)
        before.vars.pop(var, None)
        for n, r, v in zip(names, op.results, inits):
            r.name_hint = n
            before.vars[n] = tensor(r, v.type)

    def unrolled(self, node, seq):
        for i in seq:
            self.bind(node.target, i)
            self.block(node.body)

    def while_(self, node):
        if node.orelse:
            raise self.g.src.error(node, "while ... else is not supported")
        names = self.carried(node.body)
        before = self.g.scope

        def emit(inits):
            types = [v.handle.type for v in inits]
            cond_b = Block(types, names)
            body_b = Block(types, names)
            sc = before.copy()
            for n, a, v in zip(names, cond_b.args, inits):
                sc.vars[n] = tensor(a, v.type)
            saved = self.g.scope
            self.g.scope = sc
            try:
                with self.g.ir.at_end(cond_b):
                    cond = self.g.expr.visit(node.test)
                    if not is_tensor(cond):
                        if cond:
                            raise self.g.src.error(node.test, "this while loop's condition is always true")
                        return None, inits
                    if cond.shape:
                        raise self.g.src.error(node.test, "a while condition must be a scalar")
                    cond = self.g.sem.cast(cond, tl.int1)
                    self.g.ir.create(irops.ConditionOp, [cond.handle] + list(cond_b.args), [])
            finally:
                self.g.scope = saved
            sb = before.copy()
            for n, a, v in zip(names, body_b.args, inits):
                sb.vars[n] = tensor(a, v.type)
            try:
                self.child(node.body, body_b, sb)
                self._check_uncarried(node.body, names, before, sb)
                with self.g.ir.at_end(body_b):
                    outs = self._finish_body(names, inits, sb)
            except _TypeChange:
                _discard(cond_b)
                _discard(body_b)
                raise
            with self.g.ir.at_end(body_b):
                self.g.ir.yield_(*[v.handle for v in outs])
            op = self.g.ir.create(irops.WhileOp, [v.handle for v in inits], types,
                                  regions=[Region([cond_b]), Region([body_b])])
            return op, inits

        op, inits = self._loop(names, emit)
        if op is None:
            return
        for n, r, v in zip(names, op.results, inits):
            r.name_hint = n
            before.vars[n] = tensor(r, v.type)


class _TypeChange(Exception):
    def __init__(self, name, before, after):
        super().__init__(name)
        self.name, self.before, self.after = name, before, after


def _discard(block: Block):
    """Drop the uses a throw-away block's ops hold on outer values."""
    for op in block.ops:
        for o in op.walk(post_order=True):
            o.drop_operands()
    block.ops = []
