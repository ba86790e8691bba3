"""Statements: assignments, compile-time folded control flow, and structured runtime control flow.

Runtime ``if``/``for``/``while`` become region ops. Variables assigned in a region and live before it become
results (``if``) or carried values (``for``/``while``), flattened to their tensors (``values.py``: tuples and
aggregates such as block pointers work too); a variable first defined inside a region is not visible after it.
Compile-time numbers stay Python values until control flow forces them into the IR.
"""
from __future__ import annotations

import ast

from .. import language as tl
from ..ir.core import Block, Region
from ..ir import ops as irops
from ..language.core import tensor
from .scope import is_scalar_const, is_tensor
from .returns import DONE, RET, always_returns, contains_return, guarded, return_if_done, while_test
from .values import describe, flatten, unflatten


def assigned_names(stmts) -> list[str]:
    """Names a list of statements may (re)bind, in first-assignment order (a ``return`` binds the hidden
    return flag and value, see ``returns.py``)."""
    seen = {}
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                seen.setdefault(node.id, None)
            elif isinstance(node, ast.Return):
                seen.setdefault(DONE, None)
                seen.setdefault(RET, None)
    return list(seen)


class _Return(Exception):
    pass


class StmtGen:
    def __init__(self, g):
        self.g = g
        self.frames = ["function"]  # what a `return` leaves: the function, or (a flag for) a runtime loop
        self._dispatch = {
            ast.Expr: self.expr, ast.Assign: self.assign, ast.AugAssign: self.augassign,
            ast.AnnAssign: self.annassign, ast.If: self.if_, ast.For: self.for_, ast.While: self.while_,
            ast.Return: self.return_, ast.Pass: lambda n: None, ast.Assert: self.assert_,
        }

    def mark_const_parameters(self, tree):
        """Pointer parameters annotated ``tl.const`` become read-only pointers (stores through them are errors)."""
        for a in tree.args.args:
            if a.annotation is None or a.arg not in self.g.scope.vars:
                continue
            v = self.g.scope.vars[a.arg]
            if not (is_tensor(v) and v.dtype.is_ptr()) or getattr(v.dtype, "const", False):
                continue
            if self._annotation_value(a.annotation) is tl.const:
                t = v.dtype
                self.g.scope[a.arg] = tensor(v.handle, tl.pointer_type(t.element_ty, t.address_space, const=True))

    def _annotation_value(self, node):
        """What a parameter annotation names (``tl.const``, ``const``, or the same as a string), or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Name):
            scope = self.g.scope
            return scope.closure.get(node.id, scope.globals.get(node.id))
        if isinstance(node, ast.Attribute):
            return getattr(self._annotation_value(node.value), node.attr, None)
        return None

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
        stmts = list(stmts)
        for i, s in enumerate(stmts):
            if self.g.returned:
                return  # unreachable after a return, as in Python
            if isinstance(s, (ast.If, ast.For, ast.While)) and contains_return(s):
                if self.returning_statement(s, stmts[i + 1:]):
                    return
                continue
            self.visit(s)

    def returning_statement(self, node, rest) -> bool:
        """A statement that may return early; ``rest`` follows it. True when ``rest`` was generated as part of it
        (as the continuation of runtime branches that do not return)."""
        if isinstance(node, ast.If):
            return self.g.located(node, lambda n: self.if_(n, rest))
        self.g.located(node, self.returning_loop)
        after = return_if_done(node)
        return self.g.located(after, lambda n: self.if_(n, rest))

    def returning_loop(self, node):
        """A loop whose body may return: a hidden flag, carried through the loop, records the return; the body
        runs only while it is clear (a while loop also stops on it)."""
        self.g.scope[DONE] = False
        self.frames.append("loop")
        try:
            if isinstance(node, ast.For):
                loop = ast.copy_location(ast.For(node.target, node.iter, guarded(node.body, node), node.orelse,
                                                 None), node)
                self.for_(loop)
            else:
                loop = ast.copy_location(ast.While(while_test(node), node.body, node.orelse), node)
                self.while_(loop)
        finally:
            self.frames.pop()

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
            starred = next((t for t in target.elts if isinstance(t, ast.Starred)), None)
            if starred is not None:  # checked first: a count mismatch would be a misleading message
                raise self.g.src.error(starred, "unsupported assignment target: Starred (only names and tuples of "
                                                "names can be assigned)")
            vals = list(value)
            if len(vals) != len(target.elts):
                raise self.g.src.error(target, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self.bind(t, v)
        else:
            raise self.g.src.error(target, f"unsupported assignment target: {type(target).__name__} (only names "
                                           "and tuples of names can be assigned)")

    def return_(self, node):
        value = None if node.value is None else self.g.expr.visit(node.value)
        if self.frames[-1] == "loop":
            if value is not None:
                raise self.g.src.error(node, "a return with a value inside a loop is not supported (only a plain "
                                             "`return`); keep the value in a variable and return it after the loop")
            self.g.scope[DONE] = True
        elif self.g.depth:
            if value is None:
                self.g.scope.vars.pop(RET, None)
            else:
                self.g.scope[RET] = value
        else:
            self.g.ret_value = value
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
        saved, saved_returned = self.g.scope, self.g.returned
        self.g.scope = scope
        self.g.depth += 1
        self.g.returned = False
        try:
            with self.g.ir.at_end(block):
                self.block(stmts)
        finally:
            self.g.depth -= 1
            self.g.scope = saved
            self.g.returned = saved_returned
        return scope

    # -- if ----------------------------------------------------------------------------------------------------
    def if_(self, node, rest=None) -> bool:
        """``rest`` (the statements after an ``if`` that may return) becomes the continuation of the branches
        that do not return when the condition is a runtime value; returns whether that happened."""
        cond = self.g.expr.visit(node.test)
        if not is_tensor(cond):
            chosen = list(node.body if cond else node.orelse)
            if rest is None:
                self.block(chosen)
                return False
            self.block(chosen + list(rest))  # a runtime `if` inside may need ``rest`` as its continuation
            return True
        if cond.shape:
            raise TypeError(f"a runtime `if` needs a scalar condition, got a tensor of shape {list(cond.shape)}; "
                            "use tl.where for elementwise choices")
        cond = self.g.sem.cast(cond, tl.int1)
        before = self.g.scope
        body, orelse = list(node.body), list(node.orelse)
        cont = rest is not None
        if cont:
            body += [] if always_returns(body) else list(rest)
            orelse += [] if always_returns(orelse) else list(rest)
        then_b, else_b = Block(), Block()
        s_then = self.child(body, then_b, before.copy())
        s_else = self.child(orelse, else_b, before.copy())
        names = assigned_names(body + orelse)
        if cont and self.frames[-1] == "function":
            # everything after this `if` was generated inside it: only the returned value lives on
            if (RET in s_then.vars) != (RET in s_else.vars):
                raise TypeError("this function returns a value on some paths but not on others")
            names = [RET]
        then_vals, else_vals, bindings = [], [], []
        for name in names:
            if name not in s_then.vars or name not in s_else.vars:
                continue  # first defined in one branch only: not visible after the if
            if cont and name not in before.vars and name not in (RET, DONE):
                continue  # first defined in the continuation: dead once the loop iteration ends
            a, b = s_then.vars[name], s_else.vars[name]
            if a is b:
                continue
            la, da = flatten(a)
            lb, db = flatten(b)
            if da != db:
                raise TypeError(f"{_mismatch(name)}: {describe(da)} in the then-branch but {describe(db)} in the "
                                "else-branch; both branches must agree")
            merged = []
            for x, y in zip(la, lb):
                if x is y or (not is_tensor(x) and not is_tensor(y) and type(x) is type(y) and x == y):
                    merged.append(x)
                    continue
                x2 = self.in_block(then_b, lambda: self.materialize(x, y.type if is_tensor(y) else None))
                y2 = self.in_block(else_b, lambda: self.materialize(y, x2.type))
                if x2.type != y2.type:
                    raise TypeError(f"{_mismatch(name)}: type {x2.type} in the then-branch but {y2.type} in the "
                                    "else-branch; both branches must agree")
                merged.append(_Slot(len(then_vals)))
                then_vals.append(x2)
                else_vals.append(y2)
            bindings.append((name, da, merged))
        with self.g.ir.at_end(then_b):
            self.g.ir.yield_(*[v.handle for v in then_vals])
        with self.g.ir.at_end(else_b):
            self.g.ir.yield_(*[v.handle for v in else_vals])
        op = self.g.ir.create(irops.IfOp, [cond.handle], [v.handle.type for v in then_vals],
                              regions=[Region([then_b]), Region([else_b])])
        for name, d, merged in bindings:
            leaves = []
            for m in merged:
                if isinstance(m, _Slot):
                    r = op.results[m.index]
                    r.name_hint = name
                    m = tensor(r, then_vals[m.index].type)
                leaves.append(m)
            before.vars[name] = unflatten(d, leaves)
        if cont:
            if self.frames[-1] == "function" and not self.g.depth:
                self.g.ret_value = before.vars.pop(RET, None)
            self.g.returned = True
        return cont

    def if_expr(self, cond, body, orelse):
        """``body if cond else orelse`` with a runtime scalar ``cond``: each side is evaluated in its own branch,
        so only the chosen side's loads, stores and calls run."""
        cond = self.g.sem.cast(cond, tl.int1)
        then_b, else_b = Block(), Block()
        a = self.in_block(then_b, lambda: self.g.expr.visit(body))
        b = self.in_block(else_b, lambda: self.g.expr.visit(orelse))
        if a is None and b is None:
            types, then_vals, else_vals = [], [], []
        else:
            if a is None or b is None or not (is_tensor(a) or is_scalar_const(a)) \
                    or not (is_tensor(b) or is_scalar_const(b)):
                raise TypeError("Ternary expression with dynamic condition has inconsistent type: "
                                f"{describe(flatten(a)[1])} and {describe(flatten(b)[1])}")
            x = self.in_block(then_b, lambda: self.materialize(a, b.type if is_tensor(b) else None))
            y = self.in_block(else_b, lambda: self.materialize(b, x.type))
            if x.type != y.type:
                raise TypeError(f"Ternary expression with dynamic condition has inconsistent type: {x.type} and "
                                f"{y.type}")
            types, then_vals, else_vals = [x.handle.type], [x.handle], [y.handle]
        with self.g.ir.at_end(then_b):
            self.g.ir.yield_(*then_vals)
        with self.g.ir.at_end(else_b):
            self.g.ir.yield_(*else_vals)
        op = self.g.ir.create(irops.IfOp, [cond.handle], types, regions=[Region([then_b]), Region([else_b])])
        return tensor(op.results[0], x.type) if types else None

    # -- loops -------------------------------------------------------------------------------------------------
    def carried(self, stmts, extra=()):
        """Live-in variables the body may reassign: [(name, structure, leaves)]; the leaves are carried."""
        scope = self.g.scope
        out = []
        for n in assigned_names(stmts):
            if n in extra or n not in scope.vars:
                continue
            leaves, d = flatten(scope.vars[n])
            out.append((n, d, leaves))
        return out

    @staticmethod
    def slot_names(carried):
        return [n for n, _, leaves in carried for _ in leaves]

    def bind_carried(self, scope, carried, values, inits):
        """Rebind the carried variables in ``scope`` to IR ``values`` (block arguments or op results)."""
        k = 0
        for n, d, leaves in carried:
            ts = []
            for _ in leaves:
                v = values[k]
                if getattr(v, "name_hint", "") is None:
                    v.name_hint = n
                ts.append(tensor(v, inits[k].type))
                k += 1
            scope.vars[n] = unflatten(d, ts)

    def _loop(self, carried, emit):
        """Run ``emit(inits)``, which builds the loop. A carried compile-time number enters the loop as Triton
        materialises it (an int as int32, or int64 when it needs it; a float as fp32), and a carried value must
        keep its type through an iteration (Triton's rule and wording)."""
        flat = [leaf for _, _, leaves in carried for leaf in leaves]
        owner = self.slot_names(carried)
        inits = [self.materialize(v) for v in flat]
        try:
            return emit(inits)
        except _TypeChange as tc:
            raise TypeError(f"Loop-carried variable {owner[tc.index]} has initial type {tc.before} but is "
                            f"re-assigned to {tc.after} in loop! Please make sure that the type stays "
                            "consistent.") from None

    def _finish_body(self, carried, inits, scope_after):
        outs = []
        k = 0
        for n, d, _ in carried:
            leaves, d2 = flatten(scope_after.vars[n])
            if d2 != d:
                raise TypeError(f"variable '{n}' is {describe(d)} before the loop but {describe(d2)} after an "
                                "iteration; only tensors and numbers can change across iterations")
            for x in leaves:
                init = inits[k]
                if not is_tensor(x):
                    x = self.materialize(x)  # as Triton: a number assigned in the body has its own type
                if x.type != init.type:
                    raise _TypeChange(k, init.type, x.type)
                outs.append(x)
                k += 1
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
        flatten = getattr(rng, "flatten", False)
        bounds = [self.g.sem.to_tensor(v) for v in (lb, ub, step)]
        for b in bounds:
            if b.shape or not b.dtype.is_int():
                raise TypeError(f"range bounds must be integer scalars, got {b.type}")
        ity = tl.int64 if any(b.dtype.int_bitwidth == 64 for b in bounds) else tl.int32
        bounds = [self.g.sem.cast(b, ity) for b in bounds]
        if not is_tensor(step) and step == 0:
            raise ValueError("range step must not be zero")
        var = node.target.id
        carried = self.carried(node.body, extra=(var,))
        before = self.g.scope

        def emit(inits):
            body = Block([self.g.tb.to_ir(ity)] + [v.handle.type for v in inits], [var] + self.slot_names(carried))
            s = before.copy()
            s.vars[var] = tensor(body.args[0], ity)
            self.bind_carried(s, carried, body.args[1:], inits)
            try:
                self.child(node.body, body, s)
                with self.g.ir.at_end(body):
                    outs = self._finish_body(carried, inits, s)
            except _TypeChange:
                _discard(body)
                raise
            with self.g.ir.at_end(body):
                self.g.ir.yield_(*[v.handle for v in outs])
            attrs = {} if num_stages is None else {"num_stages": int(num_stages)}
            if flatten:
                attrs["flatten"] = True
            op = self.g.ir.create(irops.ForOp, [b.handle for b in bounds] + [v.handle for v in inits],
                                  [v.handle.type for v in inits], attrs, regions=[Region([body])])
            return op, inits

        op, inits = self._loop(carried, emit)
        before.vars.pop(var, None)
        self.bind_carried(before, carried, op.results, inits)

    def unrolled(self, node, seq):
        for i in seq:
            self.bind(node.target, i)
            self.block(node.body)
            if self.g.returned:
                return

    def while_(self, node):
        if node.orelse:
            raise self.g.src.error(node, "while ... else is not supported")
        carried = self.carried(node.body)
        before = self.g.scope

        def emit(inits):
            types = [v.handle.type for v in inits]
            names = self.slot_names(carried)
            cond_b = Block(types, names)
            body_b = Block(types, names)
            sc = before.copy()
            self.bind_carried(sc, carried, cond_b.args, inits)
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
            self.bind_carried(sb, carried, body_b.args, inits)
            try:
                self.child(node.body, body_b, sb)
                with self.g.ir.at_end(body_b):
                    outs = self._finish_body(carried, inits, sb)
            except _TypeChange:
                _discard(cond_b)
                _discard(body_b)
                raise
            with self.g.ir.at_end(body_b):
                self.g.ir.yield_(*[v.handle for v in outs])
            op = self.g.ir.create(irops.WhileOp, [v.handle for v in inits], types,
                                  regions=[Region([cond_b]), Region([body_b])])
            return op, inits

        op, inits = self._loop(carried, emit)
        if op is None:
            return
        self.bind_carried(before, carried, op.results, inits)


def _mismatch(name: str) -> str:
    return "Inconsistent return types" if name == RET else f"Mismatched type for {name} (variable '{name}')"


class _Slot:
    """Marks a leaf that became the if-op result ``index``."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _TypeChange(Exception):
    def __init__(self, index, before, after):
        super().__init__(index)
        self.index, self.before, self.after = index, before, after


def _discard(block: Block):
    """Drop the uses a throw-away block's ops hold on outer values."""
    for op in block.ops:
        for o in op.walk(post_order=True):
            o.drop_operands()
    block.ops = []
